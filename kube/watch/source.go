package watch

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Kind is the kind of object a delta carries: one of rayapi/kinds' (its
// descriptor's index in kinds.All), or Event or Node, the watch's own.
type Kind uint8

// The kinds of rayapi/kinds, in kinds.All's order. A kind added there is
// watched and stored without a constant here: KindFor gives its Kind. The
// constants name the ones the watch, the diagnosis and the TUI read by name
// (init checks they match kinds.All).
const (
	RayCluster Kind = iota
	RayJob
	RayService
	RayCronJob
	Pod
)

// numKinds bounds the Kinds: the arrays indexed by Kind (the store's, a
// Changes') have this length. rayapi/kinds' kinds take the first indexes;
// Event and Node, the watch's own, the last two.
const numKinds = 16

// The watch's own kinds.
const (
	Event Kind = numKinds - 2
	// Node is watched only when the user may list and watch nodes (see
	// Source.SetNodeAccess); the store then knows them (Store.Nodes).
	Node Kind = numKinds - 1
)

// Kinds lists every Kind: rayapi/kinds' in kinds.All's order, then Event
// and Node. kindTable is what the bridge knows of each Kind, indexed by
// Kind: its name, an empty object of it (the informer's type) and whether
// the cluster may lack it; an index no Kind has is zero. byDescriptor is
// the Kind of each descriptor of kinds.All.
var Kinds, kindTable, byDescriptor = kindsOf(kinds.All)

// kindsOf builds Kinds, kindTable and byDescriptor: the kinds raydar shows
// read their descriptor (rayapi/kinds); Event and Node are the watch's own.
// It panics when the descriptors do not fit below Event or a constant above
// is not its descriptor's index.
func kindsOf(all []*kinds.Kind) ([]Kind, [numKinds]kindInfo, map[*kinds.Kind]Kind) {
	if len(all) > int(Event) {
		panic(fmt.Sprintf("watch: %d kinds in rayapi/kinds, room for %d: raise numKinds", len(all), Event))
	}
	var (
		ks    []Kind
		table [numKinds]kindInfo
		by    = map[*kinds.Kind]Kind{}
	)
	for i, d := range all {
		k := Kind(i)
		table[k] = kindInfo{d.Kind, func() client.Object { return d.New() }, d.Optional}
		by[d] = k
		ks = append(ks, k)
	}
	table[Event] = kindInfo{"Event", func() client.Object { return &corev1.Event{} }, false}
	// Node: optional, as the user may not list nodes (SetNodeAccess).
	table[Node] = kindInfo{"Node", func() client.Object { return &corev1.Node{} }, true}
	ks = append(ks, Event, Node)
	for k, d := range map[Kind]*kinds.Kind{RayCluster: kinds.RayCluster, RayJob: kinds.RayJob, RayService: kinds.RayService, RayCronJob: kinds.RayCronJob, Pod: kinds.Pod} {
		if got, ok := by[d]; !ok || got != k {
			panic(fmt.Sprintf("watch: the constant of %s is %d, its index in kinds.All %d", d.Kind, k, got))
		}
	}
	return ks, table, by
}

// KindFor is the Kind of a descriptor of rayapi/kinds. It panics for a
// descriptor that is not in kinds.All (a program error).
func KindFor(d *kinds.Kind) Kind {
	k, ok := byDescriptor[d]
	if !ok {
		panic(fmt.Sprintf("watch: %v is not in kinds.All", d))
	}
	return k
}

type kindInfo struct {
	name string
	new  func() client.Object
	// optional kinds are skipped, not an error, when the API server does
	// not serve them: RayCronJob is KubeRay v1.7's, and clusters with older
	// KubeRay CRDs have no such resource.
	optional bool
}

