package why

import (
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// AutoscalerActWithin is how long Ray's pending demand that a worker group
// could hold may wait before raydar says the autoscaler is not acting. Ray's
// autoscaler decides every 5 s (AUTOSCALER_UPDATE_INTERVAL_S) and asks for
// every node the demand needs at once with the default upscaling mode, so a
// minute is a dozen rounds.
const AutoscalerActWithin = time.Minute

// PendingShapes names the shapes of Ray's pending demand, in shapeWords,
// sorted ("" when Ray's demand is unknown or none is pending): the same
// words seen again are the same demand, whose ClusterInput.DemandSince a
// caller keeps.
func PendingShapes(c *dashboard.Capacity) string {
	if c == nil || !c.DemandKnown {
		return ""
	}
	shapes := make([]string, 0, len(c.Pending))
	for _, d := range c.Pending {
		shapes = append(shapes, shapeWords(d.Shape))
	}
	slices.Sort(shapes)
	return strings.Join(shapes, "; ")
}

// autoscalerManager is the field manager of the Ray autoscaler's writes
// (Python requests' user agent; kube/history.AutoscalerManager, copied:
// rayapi does not import kube).
const autoscalerManager = "python-requests"

// AutoscalerAccess is what the head pod's ServiceAccount may do of what
// Ray's autoscaler needs (patch the RayCluster, list pods), as
// SubjectAccessReviews answered; kube/inspect asks them for `raydar why`.
type AutoscalerAccess struct {
	ServiceAccount string
	// Denied are the refused requests, in words: "patch rayclusters.ray.io",
	// "list pods".
	Denied []string
}

// HeadServiceAccount is a cluster's head pod (of its pods, not being
// deleted; nil when there is none) and the ServiceAccount it runs as
// ("default" when unset): the account Ray's autoscaler sidecar acts as.
func HeadServiceAccount(pods []*podview.Pod) (*podview.Pod, string) {
	var head *podview.Pod
	for _, p := range pods {
		if h, _ := podGroup(p); h && p.DeletionTimestamp == nil {
			head = p
		}
	}
	if head == nil {
		return nil, ""
	}
	if sa := head.Spec.ServiceAccountName; sa != "" {
		return head, sa
	}
	return head, "default"
}

// autoscalerCauses states, for a cluster with enableInTreeAutoscaling, why
// its autoscaler does not scale it: the head pod's autoscaler sidecar
// missing, crash-looping or not running; its ServiceAccount refused by
// RBAC (a SubjectAccessReview, or a 403 in the sidecar's last
// termination); or Ray's pending demand, which a worker group that may
// grow would hold, waiting longer than AutoscalerActWithin while the
// group's replicas stay where they are (the autoscaler is not acting).
func autoscalerCauses(in *ClusterInput, out []Cause) []Cause {
	rc := in.Cluster
	if !rc.Spec.IsAutoscalingEnabled() {
		return out
	}
	head, sa := HeadServiceAccount(in.Pods)
	if head == nil || head.Spec.NodeName == "" {
		return out // no head pod yet, or not scheduled: the head's causes say why
	}
	logs := "kubectl logs " + head.Name + " -c " + rayv1.AutoscalerContainerName + " -n " + head.Namespace
	if acc := in.AutoscalerAccess; acc != nil && len(acc.Denied) > 0 {
		if acc.ServiceAccount != "" {
			sa = acc.ServiceAccount
		}
		c := Cause{Code: CodeAutoscalerForbidden, Subject: "ServiceAccount " + head.Namespace + "/" + sa, Rank: rankAutoscaler,
			Summary: "autoscaler refused by RBAC: ServiceAccount " + sa + " may not " + strings.Join(acc.Denied, ", "),
			Fix: "let ServiceAccount " + sa + " get, list, watch and patch rayclusters.ray.io and pods in " + head.Namespace +
				" (the operator makes a Role and RoleBinding named after the cluster for it; restore them)"}
		for _, d := range acc.Denied {
			c.Evidence = append(c.Evidence, "SubjectAccessReview: system:serviceaccount:"+head.Namespace+":"+sa+" may not "+d)
		}
		if st := containerStatus(head, rayv1.AutoscalerContainerName); st != nil && st.RestartCount > 0 {
			c.Evidence = append(c.Evidence, sidecarWords(head, st))
		}
		return append(out, c)
	}
	if specContainer(head, rayv1.AutoscalerContainerName) == nil {
		return append(out, Cause{Code: CodeAutoscalerDown, Subject: "pod " + head.Name, Rank: rankAutoscaler,
			Summary:  "autoscaling is on but head pod " + head.Name + " has no autoscaler container",
			Evidence: []string{"spec.enableInTreeAutoscaling: true", "containers of pod " + head.Name + ": " + containerNames(head)},
			Fix:      "the operator adds the autoscaler sidecar when it makes the head pod: delete the head pod so it is made again, or check who removed the container (a webhook, the template)"})
	}
	if st := containerStatus(head, rayv1.AutoscalerContainerName); st != nil && st.State.Running == nil && !starting(st) {
		c := Cause{Code: CodeAutoscalerDown, Subject: "pod " + head.Name, Rank: rankAutoscaler,
			Evidence: []string{sidecarWords(head, st)},
			Fix:      "read why it stops: " + logs + " --previous; until it runs, nothing scales the worker groups"}
		t := st.LastTerminationState.Terminated
		if st.State.Terminated != nil {
			t = st.State.Terminated
		}
		switch {
		case t != nil && forbidden(t.Message):
			c.Code = CodeAutoscalerForbidden
			c.Subject = "ServiceAccount " + head.Namespace + "/" + sa
			c.Summary = "autoscaler refused by RBAC: ServiceAccount " + sa + " (403 in its last exit)"
			c.Evidence = append(c.Evidence, "last message: "+shortReason(t.Message))
			c.Fix = "let ServiceAccount " + sa + " get, list, watch and patch rayclusters.ray.io and pods in " + head.Namespace +
				" (the operator makes a Role and RoleBinding named after the cluster for it; restore them)"
		case st.State.Waiting != nil && st.State.Waiting.Reason == "CrashLoopBackOff":
			c.Summary = "autoscaler crash-looping: " + crashWords(head, st)
		default:
			c.Summary = "autoscaler not running: " + sidecarState(st)
		}
		return append(out, c)
	}
	return scaleDownStalled(in, notActing(in, out, logs), logs)
}

// ScaleDownGrace is how long past its idleTimeoutSeconds a worker Ray
// reports idle may stay before raydar says the scale-down stalls. Ray's
// autoscaler looks every 5 s (AUTOSCALER_UPDATE_INTERVAL_S), drains the
// node, then lowers replicas and names the pod in workersToDelete; the
// operator deletes it at its next reconcile. A minute covers that.
const ScaleDownGrace = time.Minute

// scaleDownStalled: workers Ray reports idle for longer than their
// group's idleTimeoutSeconds plus ScaleDownGrace are still there, their
// group above minReplicas, and neither replicas lowered nor
// workersToDelete naming a pod (then the operator's deletion is what is
// awaited, and the pods' causes say why it does not happen). Only where
// Ray says for how long its nodes have been idle (RayNode.IdleKnown).
func scaleDownStalled(in *ClusterInput, out []Cause, logs string) []Cause {
	rc := in.Cluster
	if in.Capacity == nil || (rc.Spec.Suspend != nil && *rc.Spec.Suspend) {
		return out
	}
	idle, _ := idleWorkers(*in)
	offers := groupOffers(rc, in.Pods)[1:]
	var stalled []idleWorker
	var evidence []string
	for i := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[i]
		if g.IsSuspended() || len(deleting(g, *in)) > 0 || int(g.DesiredPods()) < offers[i].pods {
			continue
		}
		timeout := time.Duration(idleTimeout(rc, g)) * time.Second
		var over []idleWorker
		for _, w := range idle[g.GroupName] {
			if w.known && w.dur > timeout+ScaleDownGrace {
				over = append(over, w)
			}
		}
		n := min(len(over), offers[i].pods-int(g.MinPods()))
		if n <= 0 {
			continue
		}
		for _, w := range over[:n] {
			stalled = append(stalled, w)
			evidence = append(evidence, "Ray: worker "+w.pod+" of group "+g.GroupName+" idle "+shortDur(w.dur)+
				", idleTimeoutSeconds "+itoa(int64(timeout/time.Second)))
		}
		evidence = append(evidence, "group "+g.GroupName+": replicas "+itoa(int64(g.DesiredReplicas()))+", "+
			plural(offers[i].pods, "pod", "pods")+", minReplicas "+itoa(int64(g.Min()))+": replicas not lowered, workersToDelete names no pod")
	}
	if len(stalled) == 0 {
		return out
	}
	w := stalled[0]
	summary := "scale-down stalled: worker " + w.pod + " idle " + shortDur(w.dur) + ", past idleTimeoutSeconds, still there"
	if len(stalled) > 1 {
		summary = "scale-down stalled: " + itoa(int64(len(stalled))) + " workers idle past idleTimeoutSeconds still there (longest: " +
			w.pod + ", " + shortDur(w.dur) + ")"
	}
	c := Cause{Code: CodeScaleDownStalled, Subject: in.subject(), Rank: rankAutoscalerIdle, Summary: summary, Evidence: evidence,
		Fix: "Ray's autoscaler removes an idle worker by draining its Ray node, then lowering replicas and naming the pod in workersToDelete; " +
			"it has not: read its log (" + logs + ") for errors or refused drains (a raylet refuses to drain a node that is no longer idle)"}
	if at, ok := lastAutoscalerWrite(rc); ok && !in.Now.IsZero() {
		c.Evidence = append(c.Evidence, "the autoscaler last wrote the RayCluster "+duration.HumanDuration(in.Now.Sub(at))+" ago (field manager "+autoscalerManager+")")
	}
	return append(out, c)
}

