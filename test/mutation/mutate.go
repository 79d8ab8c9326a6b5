package mutation

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/conformance"
)

// Class is what a mutation does to a manifest.
type Class string

// Classes of mutations.
const (
	Removed    Class = "required field removed"
	WrongType  Class = "wrong type"
	OutOfRange Class = "out-of-range number"
	HugeString Class = "huge string"
	Harmless   Class = "harmless"
)

// Huge strings: over the 63 characters of a label value and the 253 of a
// name; 1 MiB values.
const (
	LongNameLength = 70
	MiB            = 1 << 20
)

// Mutation changes one field of a Ray object in place and returns the
// field path an API error or raydar's refusal must name ("" for a harmless
// mutation), or ok false when the object has no such field.
type Mutation struct {
	Name  string
	Class Class
	Apply func(o *unstructured.Unstructured) (field string, ok bool)
	// Without removes, from an object raydar made, what a harmless
	// mutation changes in it by design (the field it added, hashes of a
	// spec that holds it): what raydar made of the mutated manifest must
	// equal what it made of the unmutated one once both went through it.
	// nil when nothing may differ.
	Without func(o map[string]any)
}

// Harmless reports whether the mutation must be accepted and reconciled
// normally.
func (m Mutation) Harmless() bool { return m.Class == Harmless }

// clusterSpec returns the RayClusterSpec an object carries and its path:
// a RayCluster's spec, a RayJob's spec.rayClusterSpec, a RayService's
// spec.rayClusterConfig.
func clusterSpec(o *unstructured.Unstructured) (map[string]any, string, bool) {
	var path []string
	switch o.GetKind() {
	case "RayCluster":
		path = []string{"spec"}
	case "RayJob":
		path = []string{"spec", "rayClusterSpec"}
	case "RayService":
		path = []string{"spec", "rayClusterConfig"}
	default:
		return nil, "", false
	}
	m := mapAt(o.Object, path)
	if m == nil {
		return nil, "", false
	}
	return m, strings.Join(path, "."), true
}

// mapAt returns the map at path inside obj (the live one, not a copy).
func mapAt(obj map[string]any, path []string) map[string]any {
	cur := obj
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}

// firstGroup returns the first worker group of the object's cluster spec.
func firstGroup(o *unstructured.Unstructured) (map[string]any, string, bool) {
	cs, p, ok := clusterSpec(o)
	if !ok {
		return nil, "", false
	}
	groups, ok := cs["workerGroupSpecs"].([]any)
	if !ok || len(groups) == 0 {
		return nil, "", false
	}
	g, ok := groups[0].(map[string]any)
	return g, p + ".workerGroupSpecs[0]", ok
}

// headContainer returns the head pod's first container.
func headContainer(o *unstructured.Unstructured) (map[string]any, bool) {
	cs, _, ok := clusterSpec(o)
	if !ok {
		return nil, false
	}
	spec := mapAt(cs, []string{"headGroupSpec", "template", "spec"})
	if spec == nil {
		return nil, false
	}
	cs2, ok := spec["containers"].([]any)
	if !ok || len(cs2) == 0 {
		return nil, false
	}
	c, ok := cs2[0].(map[string]any)
	return c, ok
}

// inGroup sets key in the first worker group; the field named is the key,
// followed by suffix (a map key such as "[CPU]").
func inGroup(key string, v func() any, suffix ...string) func(*unstructured.Unstructured) (string, bool) {
	return func(o *unstructured.Unstructured) (string, bool) {
		g, p, ok := firstGroup(o)
		if !ok {
			return "", false
		}
		g[key] = v()
		return p + "." + key + strings.Join(suffix, ""), true
	}
}

func inClusterSpec(sub []string, key string, v any) func(*unstructured.Unstructured) (string, bool) {
	return func(o *unstructured.Unstructured) (string, bool) {
		cs, p, ok := clusterSpec(o)
		if !ok {
			return "", false
		}
		m := mapAt(cs, sub)
		if m == nil {
			return "", false
		}
		full := strings.Join(append([]string{p}, sub...), ".") + "." + key
		if v == nil {
			if _, has := m[key]; !has {
				return "", false
			}
			delete(m, key)
			return full, true
		}
		m[key] = v
		return full, true
	}
}

// podsCreated reports whether the object is a RayCluster that gets pods
// at once (not suspended): only then does the pod API see its template.
func podsCreated(o *unstructured.Unstructured) bool {
	suspended, _, _ := unstructured.NestedBool(o.Object, "spec", "suspend")
	return o.GetKind() == "RayCluster" && !suspended
}

