package rayservice

// RayService decide: a pure function from what was observed (the
// RayService, its clusters and their pods, its Services, the serve
// endpoints, what each cluster's dashboard and Serve proxies answered) to a
// plan. No I/O, no clock and no randomness except through observed.Now
// and observed.NewSuffix.

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
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

// serveProbe is what one look at a cluster's Serve returned: the dashboard's
// applications and, once Serve runs, the health of each ready pod's proxy.
type serveProbe struct {
	At      time.Time
	HeadUID string
	// OK: the dashboard answered.
	OK   bool
	Apps map[string]dashboard.ServeApplication
	Err  string
	// FailingSince is the first failure of the current streak (zero when OK).
	FailingSince time.Time
	// Proxies maps pod names to their Serve proxy's health; only pods
	// checked are present (Running and Ready pods, once Serve runs).
	Proxies map[string]proxyHealth
	// Active: the cluster was the active one when probed.
	Active bool
}

// proxyHealth is one Serve proxy health check.
type proxyHealth struct {
	Healthy bool
	Err     string
}

// submission records a serveConfigV2 submission to a cluster made by this
// process (memory only: after a restart the dashboard is asked instead).
type submission struct {
	Hash     string
	At       time.Time
	Err      string // "" when accepted
	Attempts int    // consecutive rejections of Hash
}

// probeSettled reports whether a probe shows Serve settled: the
// dashboard answered and every application is RUNNING or DEPLOY_FAILED.
func probeSettled(p *serveProbe) bool {
	if p == nil || !p.OK {
		return false
	}
	for _, a := range p.Apps {
		if a.Status != dashboard.AppRunning && a.Status != dashboard.AppDeployFailed {
			return false
		}
	}
	if !p.Active && len(p.Apps) > 0 {
		// A pending cluster waits for a healthy proxy before traffic can
		// switch to it: keep looking closely until it has one.
		for _, h := range p.Proxies {
			if h.Healthy {
				return true
			}
		}
		return false
	}
	return len(p.Apps) > 0
}

// probeInterval is how long a probe stays fresh.
func probeInterval(p *serveProbe, cfg config) time.Duration {
	switch {
	case p == nil:
		return 0
	case !p.OK:
		// Back off while the dashboard refuses: every DeployPoll at first,
		// then slower, up to UnreachablePoll.
		d := cfg.DeployPoll
		if failing := p.At.Sub(p.FailingSince); failing > 2*cfg.UnreachableGrace {
			d = cfg.UnreachablePoll
		}
		return d
	case probeSettled(p):
		return cfg.SteadyPoll
	}
	return cfg.DeployPoll
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
	// SkipReason, when set, says why raydar leaves this RayService alone.
	SkipReason string
	Now        time.Time
	NewSuffix  func() string
	Config     config
}

