package watch

import (
	"testing"

	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Every kind of rayapi/kinds is watched and stored from its descriptor
// alone: it has a Kind named as the descriptor, the store takes its objects
// under that Kind, and KindOf finds it; Event and Node follow.
func TestKindsFollowDescriptors(t *testing.T) {
	if len(Kinds) != len(kinds.All)+2 || Kinds[len(Kinds)-2] != Event || Kinds[len(Kinds)-1] != Node {
		t.Fatalf("Kinds = %v, want the %d descriptors' then Event and Node", Kinds, len(kinds.All))
	}
	st := NewStore()
	for i, d := range kinds.All {
		k := KindFor(d)
		if k != Kinds[i] || k.String() != d.Kind {
			t.Errorf("%s: Kind %d named %q, want %d named %q", d.Kind, k, k.String(), Kinds[i], d.Kind)
		}
		o := d.New()
		o.SetNamespace("ns")
		o.SetName("x")
		o.SetLabels(map[string]string{rayv1.RayNodeTypeLabelKey: string(rayv1.WorkerNode)}) // a Ray pod
		if got, ok := KindOf(o); !ok || got != k {
			t.Errorf("%s: KindOf = %v, %v", d.Kind, got, ok)
		}
		if ch := st.Add(o); !ch.Any(k) || st.Len(k) != 1 {
			t.Errorf("%s: the store did not take its object", d.Kind)
		}
	}
	if got := Kind(numKinds - 3).String(); got != "Kind(13)" {
		t.Errorf("an unused index is named %q", got)
	}
}