// notActing: Ray's pending demand, which a worker group that may grow
// would hold, waits longer than AutoscalerActWithin (since the caller
// first saw it, ClusterInput.DemandSince) while no group that would hold
// it has more replicas asked than pods.
func notActing(in *ClusterInput, out []Cause, logs string) []Cause {
	cp := in.Capacity
	if cp == nil || !cp.DemandKnown || len(cp.Pending) == 0 || in.DemandSince.IsZero() || in.Now.IsZero() {
		return out
	}
	waited := in.Now.Sub(in.DemandSince)
	if waited <= AutoscalerActWithin {
		return out
	}
	offers := groupOffers(in.Cluster, in.Pods)
	var demand []dashboard.Demand
	var groups []*offer // the groups that would hold it, each once
	for _, d := range cp.Pending {
		var grow []*offer
		for i := range offers {
			o := &offers[i]
			if !o.head && o.stuck == "" && o.fits(d.Shape) {
				grow = append(grow, o)
			}
		}
		if len(grow) == 0 {
			continue // stated by rayCauses (at max, off), or nothing would hold it
		}
		acting := false
		for _, o := range grow {
			if g, ok := in.Cluster.Spec.WorkerGroup(o.group); ok && int(g.DesiredPods()) > o.pods {
				acting = true // replicas raised: pods are on their way
			}
		}
		if acting {
			continue
		}
		demand = append(demand, d)
		for _, o := range grow {
			if !slices.Contains(groups, o) {
				groups = append(groups, o)
			}
		}
	}
	if len(demand) == 0 {
		return out
	}
	c := Cause{Code: CodeAutoscalerNotActing, Subject: in.subject(), Rank: rankAutoscalerIdle,
		Summary: "the autoscaler is not acting: " + demandWords(demand[0]) + " for " + duration.HumanDuration(waited) +
			", group " + groups[0].group + " could grow",
		Fix: "read the autoscaler's log (" + logs + "): it may be stuck, unable to reach the API server, or have hit an error it keeps retrying"}
	for _, d := range demand {
		c.Evidence = append(c.Evidence, "Ray autoscaler: "+demandWords(d)+", pending for "+duration.HumanDuration(waited)+" (as raydar saw it)")
	}
	for _, o := range groups {
		g, _ := in.Cluster.Spec.WorkerGroup(o.group) // a worker group's offer: it is in the spec
		c.Evidence = append(c.Evidence, "group "+o.group+": replicas "+itoa(int64(g.DesiredReplicas()))+", "+plural(o.pods, "pod", "pods")+
			", maxReplicas "+itoa(int64(g.Max()))+": replicas not raised")
	}
	if at, ok := lastAutoscalerWrite(in.Cluster); ok {
		c.Evidence = append(c.Evidence, "the autoscaler last wrote the RayCluster "+duration.HumanDuration(in.Now.Sub(at))+" ago (field manager "+autoscalerManager+")")
	}
	return append(out, c)
}

