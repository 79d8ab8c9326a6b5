package raycluster

// The one status computation of RayCluster. It is pure. The conditions are
// KubeRay v1.7.0's (raycluster_controller.go calculateStatus), in its order,
// with its reasons and messages: ReplicaFailure while a pod write fails;
// HeadPodReady from the head pod's Ready condition; RayClusterProvisioned,
// sticky once true (it records that the cluster came up once, and the
// ray.io/disable-provisioned-head-restart annotation depends on that
// memory) until a suspension completes; RayClusterSuspending and
// RayClusterSuspended, always present. status.state is KubeRay's too: it
// becomes "ready" when the head and every desired worker are running and
// ready, "suspended" when a suspended cluster has no pods left, and
// otherwise keeps its value: a cluster that was ready stays "ready" while a
// pod restarts or a worker is added, until it is suspended.

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/raydar/raydar/controller/batchscheduler/gang"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// failure is a write that failed while acting on a plan.
type failure struct {
	// Condition is KubeRay's ReplicaFailure reason for it (rayapi/v1, e.g.
	// FailedCreateWorkerPod), "" when KubeRay sets no condition for it.
	Condition string
	// Event is KubeRay's Warning Event reason (e.g. FailedToCreateWorkerPod).
	Event string
	// Message is the Event's message, in KubeRay's words.
	Message string
	// Err is the API server's error.
	Err error
}

// replicaFailureMessage is the ReplicaFailure message of f: KubeRay's
// errors.Join(ErrFailed..., err).Error(), the reason and the error on two
// lines.
func (f failure) replicaFailureMessage() string {
	if f.Err == nil {
		return f.Condition
	}
	return f.Condition + "\n" + f.Err.Error()
}

// Condition messages KubeRay writes (v1.7.0 raycluster_controller.go
// calculateStatus).
const (
	msgHeadPodNotFound     = "Head Pod not found"
	msgProvisionedFirst    = "All Ray Pods are ready for the first time"
	msgProvisioning        = "RayCluster Pods are being provisioned for first time"
	msgProvisionSuspended  = "RayCluster has been suspended"
	containersNotReadyCond = "ContainersNotReady"
)

