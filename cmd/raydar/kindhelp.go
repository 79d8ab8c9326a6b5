package main

import (
	"strings"

	"github.com/raydar/raydar/rayapi/kinds"
)

// suspendable are the kinds raydar suspend and resume take: the Ray kinds
// rayapi/kinds says can be suspended.
func suspendable() []*kinds.Kind {
	var out []*kinds.Kind
	for _, k := range kinds.Ray {
		if k.Suspend != nil {
			out = append(out, k)
		}
	}
	return out
}

// diagnosed are the kinds raydar why takes (rayapi/kinds' Why).
func diagnosed() []*kinds.Kind {
	var out []*kinds.Kind
	for _, k := range kinds.Ray {
		if k.Why {
			out = append(out, k)
		}
	}
	return out
}

// wordUsage is "cluster|job|…": the kinds' plain singular words.
func wordUsage(ks []*kinds.Kind) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = strings.TrimSuffix(k.Word, "s")
	}
	return strings.Join(names, "|")
}

// kindList joins the kinds' API names as prose: "RayCluster, RayJob or
// RayService".
func kindList(ks []*kinds.Kind) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Kind
	}
	return orList(names)
}

// kindNames says the names a user may type for each kind, as help texts
// offer them: "raycluster (rc, cluster), rayjob (rj, job) or …".
func kindNames(ks []*kinds.Kind) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = strings.ToLower(k.Kind) + " (" + k.Short + ", " + strings.TrimSuffix(k.Word, "s") + ")"
	}
	return orList(names)
}

// kindUsage is "raycluster|rayjob|…": the kinds' lower-case API names.
func kindUsage(ks []*kinds.Kind) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = strings.ToLower(k.Kind)
	}
	return strings.Join(names, "|")
}

// orList is "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