// lastAutoscalerWrite is when the autoscaler's field manager last wrote
// the object (its managedFields; lists strip them, `raydar why` has them).
func lastAutoscalerWrite(rc *rayv1.RayCluster) (time.Time, bool) {
	var at time.Time
	for _, m := range rc.ManagedFields {
		if m.Manager == autoscalerManager && m.Time != nil && m.Time.After(at) {
			at = m.Time.Time
		}
	}
	return at, !at.IsZero()
}

func containerStatus(p *podview.Pod, name string) *podview.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// starting: the container waits only to be created or for its image.
func starting(st *podview.ContainerStatus) bool {
	w := st.State.Waiting
	return w != nil && st.RestartCount == 0 && (w.Reason == "ContainerCreating" || w.Reason == "PodInitializing" || w.Reason == "")
}

// sidecarWords: "pod rc-head container autoscaler: CrashLoopBackOff,
// restarted 4 times, last exit code 1 (Error)".
func sidecarWords(p *podview.Pod, st *podview.ContainerStatus) string {
	line := "pod " + p.Name + " container " + st.Name + ": " + sidecarState(st) + ", restarted " + itoa(int64(st.RestartCount)) + " times"
	if t := st.LastTerminationState.Terminated; t != nil {
		line += ", last " + exitWords(t)
	}
	return line
}

func sidecarState(st *podview.ContainerStatus) string {
	switch s := st.State; {
	case s.Running != nil:
		return "running"
	case s.Waiting != nil && s.Waiting.Reason != "":
		return s.Waiting.Reason
	case s.Terminated != nil:
		return "terminated, " + exitWords(s.Terminated)
	}
	return "waiting"
}

// forbidden: a message of the API server refusing a request.
func forbidden(msg string) bool {
	return strings.Contains(msg, "Forbidden") || strings.Contains(msg, "forbidden") || strings.Contains(msg, "403")
}

func containerNames(p *podview.Pod) string {
	names := make([]string, 0, len(p.Spec.Containers))
	for _, c := range p.Spec.Containers {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}
