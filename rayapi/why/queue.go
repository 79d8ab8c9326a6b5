package why

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/raydar/raydar/rayapi/podview"
)

// The operator's own view, from outside its process: whether it has acted
// on the object's current spec (WaitingForOperator), how far a RayCluster's
// worker pods are (WorkersMissing), and what the object's status says of
// its own progress (time in its state, the head's restarts). The operator
// may be another process, so all of it is inferred from the API objects
// (metadata.generation against status.observedGeneration, managedFields'
// times, the pods, Events), not read from its work queue: "waiting" means
// queued, or being worked on and not yet written back, or failing.

// OperatorActsWithin is how long a reconciler may take to write the status
// of a new generation before the object is said to wait for it: a reconcile
// normally acts within about a second of the change; past this the operator
// is behind (a long queue, kuberay#3909), failing, or stuck. It is also how
// long a RayCluster's worker pods may be missing before WorkersMissing says
// how far they are.
const OperatorActsWithin = 5 * time.Second

// reconcilerManager is the field manager of raydar's reconcile loop
// (kube/history.ReconcilerManager; copied: rayapi does not import kube).
const reconcilerManager = "raydar-operator"

// statusSubresource is the managedFields subresource of status writes.
const statusSubresource = "status"

// specChange is when the object's spec last changed, as far as it tells.
type specChange struct {
	at time.Time
	// how says where at comes from, for the evidence.
	how string
}

// specChangedAt is when the object's spec last changed: the time of its
// newest metadata.managedFields entry not on the status subresource (the
// main resource or scale). managedFields keep one time per manager and
// operation, moved by any write of that manager (a label as much as the
// spec), so it is the newest write of anything but the status: the spec
// changed then or before, and the wait it gives is at most the real one.
// Without managedFields (the TUI's cache strips them), seen (when the
// caller first saw the current generation, "as raydar saw it"); without
// either, an object whose status was never written waits since it was
// created; otherwise the time is unknown (zero).
func specChangedAt(m *metav1.ObjectMeta, unwritten bool, seen time.Time) specChange {
	var best *metav1.ManagedFieldsEntry
	for i := range m.ManagedFields {
		e := &m.ManagedFields[i]
		if e.Subresource == statusSubresource || e.Time == nil {
			continue
		}
		if best == nil || e.Time.After(best.Time.Time) {
			best = e
		}
	}
	switch {
	case best != nil:
		return specChange{at: best.Time.Time, how: "last written by " + orWords(best.Manager, "an unnamed manager") + " (metadata.managedFields)"}
	case !seen.IsZero():
		return specChange{at: seen, how: "first seen by raydar"}
	case unwritten && !m.CreationTimestamp.IsZero():
		return specChange{at: m.CreationTimestamp.Time, how: "created"}
	}
	return specChange{}
}

// statusWriter is the field manager that last wrote the object's status
// (its newest managedFields entry on the status subresource), "" when its
// managedFields do not say.
func statusWriter(m *metav1.ObjectMeta) string {
	var best *metav1.ManagedFieldsEntry
	for i := range m.ManagedFields {
		e := &m.ManagedFields[i]
		if e.Subresource != statusSubresource {
			continue
		}
		if best == nil || (e.Time != nil && (best.Time == nil || e.Time.After(best.Time.Time))) {
			best = e
		}
	}
	if best == nil {
		return ""
	}
	return best.Manager
}

