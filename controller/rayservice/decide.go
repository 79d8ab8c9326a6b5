package rayservice

// RayService decide: a pure function from what was observed (the
// RayService, its clusters and their pods, its Services, the serve
// endpoints, what each cluster's dashboard and Serve proxies answered) to a
// plan. No I/O, no clock and no randomness except through observed.Now
// and observed.NewSuffix.

import (
	"fmt"
	"slices"
	"time"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation/field"

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

// decide is the whole reconcile decision for one RayService. Past the
// early exits (deleted, refused, suspended, timed out) each step settles
// the clusters' roles a little further and adds to the plan, in this order.
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
	if refuse(o, p, &st, incr) || decideSuspend(o, p, &st) || decideInitializingTimeout(o, p, &st) {
		p.settle(rs, st)
		return p
	}

	d := newDeciding(o, p, incr)
	d.classifyClusters()
	d.settlePending(d.needNewCluster())
	d.initIncrementalFields()
	d.updateInPlace()
	d.serve()
	d.switchTraffic()
	d.stepIncremental()
	d.decideServices()
	d.deleteRetired()
	p.settle(rs, d.status(st))
	return p
}

// settle sets the status after the plan and whether it must be written at
// once (a step may have said so already).
func (p *plan) settle(rs *rayv1.RayService, st rayv1.RayServiceStatuses) {
	p.Status = st
	p.Urgent = p.Urgent || statusUrgent(rs.Status, st)
}

// refuse refuses an invalid or unsupported spec, and an incremental
// upgrade without the Gateway API: Ready False ValidationFailed naming
// every error, an Event once, nothing else. It reports whether it refused.
func refuse(o *observed, p *plan, st *rayv1.RayServiceStatuses, incr bool) bool {
	rs := o.Service
	errs := append(rayv1.ValidateRayService(rs), UnsupportedWith(rs, o.Config.Build)...)
	if incr && o.Incremental.GatewayAPIMissing {
		errs = append(errs, field.Invalid(field.NewPath("spec", "upgradeStrategy", "type"), string(rayv1.NewClusterWithIncrementalUpgrade),
			"the Gateway API (gateway.networking.k8s.io/v1 Gateway and HTTPRoute) is not installed in this cluster: install its CRDs and a Gateway controller"))
	}
	if len(errs) == 0 {
		return false
	}
	msg, ev := kit.Refusal(rs.Status.Conditions, string(rayv1.RayServiceReady), string(rayv1.RayServiceValidationFailed), errs,
		rayv1.EventInvalidRayServiceSpec, "nothing is created, changed or deleted")
	if ev != nil {
		p.Events = append(p.Events, *ev)
	}
	meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, false, rayv1.RayServiceValidationFailed, msg, o.Now))
	return true
}

// deciding is one decide pass past the early exits: what every step reads,
// the plan they add to, and the clusters' roles as the steps settle them.
type deciding struct {
	o  *observed
	p  *plan
	rs *rayv1.RayService
	// incr: upgraded so: incremental, with its feature gate on.
	incr bool
	// cfg is the spec's serveConfigV2 (validated by refuse).
	cfg   serveConfig
	views map[string]*clusterView

	// active served when the pass began; newActive serves after the plan.
	active, newActive *rayv1.RayCluster
	// pending is being prepared to replace newActive (nil: none).
	pending *rayv1.RayCluster
	// retiring are the clusters traffic left, each with its deletion time.
	retiring []retiree
	// fields are the incremental status fields of the active and pending
	// clusters (only with incr).
	fields incrementalFields
}

// retiree is a cluster traffic left and when it goes.
type retiree struct {
	C  *rayv1.RayCluster
	At time.Time
}

func newDeciding(o *observed, p *plan, incr bool) *deciding {
	cfg, _ := parseServeConfig(o.Service.Spec.ServeConfigV2) // validated by refuse
	return &deciding{o: o, p: p, rs: o.Service, incr: incr, cfg: cfg, views: map[string]*clusterView{}}
}

// view is the pass's one view of a cluster (nil for nil).
func (d *deciding) view(c *rayv1.RayCluster) *clusterView {
	if c == nil {
		return nil
	}
	if v, ok := d.views[c.Name]; ok {
		return v
	}
	v := &clusterView{C: c, Probe: d.o.Probes[c.Name], Head: headPod(d.o.Pods[c.Name])}
	d.views[c.Name] = v
	return v
}

// matchesSpec reports whether a cluster was built from the spec's
// rayClusterConfig.
func (d *deciding) matchesSpec(c *rayv1.RayCluster) bool {
	return clusterMatches(c, &d.rs.Spec.RayClusterSpec) == specMatches
}

// deletionDelay is rayClusterDeletionDelaySeconds: how long a cluster
// traffic left is kept.
func deletionDelay(rs *rayv1.RayService) time.Duration {
	return time.Duration(rs.Spec.DeletionDelaySeconds()) * time.Second
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
