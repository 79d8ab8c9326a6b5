package rayservice

// RayService decide: a pure function from what was observed (the
// RayService, its clusters and their pods, its Services, the serve
// endpoints, what each cluster's dashboard and Serve proxies answered) to a
// plan. No I/O, no clock and no randomness except through observed.Now
// and observed.NewSuffix.

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// config holds the RayService reconciler's timings and build settings.
type config struct {
	Build raycluster.BuildConfig
	// DeployPoll is how often a cluster's Serve status is read while
	// something is in motion (applications deploying, a submission made, a
	// pending cluster without a healthy proxy yet).
	DeployPoll time.Duration
	// SteadyPoll is how often it is read otherwise: it notices failed
	// applications, a head that lost them and Serve proxies going bad.
	SteadyPoll time.Duration
	// UnreachablePoll bounds the back-off while a dashboard refuses.
	UnreachablePoll time.Duration
	// UnreachableGrace: a dashboard that has not answered for this long
	// is reported in the Ready condition's message.
	UnreachableGrace time.Duration
	// ResubmitGrace: applications missing this soon after a successful
	// submission are not yet a reason to submit again.
	ResubmitGrace time.Duration
	// SubmitBackoff is the first wait after a rejected submission; it
	// doubles up to SteadyPoll×6.
	SubmitBackoff time.Duration
}

func defaultConfig() config {
	return config{
		Build:            raycluster.DefaultBuildConfig(),
		DeployPoll:       time.Second,
		SteadyPoll:       10 * time.Second,
		UnreachablePoll:  5 * time.Second,
		UnreachableGrace: 5 * time.Second,
		ResubmitGrace:    10 * time.Second,
		SubmitBackoff:    2 * time.Second,
	}
}

// observed is everything the RayService reconciler read before deciding.
type observed struct {
	Service *rayv1.RayService
	// Clusters are the RayClusters the RayService controls, including
	// those being deleted, with this process's unseen writes laid over.
	Clusters []*rayv1.RayCluster
	// Pods are the Ray pods of each cluster, by cluster name.
	Pods map[string][]*corev1.Pod
	// HeadService and ServeService are nil when absent.
	HeadService, ServeService *corev1.Service
	// ServeEndpoints counts the ready endpoints of the serve Service.
	ServeEndpoints int32
	// Probes are the latest Serve probes, by cluster name (only clusters
	// whose head pod is Running and Ready are probed).
	Probes map[string]*serveProbe
	// Submissions are this process's latest submissions, by cluster name.
	Submissions map[string]*submission
	// Incremental is what was read for an incremental upgrade (only for a
	// RayService upgraded so: incremental).
	Incremental incrementalObserved
	Now         time.Time
	NewSuffix   func() string
	Config      config
	// pendingServes is decide's, not observed: with an incremental upgrade
	// the pending cluster's own serve Service serves too, so its endpoints
	// count, and make the RayService Ready, even before a cluster is
	// active (KubeRay v1.6.2 rayservice_controller.go:526-538, 564-565).
	pendingServes bool
}

// submitStep is a serveConfigV2 submission to make.
type submitStep struct {
	Cluster *rayv1.RayCluster
	Config  serveConfig
	Why     string
	// TargetCapacity: a target_capacity step of an incremental upgrade
	// (Config carries it).
	TargetCapacity *int32
}

// podLabel sets a pod's ray.io/serve label.
type podLabel struct {
	Pod   *corev1.Pod
	Value string
}

// annotation sets (value non-nil) or removes (nil) annotations of a cluster.
type annotation struct {
	Cluster *rayv1.RayCluster
	Set     map[string]*string
}

// deletion is a cluster to delete and why.
type deletion struct {
	Cluster *rayv1.RayCluster
	Reason  string
}

// clusterUpdate is an in-place update of a cluster and what it changes.
type clusterUpdate struct {
	Cluster *rayv1.RayCluster
	What    []string
}

// plan is what the RayService reconciler will do, in this order:
// finalizer, cluster creation, in-place updates, submissions, pod labels,
// cluster annotations, Services, deletions, status.
type plan struct {
	// Skip: nothing to do (managed elsewhere, or being deleted).
	Skip            bool
	RemoveFinalizer bool

	CreateCluster  *rayv1.RayCluster
	UpdateClusters []clusterUpdate
	Submit         []submitStep
	PodLabels      []podLabel
	Annotate       []annotation
	CreateServices []*corev1.Service
	UpdateServices []*corev1.Service
	DeleteServices []*corev1.Service
	DeleteClusters []deletion
	// Incr is what an incremental upgrade writes besides (incremental.go).
	Incr incrementalPlan

	Events []kit.Event
	// Status is the status after the plan; Urgent says it must be written
	// at once rather than coalesced.
	Status rayv1.RayServiceStatuses
	Urgent bool
	// RequeueAfter is the next deadline: a probe falling due, a cluster's
	// deletion time, a submission back-off.
	RequeueAfter time.Duration
}