// All is every mutation, in a fixed order.
func All() []Mutation {
	return []Mutation{
		{Name: "no-head-group", Class: Removed, Apply: inClusterSpec(nil, "headGroupSpec", nil)},
		{Name: "no-head-containers", Class: Removed, Apply: inClusterSpec([]string{"headGroupSpec", "template", "spec"}, "containers", nil)},
		{Name: "no-group-name", Class: Removed, Apply: func(o *unstructured.Unstructured) (string, bool) {
			g, p, ok := firstGroup(o)
			if !ok {
				return "", false
			}
			delete(g, "groupName")
			return p + ".groupName", true
		}},
		{Name: "no-cluster-spec", Class: Removed, Apply: func(o *unstructured.Unstructured) (string, bool) {
			spec, _ := o.Object["spec"].(map[string]any)
			if o.GetKind() != "RayJob" || spec["rayClusterSpec"] == nil || spec["clusterSelector"] != nil {
				return "", false
			}
			delete(spec, "rayClusterSpec")
			return "spec.rayClusterSpec", true
		}},
		{Name: "replicas-string", Class: WrongType, Apply: inGroup("replicas", func() any { return "three" })},
		{Name: "groups-object", Class: WrongType, Apply: inClusterSpec(nil, "workerGroupSpecs", map[string]any{"groupName": "g"})},
		{Name: "start-params-list", Class: WrongType, Apply: inClusterSpec([]string{"headGroupSpec"}, "rayStartParams", []any{"num-cpus=1"})},
		{Name: "ray-version-number", Class: WrongType, Apply: inClusterSpec(nil, "rayVersion", 2.9)},
		{Name: "negative-replicas", Class: OutOfRange, Apply: inGroup("replicas", func() any { return int64(-1) })},
		{Name: "min-above-max", Class: OutOfRange, Apply: func(o *unstructured.Unstructured) (string, bool) {
			g, p, ok := firstGroup(o)
			if !ok {
				return "", false
			}
			g["minReplicas"], g["maxReplicas"], g["replicas"] = int64(5), int64(2), int64(2)
			return p, true
		}},
		{Name: "huge-replicas", Class: OutOfRange, Apply: inGroup("replicas", func() any { return int64(math.MaxInt64) })},
		{Name: "huge-max-replicas", Class: OutOfRange, Apply: inGroup("maxReplicas", func() any { return int64(math.MaxInt64) })},
		{Name: "negative-ttl", Class: OutOfRange, Apply: func(o *unstructured.Unstructured) (string, bool) {
			if o.GetKind() != "RayJob" {
				return "", false
			}
			o.Object["spec"].(map[string]any)["ttlSecondsAfterFinished"] = int64(-5)
			return "spec.ttlSecondsAfterFinished", true
		}},
		{Name: "long-name", Class: HugeString, Apply: func(o *unstructured.Unstructured) (string, bool) {
			n := o.GetName()
			if n == "" {
				return "", false
			}
			n += "-" + strings.Repeat("x", LongNameLength)
			o.SetName(n[:LongNameLength])
			return "metadata.name", true
		}},
		{Name: "huge-annotation", Class: HugeString, Apply: func(o *unstructured.Unstructured) (string, bool) {
			a := o.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a["mutation.raydar.io/pad"] = strings.Repeat("a", MiB)
			o.SetAnnotations(a)
			return "metadata.annotations", true
		}},
		{Name: "huge-group-name", Class: HugeString, Apply: inGroup("groupName", func() any { return strings.Repeat("g", MiB) })},
		{Name: "bad-service-type", Class: OutOfRange, Apply: inClusterSpec([]string{"headGroupSpec"}, "serviceType", "Bogus")},
		// Rules only raydar's Go validation checks (the CRD cannot).
		{Name: "negative-group-resource", Class: OutOfRange, Apply: inGroup("resources", func() any { return map[string]any{"CPU": "-1"} }, "[CPU]")},
		{Name: "bad-group-label", Class: HugeString, Apply: inGroup("labels", func() any { return map[string]any{"tier": strings.Repeat("l", 64)} }, "[tier]")},
		{Name: "entrypoint-resources-not-json", Class: WrongType, Apply: func(o *unstructured.Unstructured) (string, bool) {
			if o.GetKind() != "RayJob" {
				return "", false
			}
			o.Object["spec"].(map[string]any)["entrypointResources"] = "{CPU: 1"
			return "spec.entrypointResources", true
		}},
		{Name: "serve-config-list", Class: WrongType, Apply: func(o *unstructured.Unstructured) (string, bool) {
			if o.GetKind() != "RayService" {
				return "", false
			}
			o.Object["spec"].(map[string]any)["serveConfigV2"] = "- applications\n- x\n"
			return "spec.serveConfigV2", true
		}},
		// Rules of the pod API: the cluster is accepted, its head pod is
		// refused (the field is the pod's).
		{Name: "no-head-image", Class: Removed, Apply: func(o *unstructured.Unstructured) (string, bool) {
			c, ok := headContainer(o)
			if !ok || !podsCreated(o) || c["image"] == nil {
				return "", false
			}
			delete(c, "image")
			return "spec.containers[0].image", true
		}},
		{Name: "requests-above-limits", Class: OutOfRange, Apply: func(o *unstructured.Unstructured) (string, bool) {
			c, ok := headContainer(o)
			if !ok || !podsCreated(o) {
				return "", false
			}
			c["resources"] = map[string]any{"requests": map[string]any{"memory": "2Gi"}, "limits": map[string]any{"memory": "1Gi"}}
			return "spec.containers[0].resources.requests", true
		}},
		{Name: "unknown-field", Class: Harmless, Apply: func(o *unstructured.Unstructured) (string, bool) {
			cs, _, ok := clusterSpec(o)
			if !ok {
				return "", false
			}
			cs["mutationUnknownField"] = "pruned by the API server"
			return "", true
		}},
		{Name: "huge-env-value", Class: Harmless, Apply: func(o *unstructured.Unstructured) (string, bool) {
			c, ok := headContainer(o)
			if !ok {
				return "", false
			}
			env, _ := c["env"].([]any)
			c["env"] = append(env, map[string]any{"name": PadEnv, "value": strings.Repeat("v", MiB)})
			return "", true
		}, Without: func(o map[string]any) {
			dropEnv(o, PadEnv)
			// Hashes of a cluster spec (a RayService's cluster) hold it.
			for _, k := range specHashAnnotations {
				if a, ok := mapAt(o, []string{"metadata", "annotations"})[k]; ok && a != nil {
					mapAt(o, []string{"metadata", "annotations"})[k] = "<hash of a spec with " + PadEnv + ">"
				}
			}
		}},
	}
}