// waitingForOperator: a raydar reconciler is active, nothing says another
// operator has the object nor that it refused the spec (InvalidSpec), and its status has not described its current
// generation (or was never written) for longer than OperatorActsWithin
// since the spec changed (specChangedAt; at an unknown time it is said at
// once, as unknown). When raydar did not look for other operators
// (Reconciler.OnlyRaydar) a status written last by another manager is
// another operator's, which may leave observedGeneration behind (KubeRay
// v1.6.2, Reconciler.OnlyRaydar): nothing is said then. extra is the
// kind's own progress (time in its state, the head's restarts).
func waitingForOperator(o object, events []*corev1.Event, r Reconciler, now, seen time.Time, cs []Cause, extra ...string) []Cause {
	if !r.Known || !r.Active || !o.lags || now.IsZero() || hasCode(cs, CodeOtherOperator) || hasCode(cs, CodeNotReconciled) || hasCode(cs, CodeInvalidSpec) {
		return cs
	}
	if w := statusWriter(o.meta); r.OnlyRaydar && !o.unwritten && w != reconcilerManager {
		return cs
	}
	ch := specChangedAt(o.meta, o.unwritten, seen)
	waited := now.Sub(ch.at)
	if !ch.at.IsZero() && waited <= OperatorActsWithin {
		return cs
	}
	gen := itoa(o.meta.Generation)
	c := Cause{Code: CodeWaitingForOperator, Subject: o.subject(), Rank: rankWaitingForOp}
	switch {
	case ch.at.IsZero():
		c.Summary = "waiting for the operator: generation " + gen + " not yet acted on (changed at an unknown time)"
	case o.unwritten:
		c.Summary = "waiting for the operator: created " + clock(ch.at) + ", no status written for " + duration.HumanDuration(waited)
	default:
		c.Summary = "waiting for the operator: generation " + gen + " changed " + clock(ch.at) + ", not yet acted on for " + duration.HumanDuration(waited)
	}
	c.Evidence = append(c.Evidence, lagEvidence(o))
	if !o.unwritten {
		c.Evidence[0] += " (status.observedGeneration is older)"
	}
	if ch.how != "" {
		c.Evidence = append(c.Evidence, "spec "+ch.how+" at "+clock(ch.at))
	}
	if r.Who != "" {
		c.Evidence = append(c.Evidence, "reconciler: "+r.Who)
	}
	if e := lastWarning(o, events); e != nil {
		c.Evidence = append(c.Evidence, "last Warning about it: "+e.Reason+": "+shortReason(e.Message)+eventAgo(e, now))
	}
	c.Evidence = append(c.Evidence, extra...)
	c.Fix = "the reconciler has not written a status for this generation: it is behind (many objects changed at once), failing on this object " +
		"(its Events, its log), or stuck; this is inferred from the API objects, not read from its work queue"
	return append(cs, c)
}

// lastWarning is the newest Warning Event about the object.
func lastWarning(o object, events []*corev1.Event) *corev1.Event {
	var last *corev1.Event
	for _, e := range events {
		if e.Type == corev1.EventTypeWarning && o.about(e) {
			last = e
		}
	}
	return last
}

// eventAgo is " (42s ago)" of an Event's last time, "" when it has none.
func eventAgo(e *corev1.Event, now time.Time) string {
	t := e.LastTimestamp.Time
	if t.IsZero() {
		t = e.EventTime.Time
	}
	if t.IsZero() || now.IsZero() {
		return ""
	}
	return " (" + duration.HumanDuration(now.Sub(t)) + " ago)"
}

// clusterProgress is what a RayCluster's status and head say of its own
// progress, as evidence lines: how long it has been in its state
// (status.stateTransitionTimes), and the head's restarts (each container
// that restarted, with its last termination), unless a CrashLoop cause
// about the head says them already.
func clusterProgress(in *ClusterInput, head *podview.Pod, cs []Cause) []string {
	var out []string
	st := &in.Cluster.Status
	if t := st.StateTransitionTimes[st.State]; st.State != "" && t != nil && !in.Now.IsZero() {
		out = append(out, "state "+string(st.State)+" since "+clock(t.Time)+" ("+duration.HumanDuration(in.Now.Sub(t.Time))+")")
	}
	if head == nil {
		return out
	}
	for _, c := range cs {
		if c.Code == CodeCrashLoop && strings.HasSuffix(c.Subject, "pod "+head.Name) {
			return out
		}
	}
	return append(out, restartWords(head)...)
}

