package why

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func clusterObject(rc *rayv1.RayCluster) object {
	st := &rc.Status
	written := st.State != "" || len(st.Conditions) > 0 || st.ObservedGeneration != 0 || st.LastUpdateTime != nil
	return newObject("RayCluster", &rc.ObjectMeta, rc.Spec.ManagedBy, written, st.ObservedGeneration)
}

// clusterCauses is Cluster, unsorted.
func clusterCauses(in *ClusterInput) []Cause {
	rc := in.Cluster
	o := clusterObject(rc)
	var cs []Cause
	if c, ok := clusterInvalid(o, in); ok {
		cs = append(cs, c)
	}
	cs = whoCauses(o, in.Events, in.Reconciler, cs)
	if rc.Spec.IsSuspended() {
		return onlyContext(o, append(cs, suspendedCause(o)))
	}
	var failMsg, failReason string
	if f := meta.FindStatusCondition(rc.Status.Conditions, string(rayv1.RayClusterReplicaFailure)); f != nil &&
		f.Status == metav1.ConditionTrue && f.Reason != string(rayv1.ValidationFailed) && isWriteFailure(f.Reason) {
		failReason, failMsg = f.Reason, f.Message
	}
	cs = writeCauses(o, in.Events, failReason, failMsg, cs)
	scan := podScan{autoscaling: rc.Spec.IsAutoscalingEnabled()}
	scanPods(&scan, in.Pods, in.Events)
	cs = autoscalerCauses(in, cs)
	cs = rayCauses(in, &scan, cs)
	cs = podCauses(&scan, in, cs)
	cs = waitingForOperator(o, in.Events, in.Reconciler, in.Now, in.SpecSeen, cs, clusterProgress(in, scan.head, cs)...)
	cs = workersMissing(o, in, &scan, cs)
	cs = podGroupCause(o, in, cs)
	cs = schedulerNotBindingCause(o, in, cs)
	cs = gangSchedulingCause(o, rc, in.Pods, cs)
	cs = gpusIdleCause(in, in.subject(), cs)
	return onlyContext(o, cs)
}

// gangSchedulingCause: the cluster's batch-scheduler labels that the
// scheduler its pods were made for (none; volcano by their PodGroup
// annotation; another by their schedulerName) does not read, which raydar ignores as KubeRay v1.6.2 does
// (controller/raycluster/batchscheduler.go, its Warning
// BatchSchedulerNotImplemented). Not said when another operator manages
// the cluster: whether that one gang-schedules is its own flag's business.
func gangSchedulingCause(o object, rc *rayv1.RayCluster, pods []*podview.Pod, cs []Cause) []Cause {
	configured := batchSchedulerOfPods(pods...)
	keys, schedulers := rayv1.BatchSchedulerLabels(rc.Labels, configured)
	if len(keys) == 0 || slices.ContainsFunc(cs, func(c Cause) bool { return c.Code == CodeOtherOperator }) {
		return cs
	}
	evidence := make([]string, len(keys))
	for i, k := range keys {
		evidence[i] = "metadata.labels[" + k + "]=" + rc.Labels[k]
	}
	return append(cs, Cause{Code: CodeGangSchedulingIgnored, Subject: o.subject(), Rank: rankIgnoredLabels,
		Summary:  gangSummary(keys, configured),
		Evidence: evidence,
		Fix:      gangFix(schedulers)})
}

// gangPendingAfter is how long a gang's pod may wait unbound before it is
// a cause (Volcano binds within seconds when the gang fits).
const gangPendingAfter = 30 * time.Second

// podGroupCause: pods of a Volcano PodGroup (annotation
// scheduling.k8s.io/group-name, schedulerName volcano) that have waited
// unbound for longer than gangPendingAfter. Only Volcano binds them, so
// without Volcano, or with a gang that does not fit whole, they stay
// Pending forever. It reads the pods, not the PodGroup: it says what the
// pods show, not the PodGroup's phase.
func podGroupCause(o object, in *ClusterInput, cs []Cause) []Cause {
	byGroup := map[string][]string{}
	for _, p := range in.Pods {
		g, ok := p.Annotations[rayv1.VolcanoPodGroupAnnotationKey]
		if !ok || p.Spec.SchedulerName != rayv1.VolcanoSchedulerName || p.DeletionTimestamp != nil || p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending ||
			in.Now.Sub(p.CreationTimestamp.Time) < gangPendingAfter {
			continue
		}
		byGroup[g] = append(byGroup[g], p.Name)
	}
	for _, g := range slices.Sorted(maps.Keys(byGroup)) {
		pods := byGroup[g]
		slices.Sort(pods)
		evidence := make([]string, len(pods))
		for i, n := range pods {
			evidence[i] = "pod " + n + ": Pending, bound to no node, in PodGroup " + g
		}
		cs = append(cs, Cause{Code: CodePodGroupNotRunning, Subject: o.subject(), Rank: rankGangPending,
			Summary:  fmt.Sprintf("%d pods of PodGroup %s have waited unbound for over %s: the volcano gang scheduler has not bound them", len(pods), g, gangPendingAfter),
			Evidence: evidence,
			Fix: "only Volcano binds these pods (schedulerName volcano), and only when all of the PodGroup's minMember fit at once: " +
				"check that Volcano runs and why it holds the gang (kubectl describe podgroup " + g + " -n " + in.Cluster.Namespace +
				"; its queue, the nodes' free resources); in a raydar sandbox start it with --batch-scheduler volcano"})
	}
	return cs
}

