package autoscaler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/inspect"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox/rayhead"
	"github.com/raydar/raydar/kube/sandbox/simkit"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	raywhy "github.com/raydar/raydar/rayapi/why"
)

// DefaultInterval is Ray's AUTOSCALER_UPDATE_INTERVAL_S.
const DefaultInterval = 5 * time.Second

// UserAgent is what Ray's KubeRay provider sends (Python's requests
// library); the API server takes the field manager "python-requests" from
// it, the name kube/history knows as the autoscaler's.
const UserAgent = "python-requests/2.32.3"

// upscaling speeds KubeRay's autoscaling config gives Ray per
// autoscalerOptions.upscalingMode.
const (
	speedConservative = 1
	speedDefault      = 1000
)

// Options configure a Driver.
type Options struct {
	// Config is an API server connection allowed to impersonate (the
	// sandbox's admin); the driver reads with it and writes as the head
	// pod's ServiceAccount.
	Config             *rest.Config
	Namespace, Cluster string
	// State is the simulated head's resource state.
	State func() rayhead.AutoscalerState
	// Interval between two decisions (default DefaultInterval).
	Interval time.Duration
	// Logf receives one line per patch and per change of state.
	Logf func(format string, args ...any)
}

// State names what the driver did last.
type State string

const (
	StateRunning State = "Running" // deciding (and writing when there is something to do)
	// StateOff: enableInTreeAutoscaling is not true.
	StateOff State = "Off"
	// StateNoSidecar: the head pod has no running autoscaler container.
	StateNoSidecar State = "NoSidecar"
	// StateForbidden: the head's ServiceAccount may not do what Ray's
	// autoscaler needs (patch rayclusters, list pods).
	StateForbidden State = "Forbidden"
	// StateWaitingDeletes: a group's workersToDelete names a pod that
	// still exists (Ray's safe_to_scale).
	StateWaitingDeletes State = "WaitingForDeletes"
	// StateNoHead: no head pod, or its head knows no resources yet.
	StateNoHead State = "NoHead"
	// StateError: reading or writing failed (Message says how).
	StateError State = "Error"
)

// Status is what the driver saw and did on its last round.
type Status struct {
	State    State
	Message  string
	Decision Decision
	At       time.Time
	// Patches counts the patches written.
	Patches int
}

// Driver runs the autoscaler of one RayCluster.
type Driver struct {
	o   Options
	cs  kubernetes.Interface
	cl  client.Client
	mu  sync.Mutex
	st  Status
	sas map[string]client.Client // ServiceAccount → impersonating client
}

// New returns a driver; Run it.
func New(o Options) (*Driver, error) {
	if o.Config == nil || o.State == nil {
		return nil, errors.New("autoscaler: need a Config and a State")
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	c, err := simkit.NewClients(o.Config, "sandbox-autoscaler", nil)
	if err != nil {
		return nil, err
	}
	return &Driver{o: o, cs: c.Kube, cl: c.Client, sas: map[string]client.Client{}}, nil
}

// Status returns the last round's status.
func (d *Driver) Status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st
}

