package mutation

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/conformance"
)

// A harmless mutation is judged by what raydar made of it: the objects
// raydar reconciled from the mutated manifest must equal what it made of
// the same manifest unmutated (applied beside it, in a namespace of its
// own), less the traces the mutation leaves by design (Mutation.Without),
// both normalised as the conformance suite normalises them (names'
// random suffixes, the namespace, times, addresses).

// made lists the kinds raydar makes from a Ray object.
var made = []struct {
	kind string
	gvr  schema.GroupVersionResource
}{
	{"Pod", schema.GroupVersionResource{Version: "v1", Resource: "pods"}},
	{"Service", schema.GroupVersionResource{Version: "v1", Resource: "services"}},
	{"ServiceAccount", schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}},
	{"Secret", schema.GroupVersionResource{Version: "v1", Resource: "secrets"}},
	{"Ingress", schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}},
	{"Job", schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}},
	{"Role", schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}},
	{"RoleBinding", schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}},
	{rayv1.KindRayCluster, gvrs[rayv1.KindRayCluster]},
}

// madeFrom lists what raydar made in ns from the Ray object applied
// there (kind, name): every object of the kinds above that raydar owns
// (the API server's default ServiceAccount is not raydar's), and the
// applied object reduced to its status, which is what raydar wrote on
// it (its spec is the manifest's).
func madeFrom(ctx context.Context, ns, kind, name string) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, m := range made {
		list, err := env.dyn.Resource(m.gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s in %s: %w", m.gvr.Resource, ns, err)
		}
		for _, o := range list.Items {
			o.SetKind(m.kind)
			if m.kind == kind && o.GetName() == name {
				continue // the applied object: below
			}
			if len(o.GetOwnerReferences()) == 0 {
				continue
			}
			out = append(out, o)
		}
	}
	applied, err := env.dyn.Resource(gvrs[kind]).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	status := map[string]any{"kind": kind, "metadata": map[string]any{"name": name, "generation": applied.GetGeneration()}}
	if st, ok := applied.Object["status"]; ok {
		status["status"] = st
	}
	out = append(out, unstructured.Unstructured{Object: status})
	sort.Slice(out, func(i, j int) bool {
		return out[i].GetKind()+"/"+out[i].GetName() < out[j].GetKind()+"/"+out[j].GetName()
	})
	return out, nil
}

// sameAsBaseline compares what raydar made of a harmless mutation r with
// what it made of the manifest unmutated, b; it returns the differences
// ("" when there is none), how many objects were compared, and, when
// there are differences, the metadata of every object of both sides that
// shares an ID with a differing one up to its "#N" (the workers of one
// group, paired by content): what a failure report needs to tell a
// mis-pairing from a real difference.
func sameAsBaseline(ctx context.Context, r, b *run) (string, int, string, error) {
	kind := r.Object.GetKind()
	mutated, err := madeFrom(ctx, r.ns, kind, r.name)
	if err != nil {
		return "", 0, "", err
	}
	unmutated, err := madeFrom(ctx, b.ns, kind, b.name)
	if err != nil {
		return "", 0, "", err
	}
	if without := r.Mutation.Without; without != nil {
		for _, objs := range [][]unstructured.Unstructured{mutated, unmutated} {
			for _, o := range objs {
				without(o.Object)
			}
		}
	}
	normUnmutated, normMutated := conformance.Normalize(b.ns, unmutated), conformance.Normalize(r.ns, mutated)
	diffs := conformance.Compare(r.Manifest, normUnmutated, normMutated)
	var lines []string
	groups := map[string]bool{}
	for _, d := range diffs {
		lines = append(lines, fmt.Sprintf("%s %s: unmutated %s, mutated %s", d.Object, d.Path, short(d.KubeRay), short(d.Raydar)))
		groups[idGroup(d.Object)] = true
	}
	var detail strings.Builder
	for _, side := range []struct {
		name string
		objs []conformance.Object
	}{{"unmutated", normUnmutated}, {"mutated", normMutated}} {
		for _, o := range side.objs {
			if groups[idGroup(o.ID)] {
				meta, _ := json.Marshal(o.Content["metadata"])
				fmt.Fprintf(&detail, "%s %s metadata: %s\n", side.name, o.ID, meta)
			}
		}
	}
	return strings.Join(lines, "; "), max(len(mutated), len(unmutated)), detail.String(), nil
}

// idGroup is an object's ID less the "#N" that numbers equal IDs.
func idGroup(id string) string {
	if i := strings.LastIndexByte(id, '#'); i > 0 && i < len(id)-1 && strings.Trim(id[i+1:], "0123456789") == "" {
		return id[:i]
	}
	return id
}

func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