func (p *plan) requeue(d time.Duration) {
	if d <= 0 {
		d = time.Millisecond
	}
	if p.RequeueAfter == 0 || d < p.RequeueAfter {
		p.RequeueAfter = d
	}
}

func (p *plan) eventf(typ, reason, action, format string, args ...any) {
	p.Events = append(p.Events, kit.Event{Type: typ, Reason: reason, Action: action, Message: fmt.Sprintf(format, args...)})
}

// Event reasons of the RayService reconciler that are raydar's; KubeRay's
// are rayapi/v1's Event* constants, their only home.
const (
	reasonTrafficSwitched      = "TrafficSwitched"
	reasonUpgradeSkipped       = "UpgradeSkipped"
	reasonSuspending           = "Suspending"
	reasonSuspended            = "Suspended"
	reasonResumed              = "Resumed"
	reasonApplicationFailed    = "ServeApplicationFailed"
	reasonDashboardUnreachable = "DashboardUnreachable"
	reasonWaitingForGateway    = "WaitingForGateway"
	reasonRollbackUnsupported  = "RollbackNotImplemented"
)

// servePhase describes where a cluster is on its way to serving, for the
// Ready condition's message. Only a few coarse phases exist, so that the
// message (and thus the status) changes rarely.
type servePhase struct {
	Message string
	// Failed: a problem only a spec change fixes (rejected config, a
	// failed application).
	Failed bool
}

// clusterView is decide's view of one cluster.
type clusterView struct {
	C       *rayv1.RayCluster
	New     bool // created by this plan
	Head    *corev1.Pod
	Probe   *serveProbe
	Ready   bool // Serve is ready: the desired config runs, every application RUNNING
	Serving int  // Running+Ready pods labelled ray.io/serve=true after this plan
	Phase   servePhase
}

