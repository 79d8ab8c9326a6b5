package inspect

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// This file is the pure half of the package: what the reads of gather.go
// are turned into. Nothing here does I/O.

// LogLines is how many of a failed submitter pod's last log lines are kept.
const LogLines = 20

// LeaseRead is one read of a candidate leader Lease: the Lease, or nil with
// Err nil when it does not exist, or the error (e.g. Forbidden).
type LeaseRead struct {
	Key   types.NamespacedName
	Lease *coordinationv1.Lease
	Err   error
}

// Leadership is what raydar's leader election Leases say of who leads,
// without ages: the same from one read to the next while nothing changes.
type Leadership int

const (
	// LeadershipUnknown: no Lease was found and one could not be read.
	LeadershipUnknown Leadership = iota
	// LeadershipHeld: a Lease has a holder whose term has not run out.
	LeadershipHeld
	// LeadershipLapsed: a Lease exists, but expired or released.
	LeadershipLapsed
	// LeadershipNone: no candidate Lease exists: no raydar operator (or
	// TUI with its loop) has led here.
	LeadershipNone
)

// Leader says from the reads of the candidate Leases (in the order raydar
// processes pick them) who leads: the first fresh holder; else whether a
// Lease exists at all. holder is the fresh holder, or the last one of a
// lapsed Lease ("" when it was released).
func Leader(reads []LeaseRead, now time.Time) (l Leadership, holder string) {
	st, r := leadership(reads, now)
	if r != nil {
		holder, _, _ = leaseTimes(r.Lease)
	}
	return st, holder
}

// leadership is Leader with the read that decided it: the fresh holder's
// Lease, or the most recently renewed one of a lapsed leadership.
func leadership(reads []LeaseRead, now time.Time) (Leadership, *LeaseRead) {
	var (
		latest   *LeaseRead
		latestAt time.Time
		failed   bool
	)
	for i := range reads {
		r := &reads[i]
		if r.Err != nil {
			failed = true
			continue
		}
		if r.Lease == nil {
			continue
		}
		holder, renewed, expires := leaseTimes(r.Lease)
		if holder != "" && now.Before(expires) {
			return LeadershipHeld, r
		}
		if latest == nil || renewed.After(latestAt) {
			latest, latestAt = r, renewed
		}
	}
	switch {
	case latest != nil:
		return LeadershipLapsed, latest
	case failed:
		return LeadershipUnknown, nil
	}
	return LeadershipNone, nil
}

// reconciler says who reconciles from the reads of the candidate Leases,
// with ages (Leader, in words for `raydar why`): the fresh holder leads;
// else the most recently renewed Lease says since when nobody does; else
// no raydar has run. It is unknown when a Lease could not be read and none
// was found.
func reconciler(reads []LeaseRead, now time.Time) why.Reconciler {
	st, r := leadership(reads, now)
	switch st {
	case LeadershipHeld:
		holder, renewed, _ := leaseTimes(r.Lease)
		return why.Reconciler{Known: true, Active: true,
			Who: fmt.Sprintf("raydar %s (holder of lease %s, renewed %s ago)", holder, r.Key, status.Age(now, renewed))}
	case LeadershipLapsed:
		holder, renewed, expires := leaseTimes(r.Lease)
		if holder == "" {
			return why.Reconciler{Known: true, OnlyRaydar: true,
				Who: fmt.Sprintf("no leader: lease %s was released %s ago and nobody holds it", r.Key, status.Age(now, renewed))}
		}
		return why.Reconciler{Known: true, OnlyRaydar: true,
			Who: fmt.Sprintf("no leader: lease %s expired %s ago (last held by %s)", r.Key, status.Age(now, expires), holder)}
	case LeadershipUnknown:
		var errs []string
		for _, r := range reads {
			if r.Err != nil {
				errs = append(errs, fmt.Sprintf("lease %s: %v", r.Key, r.Err))
			}
		}
		return why.Reconciler{Who: "cannot tell who reconciles: " + strings.Join(errs, "; ")}
	}
	keys := make([]string, 0, len(reads))
	for _, r := range reads {
		keys = append(keys, r.Key.String())
	}
	return why.Reconciler{Known: true, OnlyRaydar: true,
		Who: "no raydar operator has run here (no lease " + strings.Join(keys, " or ") + ")"}
}

