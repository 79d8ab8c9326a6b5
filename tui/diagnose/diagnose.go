package diagnose

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/inspect"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// Diagnoses caches the causes (rayapi/why) of every RayCluster, RayJob and
// RayService of a session's store, by UID. They are computed when the
// object, its pods, their Events, the nodes, who reconciles, the
// cluster's Ray capacity or its autoscaler's access (access.go) change —
// never per frame: the WHY cells are
// projected from the cache when a row changes, the detail pages read it.
type Diagnoses struct {
	store *watch.Store
	now   func() time.Time
	Fn    Diagnosers
	// nodesKnown says whether the store's nodes are the cluster's (the
	// feed's NodesKnown; nil: the store's own word, Store.SetNodesKnown).
	nodesKnown func() bool

	causes map[types.UID][]why.Cause
	// column is the WHY cell's text per UID, to tell which rows to project
	// again.
	column map[types.UID]string
	// Changed are, per store kind, the objects whose WHY cell changed in
	// the last update (the lists re-project them).
	Changed map[watch.Kind][]types.UID

	reconciler why.Reconciler
	// capacity is Ray's view of the one cluster whose detail page polls it.
	capUID types.UID
	cap    *dashboard.Capacity
	// gpuUID's GPUs are Ray's gauges of the open cluster's GPUs
	// (SetGPUs), for its GPUsIdle cause; gpuKey what they said.
	gpuUID types.UID
	gpus   *why.GPUGauges
	gpuKey string
	// demandSince is when that cluster's pending demand (the shapes in
	// demandKey, why.PendingShapes) was first seen: how long Ray's demand has waited
	// (why.ClusterInput.DemandSince).
	demandSince time.Time
	demandKey   string
	// nodeFP fingerprints the nodes (what scheduling reads of them), so
	// that heartbeats do not recompute every cluster.
	nodeFP map[types.UID]string
	// timedAt is when the time-dependent causes were last recomputed.
	timedAt time.Time
	// access holds the answers of the SubjectAccessReviews about the
	// autoscalers of the clusters on screen (access.go); nil: not asked.
	access *access
	// gw holds what was read of the Gateway API objects of the RayServices
	// that upgrade incrementally (gateway.go); nil: never read.
	gw *gateways
	// seen is when each object's current generation was first diagnosed
	// (why's SpecSeen: the cache strips managedFields, which would say
	// when the spec changed).
	seen map[types.UID]seenGen
}

// seenGen is a generation and when it was first seen.
type seenGen struct {
	gen int64
	at  time.Time
}

// specSeen is when o's current generation was first seen, now for a new
// one.
func (d *Diagnoses) specSeen(o client.Object, now time.Time) time.Time {
	uid, g := watch.Key(o), o.GetGeneration()
	if s, ok := d.seen[uid]; ok && s.gen == g {
		return s.at
	}
	d.seen[uid] = seenGen{gen: g, at: now}
	return now
}

// timedEvery is how often the causes that depend on the clock alone (a
// RayJob's deadline about to fire, a dashboard unreachable for a while)
// are recomputed, for the jobs that can have them.
const timedEvery = 10 * time.Second

// RefreshTimed recomputes, at most every timedEvery, the objects whose
// causes move with the clock: unfinished RayJobs with a deadline, or whose
// status checks fail, or whose status may come to contradict itself; and,
// while a raydar reconciler is active, the objects whose status lags their
// generation and the RayClusters with fewer ready workers than asked.
func (d *Diagnoses) RefreshTimed() {
	now := d.now()
	if now.Sub(d.timedAt) < timedEvery {
		return
	}
	d.timedAt = now
	jobs := uidSet{}
	for _, o := range d.store.List(watch.RayJob) {
		j := o.(*rayv1.RayJob)
		if contradictionComes(j) {
			jobs[watch.Key(o)] = true
			continue
		}
		if j.Status.JobStatus.IsTerminal() {
			continue
		}
		if j.Spec.ActiveDeadlineSeconds != nil || j.Spec.PreRunningDeadlineSeconds != nil || j.Status.JobStatusCheckFailureStartTime != nil {
			jobs[watch.Key(o)] = true
		}
	}
	// What waits for an active raydar reconciler, or a scale-up under way
	// (WaitingForOperator, WorkersMissing), is said once a grace has
	// passed, and counts its wait.
	svcs := uidSet{}
	var clusters map[watch.ClusterRef]bool
	if d.reconciler.Active {
		clusters = d.waiting(jobs, svcs)
	}
	if len(jobs) > 0 || len(svcs) > 0 || len(clusters) > 0 {
		d.recompute(clusters, jobs, svcs)
	}
}

