package kit

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/raydar/raydar/controller/batchscheduler"
	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/kinds"
)

// Shared is what every kind takes from the operator's one Options; Setup
// hands it to each kind's constructor (Parts.Shared).
type Shared struct {
	// Gate is the other-operator gate.
	Gate *Gate
	// Namespaces restricts the kinds' side caches (empty: all).
	Namespaces []string
	// ClusterDomain is the cluster DNS domain ("cluster.local").
	ClusterDomain string
	// InjectProbes adds readiness and liveness probes to the Ray
	// containers built.
	InjectProbes bool
	// Dashboards reaches each cluster's Ray dashboard (RayJob, RayService).
	Dashboards raydash.Resolver
	// SkipNameValidation allows several operators in one process (tests).
	SkipNameValidation bool
	// Features are KubeRay's feature gates (the zero value: raydar's
	// defaults).
	Features features.Gates
	// BatchScheduler is the batch scheduler of --batch-scheduler
	// (controller/batchscheduler), nil for none.
	BatchScheduler batchscheduler.Scheduler
	// PodDefaults shape every Ray pod built (KubeRay's Configuration:
	// sidecars, default envs, labels and annotations).
	PodDefaults PodDefaults
}

// PodDefaults are the pod-shaping fields of KubeRay's config.ray.io/v1alpha1
// Configuration (--config): what the operator adds to every Ray pod it
// builds, as KubeRay v1.7.0's raycluster_controller.go does.
type PodDefaults struct {
	// HeadSidecarContainers and WorkerSidecarContainers are appended to
	// the head's and every worker's containers.
	HeadSidecarContainers, WorkerSidecarContainers []corev1.Container
	// DefaultContainerEnvs are added to the Ray containers; a user's
	// variable of the same name wins.
	DefaultContainerEnvs []corev1.EnvVar
	// DefaultPodLabels and DefaultPodAnnotations are added to every Ray
	// pod; the user's and raydar's own keys win.
	DefaultPodLabels, DefaultPodAnnotations map[string]string
}

// Kind is one kind's registration: what its controller watches and owns,
// how its objects are gated, and its reconciler's constructor. Each kind
// package exports a function returning one; Setup turns it into a
// controller on the manager.
type Kind[O client.Object] struct {
	// Desc is the kind's descriptor (rayapi/kinds), which says the rest:
	// the controller's name (Name), its Events' reporting controller
	// (EventSource), how to make an empty object and list of the kind
	// (Desc.New must make an O), how the gate's messages name one
	// (gateNoun), and whether the API server may lack it (Desc.Optional:
	// a server that does not serve the kind, its CRD not installed, gets
	// no controller for it, and the others run).
	Desc *kinds.Kind
	// ManagedBy returns what the gate reads as the object's
	// spec.managedBy; ListUnmanaged lists skipped objects (Gate.Unmanaged).
	ManagedBy     func(O) *string
	ListUnmanaged bool
	// Predicates: the changes of the kind's objects worth a reconcile.
	Predicates []predicate.Predicate
	// Owns are the children whose controller owner is an object of the
	// kind, watched through a ChildHandler (owner's queue, expectations).
	Owns []Owned
	// Indexes are the cache's field indexes the kind lists by.
	Indexes []Index
	// Side, when set, is a cache of the kind's own (SideCache) for
	// children the shared cache does not hold; Parts.Side reads it.
	Side *Side
	// Concurrency is the number of objects reconciled at once.
	Concurrency int
	// ExpectationTTL bounds how long a write is laid over a cache that
	// does not show it (DefaultExpectationTTL when 0); Now is the
	// expectations' clock (time.Now when nil).
	ExpectationTTL time.Duration
	Now            func() time.Time
	// Build makes the kind's reconciler from the parts Setup built. The
	// reconciler may also be a Forgetter (its own memory of an object
	// that is gone) and a Watcher (watches beyond Owns).
	Build func(*Parts[O]) (Reconciler[O], error)
}

