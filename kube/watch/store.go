package watch

import (
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// MaxEventsPerObject bounds the Events the store keeps per involved object
// (the most recent ones).
const MaxEventsPerObject = 20

// ClusterRef names a RayCluster.
type ClusterRef struct{ Namespace, Name string }

// Store holds the objects the views read, by UID, with indexes for the
// detail views (pods of a cluster, events of an object). It is owned by one
// goroutine (the TUI's Update loop) and is not safe for concurrent use.
// Objects are shared with the informer cache and must not be modified.
type Store struct {
	objs       [numKinds]map[types.UID]client.Object
	podsOf     map[ClusterRef]map[types.UID]*podview.Pod // by podRef
	events     map[types.UID][]*corev1.Event             // by involved object UID, oldest first
	eventOwner map[types.UID]types.UID
	namespaces map[string]int
	gen        uint64
	nodesKnown bool
}

// NewStore returns an empty store.
func NewStore() *Store {
	s := &Store{
		podsOf:     map[ClusterRef]map[types.UID]*podview.Pod{},
		events:     map[types.UID][]*corev1.Event{},
		eventOwner: map[types.UID]types.UID{},
		namespaces: map[string]int{},
	}
	for _, k := range Kinds {
		s.objs[k] = map[types.UID]client.Object{}
	}
	return s
}

// Changes is what one Apply changed, per kind.
type Changes struct {
	Upserted [numKinds][]client.Object
	Deleted  [numKinds][]client.Object
}

// Any reports whether anything of kind k changed.
func (c *Changes) Any(k Kind) bool { return len(c.Upserted[k])+len(c.Deleted[k]) > 0 }

// Empty reports whether nothing changed.
func (c *Changes) Empty() bool {
	for _, k := range Kinds {
		if c.Any(k) {
			return false
		}
	}
	return true
}

// Touches reports whether the change set concerns the given object UIDs
// (upserted or deleted objects, or Events about them).
func (c *Changes) Touches(uids map[types.UID]bool) bool {
	for _, k := range Kinds {
		for _, list := range [][]client.Object{c.Upserted[k], c.Deleted[k]} {
			for _, o := range list {
				if uids[Key(o)] {
					return true
				}
				if ev, ok := o.(*corev1.Event); ok && uids[ev.InvolvedObject.UID] {
					return true
				}
			}
		}
	}
	return false
}

// Add upserts objects directly (tests, seeding); kinds are inferred.
func (s *Store) Add(objs ...client.Object) Changes {
	ds := make([]Delta, 0, len(objs))
	for _, o := range objs {
		if k, ok := KindOf(o); ok {
			ds = append(ds, Delta{Kind: k, Object: o})
		}
	}
	return s.Apply(ds)
}

// KindOf returns the Kind of a typed object: a kind of rayapi/kinds by its
// descriptor (kinds.Of, which knows a pod's record and a *corev1.Pod
// both), else Event or Node.
func KindOf(o client.Object) (Kind, bool) {
	if d, ok := kinds.Of(o); ok {
		k, ok := byDescriptor[d]
		return k, ok
	}
	switch o.(type) {
	case *corev1.Event:
		return Event, true
	case *corev1.Node:
		return Node, true
	}
	return 0, false
}

// Apply applies a batch of deltas and reports what changed.
func (s *Store) Apply(ds []Delta) Changes {
	var ch Changes
	for _, d := range ds {
		if d.Object == nil || d.Kind >= numKinds {
			continue
		}
		uid := Key(d.Object)
		m := s.objs[d.Kind]
		if m == nil { // an index no Kind has
			continue
		}
		old, had := m[uid]
		if d.Deleted {
			if !had {
				continue
			}
			delete(m, uid)
			s.unindex(d.Kind, uid, old)
			ch.Deleted[d.Kind] = append(ch.Deleted[d.Kind], old)
			continue
		}
		if d.Kind == Pod {
			if !rayv1.IsRayPod(d.Object.GetLabels()) {
				continue
			}
			if p, ok := d.Object.(*corev1.Pod); ok { // Add's, a test's: held as the record
				d.Object = podview.Of(p)
			}
		}
		if had {
			s.unindex(d.Kind, uid, old)
		}
		m[uid] = d.Object
		s.index(d.Kind, uid, d.Object)
		ch.Upserted[d.Kind] = append(ch.Upserted[d.Kind], d.Object)
	}
	if !ch.Empty() {
		s.gen++
	}
	return ch
}

func (s *Store) index(k Kind, uid types.UID, o client.Object) {
	s.namespaces[o.GetNamespace()]++
	switch k {
	case Pod:
		p := o.(*podview.Pod)
		ref := podRef(p)
		if s.podsOf[ref] == nil {
			s.podsOf[ref] = map[types.UID]*podview.Pod{}
		}
		s.podsOf[ref][uid] = p
	case Event:
		ev := o.(*corev1.Event)
		owner := ev.InvolvedObject.UID
		s.eventOwner[uid] = owner
		list := append(s.events[owner], ev)
		sort.SliceStable(list, func(i, j int) bool { return EventTime(list[i]).Before(EventTime(list[j])) })
		if len(list) > MaxEventsPerObject {
			for _, drop := range list[:len(list)-MaxEventsPerObject] {
				delete(s.objs[Event], Key(drop))
				delete(s.eventOwner, Key(drop))
				s.dropNamespace(drop.Namespace)
			}
			list = slices.Clone(list[len(list)-MaxEventsPerObject:])
		}
		s.events[owner] = list
	}
}

func (s *Store) unindex(k Kind, uid types.UID, o client.Object) {
	s.dropNamespace(o.GetNamespace())
	switch k {
	case Pod:
		ref := podRef(o.(*podview.Pod)) // o is the stored object, as index saw it
		delete(s.podsOf[ref], uid)
		if len(s.podsOf[ref]) == 0 {
			delete(s.podsOf, ref)
		}
	case Event:
		owner := s.eventOwner[uid]
		delete(s.eventOwner, uid)
		list := slices.DeleteFunc(s.events[owner], func(e *corev1.Event) bool { return Key(e) == uid })
		if len(list) == 0 {
			delete(s.events, owner)
		} else {
			s.events[owner] = list
		}
	}
}

// podRef is the cluster a Ray pod is indexed under: its ray.io/cluster
// label. Stored objects are never modified, so unindex finds it again
// from the object it removes, with no map from pod to cluster.
func podRef(p *podview.Pod) ClusterRef {
	return ClusterRef{p.Namespace, p.Labels[rayv1.RayClusterLabelKey]}
}

func (s *Store) dropNamespace(ns string) {
	if s.namespaces[ns]--; s.namespaces[ns] <= 0 {
		delete(s.namespaces, ns)
	}
}

// SetNodesKnown says whether the stored nodes are the cluster's (the
// feed watches them and has their initial list; Source.NodesKnown).
func (s *Store) SetNodesKnown(known bool) { s.nodesKnown = known }

// NodesKnown is Nodes' second result, without listing the nodes.
func (s *Store) NodesKnown() bool { return s.nodesKnown }

// Nodes returns the stored nodes, sorted by name, and whether they are
// known: when not (no permission to list nodes, not watched), the list
// says nothing about the cluster and callers must not draw conclusions
// from it.
func (s *Store) Nodes() (nodes []*corev1.Node, known bool) {
	m := s.objs[Node]
	nodes = make([]*corev1.Node, 0, len(m))
	for _, o := range m {
		nodes = append(nodes, o.(*corev1.Node))
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	return nodes, s.nodesKnown
}

// Gen increases with every Apply that changed something.
func (s *Store) Gen() uint64 { return s.gen }

// Len is the number of objects of kind k.
func (s *Store) Len(k Kind) int { return len(s.objs[k]) }

// Get returns an object by kind and UID.
func (s *Store) Get(k Kind, uid types.UID) (client.Object, bool) {
	o, ok := s.objs[k][uid]
	return o, ok
}

// List returns every object of kind k, in no particular order.
func (s *Store) List(k Kind) []client.Object {
	out := make([]client.Object, 0, len(s.objs[k]))
	for _, o := range s.objs[k] {
		out = append(out, o)
	}
	return out
}

// Find returns the object of kind k with the given namespace and name
// (a linear scan; for occasional look-ups such as following a reference).
func (s *Store) Find(k Kind, namespace, name string) (client.Object, bool) {
	for _, o := range s.objs[k] {
		if o.GetName() == name && o.GetNamespace() == namespace {
			return o, true
		}
	}
	return nil, false
}

// PodsOf returns the Ray pods labelled with the cluster, sorted by name.
func (s *Store) PodsOf(c ClusterRef) []*podview.Pod {
	m := s.podsOf[c]
	out := make([]*podview.Pod, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// EventsFor returns the kept Events about the objects, merged, oldest first.
func (s *Store) EventsFor(uids ...types.UID) []*corev1.Event {
	var out []*corev1.Event
	for _, u := range uids {
		out = append(out, s.events[u]...)
	}
	sort.SliceStable(out, func(i, j int) bool { return EventTime(out[i]).Before(EventTime(out[j])) })
	return out
}

// Namespaces returns the namespaces of the stored objects, sorted.
func (s *Store) Namespaces() []string {
	out := make([]string, 0, len(s.namespaces))
	for ns := range s.namespaces {
		if ns != "" {
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out
}

// EventTime is when an Event last happened.
func EventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}