// headOf is the cluster's head pod not being deleted, nil when there is
// none.
func headOf(pods []*podview.Pod) *podview.Pod {
	for _, p := range pods {
		if head, _ := podGroup(p); head && p.DeletionTimestamp == nil {
			return p
		}
	}
	return nil
}

// restartWords: "head pod rc-head container ray-head restarted 3 times,
// last OOMKilled (exit code 137) at 13:58:02Z", one line per container
// that restarted.
func restartWords(p *podview.Pod) []string {
	var out []string
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		if cs.RestartCount == 0 {
			continue
		}
		line := "head pod " + p.Name + " container " + cs.Name + " restarted once"
		if cs.RestartCount > 1 {
			line = "head pod " + p.Name + " container " + cs.Name + " restarted " + itoa(int64(cs.RestartCount)) + " times"
		}
		if t := cs.LastTerminationState.Terminated; t != nil {
			line += ", last " + orWords(t.Reason, "terminated") + " (exit code " + itoa(int64(t.ExitCode)) + ")"
			if !t.FinishedAt.IsZero() {
				line += " at " + clock(t.FinishedAt.Time)
			}
		}
		out = append(out, line)
	}
	return out
}

// workersMissing: fewer worker pods exist (not being deleted) than the
// spec asks for (status.Workers' desired: replicas clamped to min/max,
// times numOfHosts, over groups not suspended), while an active raydar
// reconciler has acted on the spec's generation, for longer than
// OperatorActsWithin since the spec changed: how far the pods are, per
// group, and for how long at most (since the spec last changed: a pod
// lost later has been missing for less). Not said when that time is
// unknown, nor when a cause already
// says why pods are not created (a refused or failed write, another
// operator, no reconciler, one not yet acting on the spec).
func workersMissing(o object, in *ClusterInput, s *podScan, cs []Cause) []Cause {
	rc := in.Cluster
	r := in.Reconciler
	if !r.Known || !r.Active || o.lags || in.Now.IsZero() || rc.DeletionTimestamp != nil {
		return cs
	}
	for _, code := range []string{CodeOtherOperator, CodeNotReconciled, CodeWaitingForOperator, CodeCreateRefused, CodeWriteFailed, CodeInvalidSpec} {
		if hasCode(cs, code) {
			return cs
		}
	}
	desired := int(rc.Spec.DesiredWorkerPods())
	have := map[string]int{}
	exist := 0
	for _, p := range in.Pods {
		if head, group := podGroup(p); !head && p.DeletionTimestamp == nil {
			have[group]++
			exist++
		}
	}
	if exist >= desired {
		return cs
	}
	ch := specChangedAt(&rc.ObjectMeta, false, in.SpecSeen)
	waited := in.Now.Sub(ch.at)
	if ch.at.IsZero() || waited <= OperatorActsWithin {
		return cs // how long is unknown: pods on their way are not a cause
	}
	c := Cause{Code: CodeWorkersMissing, Subject: o.subject(), Rank: rankWorkersMissing,
		Summary:  itoa(int64(exist)) + " of " + itoa(int64(desired)) + " worker pods exist; oldest missing for up to " + duration.HumanDuration(waited),
		Evidence: []string{"spec " + ch.how + " at " + clock(ch.at)}}
	for i := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[i]
		if want := int(g.DesiredPods()); have[g.GroupName] < want {
			c.Evidence = append(c.Evidence, "group "+g.GroupName+": "+itoa(int64(have[g.GroupName]))+" of "+itoa(int64(want))+" pods")
		}
	}
	c.Evidence = append(c.Evidence, clusterProgress(in, s.head, cs)...)
	c.Fix = "the reconciler acted on the spec and is creating the pods (or failing to: its Events); with many pods or clusters at once it creates them in batches"
	return append(cs, c)
}
