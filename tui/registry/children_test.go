package registry

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// om is the metadata of a test object: its UID from namespace and name.
func om(ns, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name), Labels: labels}
}

// The child index follows store changes one child at a time: a child
// counts for the owner its label names, moves when the label changes and
// stops counting when deleted; it reports exactly the owners whose count
// changed.
func TestChildIndex(t *testing.T) {
	job := func(ns, name, owner string) *rayv1.RayJob {
		var l map[string]string
		if owner != "" {
			l = map[string]string{rayv1.RayCronJobNameLabelKey: owner}
		}
		return &rayv1.RayJob{ObjectMeta: om(ns, name, l)}
	}
	store := watch.NewStore()
	store.Add(job("ml", "a-1", "a"), job("ml", "a-2", "a"), job("ml", "free", ""), job("other", "a-1", "a"))
	x := newChildIndex(Children{Watch: watch.RayJob, Label: rayv1.RayCronJobNameLabelKey}, store)
	owner := func(ns, name string) *rayv1.RayCronJob { return &rayv1.RayCronJob{ObjectMeta: om(ns, name, nil)} }
	counts := func() [3]int {
		return [3]int{x.count(owner("ml", "a")), x.count(owner("ml", "b")), x.count(owner("other", "a"))}
	}
	if got := counts(); got != [3]int{2, 0, 1} {
		t.Fatalf("initial counts %v", got)
	}
	steps := []struct {
		name    string
		deltas  []watch.Delta
		changed []parentRef
		counts  [3]int
	}{
		{"unchanged label", []watch.Delta{{Kind: watch.RayJob, Object: job("ml", "a-1", "a")}}, nil, [3]int{2, 0, 1}},
		{"new child", []watch.Delta{{Kind: watch.RayJob, Object: job("ml", "b-1", "b")}}, []parentRef{{"ml", "b"}}, [3]int{2, 1, 1}},
		{"label moves", []watch.Delta{{Kind: watch.RayJob, Object: job("ml", "a-2", "b")}}, []parentRef{{"ml", "a"}, {"ml", "b"}}, [3]int{1, 2, 1}},
		{"label removed", []watch.Delta{{Kind: watch.RayJob, Object: job("ml", "b-1", "")}}, []parentRef{{"ml", "b"}}, [3]int{1, 1, 1}},
		{"deleted", []watch.Delta{{Kind: watch.RayJob, Deleted: true, Object: job("other", "a-1", "a")}}, []parentRef{{"other", "a"}}, [3]int{1, 1, 0}},
		{"other kinds", []watch.Delta{{Kind: watch.RayCluster, Object: &rayv1.RayCluster{ObjectMeta: om("ml", "a", nil)}}}, nil, [3]int{1, 1, 0}},
	}
	for _, s := range steps {
		ch := store.Apply(s.deltas)
		got := x.Apply(&ch)
		if len(got) != len(s.changed) {
			t.Fatalf("%s: changed %v, want %v", s.name, got, s.changed)
		}
		for i := range got {
			if got[i] != s.changed[i] {
				t.Fatalf("%s: changed %v, want %v", s.name, got, s.changed)
			}
		}
		if c := counts(); c != s.counts {
			t.Fatalf("%s: counts %v, want %v", s.name, c, s.counts)
		}
	}
}