// waiting adds to jobs and svcs the RayJobs and RayServices whose status
// lags their generation, and returns the RayClusters whose status lags or
// whose ready workers are fewer than the spec asks for.
func (d *Diagnoses) waiting(jobs, svcs uidSet) map[watch.ClusterRef]bool {
	for _, o := range d.store.List(watch.RayJob) {
		if j := o.(*rayv1.RayJob); lags(j.Generation, j.Status.ObservedGeneration, j.Status.JobDeploymentStatus == "") && !j.IsTerminal() {
			jobs[watch.Key(o)] = true
		}
	}
	for _, o := range d.store.List(watch.RayService) {
		if s := o.(*rayv1.RayService); lags(s.Generation, s.Status.ObservedGeneration, len(s.Status.Conditions) == 0) {
			svcs[watch.Key(o)] = true
		}
	}
	var clusters map[watch.ClusterRef]bool
	for _, o := range d.store.List(watch.RayCluster) {
		rc := o.(*rayv1.RayCluster)
		if lags(rc.Generation, rc.Status.ObservedGeneration, rc.Status.State == "" && len(rc.Status.Conditions) == 0) ||
			(!rc.Spec.IsSuspended() && rc.Status.ReadyWorkerReplicas < rc.Spec.DesiredWorkerPods()) {
			if clusters == nil {
				clusters = map[watch.ClusterRef]bool{}
			}
			clusters[watch.ClusterRef{Namespace: rc.Namespace, Name: rc.Name}] = true
		}
	}
	return clusters
}

// lags: a status that does not describe the generation (written for an
// older one, or never written), as rayapi/why reads it.
func lags(gen, observed int64, unwritten bool) bool {
	return unwritten || (observed != 0 && observed < gen)
}

// contradictionComes: a Running RayJob whose status may come to
// contradict itself once a grace passes (rayapi/status JobContradiction):
// its Ray job ended, or its copy of the cluster's status is not ready.
func contradictionComes(j *rayv1.RayJob) bool {
	st := &j.Status
	return st.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning &&
		(st.JobStatus.IsTerminal() || st.RayClusterStatus.State != rayv1.Ready)
}

// Diagnosers are the pure functions that name the causes: rayapi/why's
// (tests count and inspect the calls).
type Diagnosers struct {
	Cluster func(why.ClusterInput) []why.Cause
	Job     func(why.JobInput) []why.Cause
	Service func(why.ServiceInput) []why.Cause
	Column  func([]why.Cause) string
}

// WhyDiagnosers are rayapi/why's own functions, what the TUI diagnoses
// with outside tests.
var WhyDiagnosers = Diagnosers{Cluster: why.Cluster, Job: why.Job, Service: why.Service, Column: why.Column}

// NewDiagnoses diagnoses store's objects with WhyDiagnosers; role is the
// session's reconciler role (ReconcilerOf) and nodesKnown says whether the
// store's nodes are the cluster's.
func NewDiagnoses(store *watch.Store, now func() time.Time, role string, nodesKnown func() bool) *Diagnoses {
	return newDiagnosesWith(WhyDiagnosers, store, now, role, nodesKnown)
}

// newDiagnosesWith is NewDiagnoses with the diagnosers fn, and computes
// every object's causes at once.
func newDiagnosesWith(fn Diagnosers, store *watch.Store, now func() time.Time, role string, nodesKnown func() bool) *Diagnoses {
	d := &Diagnoses{Fn: fn, store: store, now: now, nodesKnown: nodesKnown, reconciler: ReconcilerOf(role),
		causes: map[types.UID][]why.Cause{}, column: map[types.UID]string{}, nodeFP: map[types.UID]string{},
		seen: map[types.UID]seenGen{}}
	d.syncNodesKnown()
	nodes, _ := store.Nodes()
	for _, n := range nodes {
		d.nodeFP[watch.Key(n)] = nodeFingerprint(n)
	}
	d.All()
	d.Changed = nil
	return d
}