// String is the kind's name, "Kind(N)" for a number that names none.
func (k Kind) String() string {
	if k < numKinds && kindTable[k].new != nil {
		return kindTable[k].name
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Delta is one change: the object's latest state, or its last known state
// when Deleted.
type Delta struct {
	Kind    Kind
	Deleted bool
	Object  client.Object
}

// DefaultWindow is the batch window: at most ~10 batches a second.
const DefaultWindow = 100 * time.Millisecond

type pkey struct {
	kind Kind
	uid  types.UID
}

// Source collects deltas from informer handlers and hands them out in
// batches. Several deltas of one object inside a window coalesce into the
// latest, so memory is bounded by the number of objects, not the event rate,
// and a slow consumer never blocks an informer.
type Source struct {
	window time.Duration
	after  func(time.Duration) <-chan time.Time // time.After; replaced in tests

	mu      sync.Mutex
	pending map[pkey]int // index into batch
	batch   []Delta
	regs    []registration
	// wantRegs is how many registrations Watch makes: every kind but the
	// optional ones the API server does not serve.
	wantRegs int
	watching bool
	notify   chan struct{}
	// allRegistered is closed once Watch has registered every handler.
	allRegistered chan struct{}

	// rayPods are the UIDs of the Ray pods seen: Events of these pods are
	// kept. A map under a lock, not a sync.Map: the sync.Map's trie
	// nodes cost ~200 bytes a pod (heap profile at 10,000 pods: 2 MB).
	rayPodsMu sync.Mutex
	rayPods   map[types.UID]struct{}

	// nodeAccess says whether nodes may be watched (nil: they are not);
	// nodeReg is the Node handler once registered, nodesWhy why there is
	// none.
	nodeAccess NodeAccess
	nodeReg    toolscache.ResourceEventHandlerRegistration
	nodesWhy   string
}

type registration struct {
	kind Kind
	inf  cache.Informer
	reg  toolscache.ResourceEventHandlerRegistration
}

// NewSource returns a Source with the given batch window (DefaultWindow if
// window < 0; 0 hands out whatever is pending at once).
func NewSource(window time.Duration) *Source {
	if window < 0 {
		window = DefaultWindow
	}
	return &Source{window: window, pending: map[pkey]int{}, notify: make(chan struct{}, 1), allRegistered: make(chan struct{}), after: time.After}
}

// Push adds a delta. Informer handlers call it; tests and custom feeds may
// too. It never blocks.
func (s *Source) Push(d Delta) {
	if d.Object == nil {
		return
	}
	k := pkey{d.Kind, Key(d.Object)}
	s.mu.Lock()
	if i, ok := s.pending[k]; ok {
		s.batch[i] = d
	} else {
		s.pending[k] = len(s.batch)
		s.batch = append(s.batch, d)
	}
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Next blocks until at least one delta is pending, then waits the batch
// window and returns everything pending, in order of first arrival. It
// returns ctx.Err() when ctx ends first.
func (s *Source) Next(ctx context.Context) ([]Delta, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.notify:
		}
		if s.window > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-s.after(s.window):
			}
		}
		s.mu.Lock()
		b := s.batch
		s.batch = nil
		clear(s.pending)
		s.mu.Unlock()
		if len(b) > 0 {
			return b, nil
		}
	}
}

// Pending is the number of deltas waiting (for tests and metrics).
func (s *Source) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.batch)
}

// Key is the identity of an object in the bridge and the store: its UID, or
// namespace/name for objects without one (hand-made test objects).
func Key(o client.Object) types.UID {
	if u := o.GetUID(); u != "" {
		return u
	}
	return types.UID(o.GetNamespace() + "/" + o.GetName())
}

// InformerSource is the part of a controller-runtime cache.Cache the bridge
// needs; cache.Cache and cache.Informers implement it.
type InformerSource interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// Watch registers the bridge's handlers on the cache's informers for every
// kind (starting informers the cache does not have yet, without waiting for
// them to sync); an optional kind the API server does not serve (no
// RayCronJob CRD) is left out. The Event handler is added once the Pod handler
// has seen the initial list, so the Events of existing Ray pods are
// recognised. The handlers are removed when ctx ends. Watch may be called
// once per Source, and again after it failed (an API server that did not
// answer: a fleet view retries).
func (s *Source) Watch(ctx context.Context, c InformerSource) (err error) {
	s.mu.Lock()
	if s.watching {
		s.mu.Unlock()
		return fmt.Errorf("watch: Source.Watch called twice")
	}
	s.watching = true
	s.mu.Unlock()
	defer func() {
		if err != nil { // its handlers are removed, the Node one too
			s.mu.Lock()
			s.watching, s.nodeReg = false, nil
			s.mu.Unlock()
		}
	}()
	// Every kind but Event now; Event once the Pod handler has synced.
	var (
		regs   []registration
		podReg toolscache.ResourceEventHandlerRegistration
	)
	for _, k := range Kinds {
		if k == Event {
			continue
		}
		if k == Node && !s.mayWatchNodes(ctx) {
			continue
		}
		r, err := s.register(ctx, c, k, kindTable[k].new())
		if err != nil && kindTable[k].optional && meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			remove(regs)
			return err
		}
		regs = append(regs, r)
		switch k {
		case Pod:
			podReg = r.reg
		case Node:
			s.mu.Lock()
			s.nodeReg = r.reg
			s.mu.Unlock()
		}
	}
	evInf, err := c.GetInformer(ctx, kindTable[Event].new(), cache.BlockUntilSynced(false))
	if err != nil {
		remove(regs)
		return fmt.Errorf("watch %s: %w", Event, err)
	}
	s.mu.Lock()
	s.regs = append(s.regs, regs...)
	s.wantRegs = len(regs) + 1 // and Event's
	s.mu.Unlock()
	go func() {
		if toolscache.WaitForCacheSync(ctx.Done(), podReg.HasSynced) {
			if reg, err := evInf.AddEventHandler(s.Handler(Event)); err == nil {
				s.mu.Lock()
				s.regs = append(s.regs, registration{Event, evInf, reg})
				s.mu.Unlock()
				close(s.allRegistered)
			}
		}
		<-ctx.Done()
		s.mu.Lock()
		all := s.regs
		s.regs = nil
		s.mu.Unlock()
		remove(all)
	}()
	return nil
}