// computeStatus derives the status from the spec and the pods (as they are,
// or as they will be once a plan succeeds), keeping the transition times of
// conditions and states that did not change.
func computeStatus(rc *rayv1.RayCluster, pods []*corev1.Pod, svc *corev1.Service, p *plan, failures []failure, now time.Time) rayv1.RayClusterStatus {
	old := rc.Status
	spec := &rc.Spec
	s := rayv1.RayClusterStatus{
		ObservedGeneration:    rc.Generation,
		DesiredWorkerReplicas: spec.DesiredWorkerPods(),
		MinWorkerReplicas:     spec.MinWorkerPods(),
		MaxWorkerReplicas:     spec.MaxWorkerPods(),
		LastUpdateTime:        old.LastUpdateTime,
		StateTransitionTimes:  maps.Clone(old.StateTransitionTimes),
	}
	s.DesiredCPU, s.DesiredMemory, s.DesiredGPU, s.DesiredTPU = desiredResources(rc)

	var head *corev1.Pod
	total := 0
	readyByGroup := map[string]int32{}
	for _, pod := range pods {
		total++
		if !isActive(pod) {
			continue
		}
		switch {
		case kit.IsHeadPod(pod):
			if head == nil || (!kit.IsRunningAndReady(head) && kit.IsRunningAndReady(pod)) {
				head = pod
			}
		case kit.IsWorkerPod(pod):
			if pod.Status.Phase == corev1.PodRunning {
				s.AvailableWorkerReplicas++
			}
			if kit.IsRunningAndReady(pod) {
				s.ReadyWorkerReplicas++
				readyByGroup[kit.PodGroup(pod)]++
			}
		}
	}
	if head != nil {
		s.Head.PodName = head.Name
		s.Head.PodIP = head.Status.PodIP
	}
	if svc != nil {
		s.Head.ServiceName = svc.Name
		s.Head.ServiceIP = serviceIP(svc, head)
		s.Endpoints = endpoints(svc)
	}

	invalid := p != nil && len(p.Invalid) > 0
	suspending := suspendInProgress(rc)
	allReady := !invalid && !suspending && head != nil && kit.IsRunningAndReady(head)
	if allReady {
		for i := range spec.WorkerGroupSpecs {
			g := &spec.WorkerGroupSpecs[i]
			if readyByGroup[g.GroupName] < g.DesiredPods() {
				allReady = false
				break
			}
		}
	}

	conds := cloneConditions(old.Conditions)
	set := func(t rayv1.RayClusterConditionType, st metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&conds, metav1.Condition{Type: string(t), Status: st, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(now)})
	}

	// The conditions in KubeRay's order (v1.7.0 calculateStatus), so a new
	// condition is appended where KubeRay appends it.

	// ReplicaFailure: set by a failed pod write, removed by a pass without
	// failures; a failure KubeRay gives no condition reason (a Service, the
	// autoscaler's RBAC) leaves it as it was.
	switch {
	case invalid:
		set(rayv1.RayClusterReplicaFailure, metav1.ConditionTrue, ReasonValidationFailed, kit.InvalidMessage(p.Invalid))
		s.Reason = kit.InvalidMessage(p.Invalid)
	case len(failures) > 0:
		for _, f := range failures {
			if f.Condition != "" {
				set(rayv1.RayClusterReplicaFailure, metav1.ConditionTrue, f.Condition, kit.Truncate(f.replicaFailureMessage(), 1024))
				break
			}
		}
	default:
		meta.RemoveStatusCondition(&conds, string(rayv1.RayClusterReplicaFailure))
	}

	// HeadPodReady follows the head pod's Ready condition.
	if head == nil {
		set(rayv1.HeadPodReady, metav1.ConditionFalse, rayv1.HeadPodNotFound, msgHeadPodNotFound)
	} else {
		c := headPodReadyCondition(head)
		set(rayv1.HeadPodReady, c.Status, c.Reason, c.Message)
	}

	// RayClusterProvisioned records that every pod was running and ready
	// once; only a suspension resets it.
	prevSuspend := suspendStatus(old.Conditions)
	if !rayv1.IsConditionTrue(conds, string(rayv1.RayClusterProvisioned)) && prevSuspend != rayv1.RayClusterSuspended {
		if allReady {
			set(rayv1.RayClusterProvisioned, metav1.ConditionTrue, rayv1.AllPodRunningAndReadyFirstTime, msgProvisionedFirst)
		} else {
			set(rayv1.RayClusterProvisioned, metav1.ConditionFalse, rayv1.RayClusterPodsProvisioning, msgProvisioning)
		}
	}

	// RayClusterSuspending and RayClusterSuspended, always present, reason
	// their own type: False/False → Suspending True (spec.suspend) → all
	// pods gone: Suspending False, Suspended True → spec.suspend false:
	// Suspended False.
	switch prevSuspend {
	case rayv1.RayClusterSuspending:
		if total == 0 {
			set(rayv1.RayClusterProvisioned, metav1.ConditionFalse, rayv1.RayClusterPodsProvisioning, msgProvisionSuspended)
			set(rayv1.RayClusterSuspending, metav1.ConditionFalse, string(rayv1.RayClusterSuspending), "")
			set(rayv1.RayClusterSuspended, metav1.ConditionTrue, string(rayv1.RayClusterSuspended), "")
		}
	case rayv1.RayClusterSuspended:
		if spec.Suspend != nil && !*spec.Suspend {
			set(rayv1.RayClusterSuspended, metav1.ConditionFalse, string(rayv1.RayClusterSuspended), "")
		}
	default:
		set(rayv1.RayClusterSuspended, metav1.ConditionFalse, string(rayv1.RayClusterSuspended), "")
		set(rayv1.RayClusterSuspending, condition(spec.IsSuspended()), string(rayv1.RayClusterSuspending), "")
	}
	s.Conditions = conds

	// state is sticky: only these two transitions change it.
	s.State = old.State
	switch {
	case spec.IsSuspended() && total == 0:
		s.State = rayv1.Suspended
	case allReady:
		s.State = rayv1.Ready
	}
	if s.State != old.State && s.State != "" {
		if s.StateTransitionTimes == nil {
			s.StateTransitionTimes = map[rayv1.ClusterState]*metav1.Time{}
		}
		t := metav1.NewTime(now)
		s.StateTransitionTimes[s.State] = &t
	}
	return s
}

// desiredResources sums the head's and every desired worker's container
// resources (requests, limits standing in for unset requests: gang.PodResources,
// KubeRay's CalculatePodResource).
func desiredResources(rc *rayv1.RayCluster) (cpu, mem, gpu, tpu resource.Quantity) {
	cpu = *resource.NewQuantity(0, resource.DecimalSI)
	mem = *resource.NewQuantity(0, resource.BinarySI)
	gpu = *resource.NewQuantity(0, resource.DecimalSI)
	tpu = *resource.NewQuantity(0, resource.DecimalSI)
	add := func(spec corev1.PodSpec, n int64) {
		if n == 0 {
			return
		}
		r := gang.PodResources(&spec)
		for _, x := range []struct {
			q   *resource.Quantity
			val resource.Quantity
		}{
			{&cpu, r[corev1.ResourceCPU]}, {&mem, r[corev1.ResourceMemory]}, {&gpu, gpuCount(r)}, {&tpu, r[tpuResource]},
		} {
			v := x.val.DeepCopy()
			if v.IsZero() {
				continue
			}
			v.Mul(n)
			x.q.Add(v)
		}
	}
	add(rc.Spec.HeadGroupSpec.Template.Spec, 1)
	for i := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[i]
		add(g.Template.Spec, int64(g.DesiredPods()))
	}
	return cpu, mem, gpu, tpu
}