// decide is the whole reconcile decision for one RayService.
func decide(o *observed) *plan {
	rs := o.Service
	p := &plan{}
	if rs.DeletionTimestamp != nil {
		// Children carry owner references: the garbage collector removes
		// them. KubeRay's finalizer, if present, only needs to go.
		p.Skip = true
		p.RemoveFinalizer = slices.Contains(rs.Finalizers, rayv1.RayServiceFinalizer)
		return p
	}
	st := statusBase(rs)

	incr := incremental(rs, o.Config.Build.Features)
	errs := append(rayv1.ValidateRayService(rs), UnsupportedWith(rs, o.Config.Build)...)
	if incr && o.Incremental.GatewayAPIMissing {
		errs = append(errs, field.Invalid(field.NewPath("spec", "upgradeStrategy", "type"), string(rayv1.NewClusterWithIncrementalUpgrade),
			"the Gateway API (gateway.networking.k8s.io/v1 Gateway and HTTPRoute) is not installed in this cluster: install its CRDs and a Gateway controller"))
	}
	if len(errs) > 0 {
		msg, ev := kit.Refusal(rs.Status.Conditions, string(rayv1.RayServiceReady), string(rayv1.RayServiceValidationFailed), errs,
			rayv1.EventInvalidRayServiceSpec, "nothing is created, changed or deleted")
		if ev != nil {
			p.Events = append(p.Events, *ev)
		}
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, false, rayv1.RayServiceValidationFailed, msg, o.Now))
		p.Status = st
		p.Urgent = statusUrgent(rs.Status, st)
		return p
	}

	if decideSuspend(o, p, &st) {
		p.Status = st
		p.Urgent = statusUrgent(rs.Status, st)
		return p
	}
	if decideInitializingTimeout(o, p, &st) {
		p.Status = st
		p.Urgent = p.Urgent || statusUrgent(rs.Status, st)
		return p
	}

	cfg, _ := parseServeConfig(rs.Spec.ServeConfigV2) // validated above
	views := map[string]*clusterView{}
	view := func(c *rayv1.RayCluster) *clusterView {
		if c == nil {
			return nil
		}
		if v, ok := views[c.Name]; ok {
			return v
		}
		v := &clusterView{C: c, Probe: o.Probes[c.Name], Head: headPod(o.Pods[c.Name])}
		views[c.Name] = v
		return v
	}

	// Which cluster serves, which is being prepared, which are retiring.
	var live []*rayv1.RayCluster
	for _, c := range o.Clusters {
		if c.DeletionTimestamp == nil {
			live = append(live, c)
		}
	}
	active := activeCluster(o, live, incr)
	var candidates, retiring []*rayv1.RayCluster
	for _, c := range live {
		if c == active {
			continue
		}
		if _, ok := deleteAfter(c); ok {
			retiring = append(retiring, c)
		} else {
			candidates = append(candidates, c)
		}
	}
	sort.Slice(candidates, func(i, j int) bool { return newerCluster(candidates[i], candidates[j]) })
	var pending *rayv1.RayCluster
	if len(candidates) > 0 {
		pending = candidates[0]
		for _, c := range candidates[1:] {
			p.DeleteClusters = append(p.DeleteClusters, deletion{c, "superseded by RayCluster " + pending.Name + " before it served"})
		}
	}

	upgrade := rs.Spec.EffectiveUpgradeType()
	gateOff := upgrade == rayv1.NewClusterWithIncrementalUpgrade && !incr
	if gateOff {
		// KubeRay v1.6.2 with the gate off: no zero-downtime upgrade
		// (rayservice_controller.go:637-665 isZeroDowntimeUpgradeEnabled).
		upgrade = rayv1.None
	}

	needNew := false
	specMatchesActive := active != nil && clusterMatches(active, &rs.Spec.RayClusterSpec) == specMatches
	if active != nil {
		if _, ok := deleteAfter(active); ok {
			// A switch that did not finish (or was undone): the serving
			// cluster is never deleted.
			p.Annotate = append(p.Annotate, annotation{active, map[string]*string{DeleteAfterKey: nil}})
		}
		if !specMatchesActive {
			if upgrade == rayv1.None {
				if rs.Generation != rs.Status.ObservedGeneration {
					why := "upgradeStrategy is None"
					if gateOff {
						why = "upgradeStrategy is NewClusterWithIncrementalUpgrade and the feature gate RayServiceIncrementalUpgrade is off"
					}
					p.eventf(corev1.EventTypeNormal, reasonUpgradeSkipped, "Upgrade",
						"rayClusterConfig changed but %s: RayCluster %s keeps running unchanged", why, active.Name)
				}
			} else {
				needNew = true
			}
		}
	} else {
		needNew = true
	}
	if pending != nil {
		carries := incr && active != nil && ptr.Deref(statusFieldsOf(rs.Status, pending).TrafficRoutedPercent, 0) > 0
		switch {
		case carries && (!needNew || clusterMatches(pending, &rs.Spec.RayClusterSpec) != specMatches):
			// KubeRay v1.6.2 rolls the traffic back step by step
			// (rayservice_controller.go:2049-2089 reconcileRollbackState);
			// raydar does not: the split stays as it is.
			p.eventf(corev1.EventTypeWarning, reasonRollbackUnsupported, "Upgrade",
				"rayClusterConfig no longer matches RayCluster %s, which already serves part of the traffic: raydar does not roll an incremental upgrade back; the traffic split stays until rayClusterConfig matches %s again",
				pending.Name, pending.Name)
			needNew = false
		case !needNew && active != nil:
			why := "rayClusterConfig matches the active RayCluster " + active.Name + " again"
			if !specMatchesActive {
				why = "upgradeStrategy is None"
			}
			p.DeleteClusters = append(p.DeleteClusters, deletion{pending, why})
			pending = nil
		case clusterMatches(pending, &rs.Spec.RayClusterSpec) != specMatches:
			p.DeleteClusters = append(p.DeleteClusters, deletion{pending, "rayClusterConfig changed again before it served"})
			pending = nil
		}
	}
	if needNew && pending == nil {
		name := kit.RayServiceClusterName(rs.Name, o.NewSuffix())
		p.CreateCluster = buildCluster(rs, name)
		if incr && active != nil {
			// The new cluster of an incremental upgrade starts without
			// worker replicas, so that it grows with its target_capacity
			// from minReplicas (rayservice_controller.go:1279-1288).
			for i := range p.CreateCluster.Spec.WorkerGroupSpecs {
				p.CreateCluster.Spec.WorkerGroupSpecs[i].Replicas = nil
			}
		}
		why := "initial cluster"
		if active != nil {
			why = "rayClusterConfig changed; RayCluster " + active.Name + " keeps serving until it is ready"
		}
		p.eventf(corev1.EventTypeNormal, rayv1.EventCreatedRayCluster, "Create", "Creating RayCluster %s (%s)", name, why)
		pending = p.CreateCluster
		view(pending).New = true
	}
	var fields incrementalFields
	if incr {
		fields = incrementalFields{Active: statusFieldsOf(rs.Status, active), Pending: statusFieldsOf(rs.Status, pending)}
		if pending != nil && fields.Pending.TargetCapacity == nil {
			// The first cluster starts at target_capacity 100
			// (rayservice_controller.go:497-503), a cluster upgraded to at
			// 0 (504-509), so that Serve does not scale it up at once.
			tc := initialCapacity
			if active != nil {
				tc = 0
			}
			fields.Pending.TargetCapacity = &tc
		}
	}
	// serveCfg is the config a cluster gets: with an incremental upgrade,
	// with its target_capacity (rayservice_controller.go:1338-1354).
	serveCfg := func(f statusFields) serveConfig {
		if !incr || f.TargetCapacity == nil || cfg.Hash == "" {
			return cfg
		}
		c := cfg
		if data, err := withTargetCapacity(cfg.JSON, *f.TargetCapacity); err == nil {
			c.JSON = data
		}
		return c
	}

	// In-place changes: appended worker groups, replica changes.
	for _, c := range []*rayv1.RayCluster{active, pending} {
		if c == nil || view(c).New || clusterMatches(c, &rs.Spec.RayClusterSpec) != specMatches {
			continue
		}
		if upd, what := inPlaceUpdate(c, rs); upd != nil {
			p.UpdateClusters = append(p.UpdateClusters, clusterUpdate{upd, what})
		}
	}

	// Serve: the pending cluster gets the desired config; the active one
	// too when no other cluster is being prepared (a config change alone).
	if pending != nil {
		decideServe(o, p, view(pending), serveCfg(fields.Pending))
	}
	if active != nil {
		va := view(active)
		if pending == nil {
			decideServe(o, p, va, serveCfg(fields.Active))
		} else {
			// During an upgrade the old cluster keeps its config; only its
			// status and proxies are followed.
			decideObserveOnly(o, p, va, cfg)
		}
	}

	// Switch traffic when the pending cluster is ready and would have
	// serving pods (never from a cluster that serves to one that does not).
	newActive := active
	if pending != nil && !view(pending).New && (!incr || active == nil) {
		vp := view(pending)
		activeServing := 0
		if active != nil {
			activeServing = view(active).Serving
		}
		if vp.Ready && (vp.Serving > 0 || activeServing == 0) {
			newActive = pending
			if active != nil {
				delay := time.Duration(rs.Spec.DeletionDelaySeconds()) * time.Second
				at := o.Now.Add(delay).UTC().Format(time.RFC3339)
				p.Annotate = dropAnnotate(p.Annotate, active)
				p.Annotate = append(p.Annotate, annotation{active, map[string]*string{DeleteAfterKey: &at}})
				p.eventf(corev1.EventTypeNormal, reasonTrafficSwitched, "Switch",
					"Traffic switched from RayCluster %s to RayCluster %s; %s is deleted after %s",
					active.Name, pending.Name, active.Name, delay)
				retiring = append(retiring, active)
			} else {
				p.eventf(corev1.EventTypeNormal, reasonTrafficSwitched, "Switch",
					"RayCluster %s is ready: the Services now route to it", pending.Name)
			}
			pending = nil
		}
	}

	// An incremental upgrade moves traffic through the Gateway's HTTPRoute
	// step by step, then switches.
	if incr {
		before := newActive
		var moved *rayv1.RayCluster
		if newActive == active {
			moved = pending
		}
		if newActive != active {
			fields = incrementalFields{Active: fields.Pending} // the first cluster, just switched to
		}
		newActive, fields = decideIncremental(o, p, newActive, moved, views, cfg, fields)
		if newActive != before {
			p.eventf(corev1.EventTypeNormal, reasonTrafficSwitched, "Switch",
				"Incremental upgrade complete: RayCluster %s serves all the traffic; %s is deleted after %s",
				newActive.Name, before.Name, time.Duration(rs.Spec.DeletionDelaySeconds())*time.Second)
			p.Annotate = dropAnnotate(p.Annotate, before)
			at := o.Now.Add(time.Duration(rs.Spec.DeletionDelaySeconds()) * time.Second).UTC().Format(time.RFC3339)
			p.Annotate = append(p.Annotate, annotation{before, map[string]*string{DeleteAfterKey: &at}})
			retiring = append(retiring, before)
			pending = nil
		}
	}

	// Services follow the active cluster (an incremental upgrade has no
	// RayService serve Service: the per-cluster ones serve,
	// common/service.go:185-189).
	if newActive != nil {
		head := buildHeadService(rs, newActive, o.Config.Build)
		pairs := []struct{ have, want *corev1.Service }{{o.HeadService, head}}
		if !incr {
			pairs = append(pairs, struct{ have, want *corev1.Service }{o.ServeService, buildServeService(rs, newActive)})
		}
		for _, pair := range pairs {
			switch {
			case pair.have == nil:
				p.CreateServices = append(p.CreateServices, pair.want)
			case !ownedBy(pair.have, rs):
				p.eventf(corev1.EventTypeWarning, rayv1.EventUpdatedService, "Update",
					"Service %s exists and is not owned by this RayService; raydar leaves it alone", pair.have.Name)
			default:
				if upd := serviceUpdate(pair.have, pair.want); upd != nil {
					p.UpdateServices = append(p.UpdateServices, upd)
				}
			}
		}
	}

	// Retiring clusters go when their time comes.
	for _, c := range retiring {
		at, _ := deleteAfter(c)
		if c == active && newActive != active {
			at = o.Now.Add(time.Duration(rs.Spec.DeletionDelaySeconds()) * time.Second)
		}
		if !o.Now.Before(at) {
			// With a delay of 0 the old cluster goes in the same pass; act
			// switches the Services before it deletes anything.
			p.DeleteClusters = append(p.DeleteClusters, deletion{c, fmt.Sprintf("rayClusterDeletionDelaySeconds (%ds) elapsed since traffic left it", rs.Spec.DeletionDelaySeconds())})
		} else {
			p.requeue(at.Sub(o.Now))
		}
	}

	if incr {
		// Serve endpoints: the active and pending clusters' own serve
		// Services (rayservice_controller.go:514-538).
		oo := *o
		oo.ServeEndpoints, oo.pendingServes = 0, true
		for _, c := range []*rayv1.RayCluster{newActive, pending} {
			if c != nil {
				oo.ServeEndpoints += o.Incremental.ClusterEndpoints[c.Name]
			}
		}
		p.Status = computeStatus(&oo, st, newActive, pending, views)
		fields.Active.apply(&p.Status.ActiveServiceStatus)
		fields.Pending.apply(&p.Status.PendingServiceStatus)
	} else {
		p.Status = computeStatus(o, st, newActive, pending, views)
	}
	p.Urgent = statusUrgent(rs.Status, p.Status)
	return p
}

