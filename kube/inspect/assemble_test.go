package inspect

import (
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

var now = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)

func lease(holder string, renewedAgo time.Duration, seconds int32) *coordinationv1.Lease {
	return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(holder),
		RenewTime:            &metav1.MicroTime{Time: now.Add(-renewedAgo)},
		LeaseDurationSeconds: ptr.To(seconds),
	}}
}

func TestReconciler(t *testing.T) {
	sys := types.NamespacedName{Namespace: "raydar-system", Name: "raydar-operator"}
	def := types.NamespacedName{Namespace: "default", Name: "raydar-operator"}
	forbidden := errors.New(`leases.coordination.k8s.io "raydar-operator" is forbidden`)
	for _, tc := range []struct {
		name  string
		reads []LeaseRead
		want  why.Reconciler
	}{
		{"fresh holder in raydar-system", []LeaseRead{{Key: sys, Lease: lease("op-1_abc", 4*time.Second, 15)}, {Key: def}},
			why.Reconciler{Known: true, Active: true, Who: "raydar op-1_abc (holder of lease raydar-system/raydar-operator, renewed 4s ago)"}},
		{"expired in raydar-system, fresh in default", []LeaseRead{{Key: sys, Lease: lease("old", time.Hour, 15)}, {Key: def, Lease: lease("tui_x", time.Second, 15)}},
			why.Reconciler{Known: true, Active: true, Who: "raydar tui_x (holder of lease default/raydar-operator, renewed 1s ago)"}},
		{"expired", []LeaseRead{{Key: sys}, {Key: def, Lease: lease("op-1_abc", 3*time.Minute+15*time.Second, 15)}},
			why.Reconciler{Known: true, OnlyRaydar: true, Who: "no leader: lease default/raydar-operator expired 3m ago (last held by op-1_abc)"}},
		{"released", []LeaseRead{{Key: def, Lease: lease("", 2*time.Minute, 1)}},
			why.Reconciler{Known: true, OnlyRaydar: true, Who: "no leader: lease default/raydar-operator was released 2m ago and nobody holds it"}},
		{"never ran", []LeaseRead{{Key: sys}, {Key: def}},
			why.Reconciler{Known: true, OnlyRaydar: true, Who: "no raydar operator has run here (no lease raydar-system/raydar-operator or default/raydar-operator)"}},
		{"forbidden and absent: unknown", []LeaseRead{{Key: sys, Err: forbidden}, {Key: def}},
			why.Reconciler{Who: `cannot tell who reconciles: lease raydar-system/raydar-operator: leases.coordination.k8s.io "raydar-operator" is forbidden`}},
		{"forbidden but one found", []LeaseRead{{Key: sys, Err: forbidden}, {Key: def, Lease: lease("a", time.Second, 15)}},
			why.Reconciler{Known: true, Active: true, Who: "raydar a (holder of lease default/raydar-operator, renewed 1s ago)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := reconciler(tc.reads, now); got != tc.want {
				t.Errorf("reconciler =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

// TestLeaderHasNoAges: the TUI with its loop off polls the Leases and
// recomputes every diagnosis when the answer changes, so the answer must
// not move while the leadership does not (renewals, ages), and must move
// when it does.
func TestLeaderHasNoAges(t *testing.T) {
	sys := types.NamespacedName{Namespace: "raydar-system", Name: "raydar-operator"}
	def := types.NamespacedName{Namespace: "default", Name: "raydar-operator"}
	forbidden := errors.New("forbidden")
	type answer struct {
		l      Leadership
		holder string
	}
	for _, tc := range []struct {
		name  string
		reads []LeaseRead
		want  answer
	}{
		{"held", []LeaseRead{{Key: sys, Lease: lease("op-1", 2*time.Second, 15)}, {Key: def}}, answer{LeadershipHeld, "op-1"}},
		{"held, renewed again", []LeaseRead{{Key: sys, Lease: lease("op-1", 9*time.Second, 15)}, {Key: def}}, answer{LeadershipHeld, "op-1"}},
		{"expired", []LeaseRead{{Key: sys, Lease: lease("op-1", time.Minute, 15)}, {Key: def}}, answer{LeadershipLapsed, "op-1"}},
		{"released", []LeaseRead{{Key: sys, Lease: lease("", time.Minute, 1)}}, answer{LeadershipLapsed, ""}},
		{"none", []LeaseRead{{Key: sys}, {Key: def}}, answer{LeadershipNone, ""}},
		{"unreadable", []LeaseRead{{Key: sys, Err: forbidden}, {Key: def}}, answer{LeadershipUnknown, ""}},
		{"unreadable but one held", []LeaseRead{{Key: sys, Err: forbidden}, {Key: def, Lease: lease("tui", time.Second, 15)}}, answer{LeadershipHeld, "tui"}},
	} {
		l, holder := Leader(tc.reads, now)
		if got := (answer{l, holder}); got != tc.want {
			t.Errorf("%s: Leader = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func event(name string, uid types.UID, at time.Time) corev1.Event {
	return corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name}, InvolvedObject: corev1.ObjectReference{UID: uid},
		LastTimestamp: metav1.NewTime(at)}
}

func names[T interface{ GetName() string }](xs []T) string {
	var s []string
	for _, x := range xs {
		s = append(s, x.GetName())
	}
	return strings.Join(s, ",")
}

func TestEventsAbout(t *testing.T) {
	micro := corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "new-api"}, InvolvedObject: corev1.ObjectReference{UID: "pod"},
		EventTime: metav1.NewMicroTime(now.Add(-2 * time.Minute))}
	all := []corev1.Event{
		event("late", "rc", now),
		event("other-object", "x", now.Add(-time.Hour)),
		event("early", "pod", now.Add(-time.Hour)),
		micro,
	}
	if got := names(eventsAbout(all, "rc", "pod", "")); got != "early,new-api,late" {
		t.Errorf("eventsAbout = %s; want early,new-api,late (about rc and pod, oldest first)", got)
	}
	if got := eventsAbout(all, "none"); len(got) != 0 {
		t.Errorf("eventsAbout(none) = %s", names(got))
	}
}

func pod(name, cluster string, created time.Duration) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name),
		CreationTimestamp: metav1.NewTime(now.Add(-created)), Labels: map[string]string{rayv1.RayClusterLabelKey: cluster}}}
}