func (s *Source) register(ctx context.Context, c InformerSource, kind Kind, obj client.Object) (registration, error) {
	inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return registration{}, fmt.Errorf("watch %s: %w", kind, err)
	}
	reg, err := inf.AddEventHandler(s.Handler(kind))
	if err != nil {
		return registration{}, fmt.Errorf("watch %s: %w", kind, err)
	}
	return registration{kind, inf, reg}, nil
}

func remove(regs []registration) {
	for _, r := range regs {
		_ = r.inf.RemoveEventHandler(r.reg)
	}
}

// Synced reports whether every handler registered by Watch has received its
// informer's initial list (false before Watch).
func (s *Source) Synced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, n := s.pendingLocked()
	return s.wantRegs != 0 && n == 0
}

// Unsynced names, in the plural and in Kinds' order, the kinds whose
// handlers have not received their informer's initial list yet: what the
// header's "syncing" is waiting for (nil once Synced; nil before Watch, when
// nothing is known to wait for). Event counts from the start: its handler
// is registered once the pods have synced.
func (s *Source) Unsynced() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wantRegs == 0 {
		return nil
	}
	pending, _ := s.pendingLocked()
	var out []string
	for _, k := range Kinds {
		if pending[k] {
			out = append(out, k.String()+"s")
		}
	}
	return out
}

// pendingLocked is which kinds' handlers have not had their initial list,
// and how many: Event's too while its handler is not registered. s.mu is
// held.
func (s *Source) pendingLocked() (pending [numKinds]bool, n int) {
	mark := func(k Kind) {
		if !pending[k] {
			pending[k] = true
			n++
		}
	}
	for _, r := range s.regs {
		if !r.reg.HasSynced() {
			mark(r.kind)
		}
	}
	if len(s.regs) < s.wantRegs {
		mark(Event)
	}
	return pending, n
}

// WaitSynced blocks until Watch has registered every handler and each has
// received its informer's initial list, or ctx ends.
func (s *Source) WaitSynced(ctx context.Context) error {
	select {
	case <-s.allRegistered:
	case <-ctx.Done():
		return ctx.Err()
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), s.Synced) {
		return ctx.Err()
	}
	return nil
}

// Handler returns the event handler for kind, for callers that run their own
// informers. Pods without the ray.io/node-type label and Events that are not
// about a ray.io object or a Ray pod are ignored.
func (s *Source) Handler(kind Kind) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { s.upsert(kind, nil, obj) },
		UpdateFunc: func(old, obj any) {
			s.upsert(kind, old, obj)
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			o, ok := record(kind, obj)
			if !ok {
				return
			}
			if kind == Pod {
				if known := s.forgetRayPod(Key(o)); !known && !rayv1.IsRayPod(o.GetLabels()) {
					return
				}
			}
			if kind == Event && !s.relevantEvent(o) {
				return
			}
			s.Push(Delta{Kind: kind, Deleted: true, Object: o})
		},
	}
}

func (s *Source) upsert(kind Kind, old, obj any) {
	o, ok := record(kind, obj)
	if !ok {
		return
	}
	switch kind {
	case Pod:
		if !rayv1.IsRayPod(o.GetLabels()) {
			if was := s.forgetRayPod(Key(o)); was { // label removed
				s.Push(Delta{Kind: kind, Deleted: true, Object: o})
			}
			return
		}
		s.rayPodsMu.Lock()
		if s.rayPods == nil {
			s.rayPods = map[types.UID]struct{}{}
		}
		s.rayPods[Key(o)] = struct{}{}
		s.rayPodsMu.Unlock()
	case Event:
		if !s.relevantEvent(o) {
			return
		}
	}
	s.Push(Delta{Kind: kind, Object: o})
}

// record is obj as the Store holds it: a pod as its *podview.Pod (the
// observe-only cache's transform made it one already; the operator's cache
// holds a *corev1.Pod), anything else as it is.
func record(kind Kind, obj any) (client.Object, bool) {
	if p, ok := obj.(*corev1.Pod); ok && kind == Pod {
		if p == nil {
			return nil, false
		}
		return podview.Of(p), true
	}
	o, ok := obj.(client.Object)
	return o, ok
}

// forgetRayPod drops uid from the Ray pods seen, reporting whether it was
// one.
func (s *Source) forgetRayPod(uid types.UID) bool {
	s.rayPodsMu.Lock()
	defer s.rayPodsMu.Unlock()
	_, ok := s.rayPods[uid]
	delete(s.rayPods, uid)
	return ok
}

func (s *Source) relevantEvent(o client.Object) bool {
	ev, ok := o.(*corev1.Event)
	if !ok {
		return false
	}
	ref := ev.InvolvedObject
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && gv.Group == rayv1.GroupName {
		return true
	}
	if ref.Kind == "Pod" && (ref.APIVersion == "" || ref.APIVersion == "v1") {
		s.rayPodsMu.Lock()
		_, ok := s.rayPods[ref.UID]
		s.rayPodsMu.Unlock()
		return ok
	}
	return false
}