// Get returns an object's causes (nil: healthy or unknown).
func (d *Diagnoses) Get(uid types.UID) []why.Cause { return d.causes[uid] }

// Cell is the WHY column's text for an object.
func (d *Diagnoses) Cell(uid types.UID) string { return d.column[uid] }

// syncNodesKnown takes the feed's word on whether the nodes are known
// (without one, a store filled directly keeps its own); it reports a
// change.
func (d *Diagnoses) syncNodesKnown() bool {
	if d.nodesKnown == nil {
		return false
	}
	known := d.nodesKnown()
	was := d.store.NodesKnown()
	d.store.SetNodesKnown(known)
	return known != was
}

// SetRole recomputes everything when who reconciles changed.
func (d *Diagnoses) SetRole(role string) {
	if r := ReconcilerOf(role); r != d.reconciler {
		d.reconciler = r
		d.All()
	}
}

// SetCapacity records Ray's view of one cluster (nil: none) and recomputes
// it and what depends on it when it changed.
func (d *Diagnoses) SetCapacity(uid types.UID, c *dashboard.Capacity) {
	if uid == d.capUID && c == d.cap {
		return
	}
	old := d.capUID
	key := why.PendingShapes(c)
	switch {
	case key == "":
		d.demandSince, d.demandKey = time.Time{}, ""
	case uid != old || key != d.demandKey:
		d.demandSince, d.demandKey = d.now(), key
		if !c.FetchedAt.IsZero() {
			d.demandSince = c.FetchedAt
		}
	}
	d.capUID, d.cap = uid, c
	dirty := map[watch.ClusterRef]bool{}
	for _, u := range []types.UID{old, uid} {
		if o, ok := d.store.Get(watch.RayCluster, u); ok {
			dirty[watch.ClusterRef{Namespace: o.GetNamespace(), Name: o.GetName()}] = true
		}
	}
	d.recompute(dirty, nil, nil)
}

// SetGPUs records what Ray's gauges say of one cluster's GPUs (nil: not
// read) and recomputes the cluster and what depends on it when that
// changed.
func (d *Diagnoses) SetGPUs(uid types.UID, g *why.GPUGauges) {
	key := fmt.Sprint(g)
	if g != nil {
		key = fmt.Sprint(*g)
	}
	if uid == d.gpuUID && key == d.gpuKey {
		return
	}
	old := d.gpuUID
	d.gpuUID, d.gpus, d.gpuKey = uid, g, key
	dirty := map[watch.ClusterRef]bool{}
	for _, u := range []types.UID{old, uid} {
		if o, ok := d.store.Get(watch.RayCluster, u); ok {
			dirty[watch.ClusterRef{Namespace: o.GetNamespace(), Name: o.GetName()}] = true
		}
	}
	d.recompute(dirty, nil, nil)
}

// All recomputes every object.
func (d *Diagnoses) All() {
	clusters := map[watch.ClusterRef]bool{}
	for _, o := range d.store.List(watch.RayCluster) {
		clusters[watch.ClusterRef{Namespace: o.GetNamespace(), Name: o.GetName()}] = true
	}
	jobs, svcs := uidSet{}, uidSet{}
	for _, o := range d.store.List(watch.RayJob) {
		jobs[watch.Key(o)] = true
	}
	for _, o := range d.store.List(watch.RayService) {
		svcs[watch.Key(o)] = true
	}
	d.recompute(clusters, jobs, svcs)
}

