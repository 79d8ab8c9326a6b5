package main

import (
	"strings"

	"github.com/raydar/raydar/rayapi/kinds"
)

// The kinds' names in help texts, from rayapi/kinds: one list a user's
// names are looked up in, so every name offered is one raydar takes.

// rayKindsWhere are the Ray kinds for which keep is true, in kinds.Ray's
// order.
func rayKindsWhere(keep func(*kinds.Kind) bool) []*kinds.Kind {
	var out []*kinds.Kind
	for _, k := range kinds.Ray {
		if keep(k) {
			out = append(out, k)
		}
	}
	return out
}

// suspendable are the kinds raydar suspend and resume take; diagnosed the
// kinds raydar why takes.
func suspendable() []*kinds.Kind {
	return rayKindsWhere(func(k *kinds.Kind) bool { return k.Suspend != nil })
}
func diagnosed() []*kinds.Kind { return rayKindsWhere(func(k *kinds.Kind) bool { return k.Why }) }

// each is name(k) of each kind.
func each(ks []*kinds.Kind, name func(*kinds.Kind) string) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = name(k)
	}
	return out
}

// singular is a kind's plain word ("cluster"), apiName its lower-case API
// kind ("raycluster").
func singular(k *kinds.Kind) string { return strings.TrimSuffix(k.Word, "s") }
func apiName(k *kinds.Kind) string  { return strings.ToLower(k.Kind) }

// apiKind is a kind's API kind ("RayCluster"), plural its plural as a
// title ("RayClusters").
func apiKind(k *kinds.Kind) string { return k.Kind }
func plural(k *kinds.Kind) string  { return k.Plural }

// wordUsage is "cluster|job|…"; kindUsage "raycluster|rayjob|…".
func wordUsage(ks []*kinds.Kind) string { return strings.Join(each(ks, singular), "|") }
func kindUsage(ks []*kinds.Kind) string { return strings.Join(each(ks, apiName), "|") }

// kindList is "RayCluster, RayJob or RayService".
func kindList(ks []*kinds.Kind) string {
	return orList(each(ks, apiKind))
}

// kindNames is "raycluster (rc, cluster), rayjob (rj, job) or …".
func kindNames(ks []*kinds.Kind) string {
	return orList(each(ks, func(k *kinds.Kind) string { return apiName(k) + " (" + k.Short + ", " + singular(k) + ")" }))
}

// orList is "a, b or c"; andList "a, b and c".
func orList(s []string) string  { return joinList(s, " or ") }
func andList(s []string) string { return joinList(s, " and ") }

// joinList is s joined by commas, the last two by last.
func joinList(s []string, last string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + last + s[len(s)-1]
}

// viewNames is "rayclusters, rc, rayjobs, rj, …, pods, po": each kind's
// plural and short name, which the TUI's : prompt takes (its aliases are
// the kind's Names).
func viewNames() string {
	var ns []string
	for _, k := range kinds.All {
		ns = append(ns, strings.ToLower(k.Plural), k.Short)
	}
	return strings.Join(ns, ", ")
}