// leaseTimes returns a Lease's holder, last renewal (else acquisition) and
// when it runs out.
func leaseTimes(l *coordinationv1.Lease) (holder string, renewed, expires time.Time) {
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	switch {
	case l.Spec.RenewTime != nil:
		renewed = l.Spec.RenewTime.Time
	case l.Spec.AcquireTime != nil:
		renewed = l.Spec.AcquireTime.Time
	}
	d := time.Duration(0)
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return holder, renewed, renewed.Add(d)
}

// eventsAbout returns the Events whose involved object is one of uids,
// oldest first (by their last occurrence).
func eventsAbout(all []corev1.Event, uids ...types.UID) []*corev1.Event {
	want := make(map[types.UID]bool, len(uids))
	for _, u := range uids {
		if u != "" {
			want[u] = true
		}
	}
	var out []*corev1.Event
	for i := range all {
		if want[all[i].InvolvedObject.UID] {
			out = append(out, &all[i])
		}
	}
	slices.SortStableFunc(out, func(a, b *corev1.Event) int {
		return cmp.Or(eventTime(a).Compare(eventTime(b)), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// eventTime is when an Event last happened, whichever field its reporter
// filled.
func eventTime(e *corev1.Event) time.Time {
	for _, t := range []time.Time{e.LastTimestamp.Time, e.EventTime.Time, e.FirstTimestamp.Time} {
		if !t.IsZero() {
			return t
		}
	}
	return e.CreationTimestamp.Time
}

// podPtrs returns pointers to pods, oldest first (then by name).
func podPtrs(pods []corev1.Pod) []*podview.Pod {
	out := make([]*podview.Pod, 0, len(pods))
	for i := range pods {
		out = append(out, podview.Of(&pods[i]))
	}
	slices.SortStableFunc(out, func(a, b *podview.Pod) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// podUIDs returns the UIDs of pods.
func podUIDs(pods []*podview.Pod) []types.UID {
	out := make([]types.UID, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.UID)
	}
	return out
}

// clusterInput assembles what why.Cluster reads about rc from the
// namespace's pods and Events.
func clusterInput(rc *rayv1.RayCluster, pods []corev1.Pod, events []corev1.Event, nodes why.Nodes, rec why.Reconciler, now time.Time) *why.ClusterInput {
	var own []corev1.Pod
	for _, p := range pods {
		if p.Labels[rayv1.RayClusterLabelKey] == rc.Name && p.Namespace == rc.Namespace {
			own = append(own, p)
		}
	}
	ps := podPtrs(own)
	return &why.ClusterInput{
		Cluster:    rc,
		Pods:       ps,
		Events:     eventsAbout(events, append(podUIDs(ps), rc.UID)...),
		Nodes:      nodes,
		Reconciler: rec,
		Now:        now,
	}
}

// ownedBy reports whether job is controlled by the object with uid.
func ownedBy(job *batchv1.Job, uid types.UID) bool {
	for _, o := range job.OwnerReferences {
		if o.UID == uid {
			return true
		}
	}
	return false
}

// submitterPods are the pods of the submitter Job (by its controller-uid
// label, which the Job controller sets), oldest first, newest last.
func submitterPods(job *batchv1.Job, pods []corev1.Pod) []*podview.Pod {
	var own []corev1.Pod
	for _, p := range pods {
		if p.Labels[batchv1.ControllerUidLabel] == string(job.UID) {
			own = append(own, p)
		}
	}
	return podPtrs(own)
}

// newestFailed is the newest pod (of pods, oldest first) that failed: phase
// Failed, or a container that last ended with a non-zero exit code. nil
// when none did.
func newestFailed(pods []*podview.Pod) *podview.Pod {
	for i := len(pods) - 1; i >= 0; i-- {
		p := pods[i]
		if p.Status.Phase == corev1.PodFailed {
			return p
		}
		for _, c := range p.Status.ContainerStatuses {
			for _, t := range []*corev1.ContainerStateTerminated{c.State.Terminated, c.LastTerminationState.Terminated} {
				if t != nil && t.ExitCode != 0 {
					return p
				}
			}
		}
	}
	return nil
}

// tail returns the last n non-empty-terminated lines of a log.
func tail(log string, n int) []string {
	log = strings.TrimRight(log, "\n")
	if log == "" {
		return nil
	}
	lines := strings.Split(log, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// headReady reports whether the cluster's head pod is Ready: only then is
// its dashboard worth asking.
func headReady(pods []*podview.Pod) bool {
	for _, p := range pods {
		if p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode) && status.PodIsReady(p) {
			return true
		}
	}
	return false
}