// serviceIP is the address clients use for the head: a load balancer's
// ingress, else the cluster IP, else (headless) the head pod's IP.
func serviceIP(svc *corev1.Service, head *corev1.Pod) string {
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				return in.IP
			}
			if in.Hostname != "" {
				return in.Hostname
			}
		}
	}
	if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
		return ip
	}
	if head != nil {
		return head.Status.PodIP
	}
	return ""
}

// endpoints maps the head Service's port names to the port clients use:
// the node port for NodePort and LoadBalancer Services, else the port.
func endpoints(svc *corev1.Service) map[string]string {
	if len(svc.Spec.Ports) == 0 {
		return nil
	}
	out := make(map[string]string, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		if p.Name == "" {
			continue
		}
		port := p.Port
		if p.NodePort != 0 && (svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer) {
			port = p.NodePort
		}
		out[p.Name] = strconv.Itoa(int(port))
	}
	return out
}

// headPodReadyCondition is HeadPodReady for an existing head pod, as
// KubeRay v1.7.0 derives it (utils.FindHeadPodReadyCondition): the pod's
// Ready condition's status and message; its reason, HeadPodRunningAndReady
// when ready without one, and for ContainersNotReady the reason of the
// first container that is waiting or terminated, its name and message
// appended. A pod without a Ready condition (not scheduled yet) is False,
// reason Unknown.
func headPodReadyCondition(p *corev1.Pod) metav1.Condition {
	c := metav1.Condition{Type: string(rayv1.HeadPodReady), Status: metav1.ConditionFalse, Reason: rayv1.UnknownReason}
	for _, pc := range p.Status.Conditions {
		if pc.Type != corev1.PodReady {
			continue
		}
		c.Status = metav1.ConditionStatus(pc.Status)
		c.Message = pc.Message
		reason := pc.Reason
		if pc.Status == corev1.ConditionTrue && reason == "" {
			reason = rayv1.HeadPodRunningAndReady
		}
		if reason != "" {
			c.Reason = conditionReason(reason, c.Reason)
		}
		if reason == containersNotReadyCond {
			for _, cs := range p.Status.ContainerStatuses {
				var r, m string
				switch {
				case cs.State.Waiting != nil:
					r, m = cs.State.Waiting.Reason, cs.State.Waiting.Message
				case cs.State.Terminated != nil:
					r, m = cs.State.Terminated.Reason, cs.State.Terminated.Message
				default:
					continue
				}
				if c.Message != "" {
					c.Message += "; "
				}
				c.Message += cs.Name + ": " + m
				c.Reason = conditionReason(r, c.Reason)
				break
			}
		}
		break
	}
	c.Message = kit.Truncate(c.Message, 1024)
	return c
}

// conditionReason is s when it is a valid condition reason; else s without
// the characters a reason cannot hold, or fallback when nothing is left
// (the API server refuses a status with an invalid reason: KubeRay's write
// would fail there, raydar's keeps the reason it had).
func conditionReason(s, fallback string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		}
	}
	out := b.String()
	if out == "" || !(out[0] >= 'a' && out[0] <= 'z' || out[0] >= 'A' && out[0] <= 'Z') {
		return fallback
	}
	return out
}

// suspendStatus is the suspension a status records: RayClusterSuspending
// or RayClusterSuspended when that condition is true, else "" (KubeRay's
// utils.FindRayClusterSuspendStatus).
func suspendStatus(conds []metav1.Condition) rayv1.RayClusterConditionType {
	for _, c := range conds {
		if (c.Type == string(rayv1.RayClusterSuspending) || c.Type == string(rayv1.RayClusterSuspended)) && c.Status == metav1.ConditionTrue {
			return rayv1.RayClusterConditionType(c.Type)
		}
	}
	return ""
}

