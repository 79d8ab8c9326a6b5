package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The cluster detail says, per worker group, what the autoscaler would do
// next from Ray's view: group cpu grows for the CPU tasks Ray cannot place
// (as far as maxReplicas allows: up 2), group gpu, which CPU-only demand
// goes to last, has nothing to do.
func TestClusterAutoscalerNext(t *testing.T) {
	st := fixture()
	o, ok := st.Find(watch.RayCluster, "ml", "train-a")
	if !ok {
		t.Fatal("no train-a in the fixture")
	}
	o.(*rayv1.RayCluster).Spec.EnableInTreeAutoscaling = ptr.To(true)
	hp, ok := st.Find(watch.Pod, "ml", "train-a-head-x7k2p")
	if !ok {
		t.Fatal("no head pod in the fixture")
	}
	head := hp.(*podview.Pod) // the operator's autoscaler sidecar, running
	head.Spec.Containers = append(head.Spec.Containers, corev1.Container{Name: rayv1.AutoscalerContainerName})
	head.Status.ContainerStatuses = append(head.Status.ContainerStatuses, podview.ContainerStatus{Name: rayv1.AutoscalerContainerName,
		Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	fc := &fakeCapacity{ok: true, c: &dashboard.Capacity{DemandKnown: true,
		Nodes:   []dashboard.RayNode{{IP: "10.0.0.10", Alive: true, Head: true}, {IP: "10.0.0.11", Alive: true, Idle: true}},
		Total:   dashboard.Resources{"CPU": 12, "GPU": 2},
		Pending: []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 1}, Count: 30}}}}
	a, err := New(Options{Store: st, Now: clock, NoColor: true, Session: Session{Capacity: fc}})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	a.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
	a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	screen := a.View().Content
	row := func(group string) string {
		for _, l := range strings.Split(screen, "\n") {
			if strings.Contains(l, "group "+group+" ") {
				return l
			}
		}
		t.Fatalf("no group %s:\n%s", group, screen)
		return ""
	}
	for group, want := range map[string]string{
		"cpu": "up 2: 30 tasks want {CPU: 1}",
		"gpu": "nothing: no demand for it",
	} {
		if !strings.Contains(row(group), want) {
			t.Errorf("group %s row %q does not say %q", group, row(group), want)
		}
	}
	requireGolden(t, screen)
}

// A RayJob whose entrypoint asks for GPUs no pod of its cluster offers
// says so in the jobs list's WHY column and on its own page, from the
// spec (no dashboard is needed).
func TestJobNamesItsDemand(t *testing.T) {
	st := fixture()
	o, ok := st.Find(watch.RayJob, "ml", "nightly-eval")
	if !ok {
		t.Fatal("no nightly-eval in the fixture")
	}
	j := o.(*rayv1.RayJob)
	j.Spec.EntrypointNumGpus = 8
	j.Status.JobStatus = rayv1.JobStatusPending
	a, err := New(Options{Store: st, Now: clock, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	for _, k := range ":rj" {
		a.Update(tea.KeyPressMsg{Code: k, Text: string(k)})
	}
	a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	list := a.View().Content
	if !strings.Contains(list, "entrypoint asks {GPU: 8}") {
		t.Fatalf("jobs list WHY does not name the demand:\n%s", list)
	}
	for range 2 { // to nightly-eval, whichever row it is on
		if strings.Contains(lineWith(list, "nightly-eval"), ">") {
			break
		}
		a.Update(tea.KeyPressMsg{Code: 'j', Text: "j"})
		list = a.View().Content
	}
	a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	page := a.View().Content
	for _, want := range []string{"RayJob ml/nightly-eval", "Why: entrypoint asks {GPU: 8}; no pod of RayCluster train-a offers 8 GPU", "spec.entrypointNumGpus: 8"} {
		if !strings.Contains(page, want) {
			t.Fatalf("job page has no %q:\n%s", want, page)
		}
	}
}

func lineWith(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
