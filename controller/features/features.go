package features

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Gate names one of KubeRay's feature gates.
type Gate string

// KubeRay v1.7.0's gates (ray-operator/pkg/features/features.go).
const (
	RayClusterStatusConditions       Gate = "RayClusterStatusConditions"
	RayJobDeletionPolicy             Gate = "RayJobDeletionPolicy"
	RayMultiHostIndexing             Gate = "RayMultiHostIndexing"
	RayServiceIncrementalUpgrade     Gate = "RayServiceIncrementalUpgrade"
	RayCronJob                       Gate = "RayCronJob"
	SidecarSubmitterRestart          Gate = "SidecarSubmitterRestart"
	RayClusterNetworkPolicy          Gate = "RayClusterNetworkPolicy"
	GCSFaultToleranceEmbeddedStorage Gate = "GCSFaultToleranceEmbeddedStorage"
	RayClusterMTLS                   Gate = "RayClusterMTLS"
	RayClusterHistoryServer          Gate = "RayClusterHistoryServer"
	KubernetesWAS                    Gate = "KubernetesWAS"
)

// Support is what raydar does with a gate.
type Support int

const (
	// Always: raydar behaves as with the gate on and cannot turn it off;
	// Name=false is refused.
	Always Support = iota
	// Toggle: raydar implements both sides; the gate chooses.
	Toggle
	// NotImplemented: raydar does not implement the feature; Name=true is
	// refused. Where an object asks for the feature by a field
	// (spec.tlsOptions), that object is refused by name too, as KubeRay
	// refuses it with the gate off (controller/raycluster/unsupported.go).
	// Every gate of KubeRay v1.7.0 is implemented; a later KubeRay's gate
	// raydar lacks would be this.
	NotImplemented
)

// label is what Usage says of each Support.
func (s Support) label() string {
	switch s {
	case Always:
		return "always on"
	case Toggle:
		return "implemented"
	default:
		return "not implemented: =true refused"
	}
}

// Spec is one gate: KubeRay's default and stage, and what raydar does with
// it (from which raydar's default follows: Default).
type Spec struct {
	Name           Gate
	KubeRayDefault bool
	Stage          string // Alpha, Beta (KubeRay v1.7.0)
	Support        Support
	// Why says, for a gate that cannot be set one way, what raydar does
	// instead, or why raydar's default differs from KubeRay's.
	Why string
	// OnByDefault turns on by default a gate KubeRay leaves off.
	OnByDefault bool
}

// Default is raydar's default: KubeRay's, but on for a gate raydar always
// behaves as on, or turns on by default (RayCronJob: raydar runs
// RayCronJobs unless told not to).
func (s Spec) Default() bool { return s.KubeRayDefault || s.Support == Always || s.OnByDefault }

// All is every gate of KubeRay v1.7.0, in features.go's order.
var All = []Spec{
	{RayClusterStatusConditions, true, "Beta", Always,
		"raydar always writes the RayCluster status conditions (HeadPodReady, RayClusterProvisioned, ReplicaFailure, …)", false},
	{RayJobDeletionPolicy, true, "Beta", Always,
		"raydar always implements a RayJob's deletionStrategy", false},
	{RayMultiHostIndexing, true, "Beta", Always,
		"raydar always labels multi-host workers with their replica and host index", false},
	{RayServiceIncrementalUpgrade, true, "Beta", Toggle, "", false},
	{RayCronJob, false, "Alpha", Toggle,
		"on by default in raydar, off in KubeRay: RayCronJob=false leaves RayCronJobs unreconciled, as KubeRay (its chart renders it)", true},
	{SidecarSubmitterRestart, false, "Alpha", Toggle, "", false},
	{RayClusterNetworkPolicy, false, "Alpha", Toggle, "", false},
	{GCSFaultToleranceEmbeddedStorage, false, "Alpha", Toggle, "", false},
	{RayClusterMTLS, false, "Alpha", Toggle, "", false},
	{RayClusterHistoryServer, false, "Alpha", Toggle, "", false},
	{KubernetesWAS, false, "Alpha", Toggle, "", false},
}

// Lookup is the spec of a gate by name.
func Lookup(name Gate) (Spec, bool) {
	for _, s := range All {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Gates is a set of gate values. The zero value is raydar's defaults. It is
// a pflag.Value (Set, String, Type): `--feature-gates A=true,B=false`, given
// more than once, adds up.
type Gates struct {
	set map[Gate]bool
}

// Enabled reports whether the gate is on: as set, else raydar's default.
func (g Gates) Enabled(name Gate) bool {
	if v, ok := g.set[name]; ok {
		return v
	}
	s, _ := Lookup(name)
	return s.Default()
}

// Parse reads "Name=true,Other=false" (Kubernetes' --feature-gates syntax).
// An unknown name, a value that is not a boolean, a gate raydar does not
// implement turned on and a gate raydar cannot turn off turned off are
// refused, naming the gate.
func Parse(s string) (Gates, error) {
	var g Gates
	return g, g.add(s)
}

// MustParse is Parse that panics (tests, constants).
func MustParse(s string) Gates {
	g, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return g
}

func (g *Gates) add(s string) error {
	next := map[Gate]bool{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok {
			return fmt.Errorf("feature gate %q: missing =true or =false (the syntax is Name=true,Other=false)", k)
		}
		spec, known := Lookup(Gate(k))
		if !known {
			return fmt.Errorf("unknown feature gate %q: KubeRay v1.7.0's gates are %s", k, names())
		}
		on, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("feature gate %s: invalid value %q: want true or false", k, strings.TrimSpace(v))
		}
		switch {
		case spec.Support == NotImplemented && on:
			return fmt.Errorf("feature gate %s=true: not implemented by raydar (%s)", k, spec.Why)
		case spec.Support == Always && !on:
			return fmt.Errorf("feature gate %s=false: raydar cannot turn it off (%s)", k, spec.Why)
		}
		next[Gate(k)] = on
	}
	if g.set == nil {
		g.set = map[Gate]bool{}
	}
	for k, v := range next {
		g.set[k] = v
	}
	return nil
}

// Set implements pflag.Value: it adds s's gates to g.
func (g *Gates) Set(s string) error { return g.add(s) }

// Type implements pflag.Value.
func (g *Gates) Type() string { return "mapStringBool" }

// String implements pflag.Value: the gates set, sorted, as Parse reads them.
func (g *Gates) String() string {
	if g == nil || len(g.set) == 0 {
		return ""
	}
	var parts []string
	for k, v := range g.set {
		parts = append(parts, fmt.Sprintf("%s=%t", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Effective is every gate with its value, in All's order, as Parse reads
// them ("RayClusterStatusConditions=true,…"), for the operator's log line.
func (g Gates) Effective() string {
	parts := make([]string, 0, len(All))
	for _, s := range All {
		parts = append(parts, fmt.Sprintf("%s=%t", s.Name, g.Enabled(s.Name)))
	}
	return strings.Join(parts, ",")
}

// names lists the gates, comma-separated.
func names() string {
	var out []string
	for _, s := range All {
		out = append(out, string(s.Name))
	}
	return strings.Join(out, ", ")
}

// Usage is the --feature-gates flag's help: the syntax and every gate with
// raydar's default and what raydar does with it.
func Usage() string {
	var b strings.Builder
	b.WriteString("KubeRay's feature gates, as Name=true,Other=false. Gates (raydar's default; KubeRay v1.7.0's stage):")
	for _, s := range All {
		fmt.Fprintf(&b, "\n  %s=%t (%s; %s)", s.Name, s.Default(), s.Stage, s.Support.label())
	}
	return b.String()
}