func condition(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

func cloneConditions(c []metav1.Condition) []metav1.Condition {
	if c == nil {
		return nil
	}
	out := make([]metav1.Condition, len(c))
	copy(out, c)
	return out
}

// statusEqual compares two statuses, ignoring lastUpdateTime.
func statusEqual(a, b rayv1.RayClusterStatus) bool {
	a.LastUpdateTime, b.LastUpdateTime = nil, nil
	return equality.Semantic.DeepEqual(a, b)
}

// statusUrgent reports whether a status change must be written at once
// rather than coalesced: the state or a condition's status changed (a
// cluster became ready, stopped being ready, was suspended, failed).
// Counts, addresses and messages that move while pods come up are
// coalesced for a short window (see Options.StatusCoalesceWindow).
func statusUrgent(old, cur rayv1.RayClusterStatus) bool {
	if old.State != cur.State {
		return true
	}
	// state no longer leaves "ready" when the head does (it is sticky, as
	// in KubeRay), so the head becoming or ceasing to be ready is urgent
	// by itself; so are a suspension and a failure starting or ending. A
	// condition first written False (the suspend conditions of a new
	// cluster) is not.
	for _, t := range []rayv1.RayClusterConditionType{rayv1.HeadPodReady, rayv1.RayClusterSuspending, rayv1.RayClusterSuspended, rayv1.RayClusterReplicaFailure} {
		if condFlipped(old, cur, t) {
			return true
		}
	}
	return false
}

// condFlipped reports whether condition t turned True or stopped being
// True (a condition first written False is no flip).
func condFlipped(old, cur rayv1.RayClusterStatus, t rayv1.RayClusterConditionType) bool {
	was, is := kit.CondStatus(old.Conditions, string(t)), kit.CondStatus(cur.Conditions, string(t))
	return was != is && (was == metav1.ConditionTrue || is == metav1.ConditionTrue)
}

// bringUpWindows is how many coalescing windows a cluster that has never
// been ready holds its non-urgent changes (10 s by default): long enough
// that a cluster coming up writes its status once, when it becomes ready
// (urgent: the state changes), with the counts and addresses of that
// moment; bounded, so that a cluster whose pods do not come up shows its
// counts within seconds. Failures are urgent and never held.
const bringUpWindows = 5

// statusChange is how the status computed differs from the one read, for
// the kit's StatusWriter: unchanged (but for lastUpdateTime); urgent
// (a failed write this pass, or statusUrgent), written at once; else held
// for the coalescing window (bringUpWindows of them while the cluster has
// never been ready), so that a cluster coming up does not write a status
// per pod transition. Its head becoming ready is held one window
// (onlyHeadBecameReady), so that it is written with the ready state.
func statusChange(old, cur rayv1.RayClusterStatus, failed bool, coalesce time.Duration) kit.StatusChange {
	comingUp := old.State == "" && cur.State == ""
	switch {
	case statusEqual(old, cur):
		return kit.StatusChange{Unchanged: true}
	case failed || coalesce <= 0:
		return kit.StatusChange{}
	case comingUp && onlyHeadBecameReady(old, cur):
		return kit.StatusChange{Hold: coalesce, Class: headReadyClass}
	case statusUrgent(old, cur):
		return kit.StatusChange{}
	case comingUp:
		return kit.StatusChange{Hold: bringUpWindows * coalesce}
	}
	return kit.StatusChange{Hold: coalesce}
}

// headReadyClass is the StatusWriter clock of a head that became ready
// while its cluster comes up: held one window from that moment, not the
// bring-up's five.
const headReadyClass = "head-ready"

// onlyHeadBecameReady reports whether the head becoming ready is the one
// urgent part of a change. While a cluster comes up its workers are
// usually ready within moments of the head (0.1-0.8 s on the benchmark's
// plane), so that change is held one coalescing window: written with the
// cluster's ready state when that comes within the window (one write
// instead of two), else when the window ends. A head that stops being
// ready, a suspension and a failure stay urgent.
func onlyHeadBecameReady(old, cur rayv1.RayClusterStatus) bool {
	if kit.CondStatus(old.Conditions, string(rayv1.HeadPodReady)) == metav1.ConditionTrue ||
		kit.CondStatus(cur.Conditions, string(rayv1.HeadPodReady)) != metav1.ConditionTrue {
		return false
	}
	for _, t := range []rayv1.RayClusterConditionType{rayv1.RayClusterSuspending, rayv1.RayClusterSuspended, rayv1.RayClusterReplicaFailure} {
		if condFlipped(old, cur, t) {
			return false
		}
	}
	return true
}

// writeStatus writes the status through the kit's StatusWriter when
// statusChange says so, stamped with lastUpdateTime. It returns how long
// to wait before a held status is due.
func (r *Reconciler) writeStatus(ctx context.Context, rc *rayv1.RayCluster, status rayv1.RayClusterStatus, failed bool) (time.Duration, error) {
	now := r.now()
	ch := statusChange(rc.Status, status, failed, r.coalesce)
	obj := rc.DeepCopy()
	t := metav1.NewTime(now)
	status.LastUpdateTime = &t
	obj.Status = status
	return r.status.Write(ctx, rc, obj, ch, now, nil)
}