// Run decides every Interval until ctx is done.
func (d *Driver) Run(ctx context.Context) {
	t := time.NewTicker(d.o.Interval)
	defer t.Stop()
	for {
		st := d.Step(ctx)
		d.mu.Lock()
		prev := d.st
		st.Patches += prev.Patches
		d.st = st
		d.mu.Unlock()
		if (st.State != prev.State || st.Message != prev.Message) && ctx.Err() == nil {
			d.o.Logf("autoscaler %s/%s: %s %s", d.o.Namespace, d.o.Cluster, st.State, st.Message)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Step is one round: read, decide, write. Its Status.Patches is the
// patches written in this round.
func (d *Driver) Step(ctx context.Context) Status {
	now := time.Now()
	fail := func(s State, format string, args ...any) Status {
		return Status{State: s, Message: fmt.Sprintf(format, args...), At: now}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(rayv1.GroupVersion.WithKind("RayCluster"))
	if err := d.cl.Get(ctx, types.NamespacedName{Namespace: d.o.Namespace, Name: d.o.Cluster}, u); err != nil {
		return fail(StateError, "reading the RayCluster: %v", err)
	}
	rc := &rayv1.RayCluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, rc); err != nil {
		return fail(StateError, "reading the RayCluster: %v", err)
	}
	if !rc.Spec.IsAutoscalingEnabled() {
		return fail(StateOff, "enableInTreeAutoscaling is not true")
	}
	pl, err := d.cs.CoreV1().Pods(d.o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: rayv1.RayClusterLabelKey + "=" + d.o.Cluster})
	if err != nil {
		return fail(StateError, "listing the pods: %v", err)
	}
	var pods []*podview.Pod // not terminating, as Ray's provider lists them
	for i := range pl.Items {
		p := &pl.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		pods = append(pods, podview.Of(p))
	}
	head, sa := raywhy.HeadServiceAccount(pods)
	if head == nil {
		return fail(StateNoHead, "no head pod")
	}
	if why := sidecarMissing(head); why != "" {
		return fail(StateNoSidecar, "%s", why)
	}
	if why, err := d.refused(ctx, sa); err != nil {
		return fail(StateError, "SubjectAccessReview: %v", err)
	} else if why != "" {
		return fail(StateForbidden, "%s", why)
	}

	names := map[string]bool{}
	for _, p := range pods {
		names[p.Name] = true
	}
	var clear []int // groups whose workersToDelete are all gone
	for i, g := range rc.Spec.WorkerGroupSpecs {
		for _, w := range g.ScaleStrategy.WorkersToDelete {
			if names[w] {
				return fail(StateWaitingDeletes, "waiting for the operator to delete %s (group %s)", w, g.GroupName)
			}
		}
		if len(g.ScaleStrategy.WorkersToDelete) > 0 {
			clear = append(clear, i)
		}
	}

	hs := d.o.State()
	if !hs.Known {
		return fail(StateNoHead, "the head knows no nodes yet")
	}
	req, inFlight, skipped := buildRequest(rc, pods, hs)
	dec := Decide(req)
	ops := patchOps(rc, u, inFlight, dec, clear, skipped)
	st := Status{State: StateRunning, Decision: dec, At: now, Message: describe(dec)}
	for _, g := range skipped {
		st.Message += fmt.Sprintf("; group %s left alone: numOfHosts > 1 is not simulated", g)
	}
	if len(ops) == 0 {
		return st
	}
	body, err := json.Marshal(ops)
	if err != nil {
		return fail(StateError, "%v", err)
	}
	w, err := d.writer(sa)
	if err != nil {
		return fail(StateError, "%v", err)
	}
	if err := w.Patch(ctx, rc, client.RawPatch(types.JSONPatchType, body)); err != nil {
		return fail(StateError, "patching the RayCluster: %v", err)
	}
	d.o.Logf("autoscaler %s/%s: %s; patch %s", d.o.Namespace, d.o.Cluster, st.Message, body)
	st.Patches = 1
	return st
}

// sidecarMissing says why the head pod's autoscaler would not run: no
// container of that name, or one that its status shows not running.
func sidecarMissing(head *podview.Pod) string {
	found := false
	for _, c := range head.Spec.Containers {
		if c.Name == rayv1.AutoscalerContainerName {
			found = true
		}
	}
	if !found {
		return fmt.Sprintf("head pod %s has no %q container", head.Name, rayv1.AutoscalerContainerName)
	}
	for _, cs := range head.Status.ContainerStatuses {
		if cs.Name == rayv1.AutoscalerContainerName && cs.State.Running == nil {
			return fmt.Sprintf("the %q container of head pod %s is not running", rayv1.AutoscalerContainerName, head.Name)
		}
	}
	if head.Status.Phase != corev1.PodRunning {
		return fmt.Sprintf("head pod %s is %s", head.Name, head.Status.Phase)
	}
	return ""
}

// refused asks the API server whether the ServiceAccount may do what Ray's
// autoscaler does (the reviews raydar why asks, kube/inspect); it returns
// what it may not, "" when all is allowed.
func (d *Driver) refused(ctx context.Context, sa string) (string, error) {
	var denied []string
	for _, sar := range inspect.AutoscalerAccessReviews(d.o.Namespace, d.o.Cluster, sa) {
		got, err := d.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		if !got.Status.Allowed {
			denied = append(denied, inspect.ReviewAction(sar))
		}
	}
	if len(denied) == 0 {
		return "", nil
	}
	return fmt.Sprintf("ServiceAccount %s may not %s (RBAC)", sa, strings.Join(denied, ", ")), nil
}

// writer is a client acting as the ServiceAccount, with Ray's user agent.
func (d *Driver) writer(sa string) (client.Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.sas[sa]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(d.o.Config)
	cfg.UserAgent = UserAgent
	user, groups := inspect.ServiceAccountUser(d.o.Namespace, sa)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, fmt.Errorf("autoscaler: %w", err)
	}
	d.sas[sa] = c
	return c, nil
}

// buildRequest turns the RayCluster, its pods and the head's state into a
// decision's input. A group whose replicas exceed its pods has that many
// launches in flight (Ray's instance manager keeps them as REQUESTED
// instances): they count as pending nodes. inFlight[group] is the group's
// pods plus those launches. Multi-host groups (numOfHosts > 1) are not
// simulated: they and their pods are left out, named in skipped.
func buildRequest(rc *rayv1.RayCluster, pods []*podview.Pod, hs rayhead.AutoscalerState) (req Request, inFlight map[string]int, skipped []string) {
	req = Request{IdleTimeout: DefaultIdleTimeout, UpscalingSpeed: speedDefault, MaxConcurrentLaunches: DefaultMaxConcurrentLaunches}
	multiHost := map[string]bool{}
	if o := rc.Spec.AutoscalerOptions; o != nil {
		if o.IdleTimeoutSeconds != nil {
			req.IdleTimeout = time.Duration(*o.IdleTimeoutSeconds) * time.Second
		}
		if o.UpscalingMode != nil && *o.UpscalingMode == rayv1.UpscalingModeConservative {
			req.UpscalingSpeed = speedConservative
		}
	}
	for i := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[i]
		if g.Hosts() > 1 {
			multiHost[g.GroupName] = true
			skipped = append(skipped, g.GroupName)
			continue
		}
		res, _ := raydash.WorkerGroupResources(rc, g.GroupName)
		t := NodeType{Name: g.GroupName, Resources: res, Min: int(g.Min()), Max: int(g.Max())}
		if g.IsSuspended() {
			t.Min, t.Max = 0, 0
		}
		if g.IdleTimeoutSeconds != nil {
			to := time.Duration(*g.IdleTimeoutSeconds) * time.Second
			t.IdleTimeout = &to
		}
		req.Types = append(req.Types, t)
	}
	byUID := map[string]rayhead.AutoscalerNode{}
	for _, n := range hs.Nodes {
		byUID[n.Name] = n
	}
	inFlight = map[string]int{}
	for _, p := range pods {
		head := p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode)
		n := Node{ID: p.Name, Type: p.Labels[rayv1.RayNodeGroupLabelKey], Head: head}
		if !head && multiHost[n.Type] {
			continue
		}
		if head {
			n.Type = rayv1.RayNodeHeadGroupLabelValue
		} else {
			inFlight[n.Type]++
		}
		if rn, ok := byUID[string(p.UID)]; ok {
			n.RayRunning, n.Total, n.Available, n.Idle = true, rn.Total, rn.Available, rn.Idle
		}
		req.Nodes = append(req.Nodes, n)
	}
	for _, g := range rc.Spec.WorkerGroupSpecs {
		if g.IsSuspended() || multiHost[g.GroupName] || g.Replicas == nil {
			continue
		}
		for ; inFlight[g.GroupName] < int(*g.Replicas); inFlight[g.GroupName]++ {
			req.Nodes = append(req.Nodes, Node{Type: g.GroupName})
		}
	}
	for _, d := range hs.Demand {
		for range d.Count {
			req.Demand = append(req.Demand, d.Shape)
		}
	}
	return req, inFlight, skipped
}