func TestClusterInput(t *testing.T) {
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: "rc"}}
	pods := []corev1.Pod{pod("c-worker", "c", time.Minute), pod("c-head", "c", time.Hour), pod("d-head", "d", time.Hour)}
	events := []corev1.Event{event("about-worker", "c-worker", now), event("about-d", "d-head", now), event("about-rc", "rc", now.Add(-time.Hour))}
	nodes := why.Nodes{Known: false}
	rec := why.Reconciler{Known: true, Active: true, Who: "x"}
	in := clusterInput(rc, pods, events, nodes, rec, now)
	if in.Cluster != rc || in.Now != now || in.Reconciler != rec || in.Nodes.Known {
		t.Errorf("clusterInput copied the wrong object, clock, reconciler or nodes: %+v", in)
	}
	if got := names(in.Pods); got != "c-head,c-worker" {
		t.Errorf("pods = %s; want the cluster's own, oldest first", got)
	}
	if got := names(in.Events); got != "about-rc,about-worker" {
		t.Errorf("events = %s; want the cluster's and its pods', oldest first", got)
	}
}

func TestSubmitterPodsAndNewestFailed(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: "job", OwnerReferences: []metav1.OwnerReference{{UID: "rj"}}}}
	if !ownedBy(job, "rj") || ownedBy(job, "other") {
		t.Error("ownedBy does not follow the owner references")
	}
	mk := func(name string, created time.Duration, uid string, st corev1.PodStatus) corev1.Pod {
		p := pod(name, "", created)
		p.Labels = map[string]string{batchv1.ControllerUidLabel: uid}
		p.Status = st
		return p
	}
	exit := func(code int32) []corev1.ContainerStatus {
		return []corev1.ContainerStatus{{LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}}
	}
	pods := []corev1.Pod{
		mk("newest-running", time.Second, "job", corev1.PodStatus{Phase: corev1.PodRunning}),
		mk("first-failed", time.Hour, "job", corev1.PodStatus{Phase: corev1.PodFailed}),
		mk("second-restarted", time.Minute, "job", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: exit(3)}),
		mk("stale-job", time.Second, "old-job", corev1.PodStatus{Phase: corev1.PodFailed}),
	}
	ps := submitterPods(job, pods)
	if got := names(ps); got != "first-failed,second-restarted,newest-running" {
		t.Errorf("submitterPods = %s; want the Job's, newest last", got)
	}
	if f := newestFailed(ps); f == nil || f.Name != "second-restarted" {
		t.Errorf("newestFailed = %v; want second-restarted (exit 3)", f)
	}
	ok := []*podview.Pod{podview.Of(ptr.To(mk("ok", time.Second, "job", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: exit(0)})))}
	if f := newestFailed(ok); f != nil {
		t.Errorf("newestFailed of a healthy pod = %s", f.Name)
	}
}

func TestTail(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		b.WriteString("line " + string(rune('a'+i%26)) + "\n")
	}
	got := tail(b.String(), LogLines)
	if len(got) != LogLines || got[0] != "line k" || got[LogLines-1] != "line d" {
		t.Errorf("tail = %d lines %q … %q", len(got), got[0], got[len(got)-1])
	}
	if got := tail("one\ntwo", 20); strings.Join(got, "|") != "one|two" {
		t.Errorf("tail of a short log = %q", got)
	}
	if got := tail("\n", 20); got != nil {
		t.Errorf("tail of an empty log = %q", got)
	}
}

func TestHeadReady(t *testing.T) {
	head := pod("h", "c", 0)
	head.Labels[rayv1.RayNodeTypeLabelKey] = string(rayv1.HeadNode)
	worker := pod("w", "c", 0)
	worker.Labels[rayv1.RayNodeTypeLabelKey] = string(rayv1.WorkerNode)
	ready := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	worker.Status.Conditions = ready
	if headReady([]*podview.Pod{podview.Of(&head), podview.Of(&worker)}) {
		t.Error("headReady with a head that is not Ready")
	}
	head.Status.Conditions = ready
	head.Status.Phase = corev1.PodRunning
	if !headReady([]*podview.Pod{podview.Of(&head), podview.Of(&worker)}) {
		t.Error("headReady false with a Ready head")
	}
}