// Owned is a child kind watched through a ChildHandler.
type Owned struct {
	Object     client.Object
	Predicates []predicate.Predicate
}

// Index is a field index of the shared cache.
type Index struct {
	Object  client.Object
	Field   string
	Extract client.IndexerFunc
}

// Side describes a kind's side cache (SideCache): what names it in
// errors, the label selector and the object types it holds.
type Side struct {
	What     string
	Selector labels.Selector
	Objects  []client.Object
}

// Parts are what Setup builds for one kind, each mechanism once, and
// hands its constructor.
type Parts[O client.Object] struct {
	Shared
	Client client.Client // reads from the shared cache, writes to the API server
	API    client.Reader // live reads
	Exp    *Expectations
	Events *Events
	Status *StatusWriter
	Loop   *Loop[O]
	// Side reads the kind's side cache (nil without one).
	Side cache.Cache
	// Manager is the manager the kind is set up on (nil in unit tests).
	Manager manager.Manager
}

// Reconciler is a kind's pass (observe → decide → act); Setup runs it
// after Loop's prologue.
type Reconciler[O client.Object] interface {
	Pass(ctx context.Context, obj O) (ctrl.Result, error)
}

// Forgetter is a reconciler that remembers more of an object than the
// kit does; Loop calls Forget when the object is gone.
type Forgetter interface {
	Forget(uid types.UID, nn types.NamespacedName)
}

// Watcher is a reconciler that adds watches of its own (map functions,
// its side cache's sources) to its controller.
type Watcher interface {
	Watch(b *builder.Builder) *builder.Builder
}

// Name names the kind's controller in logs and metrics: its API kind in
// lower case ("rayjob").
func (k *Kind[O]) Name() string { return strings.ToLower(k.Desc.Kind) }

// EventSource names the reporting controller of the kind's Events:
// "raydar-" and Name ("raydar-rayjob").
func (k *Kind[O]) EventSource() string { return "raydar-" + k.Name() }

// newObject is an empty object of the kind, Desc.New's (check made sure
// it is an O).
func (k *Kind[O]) newObject() O { return k.Desc.New().(O) }

// check refuses a registration without a descriptor, or whose descriptor's
// objects are not O.
func (k *Kind[O]) check() error {
	if k.Desc == nil {
		return fmt.Errorf("controller: a %T registration without its kind's descriptor (Kind.Desc)", k)
	}
	if _, ok := k.Desc.New().(O); !ok {
		var o O
		return fmt.Errorf("controller: a registration of %T objects with the %s descriptor, whose objects are %T", o, k.Desc.Kind, k.Desc.New())
	}
	return nil
}

// Registration is a Kind of any object type, for Setup.
type Registration interface {
	setup(mgr manager.Manager, sh Shared) (desc *kinds.Kind, k Known, err error)
}

// Known counts a kind's objects reconciled and not yet forgotten.
type Known interface{ Known() int }

// Setup registers every kind with mgr: for each, the field indexes, the
// side cache, the expectations, the say-once Events, the status writer,
// the Loop, the reconciler (Kind.Build) and the controller with its
// watches (the kind, its children through a ChildHandler, the
// reconciler's own, the gate's re-queues). It returns each registered
// kind's Known by its descriptor; an Optional kind the API server does not
// serve is absent.
func Setup(mgr manager.Manager, sh Shared, regs ...Registration) (map[*kinds.Kind]Known, error) {
	known := map[*kinds.Kind]Known{}
	for _, k := range regs {
		desc, n, err := k.setup(mgr, sh)
		if err != nil {
			return nil, err
		}
		if n != nil {
			known[desc] = n
		}
	}
	return known, nil
}