// submitStep is a serveConfigV2 submission to make.
type submitStep struct {
	Cluster *rayv1.RayCluster
	Config  serveConfig
	Why     string
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

// Event reasons of the RayService reconciler.
const (
	reasonInvalidSpec          = "InvalidRayServiceSpec" // KubeRay's utils.InvalidRayServiceSpec
	reasonClusterCreated       = "CreatedRayCluster"     // KubeRay's reasons where it has one
	reasonClusterUpdated       = "UpdatedRayCluster"
	reasonClusterDeleted       = "DeletedRayCluster"
	reasonServeSubmitted       = "UpdatedServeApplications"
	reasonServeRejected        = "FailedToUpdateServeApplications"
	reasonTrafficSwitched      = "TrafficSwitched"
	reasonServiceCreated       = "CreatedService"
	reasonServiceUpdated       = "UpdatedService"
	reasonUpgradeSkipped       = "UpgradeSkipped"
	reasonSuspending           = "Suspending"
	reasonSuspended            = "Suspended"
	reasonResumed              = "Resumed"
	reasonApplicationFailed    = "ServeApplicationFailed"
	reasonDashboardUnreachable = "DashboardUnreachable"
	reasonClusterCreateFailed  = "FailedToCreateRayCluster"
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
		p.RemoveFinalizer = hasString(rs.Finalizers, rayv1.RayServiceFinalizer)
		return p
	}
	if o.SkipReason != "" {
		p.Skip = true
		return p
	}
	st := statusBase(rs)

	if errs := append(rayv1.ValidateRayService(rs), Unsupported(rs)...); len(errs) > 0 {
		msg := kit.InvalidMessage(errs)
		if old := kit.FindCondition(rs.Status.Conditions, string(rayv1.RayServiceReady)); old == nil ||
			old.Reason != string(rayv1.RayServiceValidationFailed) || old.Message != msg {
			p.eventf(corev1.EventTypeWarning, reasonInvalidSpec, "Validate",
				"Invalid spec, nothing is created, changed or deleted until it is fixed: %s", msg)
		}
		setCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, false, rayv1.RayServiceValidationFailed, msg), o.Now)
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
	active := activeCluster(o, live)
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

	// NewClusterWithIncrementalUpgrade never gets here: unsupported.go refuses it.
	upgrade := rs.Spec.EffectiveUpgradeType()

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
					p.eventf(corev1.EventTypeNormal, reasonUpgradeSkipped, "Upgrade",
						"rayClusterConfig changed but upgradeStrategy is None: RayCluster %s keeps running unchanged", active.Name)
				}
			} else {
				needNew = true
			}
		}
	} else {
		needNew = true
	}
	if pending != nil {
		switch {
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
		why := "initial cluster"
		if active != nil {
			why = "rayClusterConfig changed; RayCluster " + active.Name + " keeps serving until it is ready"
		}
		p.eventf(corev1.EventTypeNormal, reasonClusterCreated, "Create", "Creating RayCluster %s (%s)", name, why)
		pending = p.CreateCluster
		view(pending).New = true
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
		decideServe(o, p, view(pending), cfg)
	}
	if active != nil {
		va := view(active)
		if pending == nil {
			decideServe(o, p, va, cfg)
		} else {
			// During an upgrade the old cluster keeps its config; only its
			// status and proxies are followed.
			decideObserveOnly(o, p, va, cfg)
		}
	}

	// Switch traffic when the pending cluster is ready and would have
	// serving pods (never from a cluster that serves to one that does not).
	newActive := active
	if pending != nil && !view(pending).New {
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

	// Services follow the active cluster.
	if newActive != nil {
		head := buildHeadService(rs, newActive, o.Config.Build)
		serve := buildServeService(rs, newActive)
		for _, pair := range []struct{ have, want *corev1.Service }{{o.HeadService, head}, {o.ServeService, serve}} {
			switch {
			case pair.have == nil:
				p.CreateServices = append(p.CreateServices, pair.want)
			case !ownedBy(pair.have, rs):
				p.eventf(corev1.EventTypeWarning, reasonServiceUpdated, "Update",
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

	p.Status = computeStatus(o, st, newActive, pending, views)
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
func activeCluster(o *observed, live []*rayv1.RayCluster) *rayv1.RayCluster {
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
	if s := o.ServeService; s != nil && ownedBy(s, o.Service) {
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

// decideServe decides the Serve submission and serve labels of a cluster
// that must run the desired config.
func decideServe(o *observed, p *plan, v *clusterView, cfg serveConfig) {
	rs := o.Service
	if v.New {
		v.Phase = servePhase{Message: "waiting for the head pod of RayCluster " + v.C.Name}
		return
	}
	if v.Head == nil || !kit.IsRunningAndReady(v.Head) {
		v.Phase = servePhase{Message: "waiting for the head pod of RayCluster " + v.C.Name}
		decideServeLabels(o, p, v)
		return
	}
	if cfg.Hash == "" {
		// Nothing to deploy: the cluster is ready once its head is.
		v.Ready = true
		v.Phase = servePhase{Message: "serveConfigV2 is empty: nothing to deploy on RayCluster " + v.C.Name}
		decideServeLabels(o, p, v)
		return
	}
	pr := v.Probe
	if pr == nil {
		v.Phase = servePhase{Message: "deploying Serve applications on RayCluster " + v.C.Name}
		p.requeue(o.Config.DeployPoll)
		return
	}
	p.requeue(pr.At.Add(probeInterval(pr, o.Config)).Sub(o.Now))
	if !pr.OK {
		v.Phase = unreachablePhase(o, v, pr)
		decideServeLabels(o, p, v)
		return
	}
	missing := missingApps(pr.Apps, cfg.Apps)
	sub := o.Submissions[v.C.Name]
	submitted := v.C.Annotations[ServeConfigHashKey] == cfg.Hash
	var why string
	switch {
	case !submitted:
		why = "serveConfigV2 changed"
		if v.C.Annotations[ServeConfigHashKey] == "" {
			why = "first submission"
		}
	case len(missing) > 0 && !(sub != nil && sub.Hash == cfg.Hash && sub.Err == "" && o.Now.Sub(sub.At) < o.Config.ResubmitGrace):
		why = "the cluster lost applications " + strings.Join(missing, ", ") + " (head restarted?)"
	}
	if why != "" {
		if sub != nil && sub.Hash == cfg.Hash && sub.Err != "" {
			wait := submitBackoff(o.Config, sub.Attempts)
			if next := sub.At.Add(wait); o.Now.Before(next) {
				v.Phase = servePhase{Message: fmt.Sprintf("the Ray dashboard of RayCluster %s rejected serveConfigV2: %s", v.C.Name, kit.Truncate(sub.Err, 500)), Failed: true}
				p.requeue(next.Sub(o.Now))
				decideServeLabels(o, p, v)
				return
			}
		}
		p.Submit = append(p.Submit, submitStep{Cluster: v.C, Config: cfg, Why: why})
		v.Phase = servePhase{Message: "deploying Serve applications on RayCluster " + v.C.Name}
		p.requeue(o.Config.DeployPoll)
		decideServeLabels(o, p, v)
		return
	}
	v.Phase = appsPhase(v, pr, cfg)
	v.Ready = len(missing) == 0 && allRunning(pr.Apps)
	decideServeLabels(o, p, v)
	if v.Ready && v.Serving == 0 && !rs.Spec.ExcludeHeadPodFromServeSvc {
		v.Phase = servePhase{Message: "waiting for a healthy Serve proxy on RayCluster " + v.C.Name}
	}
}

// decideObserveOnly follows a cluster without changing its config: its
// serve labels, and its phase for the status.
func decideObserveOnly(o *observed, p *plan, v *clusterView, cfg serveConfig) {
	if pr := v.Probe; pr != nil {
		p.requeue(pr.At.Add(probeInterval(pr, o.Config)).Sub(o.Now))
		if pr.OK {
			v.Phase = appsPhase(v, pr, cfg)
			v.Ready = allRunning(pr.Apps)
		}
	}
	decideServeLabels(o, p, v)
}

// unreachablePhase is the phase of a cluster whose dashboard does not
// answer: reported only once that lasted UnreachableGrace.
func unreachablePhase(o *observed, v *clusterView, pr *serveProbe) servePhase {
	if o.Now.Sub(pr.FailingSince) >= o.Config.UnreachableGrace {
		return servePhase{Message: "the Ray dashboard of RayCluster " + v.C.Name + " is not answering"}
	}
	return servePhase{Message: "deploying Serve applications on RayCluster " + v.C.Name}
}

// appsPhase describes the applications of a probed cluster.
func appsPhase(v *clusterView, pr *serveProbe, cfg serveConfig) servePhase {
	for _, name := range kit.SortedKeys(pr.Apps) {
		if a := pr.Apps[name]; rayv1.IsServeApplicationFailed(string(a.Status)) {
			return servePhase{Message: fmt.Sprintf("Serve application %s of RayCluster %s is %s", name, v.C.Name, a.Status), Failed: true}
		}
	}
	return servePhase{Message: "deploying Serve applications on RayCluster " + v.C.Name}
}

func allRunning(apps map[string]dashboard.ServeApplication) bool {
	for _, a := range apps {
		if a.Status != dashboard.AppRunning {
			return false
		}
	}
	return true
}

// missingApps lists desired applications the dashboard does not show.
func missingApps(have map[string]dashboard.ServeApplication, want []string) []string {
	var out []string
	for _, n := range want {
		if a, ok := have[n]; !ok || a.Status == dashboard.AppDeleting {
			out = append(out, n)
		}
	}
	return out
}

func submitBackoff(cfg config, attempts int) time.Duration {
	d := cfg.SubmitBackoff
	limit := 6 * cfg.SteadyPoll
	for i := 1; i < attempts && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// decideServeLabels keeps ray.io/serve "true" only on Running and Ready pods
// whose Serve proxy answered (never on the head with
// excludeHeadPodFromServeSvc), and counts the cluster's serving pods.
// Pods not checked keep their label; the check runs once Serve runs.
func decideServeLabels(o *observed, p *plan, v *clusterView) {
	rs := o.Service
	var proxies map[string]proxyHealth
	if v.Probe != nil && v.Probe.OK && len(v.Probe.Apps) > 0 {
		proxies = v.Probe.Proxies
	}
	v.Serving = 0
	for _, pod := range o.Pods[v.C.Name] {
		if !kit.IsHeadPod(pod) && !kit.IsWorkerPod(pod) {
			continue
		}
		cur, has := pod.Labels[rayv1.RayClusterServingServiceLabelKey]
		want := cur
		switch {
		case kit.IsHeadPod(pod) && rs.Spec.ExcludeHeadPodFromServeSvc:
			want = "false"
		case !kit.IsRunningAndReady(pod):
		default:
			if h, ok := proxies[pod.Name]; ok {
				want = strconvBool(h.Healthy)
			}
		}
		if want != cur || (!has && want != "") {
			p.PodLabels = append(p.PodLabels, podLabel{Pod: pod, Value: want})
		}
		if want == "true" && kit.IsRunningAndReady(pod) {
			v.Serving++
		}
	}
}

func strconvBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// decideSuspend handles spec.suspend: every owned cluster and Service is
// deleted (Suspending), then Suspended is set. A suspension, once started,
// completes before a resume. It returns true when the RayService is
// suspending or suspended (nothing else is decided).
func decideSuspend(o *observed, p *plan, st *rayv1.RayServiceStatuses) bool {
	rs := o.Service
	suspending := rayv1.IsConditionTrue(rs.Status.Conditions, string(rayv1.RayServiceSuspending))
	suspended := rayv1.IsConditionTrue(rs.Status.Conditions, string(rayv1.RayServiceSuspended))
	if !rs.Spec.Suspend && !suspending {
		if suspended {
			// KubeRay v1.7.0 handleSuspend: Suspended False Resumed, and
			// Ready and UpgradeInProgress start over as Initializing (a
			// fresh transition time re-arms the initializing timeout).
			setCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceSuspended, false, rayv1.RayServiceResumed, "suspend is false: the RayService is being brought up again"), o.Now)
			kit.RemoveCondition(&st.Conditions, string(rayv1.RayServiceReady))
			kit.RemoveCondition(&st.Conditions, string(rayv1.UpgradeInProgress))
			setCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, false, rayv1.RayServiceInitializing, "RayService is initializing after resuming from suspend."), o.Now)
			setCondition(&st.Conditions, newCondition(rs, rayv1.UpgradeInProgress, false, rayv1.RayServiceInitializing, "RayService is initializing after resuming from suspend."), o.Now)
			p.eventf(corev1.EventTypeNormal, reasonResumed, "Resume", "suspend is false: bringing the RayService up again")
		}
		return false
	}
	remaining := 0
	for _, c := range o.Clusters {
		remaining++
		if c.DeletionTimestamp == nil {
			p.DeleteClusters = append(p.DeleteClusters, deletion{c, "the RayService is suspended"})
		}
	}
	for _, s := range []*corev1.Service{o.HeadService, o.ServeService} {
		if s != nil && ownedBy(s, rs) {
			remaining++
			if s.DeletionTimestamp == nil {
				p.DeleteServices = append(p.DeleteServices, s)
			}
		}
	}
	st.ActiveServiceStatus = rayv1.RayServiceStatus{}
	st.PendingServiceStatus = rayv1.RayServiceStatus{}
	st.NumServeEndpoints = 0
	st.ServiceStatus = rayv1.NotRunning
	if remaining > 0 {
		if !suspending {
			p.eventf(corev1.EventTypeNormal, reasonSuspending, "Suspend", "suspend is true: deleting every RayCluster and Service of the RayService")
		}
		// KubeRay: Suspending True SuspendRequested when suspend is first
		// seen, SuspendInProgress while deleting; Ready, UpgradeInProgress
		// and RollbackInProgress False SuspendInProgress; Suspended not
		// set until the end.
		why := rayv1.SuspendRequested
		if suspending {
			why = rayv1.SuspendInProgress
		}
		setCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceSuspending, true, why, "deleting the RayService's RayClusters and Services"), o.Now)
		setCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, false, rayv1.SuspendInProgress, "the RayService is being suspended"), o.Now)
		setCondition(&st.Conditions, newCondition(rs, rayv1.UpgradeInProgress, false, rayv1.SuspendInProgress, "No upgrade in progress."), o.Now)
		setCondition(&st.Conditions, newCondition(rs, rayv1.RollbackInProgress, false, rayv1.SuspendInProgress, "No rollback in progress."), o.Now)
	} else {
		if !suspended {
			p.eventf(corev1.EventTypeNormal, reasonSuspended, "Suspend", "every RayCluster and Service of the RayService is gone")
		}
		setCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceSuspending, false, rayv1.SuspendComplete, ""), o.Now)
		setCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceSuspended, true, rayv1.SuspendComplete, "every RayCluster and Service of the RayService is deleted"), o.Now)
		setCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, false, rayv1.SuspendComplete, "the RayService is suspended"), o.Now)
		setCondition(&st.Conditions, newCondition(rs, rayv1.UpgradeInProgress, false, rayv1.SuspendComplete, "No upgrade in progress."), o.Now)
		setCondition(&st.Conditions, newCondition(rs, rayv1.RollbackInProgress, false, rayv1.SuspendComplete, "No rollback in progress."), o.Now)
	}
	return true
}

// newCondition builds a RayService condition.
func newCondition(rs *rayv1.RayService, t rayv1.RayServiceConditionType, status bool, reason rayv1.RayServiceConditionReason, msg string) metav1.Condition {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: string(t), Status: s, Reason: string(reason), Message: kit.Truncate(msg, 1000), ObservedGeneration: rs.Generation}
}