// Update brings the causes up to date with a store change.
func (d *Diagnoses) Update(ch *watch.Changes) {
	d.Changed = nil
	clusters := map[watch.ClusterRef]bool{}
	jobs, svcs := uidSet{}, uidSet{}
	for _, o := range ch.Deleted[watch.RayCluster] {
		d.forget(watch.Key(o))
	}
	for _, o := range ch.Deleted[watch.RayJob] {
		d.forget(watch.Key(o))
	}
	for _, o := range ch.Deleted[watch.RayService] {
		d.forget(watch.Key(o))
	}
	ref := func(ns, name string) {
		if name != "" {
			clusters[watch.ClusterRef{Namespace: ns, Name: name}] = true
		}
	}
	for _, o := range append(slices.Clone(ch.Upserted[watch.RayCluster]), ch.Deleted[watch.RayCluster]...) {
		ref(o.GetNamespace(), o.GetName())
	}
	for _, o := range append(slices.Clone(ch.Upserted[watch.Pod]), ch.Deleted[watch.Pod]...) {
		ref(o.GetNamespace(), o.GetLabels()[rayv1.RayClusterLabelKey])
	}
	for _, o := range ch.Upserted[watch.RayJob] {
		jobs[watch.Key(o)] = true
	}
	for _, o := range ch.Upserted[watch.RayService] {
		svcs[watch.Key(o)] = true
	}
	for _, o := range append(slices.Clone(ch.Upserted[watch.Event]), ch.Deleted[watch.Event]...) {
		ev := o.(*corev1.Event)
		io := ev.InvolvedObject
		switch io.Kind {
		case rayv1.KindRayCluster:
			ref(ev.Namespace, io.Name)
		case rayv1.KindRayJob:
			jobs[io.UID] = true
		case rayv1.KindRayService:
			svcs[io.UID] = true
		case "Pod":
			if p, ok := d.store.Get(watch.Pod, io.UID); ok {
				ref(p.GetNamespace(), p.GetLabels()[rayv1.RayClusterLabelKey])
			}
		}
	}
	if d.nodesChanged(ch) {
		// Scheduling evidence names the nodes: recompute the clusters that
		// have pods not running yet.
		for _, o := range d.store.List(watch.RayCluster) {
			r := watch.ClusterRef{Namespace: o.GetNamespace(), Name: o.GetName()}
			for _, p := range d.store.PodsOf(r) {
				if p.Status.Phase == corev1.PodPending || p.Status.Phase == "" {
					clusters[r] = true
					break
				}
			}
		}
	}
	if len(clusters)+len(jobs)+len(svcs) > 0 {
		d.recompute(clusters, jobs, svcs)
	}
}

// nodesChanged reports whether a node changed in what scheduling reads of
// it (labels, taints, allocatable, readiness), or whether nodes became
// known or unknown.
func (d *Diagnoses) nodesChanged(ch *watch.Changes) bool {
	changed := d.syncNodesKnown()
	for _, o := range ch.Deleted[watch.Node] {
		delete(d.nodeFP, watch.Key(o))
		changed = true
	}
	for _, o := range ch.Upserted[watch.Node] {
		fp := nodeFingerprint(o.(*corev1.Node))
		if d.nodeFP[watch.Key(o)] != fp {
			d.nodeFP[watch.Key(o)] = fp
			changed = true
		}
	}
	return changed
}

func nodeFingerprint(n *corev1.Node) string {
	ready := ""
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = string(c.Status)
		}
	}
	return fmt.Sprint(n.Labels, n.Spec.Taints, n.Spec.Unschedulable, n.Status.Allocatable, ready)
}

// forget drops a deleted object's causes (its row goes with it).
func (d *Diagnoses) forget(uid types.UID) {
	delete(d.causes, uid)
	delete(d.column, uid)
	delete(d.seen, uid)
	if d.access != nil {
		delete(d.access.byUID, uid)
	}
	if d.gw != nil {
		delete(d.gw.byUID, uid)
	}
}

