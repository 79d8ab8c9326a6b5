package registry

import (
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
)

// Children names the objects of another kind that belong to a list's
// objects by a label holding the owner's name (a RayCronJob's RayJobs, by
// ray.io/cronjob-name): a kind's Def sets it and its count column shows
// how many each object has.
type Children struct {
	Watch watch.Kind
	Label string
}

// parentRef is an owner as its children name it: namespace and name.
type parentRef struct{ ns, name string }

// childIndex counts children per owner. It is kept up to date from store
// changes (apply), one step per changed child, so a list's count cells
// never scan the store: the table caches them like any other cell and the
// list re-projects only the owners whose count changed.
type childIndex struct {
	Children
	of map[types.UID]parentRef // child → its owner
	n  map[parentRef]int
}

func newChildIndex(c Children, store *watch.Store) *childIndex {
	x := &childIndex{Children: c, of: map[types.UID]parentRef{}, n: map[parentRef]int{}}
	for _, o := range store.List(c.Watch) {
		x.put(o)
	}
	return x
}

// ref is the owner o names ("": none).
func (x *childIndex) ref(o client.Object) (parentRef, bool) {
	name := o.GetLabels()[x.Label]
	return parentRef{o.GetNamespace(), name}, name != ""
}

// put records o (a new or changed child) and returns the owners whose
// count changed.
func (x *childIndex) put(o client.Object) []parentRef {
	uid := watch.Key(o)
	old, had := x.of[uid]
	now, has := x.ref(o)
	if had == has && old == now {
		return nil
	}
	var changed []parentRef
	if had {
		changed = append(changed, x.drop(uid, old))
	}
	if has {
		x.of[uid] = now
		x.n[now]++
		changed = append(changed, now)
	}
	return changed
}

func (x *childIndex) drop(uid types.UID, p parentRef) parentRef {
	delete(x.of, uid)
	if x.n[p]--; x.n[p] <= 0 {
		delete(x.n, p)
	}
	return p
}

// Apply brings the counts up to date with a store change and returns the
// owners whose count changed (possibly repeated).
func (x *childIndex) Apply(ch *watch.Changes) []parentRef {
	var changed []parentRef
	for _, o := range ch.Deleted[x.Watch] {
		if p, ok := x.of[watch.Key(o)]; ok {
			changed = append(changed, x.drop(watch.Key(o), p))
		}
	}
	for _, o := range ch.Upserted[x.Watch] {
		changed = append(changed, x.put(o)...)
	}
	return changed
}

// count is how many children owner has.
func (x *childIndex) count(owner client.Object) int {
	return x.n[parentRef{owner.GetNamespace(), owner.GetName()}]
}