// gangSummary names the labels ignored and what schedules the pods.
func gangSummary(keys []string, configured string) string {
	if configured != "" {
		return "raydar ignores " + strings.Join(keys, ", ") + " (its pods are gang-scheduled by " + configured + ", which does not read it)"
	}
	return "no gang scheduling: raydar ignores " + strings.Join(keys, ", ") + " (no PodGroup; pods are scheduled one by one)"
}

// gangFix says how to have the labels read: raydar's own flag (raydar
// implements every scheduler KubeRay has), or KubeRay's operator.
func gangFix(schedulers []string) string {
	if slices.ContainsFunc(schedulers, func(s string) bool { return slices.Contains(rayv1.RaydarBatchSchedulers, s) }) {
		return "for gang scheduling, run raydar's operator (and every raydar TUI that may lead) with " + rayv1.BatchSchedulerFlags(schedulers) + ", " +
			"or leave this cluster to KubeRay's operator run with " + rayv1.BatchSchedulerFlags(schedulers) +
			" (spec.managedBy: " + rayv1.KubeRayController + "); otherwise nothing to do: it runs as under KubeRay without a batch scheduler"
	}
	return "for gang scheduling, leave this cluster to KubeRay's operator run with " + rayv1.BatchSchedulerFlags(schedulers) +
		" (spec.managedBy: " + rayv1.KubeRayController + "); otherwise nothing to do: it runs as under KubeRay without a batch scheduler"
}

// clusterInvalid: the ReplicaFailure condition says ValidationFailed, or
// (no status yet) raydar's InvalidRayClusterSpec/Metadata Event does.
func clusterInvalid(o object, in *ClusterInput) (Cause, bool) {
	if f := meta.FindStatusCondition(in.Cluster.Status.Conditions, string(rayv1.RayClusterReplicaFailure)); f != nil {
		if f.Status == metav1.ConditionTrue && f.Reason == string(rayv1.ValidationFailed) {
			return invalidCause(o, f.Message), true
		}
		return Cause{}, false
	}
	return invalidFromEvents(o, in.Events, rayv1.EventInvalidRayClusterSpec, rayv1.EventInvalidRayClusterMetadata)
}

// invalidFromEvents: the latest Warning of one of the reasons about the
// object, unless a Normal Event followed it.
func invalidFromEvents(o object, events []*corev1.Event, reasons ...string) (Cause, bool) {
	var msg string
	for _, e := range events {
		if !o.about(e) {
			continue
		}
		switch {
		case e.Type == corev1.EventTypeWarning && contains(reasons, e.Reason):
			msg = e.Message
		case e.Type != corev1.EventTypeWarning && msg != "" && (e.Reason == reasonSpecValid || strings.HasPrefix(e.Reason, "Created")):
			msg = ""
		}
	}
	if msg == "" {
		return Cause{}, false
	}
	return invalidCause(o, after(msg, "until it is fixed: ")), true
}

// invalidCause names the field of a validation message
// ("spec.workerGroupSpecs[0].groupName: Required value, ...").
func invalidCause(o object, msg string) Cause {
	field := invalidField(msg)
	sum := "invalid spec"
	if field != "" {
		sum = "invalid " + field
	}
	return Cause{Code: CodeInvalidSpec, Subject: o.subject(), Rank: rankInvalidSpec,
		Summary:  sum,
		Evidence: []string{msg},
		Fix:      "fix the field the message names (kubectl edit " + strings.ToLower(o.kind) + " " + o.meta.Name + "); nothing is created until it is valid"}
}

// invalidField is the first field path of a field.ErrorList message: the
// text before ": " (aggregates start with "[").
func invalidField(msg string) string {
	msg = strings.TrimPrefix(strings.TrimSpace(msg), "[")
	f, _, ok := strings.Cut(msg, ": ")
	if !ok || strings.ContainsAny(f, " ,") {
		return ""
	}
	return f
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// batchSchedulerOfPods is the batch scheduler the pods were made for
// ("volcano" when one carries rayv1.VolcanoPodGroupAnnotationKey, else the one
// whose schedulerName one has), "" for none.
func batchSchedulerOfPods(pods ...*podview.Pod) string {
	for _, p := range pods {
		if _, ok := p.Annotations[rayv1.VolcanoPodGroupAnnotationKey]; ok {
			return "volcano"
		}
	}
	for _, p := range pods {
		if s := rayv1.BatchSchedulerOfSchedulerName(p.Spec.SchedulerName); s != "" {
			return s
		}
	}
	return ""
}
