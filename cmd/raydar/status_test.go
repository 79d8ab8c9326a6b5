package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui"
)

// TestGetAndTUIShowTheSameStatus feeds the same RayClusters, RayServices,
// RayJobs and Ray pods through raydar get's table and the TUI's lists: each
// reads with the same STATUS word in both, the word of rayapi/status, and
// with the same workers (clusters), deployment status (jobs) and ready count
// (pods). RayCronJobs are not among them.
func TestGetAndTUIShowTheSameStatus(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const ns = "team-a"
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}
	}
	gone := ptr.To(metav1.NewTime(now.Add(-time.Minute)))
	cond := func(typ string, s metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason}
	}

	cluster := func(name string, edit func(*rayv1.RayCluster)) *rayv1.RayCluster {
		rc := &rayv1.RayCluster{ObjectMeta: meta(name)}
		rc.Spec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{{GroupName: "cpu", Replicas: ptr.To[int32](3), MinReplicas: ptr.To[int32](0), MaxReplicas: ptr.To[int32](5)}}
		edit(rc)
		return rc
	}
	clusters := []*rayv1.RayCluster{
		cluster("c-new", func(*rayv1.RayCluster) {}),
		cluster("c-ready", func(rc *rayv1.RayCluster) {
			rc.Status.State, rc.Status.ReadyWorkerReplicas, rc.Status.AvailableWorkerReplicas = rayv1.Ready, 2, 3
		}),
		cluster("c-deleting", func(rc *rayv1.RayCluster) {
			rc.DeletionTimestamp, rc.Finalizers, rc.Status.State = gone, []string{"x"}, rayv1.Ready
		}),
		cluster("c-suspend-asked", func(rc *rayv1.RayCluster) { rc.Spec.Suspend, rc.Status.State = ptr.To(true), rayv1.Ready }),
		cluster("c-suspending", func(rc *rayv1.RayCluster) {
			rc.Status.State = rayv1.Ready
			rc.Status.Conditions = []metav1.Condition{cond(string(rayv1.RayClusterSuspending), metav1.ConditionTrue, "")}
		}),
		cluster("c-suspended", func(rc *rayv1.RayCluster) {
			rc.Spec.Suspend, rc.Status.State = ptr.To(true), rayv1.Suspended
			rc.Status.Conditions = []metav1.Condition{cond(string(rayv1.RayClusterSuspended), metav1.ConditionTrue, "")}
		}),
		cluster("c-provisioning", func(rc *rayv1.RayCluster) {
			rc.Status.Conditions = []metav1.Condition{cond(string(rayv1.RayClusterProvisioned), metav1.ConditionFalse, rayv1.RayClusterPodsProvisioning)}
		}),
		cluster("c-quota", func(rc *rayv1.RayCluster) {
			rc.Status.Conditions = []metav1.Condition{cond(string(rayv1.RayClusterReplicaFailure), metav1.ConditionTrue, "Quota")}
		}),
	}
	service := func(name string, edit func(*rayv1.RayService)) *rayv1.RayService {
		s := &rayv1.RayService{ObjectMeta: meta(name)}
		edit(s)
		return s
	}
	ready := cond(string(rayv1.RayServiceReady), metav1.ConditionTrue, string(rayv1.NonZeroServeEndpoints))
	services := []*rayv1.RayService{
		service("s-new", func(*rayv1.RayService) {}),
		service("s-ready", func(s *rayv1.RayService) { s.Status.Conditions = []metav1.Condition{ready} }),
		service("s-upgrading", func(s *rayv1.RayService) {
			s.Status.Conditions = []metav1.Condition{ready, cond(string(rayv1.UpgradeInProgress), metav1.ConditionTrue, "")}
		}),
		service("s-starting", func(s *rayv1.RayService) {
			s.Status.Conditions = []metav1.Condition{cond(string(rayv1.RayServiceReady), metav1.ConditionFalse, string(rayv1.RayServiceInitializing))}
		}),
		service("s-incremental", func(s *rayv1.RayService) {
			s.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.NewClusterWithIncrementalUpgrade)}
			s.Status.Conditions = []metav1.Condition{ready, cond(string(rayv1.UpgradeInProgress), metav1.ConditionTrue, "")}
			s.Status.ActiveServiceStatus = rayv1.RayServiceStatus{RayClusterName: "c-ready", TrafficRoutedPercent: ptr.To[int32](30)}
			s.Status.PendingServiceStatus = rayv1.RayServiceStatus{RayClusterName: "c-new", TrafficRoutedPercent: ptr.To[int32](70)}
		}),
		service("s-deleting", func(s *rayv1.RayService) {
			s.DeletionTimestamp, s.Finalizers, s.Status.Conditions = gone, []string{"x"}, []metav1.Condition{ready}
		}),
	}
	pod := func(name string, edit func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: meta(name)}
		p.Labels = map[string]string{rayv1.RayClusterLabelKey: "c-ready", rayv1.RayNodeTypeLabelKey: string(rayv1.WorkerNode), rayv1.RayNodeGroupLabelKey: "cpu"}
		p.Spec.Containers = []corev1.Container{{Name: "ray-worker"}}
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray-worker", Ready: true}}
		edit(p)
		return p
	}
	waiting := func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
	}
	pods := []*corev1.Pod{
		pod("p-running", func(*corev1.Pod) {}),
		pod("p-crashing", func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "ray-worker", State: waiting("CrashLoopBackOff"), RestartCount: 4}
		}),
		pod("p-terminating", func(p *corev1.Pod) { p.DeletionTimestamp, p.Finalizers = gone, []string{"x"} }),
		pod("p-init", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "wait-gcs", State: waiting("ErrImagePull")}}
			p.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "ray-worker", State: waiting("PodInitializing")}
		}),
		pod("p-sidecar", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "log"})
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "log"})
		}),
	}
	jobs := []*rayv1.RayJob{
		{ObjectMeta: meta("j-new")},
		{ObjectMeta: meta("j-running"), Status: rayv1.RayJobStatus{JobStatus: rayv1.JobStatusRunning, JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}},
		// kuberay#2314: both lists mark the word its other field contradicts.
		{ObjectMeta: meta("j-contradicts"), Status: rayv1.RayJobStatus{JobStatus: rayv1.JobStatusRunning, JobDeploymentStatus: rayv1.JobDeploymentStatusFailed}},
	}

	store := watch.NewStore()
	var cObjs, sObjs, pObjs, jObjs []client.Object
	for _, o := range clusters {
		cObjs = append(cObjs, o)
	}
	for _, o := range services {
		sObjs = append(sObjs, o)
	}
	for _, o := range pods {
		pObjs = append(pObjs, o)
	}
	for _, o := range jobs {
		jObjs = append(jObjs, o)
	}
	store.Add(cObjs...)
	store.Add(sObjs...)
	store.Add(pObjs...)
	store.Add(jObjs...)

	for _, tc := range []struct {
		res   string
		view  tui.ViewKind
		objs  []client.Object
		cells []int // fields of a get row that the TUI's row must show too: the STATUS word first
	}{
		{getClusters, tui.ClustersView, cObjs, []int{1, 2}},
		{getServices, tui.ServicesView, sObjs, []int{1}},
		{getJobs, tui.JobsView, jObjs, []int{1, 2}},
		{getWorkers, tui.PodsView, pObjs, []int{4, 5}},
	} {
		g := &getter{ns: ns, now: now}
		var out bytes.Buffer
		if err := g.writeTable(&out, tc.res, tc.objs); err != nil {
			t.Fatal(err)
		}
		getRows := rowsByName(out.String())
		tuiRows := rowsByName(tuiScreen(t, store, tc.view, now))
		for _, o := range tc.objs {
			gr, tr := getRows[o.GetName()], tuiRows[o.GetName()]
			if gr == nil || tr == nil {
				t.Fatalf("%s %s: a row in get (%q) and in the TUI (%q)\nget:\n%s", tc.res, o.GetName(), gr, tr, out.String())
			}
			word := gr[tc.cells[0]]
			want := kinds.StatusOf(o)
			if j, ok := o.(*rayv1.RayJob); ok && j.Name == "j-contradicts" {
				want += "?" // status.ContradictionMark, said here by hand
			}
			if word != want {
				t.Errorf("get %s %s: STATUS %q, want the vocabulary's %q", tc.res, o.GetName(), word, want)
			}
			for _, c := range tc.cells {
				if cell := gr[c]; !showsCell(tr, cell) {
					t.Errorf("%s %s: get says %q, the TUI's row %q does not", tc.res, o.GetName(), cell, tr)
				}
			}
		}
		// The split of an incremental upgrade (rayapi/status Traffic):
		// get's TRAFFIC, after both clusters, and the TUI's.
		if tc.res == getServices {
			gr, tr := getRows["s-incremental"], tuiRows["s-incremental"]
			if len(gr) < 5 || gr[4] != "30%->70%" || !showsCell(tr, "30%->70%") {
				t.Errorf("s-incremental: get's row %q, the TUI's %q; want TRAFFIC 30%%->70%% in both", gr, tr)
			}
		}
	}
}

// tuiScreen is the TUI's screen on view, in plain text.
func tuiScreen(t *testing.T, st *watch.Store, view tui.ViewKind, now time.Time) string {
	t.Helper()
	app, err := tui.New(tui.Options{Store: st, StartView: view, NoColor: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	app.Update(tea.WindowSizeMsg{Width: 220, Height: 40})
	return ansi.Strip(app.View().Content)
}

// rowsByName splits a table into fields, keyed by the row's name (the first
// field that names an object: rows may start with a cursor or marker).
func rowsByName(screen string) map[string][]string {
	rows := map[string][]string{}
	for _, l := range strings.Split(screen, "\n") {
		f := strings.Fields(l)
		for i, w := range f {
			if len(w) > 2 && w[1] == '-' && strings.ContainsRune("cspj", rune(w[0])) {
				rows[w] = f[i:]
				break
			}
		}
	}
	return rows
}

// showsCell reports whether a TUI row shows cell, whole or cut to its
// column's width.
func showsCell(row []string, cell string) bool {
	for _, f := range row {
		if f == cell {
			return true
		}
		if cut := strings.TrimRight(f, "…~"); cut != f && cut != "" && strings.HasPrefix(cell, cut) {
			return true
		}
	}
	return false
}