// recompute diagnoses the given clusters, jobs and services, and the jobs
// and services whose clusters are among them.
func (d *Diagnoses) recompute(clusters map[watch.ClusterRef]bool, jobs, svcs uidSet) {
	now := d.now()
	nodes := d.nodes()
	if jobs == nil {
		jobs = uidSet{}
	}
	if svcs == nil {
		svcs = uidSet{}
	}
	inputs := map[watch.ClusterRef]*why.ClusterInput{}
	find := d.store.Find
	if len(clusters) > 4 { // one pass over the clusters, not one scan each
		byRef := map[watch.ClusterRef]client.Object{}
		for _, o := range d.store.List(watch.RayCluster) {
			byRef[watch.ClusterRef{Namespace: o.GetNamespace(), Name: o.GetName()}] = o
		}
		find = func(_ watch.Kind, ns, name string) (client.Object, bool) {
			o, ok := byRef[watch.ClusterRef{Namespace: ns, Name: name}]
			return o, ok
		}
	}
	for r := range clusters {
		o, ok := find(watch.RayCluster, r.Namespace, r.Name)
		if !ok {
			continue
		}
		in := d.clusterInput(o.(*rayv1.RayCluster), nodes, now)
		inputs[r] = in
		d.set(watch.RayCluster, watch.Key(o), d.Fn.Cluster(*in))
	}
	if len(clusters) > 0 {
		for _, o := range d.store.List(watch.RayJob) {
			if clusters[watch.ClusterRef{Namespace: o.GetNamespace(), Name: o.(*rayv1.RayJob).ClusterName()}] {
				jobs[watch.Key(o)] = true
			}
		}
		for _, o := range d.store.List(watch.RayService) {
			st := o.(*rayv1.RayService).Status
			if clusters[watch.ClusterRef{Namespace: o.GetNamespace(), Name: st.ActiveServiceStatus.RayClusterName}] ||
				clusters[watch.ClusterRef{Namespace: o.GetNamespace(), Name: st.PendingServiceStatus.RayClusterName}] {
				svcs[watch.Key(o)] = true
			}
		}
	}
	cluster := func(ns, name string) *why.ClusterInput {
		if name == "" {
			return nil
		}
		r := watch.ClusterRef{Namespace: ns, Name: name}
		if in, ok := inputs[r]; ok {
			return in
		}
		o, ok := find(watch.RayCluster, ns, name)
		if !ok {
			return nil
		}
		in := d.clusterInput(o.(*rayv1.RayCluster), nodes, now)
		inputs[r] = in
		return in
	}
	for uid := range jobs {
		o, ok := d.store.Get(watch.RayJob, uid)
		if !ok {
			continue
		}
		j := o.(*rayv1.RayJob)
		d.set(watch.RayJob, uid, d.Fn.Job(why.JobInput{Job: j, Cluster: cluster(j.Namespace, j.ClusterName()),
			Events: d.store.EventsFor(uid), Reconciler: d.reconciler, SpecSeen: d.specSeen(j, now), Now: now}))
	}
	for uid := range svcs {
		o, ok := d.store.Get(watch.RayService, uid)
		if !ok {
			continue
		}
		s := o.(*rayv1.RayService)
		d.set(watch.RayService, uid, d.Fn.Service(why.ServiceInput{Service: s,
			Active:  cluster(s.Namespace, s.Status.ActiveServiceStatus.RayClusterName),
			Pending: cluster(s.Namespace, s.Status.PendingServiceStatus.RayClusterName),
			Events:  d.store.EventsFor(uid), Reconciler: d.reconciler, Gateway: d.gatewayFor(uid), SpecSeen: d.specSeen(s, now), Now: now}))
	}
}

func (d *Diagnoses) nodes() why.Nodes {
	list, known := d.store.Nodes()
	if !known {
		return why.Nodes{}
	}
	return why.Nodes{Known: true, List: list}
}

// clusterInput is what the store holds about a RayCluster: its pods, the
// Events of it and its pods, the nodes, who reconciles and, for the
// cluster whose detail page is open, Ray's capacity; for a cluster with
// enableInTreeAutoscaling asked about (PollAccess), what its head's
// ServiceAccount may do of what Ray's autoscaler needs.
func (d *Diagnoses) clusterInput(rc *rayv1.RayCluster, nodes why.Nodes, now time.Time) *why.ClusterInput {
	uid := watch.Key(rc)
	pods := d.store.PodsOf(watch.ClusterRef{Namespace: rc.Namespace, Name: rc.Name})
	uids := make([]types.UID, 0, len(pods)+1)
	uids = append(uids, uid)
	for _, p := range pods {
		uids = append(uids, watch.Key(p))
	}
	in := &why.ClusterInput{Cluster: rc, Pods: pods, Events: d.store.EventsFor(uids...), Nodes: nodes,
		Reconciler: d.reconciler, SpecSeen: d.specSeen(rc, now), Now: now}
	if uid == d.capUID {
		in.Capacity = d.cap
		in.DemandSince = d.demandSince
	}
	if uid == d.gpuUID {
		in.GPUs = d.gpus
	}
	if d.access != nil && rc.Spec.IsAutoscalingEnabled() {
		if _, sa := why.HeadServiceAccount(pods); sa != "" {
			in.AutoscalerAccess = d.accessFor(uid, sa)
		}
	}
	return in
}

