package controller

// The one status computation of RayCluster. It is pure. The conditions say
// what is true now: HeadPodReady follows the head pod, the counts are live;
// only RayClusterProvisioned is sticky, as its reason
// (AllPodRunningAndReadyFirstTime) says: it records that the cluster came up
// once, and the ray.io/disable-provisioned-head-restart annotation depends
// on that memory. status.state is KubeRay's (v1.7.0 calculateStatus): it
// becomes "ready" when the head and every desired worker are running and
// ready, "suspended" when a suspended cluster has no pods left, and
// otherwise keeps its value: a cluster that was ready stays "ready" while a
// pod restarts or a worker is added, until it is suspended.

import (
	"maps"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// failure is a write that failed while acting on a plan.
type failure struct {
	// Reason is a ReplicaFailure reason (rayapi/v1), e.g. FailedCreateWorkerPod.
	Reason  string
	Message string
}

// Condition reasons raydar adds to KubeRay's.
const (
	reasonHeadPodNotReady   = "HeadPodNotReady"
	reasonSuspendRequested  = "SuspendRequested"
	reasonSuspendComplete   = "SuspendComplete"
	reasonNotSuspended      = "RayClusterResumed"
	reasonPodsBeingReplaced = "RayClusterPodsBeingReplaced"
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
		case isHeadPod(pod):
			if head == nil || (!isRunningAndReady(head) && isRunningAndReady(pod)) {
				head = pod
			}
		case isWorkerPod(pod):
			if pod.Status.Phase == corev1.PodRunning {
				s.AvailableWorkerReplicas++
			}
			if isRunningAndReady(pod) {
				s.ReadyWorkerReplicas++
				readyByGroup[podGroup(pod)]++
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
	allReady := !invalid && !suspending && head != nil && isRunningAndReady(head)
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
		setCondition(&conds, metav1.Condition{Type: string(t), Status: st, Reason: reason, Message: msg}, now)
	}

	// HeadPodReady follows the head pod.
	switch {
	case head == nil:
		set(rayv1.HeadPodReady, metav1.ConditionFalse, rayv1.HeadPodNotFound, "no head pod exists")
	case isRunningAndReady(head):
		set(rayv1.HeadPodReady, metav1.ConditionTrue, rayv1.HeadPodRunningAndReady, "")
	default:
		reason, msg := podNotReadyReason(head)
		set(rayv1.HeadPodReady, metav1.ConditionFalse, reason, msg)
	}

	// Suspending and Suspended: present once suspend was ever asked for.
	suspended := false
	switch {
	case suspending && total == 0:
		suspended = true
		set(rayv1.RayClusterSuspending, metav1.ConditionFalse, reasonSuspendComplete, "")
		set(rayv1.RayClusterSuspended, metav1.ConditionTrue, reasonSuspendComplete, "all pods are gone")
	case suspending:
		set(rayv1.RayClusterSuspending, metav1.ConditionTrue, reasonSuspendRequested,
			strconv.Itoa(total)+" pods left to delete")
		if findCondition(conds, string(rayv1.RayClusterSuspended)) != nil {
			set(rayv1.RayClusterSuspended, metav1.ConditionFalse, reasonSuspendRequested, "")
		}
	default:
		if findCondition(conds, string(rayv1.RayClusterSuspending)) != nil {
			set(rayv1.RayClusterSuspending, metav1.ConditionFalse, reasonNotSuspended, "")
		}
		if findCondition(conds, string(rayv1.RayClusterSuspended)) != nil {
			set(rayv1.RayClusterSuspended, metav1.ConditionFalse, reasonNotSuspended, "")
		}
	}

	// RayClusterProvisioned: true once every pod was running and ready.
	prov := findCondition(conds, string(rayv1.RayClusterProvisioned))
	switch {
	case suspending || (p != nil && p.ResetProvisioned):
		set(rayv1.RayClusterProvisioned, metav1.ConditionFalse, reasonPodsBeingReplaced, "the pods are being deleted")
	case prov != nil && prov.Status == metav1.ConditionTrue:
	case allReady:
		set(rayv1.RayClusterProvisioned, metav1.ConditionTrue, rayv1.AllPodRunningAndReadyFirstTime, "")
	default:
		set(rayv1.RayClusterProvisioned, metav1.ConditionFalse, rayv1.RayClusterPodsProvisioning, "")
	}

	// ReplicaFailure: present only while something fails.
	switch {
	case invalid:
		set(rayv1.RayClusterReplicaFailure, metav1.ConditionTrue, reasonValidationFailed, invalidMessage(p.Invalid))
		s.Reason = invalidMessage(p.Invalid)
	case len(failures) > 0:
		msgs := make([]string, 0, len(failures))
		for _, f := range failures {
			msgs = append(msgs, f.Message)
		}
		set(rayv1.RayClusterReplicaFailure, metav1.ConditionTrue, failures[0].Reason, truncate(strings.Join(msgs, "; "), 1024))
	default:
		removeCondition(&conds, string(rayv1.RayClusterReplicaFailure))
	}
	s.Conditions = conds

	// state is sticky: only these two transitions change it.
	s.State = old.State
	switch {
	case suspended:
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
// resources (requests, limits standing in for unset requests).
func desiredResources(rc *rayv1.RayCluster) (cpu, mem, gpu, tpu resource.Quantity) {
	cpu = *resource.NewQuantity(0, resource.DecimalSI)
	mem = *resource.NewQuantity(0, resource.BinarySI)
	gpu = *resource.NewQuantity(0, resource.DecimalSI)
	tpu = *resource.NewQuantity(0, resource.DecimalSI)
	add := func(spec corev1.PodSpec, n int64) {
		if n == 0 {
			return
		}
		r := podResources(spec)
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

// podNotReadyReason explains a pod that is not ready, from the most specific
// signal: the Ray container's waiting or terminated reason, then the pod's
// Ready condition, then its phase.
func podNotReadyReason(p *corev1.Pod) (string, string) {
	if len(p.Spec.Containers) > 0 {
		name := p.Spec.Containers[rayv1.RayContainerIndex].Name
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name != name {
				continue
			}
			if w := cs.State.Waiting; w != nil && w.Reason != "" {
				return conditionReason(w.Reason), truncate("pod "+p.Name+": "+w.Message, 512)
			}
			if t := cs.State.Terminated; t != nil && t.Reason != "" {
				return conditionReason(t.Reason), truncate("pod "+p.Name+": "+t.Message, 512)
			}
		}
	}
	if p.DeletionTimestamp != nil {
		return "Terminating", "pod " + p.Name + " is terminating"
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Reason != "" {
			return conditionReason(c.Reason), truncate("pod "+p.Name+": "+c.Message, 512)
		}
	}
	if p.Status.Phase != "" && p.Status.Phase != corev1.PodRunning {
		return conditionReason(string(p.Status.Phase)), "pod " + p.Name + " is " + string(p.Status.Phase)
	}
	return reasonHeadPodNotReady, "pod " + p.Name + " is not ready"
}

// conditionReason makes s a valid condition reason (CamelCase identifier).
func conditionReason(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		}
	}
	out := b.String()
	if out == "" || !(out[0] >= 'a' && out[0] <= 'z' || out[0] >= 'A' && out[0] <= 'Z') {
		return reasonHeadPodNotReady
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func cloneConditions(c []metav1.Condition) []metav1.Condition {
	if c == nil {
		return nil
	}
	out := make([]metav1.Condition, len(c))
	copy(out, c)
	return out
}

func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// setCondition sets c, keeping the old transition time unless the status
// changed, so that unchanged conditions never cause a write.
func setCondition(conds *[]metav1.Condition, c metav1.Condition, now time.Time) {
	if old := findCondition(*conds, c.Type); old != nil {
		if old.Status != c.Status {
			old.LastTransitionTime = metav1.NewTime(now)
		}
		old.Status, old.Reason, old.Message = c.Status, c.Reason, c.Message
		return
	}
	c.LastTransitionTime = metav1.NewTime(now)
	*conds = append(*conds, c)
}

func removeCondition(conds *[]metav1.Condition, t string) {
	out := (*conds)[:0]
	for _, c := range *conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	*conds = out
	if len(out) == 0 {
		*conds = nil
	}
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
	// by itself.
	was, is := condStatus(old.Conditions, string(rayv1.HeadPodReady)), condStatus(cur.Conditions, string(rayv1.HeadPodReady))
	if was != is && (was == metav1.ConditionTrue || is == metav1.ConditionTrue) {
		return true
	}
	for _, t := range []rayv1.RayClusterConditionType{rayv1.RayClusterSuspending, rayv1.RayClusterSuspended, rayv1.RayClusterReplicaFailure} {
		if condStatus(old.Conditions, string(t)) != condStatus(cur.Conditions, string(t)) {
			return true
		}
	}
	return false
}

func condStatus(conds []metav1.Condition, t string) metav1.ConditionStatus {
	if c := findCondition(conds, t); c != nil {
		return c.Status
	}
	return ""
}