// NewParts builds what a kind's reconciler is made of without a manager
// (Setup uses it, and unit tests with a fake client). It panics on a
// registration Setup refuses (no descriptor, or one of other objects).
func NewParts[O client.Object](k *Kind[O], c client.Client, api client.Reader, rec recorder.EventRecorder, sh Shared) *Parts[O] {
	if err := k.check(); err != nil {
		panic(err) // a registration's mistake: Setup returns it as an error
	}
	now := k.Now
	if now == nil {
		now = time.Now
	}
	p := &Parts[O]{Shared: sh, Client: c, API: api, Events: NewEvents(rec),
		Exp: NewExpectations(cmp.Or(k.ExpectationTTL, DefaultExpectationTTL), now)}
	p.Status = NewStatusWriter(c, p.Exp)
	p.Loop = &Loop[O]{Cache: c, API: api, New: k.newObject, Exp: p.Exp, Events: p.Events, Status: p.Status,
		Gate: sh.Gate, Noun: gateNoun(k.Desc), ManagedBy: k.ManagedBy, ListUnmanaged: k.ListUnmanaged}
	return p
}

// Reconcile builds the kind's reconciler from p and returns what runs it:
// Loop's prologue, then the reconciler's pass.
func (k *Kind[O]) Reconcile(p *Parts[O]) (Reconciler[O], reconcile.Func, error) {
	r, err := k.Build(p)
	if err != nil {
		return nil, nil, err
	}
	if f, ok := r.(Forgetter); ok {
		p.Loop.Forget = f.Forget
	}
	return r, func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		return p.Loop.Reconcile(ctx, req, r.Pass)
	}, nil
}

func (k *Kind[O]) setup(mgr manager.Manager, sh Shared) (*kinds.Kind, Known, error) {
	if err := k.check(); err != nil {
		return nil, nil, err
	}
	gvk, err := apiutil.GVKForObject(k.newObject(), mgr.GetScheme())
	if err != nil {
		return nil, nil, err
	}
	if k.Desc.Optional {
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			if meta.IsNoMatchError(err) {
				mgr.GetLogger().Info("the API server serves no " + k.Desc.Plural + " (no " + gvk.Kind + " CRD): not reconciling them")
				return k.Desc, nil, nil
			}
			return nil, nil, fmt.Errorf("controller: looking up %s: %w", k.Desc.Plural, err)
		}
	}
	for _, ix := range k.Indexes {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), ix.Object, ix.Field, ix.Extract); err != nil {
			return nil, nil, fmt.Errorf("controller: indexing %T by %s: %w", ix.Object, ix.Field, err)
		}
	}
	p := NewParts(k, mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorder(k.EventSource()), sh)
	p.Manager = mgr
	if k.Side != nil {
		side, err := SideCache(mgr, k.Side.What, k.Side.Selector, sh.Namespaces, k.Side.Objects...)
		if err != nil {
			return nil, nil, err
		}
		p.Side = side
	}
	r, run, err := k.Reconcile(p)
	if err != nil {
		return nil, nil, fmt.Errorf("controller: %s reconciler: %w", gvk.Kind, err)
	}
	h := &ChildHandler{Exp: p.Exp, Owner: ControllerOwner(gvk.Kind, gvk.GroupVersion().String())}
	skipNames := sh.SkipNameValidation
	b := ctrl.NewControllerManagedBy(mgr).
		Named(k.Name()).
		For(k.newObject(), builder.WithPredicates(k.Predicates...)).
		WithOptions(controller.Options{MaxConcurrentReconciles: k.Concurrency, SkipNameValidation: &skipNames})
	for _, o := range k.Owns {
		b = b.Watches(o.Object, h, builder.WithPredicates(o.Predicates...))
	}
	if w, ok := r.(Watcher); ok {
		b = w.Watch(b)
	}
	b = WatchKicks(b, sh.Gate, func() client.ObjectList { return k.Desc.NewList() })
	if err := b.Complete(run); err != nil {
		return nil, nil, fmt.Errorf("controller: building the %s controller: %w", gvk.Kind, err)
	}
	return k.Desc, p.Loop, nil
}

// OrDefault is v when set (above its type's zero), else def: a kind's
// Options field over the kind's default, the one way every kind merges
// them.
func OrDefault[T cmp.Ordered](v, def T) T {
	var zero T
	if v > zero {
		return v
	}
	return def
}