// PadEnv is the variable huge-env-value adds to the head container.
const PadEnv = "MUTATION_PAD"

// specHashAnnotations are annotations whose value is a hash of a cluster
// spec: a harmless change to the spec changes them.
var specHashAnnotations = []string{rayv1.HashWithoutReplicasAndWorkersToDeleteKey, rayv1.UpgradeStrategyRecreateHashKey}

// dropEnv removes the variable name from every env list in v.
func dropEnv(v any, name string) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if l, ok := c.([]any); ok && k == "env" {
				kept := l[:0:0]
				for _, e := range l {
					if em, ok := e.(map[string]any); ok && em["name"] == name {
						continue
					}
					kept = append(kept, e)
				}
				if len(kept) == 0 {
					delete(t, k) // as if it had never been there
				} else {
					t[k] = kept
				}
				continue
			}
			dropEnv(c, name)
		}
	case []any:
		for _, c := range t {
			dropEnv(c, name)
		}
	}
}

// Case is one mutated manifest: the manifest's first Ray object with one
// mutation applied.
type Case struct {
	Manifest string
	Mutation Mutation
	Object   *unstructured.Unstructured
	// Field is the path the refusal must name ("" when harmless).
	Field string
}

// Plan picks, with a generator seeded by seed, up to perManifest mutations
// that apply to each manifest's first RayCluster, RayJob or RayService.
func Plan(seed uint64, manifests []conformance.Manifest, perManifest int) []Case {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	all := All()
	var out []Case
	for _, m := range manifests {
		base := firstRayObject(m)
		if base == nil {
			continue
		}
		order := r.Perm(len(all))
		picked := 0
		for _, i := range order {
			if picked == perManifest {
				break
			}
			o := base.DeepCopy()
			field, ok := all[i].Apply(o)
			if !ok {
				continue
			}
			out = append(out, Case{Manifest: m.Name, Mutation: all[i], Object: o, Field: field})
			picked++
		}
	}
	return out
}

func firstRayObject(m conformance.Manifest) *unstructured.Unstructured {
	for i := range m.Objects {
		o := &m.Objects[i]
		switch o.GetKind() {
		case "RayCluster", "RayJob", "RayService":
			if o.GroupVersionKind().Group == "ray.io" {
				return o
			}
		}
	}
	return nil
}

// String names a case in reports.
func (c Case) String() string {
	return fmt.Sprintf("%s [%s %s]", c.Manifest, c.Object.GetKind(), c.Mutation.Name)
}