type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// patchOps is the KubeRay provider's patch for a decision: per group, the
// replicas (pods and launches in flight, plus launches, minus
// terminations, capped at maxReplicas) when they differ from the spec, and
// the workersToDelete of the pods to terminate; and the clearing of the
// workersToDelete lists whose pods are all gone.
func patchOps(rc *rayv1.RayCluster, u *unstructured.Unstructured, inFlight map[string]int, dec Decision, clear []int, skipped []string) []jsonPatchOp {
	if len(dec.Launch) == 0 && len(dec.Terminate) == 0 && len(clear) == 0 {
		return nil
	}
	del := map[string][]string{}
	gone := map[string]int{}
	for _, t := range dec.Terminate {
		gone[t.Type]++
		if t.Node != "" {
			del[t.Type] = append(del[t.Type], t.Node)
		}
	}
	groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "workerGroupSpecs")
	has := func(i int, field string) bool {
		if i >= len(groups) {
			return false
		}
		m, ok := groups[i].(map[string]any)
		if !ok {
			return false
		}
		_, ok = m[field]
		return ok
	}
	op := func(i int, field string) string {
		if has(i, field) {
			return "replace" // as Ray's provider
		}
		return "add" // Ray's "replace" would fail on a missing member
	}
	var ops []jsonPatchOp
	for i := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[i]
		if slices.Contains(skipped, g.GroupName) {
			continue
		}
		base := fmt.Sprintf("/spec/workerGroupSpecs/%d", i)
		if dec.Launch[g.GroupName] > 0 || gone[g.GroupName] > 0 {
			want := inFlight[g.GroupName] + dec.Launch[g.GroupName] - gone[g.GroupName]
			want = max(0, min(want, int(g.Max())))
			cur := 0
			if g.Replicas != nil {
				cur = int(*g.Replicas)
			}
			if want != cur {
				ops = append(ops, jsonPatchOp{Op: op(i, "replicas"), Path: base + "/replicas", Value: want})
			}
		}
		if names := del[g.GroupName]; len(names) > 0 {
			sort.Strings(names)
			ops = append(ops, jsonPatchOp{Op: op(i, "scaleStrategy"), Path: base + "/scaleStrategy", Value: map[string]any{"workersToDelete": names}})
		}
	}
	for _, i := range clear {
		if len(del[rc.Spec.WorkerGroupSpecs[i].GroupName]) > 0 {
			continue
		}
		ops = append(ops, jsonPatchOp{Op: "replace", Path: fmt.Sprintf("/spec/workerGroupSpecs/%d/scaleStrategy", i), Value: map[string]any{"workersToDelete": []string{}}})
	}
	return ops
}

// describe is a decision in words.
func describe(d Decision) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(d.Launch)) {
		s := fmt.Sprintf("launch %d %s", d.Launch[k], k)
		if w := d.Wanted[k]; w > d.Launch[k] {
			s += fmt.Sprintf(" (of %d wanted)", w)
		}
		parts = append(parts, s)
	}
	for _, t := range d.Terminate {
		parts = append(parts, fmt.Sprintf("terminate %s (%s: %s)", t.Node, t.Cause, t.Detail))
	}
	if len(d.Infeasible) > 0 {
		var sh []string
		for _, r := range d.Infeasible {
			sh = append(sh, dashboard.Resources(r).String())
		}
		parts = append(parts, "infeasible "+strings.Join(sh, " "))
	}
	if len(parts) == 0 {
		return "nothing to do"
	}
	return strings.Join(parts, "; ")
}
