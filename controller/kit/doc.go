// Package kit is what raydar's four reconcilers (controller/raycluster,
// controller/rayjob, controller/rayservice, controller/raycronjob) share,
// each mechanism in one place. A kind package is observe → decide → act
// around these:
//
//	mechanism                         file             API
//	a kind's controller, set up once  setup.go         Setup, Kind (a kind's registration), Parts, Shared, OrDefault
//	Reconcile prologue, 409 handling  loop.go          Loop[O].Reconcile, UpdateFinalizers
//	read-your-writes                  expectations.go  Expectations, Overlay, OverlayOne, Latest
//	informer side of read-your-writes handler.go       ChildHandler, ControllerOwner
//	a pod's readiness queued first    handler.go       ReadyFirst (ReadinessChanged in filter.go)
//	a create recorded, ambiguity      writes.go        Create, Ambiguous
//	status writing with coalescing    status.go        StatusWriter, StatusChange
//	say-once Events                   events.go        Events (Emit, EmitOnce, Once, Unsay), Event
//	conditions                        conditions.go    apimachinery's meta.SetStatusCondition et al.
//	refusals (invalid, unsupported)   refusal.go       Refusal: the condition message and a Warning said once
//	the other-operator gate           gate.go          Gate, SkipReason, OtherOperatorWatcher
//	pod updates worth a reconcile     filter.go        RelevantChange
//	owner updates worth a reconcile   util.go          FinalizersChanged, SpecOrMetaChanged
//	a cache of one kind's children    sidecache.go     SideCache
//	names and labels of children      names.go         (labels: rayapi/v1/labels.go)
//	child metadata as KubeRay's       children.go      ChildManagedBy, KubeRayCheckLabel
//	small helpers                     util.go
//
// Each kind package exports Registration(Options) *Kind[O], which names
// its kind by its rayapi/kinds descriptor (Kind.Desc: the controller's and
// the Events' names, the objects, whether the kind is optional) and adds
// what its controller watches and how it reconciles; Setup builds, for
// every kind, its field indexes, its side cache, the Expectations, the
// Events, the StatusWriter, the Loop, then the kind's reconciler (Kind.Build
// from those Parts) and its controller: the kind's own changes
// (Kind.Predicates), its children through a ChildHandler (Kind.Owns), the
// reconciler's own watches (Watcher) and the gate's re-queues.
//
// A Reconcile is Loop.Reconcile(ctx, req, pass): the Loop gets the object
// from the cache (gone: everything remembered about it is forgotten), lays
// the process's own last write over it (Latest), asks the gate (an object
// left alone is said once in an Event), then runs pass; a 409 runs pass
// again from a fresh live read, up to three times. In pass, observe reads
// the cache and lays the not-yet-seen writes over it (Overlay, OverlayOne;
// after an ambiguous write TakeUncertain says to read live, and Observed
// uses a live read as it is, ForgetUnanswered aside), decide is
// pure, and act records each write in the Expectations before it leaves
// (Create, or ExpectCreate / ExpectDelete) or after it succeeded (Updated;
// the StatusWriter and UpdateFinalizers do it themselves), marks the
// owner uncertain after an Ambiguous error, emits the
// plan's Events (Events.Emit, EmitOnce for what repeats every pass) and
// writes the status through the StatusWriter, which the kind's pure
// StatusChange tells whether to write now, hold the change (coalescing)
// or do nothing.
package kit