// set stores an object's causes and notes a changed WHY cell.
func (d *Diagnoses) set(k watch.Kind, uid types.UID, cs []why.Cause) {
	if len(cs) == 0 {
		delete(d.causes, uid)
	} else {
		d.causes[uid] = cs
	}
	col := d.Fn.Column(cs)
	if old, ok := d.column[uid]; ok && old == col || !ok && col == "" {
		return
	}
	if col == "" {
		delete(d.column, uid)
	} else {
		d.column[uid] = col
	}
	if d.Changed == nil {
		d.Changed = map[watch.Kind][]types.UID{}
	}
	d.Changed[k] = append(d.Changed[k], uid)
}

// ClearChanged forgets which WHY cells changed (the lists have them).
func (d *Diagnoses) ClearChanged() { d.Changed = nil }

// LoopOff is the role of a session without its reconcile loop before (or
// unless) raydar's leader election Leases say who leads.
const LoopOff = "observer (reconcile loop off)"

// loopOffAnd begins the role of a session without its loop once the
// Leases were read (LoopOffRole).
const loopOffAnd = "observer (reconcile loop off; "

// LoopOffRole says who reconciles while a session's loop is off, from its
// read of raydar's leader Leases, in the header's words ReconcilerOf
// reads: no ages, so they change only when the leadership does.
func LoopOffRole(l inspect.Leadership, holder string) string {
	switch l {
	case inspect.LeadershipHeld:
		return loopOffAnd + "leader: " + holder + ")"
	case inspect.LeadershipLapsed:
		return loopOffAnd + "no leader)"
	case inspect.LeadershipNone:
		return loopOffAnd + "no raydar operator)"
	}
	return LoopOff
}

// ReconcilerOf turns the session's role words (Session.Role: "leader",
// "observer (leader: X)", "observer (electing)", "another operator: …",
// "observer (reconcile loop stopped: …)", "observer (reconcile loop off)"
// and, once raydar's leader Leases were read, "observer (reconcile loop
// off; leader: X | no leader | no raydar operator)", "starting") into who
// reconciles. A session without its loop whose Leases could not be read
// cannot tell (a raydar operator may run in the cluster): not known.
func ReconcilerOf(role string) why.Reconciler {
	const off = loopOffAnd
	switch {
	case strings.HasPrefix(role, off+"leader: "):
		holder := strings.TrimSuffix(strings.TrimPrefix(role, off+"leader: "), ")")
		return why.Reconciler{Known: true, Active: true, Who: "raydar " + holder + " (lease holder)"}
	case role == off+"no leader)":
		return why.Reconciler{Known: true, OnlyRaydar: true, Who: "no leader: raydar's leader lease is not held, and this raydar's reconcile loop is off"}
	case role == off+"no raydar operator)":
		return why.Reconciler{Known: true, OnlyRaydar: true, Who: "no raydar operator runs here (no leader lease), and this raydar's reconcile loop is off"}
	case role == "leader":
		return why.Reconciler{Known: true, Active: true, Who: "this raydar (leader)"}
	case strings.HasPrefix(role, "observer (leader: "):
		holder := strings.TrimSuffix(strings.TrimPrefix(role, "observer (leader: "), ")")
		return why.Reconciler{Known: true, Active: true, Who: "raydar " + holder + " (lease holder)"}
	case role == "observer (electing)":
		return why.Reconciler{Known: true, Who: "no leader: raydar's leader lease is not held"}
	case strings.HasPrefix(role, "another operator: "):
		return why.Reconciler{Known: true, Who: role + "; raydar stands aside"}
	case strings.HasPrefix(role, "observer (reconcile loop stopped: "):
		return why.Reconciler{Known: true, Who: strings.TrimSuffix(strings.TrimPrefix(role, "observer ("), ")")}
	}
	return why.Reconciler{}
}

// uidSet is a set of object UIDs.
type uidSet = map[types.UID]bool