// dropAnnotate removes planned annotation changes of a cluster.
func dropAnnotate(list []annotation, c *rayv1.RayCluster) []annotation {
	out := list[:0]
	for _, a := range list {
		if a.Cluster.Name != c.Name {
			out = append(out, a)
		}
	}
	return out
}

// activeCluster finds the serving cluster: the one the serve Service
// selects, else the one the head Service selects, else the one the status
// names — if it still exists. Services are the record of the switch, so a
// restart picks up where the last process left.
//
// With an incremental upgrade there is no RayService serve Service (a
// leftover of another strategy says nothing): the head Service decides.
func activeCluster(o *observed, live []*rayv1.RayCluster, incr bool) *rayv1.RayCluster {
	find := func(name string) *rayv1.RayCluster {
		if name == "" {
			return nil
		}
		for _, c := range live {
			if c.Name == name {
				return c
			}
		}
		return nil
	}
	if s := o.ServeService; s != nil && ownedBy(s, o.Service) && !incr {
		if c := find(s.Spec.Selector[rayv1.RayClusterLabelKey]); c != nil {
			return c
		}
	}
	if s := o.HeadService; s != nil && ownedBy(s, o.Service) {
		if c := find(s.Spec.Selector[rayv1.RayClusterLabelKey]); c != nil {
			return c
		}
	}
	return find(o.Service.Status.ActiveServiceStatus.RayClusterName)
}

// newerCluster orders clusters newest first (creation time, then name).
func newerCluster(a, b *rayv1.RayCluster) bool {
	ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.After(tb)
	}
	return a.Name > b.Name
}

// headPod is the newest non-terminating head pod.
func headPod(pods []*corev1.Pod) *corev1.Pod {
	var head *corev1.Pod
	for _, p := range pods {
		if kit.IsHeadPod(p) && p.DeletionTimestamp == nil && (head == nil || p.CreationTimestamp.After(head.CreationTimestamp.Time)) {
			head = p
		}
	}
	return head
}
