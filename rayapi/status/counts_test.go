package status

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestWorkers(t *testing.T) {
	group := func(replicas, min, max int32, hosts int32, suspend bool) rayv1.WorkerGroupSpec {
		return rayv1.WorkerGroupSpec{Replicas: ptr.To(replicas), MinReplicas: ptr.To(min), MaxReplicas: ptr.To(max),
			NumOfHosts: hosts, Suspend: ptr.To(suspend)}
	}
	tests := []struct {
		name    string
		groups  []rayv1.WorkerGroupSpec
		suspend bool
		ready   int32
		want    string
	}{
		{"no status yet: desired from the spec", []rayv1.WorkerGroupSpec{group(2, 1, 5, 0, false), group(1, 0, 2, 0, false)}, false, 0, "0/3"},
		{"ready counted by the reconciler", []rayv1.WorkerGroupSpec{group(2, 1, 5, 0, false)}, false, 2, "2/2"},
		{"replicas clamped, multi-host, suspended group", []rayv1.WorkerGroupSpec{group(9, 1, 3, 2, false), group(4, 0, 4, 0, true)}, false, 5, "5/6"},
		{"suspended cluster wants none", []rayv1.WorkerGroupSpec{group(2, 1, 5, 0, false)}, true, 1, "1/0"},
	}
	for _, tt := range tests {
		rc := &rayv1.RayCluster{Spec: rayv1.RayClusterSpec{WorkerGroupSpecs: tt.groups, Suspend: ptr.To(tt.suspend)},
			Status: rayv1.RayClusterStatus{ReadyWorkerReplicas: tt.ready, DesiredWorkerReplicas: 99}}
		if got := Workers(rc); got != tt.want {
			t.Errorf("%s: Workers = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPodReady(t *testing.T) {
	p := &podview.Pod{Spec: podview.Spec{Containers: []corev1.Container{{Name: "ray"}, {Name: "sidecar"}}}}
	if r, n := PodReady(p); r != "0/2" || n != 0 {
		t.Errorf("no statuses: %q %d", r, n)
	}
	p.Status.ContainerStatuses = []podview.ContainerStatus{{Ready: true, RestartCount: 2}, {RestartCount: 1}, {Ready: true}}
	if r, n := PodReady(p); r != "2/3" || n != 3 {
		t.Errorf("more statuses than containers: %q %d, want 2/3 3", r, n)
	}
	if PodIsReady(p) {
		t.Error("no Ready condition: not ready")
	}
	p.Status.Conditions = []podview.Condition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if !PodIsReady(p) {
		t.Error("Ready condition true: ready")
	}
}

func TestApps(t *testing.T) {
	s := &rayv1.RayService{}
	if got := Apps(s); got != "0/0" {
		t.Errorf("no apps: %q", got)
	}
	s.Status.ActiveServiceStatus.Applications = map[string]rayv1.AppStatus{
		"a": {Status: rayv1.ApplicationStatusRunning}, "b": {Status: rayv1.ApplicationStatusDeploying}, "c": {Status: rayv1.ApplicationStatusRunning}}
	s.Status.PendingServiceStatus.Applications = map[string]rayv1.AppStatus{"d": {Status: rayv1.ApplicationStatusRunning}}
	if got := Apps(s); got != "2/3" {
		t.Errorf("Apps = %q, want 2/3 (the active side only)", got)
	}
}

func TestAgesAndDurations(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(now.Add(-d))) }
	if got := Age(now, time.Time{}); got != None {
		t.Errorf("unset age: %q", got)
	}
	if got := Age(now, now.Add(-90*time.Minute)); got != "90m" {
		t.Errorf("age: %q, want 90m", got)
	}
	if got := Age(now, now.Add(-50*time.Hour)); got != "2d2h" {
		t.Errorf("age: %q, want 2d2h", got)
	}
	if got := Since(now, nil); got != None {
		t.Errorf("since nil: %q", got)
	}
	if got := Since(now, at(3*time.Second)); got != "3s" {
		t.Errorf("since: %q", got)
	}
	j := &rayv1.RayJob{}
	if got := JobDuration(now, j); got != None {
		t.Errorf("not started: %q", got)
	}
	j.Status.StartTime = at(45 * time.Minute)
	if got := JobDuration(now, j); got != "45m" {
		t.Errorf("running: %q, want 45m (so far)", got)
	}
	j.Status.EndTime = at(5 * time.Minute)
	if got := JobDuration(now, j); got != "40m" {
		t.Errorf("ended: %q, want 40m (start to end)", got)
	}
}

func TestConditions(t *testing.T) {
	if got := Conditions(nil); got != None {
		t.Errorf("none: %q", got)
	}
	got := Conditions([]metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Initializing"},
		{Type: "HeadPodReady", Status: metav1.ConditionTrue},
	})
	if want := "HeadPodReady=True  Ready=False(Initializing)"; got != want {
		t.Errorf("Conditions = %q, want %q", got, want)
	}
}

func TestNextRun(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		next time.Time
		ok   bool
		want string
	}{
		{now.Add(4*time.Minute + 12*time.Second), true, "in 4m12s"},
		{now, true, "due"},
		{now.Add(-time.Second), true, "due"},
		{time.Time{}, false, None},
	}
	for _, c := range cases {
		if got := NextRun(now, c.next, c.ok); got != c.want {
			t.Errorf("NextRun(%v, %v) = %q, want %q", c.next, c.ok, got, c.want)
		}
	}
}
