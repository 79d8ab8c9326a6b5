package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/diagnose"
	"github.com/raydar/raydar/tui/internal/tuitest"
)

// TestWhyCellFollowsItsCauses: the WHY cell changes when the causes do,
// even when the row's object itself did not change (a pod of the cluster
// did): the table's cached row is projected again. The detail page's Why
// block follows as well, and disappears when the cluster is healthy.
func TestWhyCellFollowsItsCauses(t *testing.T) {
	a, err := New(Options{Store: fixture(), Now: clock, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	rec := newRecorder()
	a.e.Why.Fn = whyFns(rec)
	screen := func() string { return a.View().Content }
	row := func(name string) string {
		for _, l := range strings.Split(screen(), "\n") {
			if strings.Contains(l, " "+name+" ") {
				return l
			}
		}
		t.Fatalf("no row %s:\n%s", name, screen())
		return ""
	}
	if strings.Contains(row("train-a"), "gpu") {
		t.Fatal("cause before any")
	}
	rec.Causes["train-a"] = []why.Cause{{Code: "Unschedulable", Summary: "2 gpu workers Pending: each asks 4 nvidia.com/gpu, the most any node offers is 0",
		Evidence: []string{"0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}, Fix: "add GPU nodes or lower the group's request"}}
	pod := a.e.Store.PodsOf(watch.ClusterRef{Namespace: "ml", Name: "train-a"})[0].DeepCopy()
	pod.Status.Phase = corev1.PodPending
	a.Update(batchMsg{gen: a.gen, deltas: []watch.Delta{{Kind: watch.Pod, Object: pod}}})
	if r := row("train-a"); !strings.Contains(r, "2 gpu workers Pending") {
		t.Fatalf("WHY cell not updated on a pod change: %q", r)
	}
	if r := row("notebook"); strings.Contains(r, "gpu") {
		t.Fatalf("another row got the cause: %q", r)
	}
	// The detail page: a Why block at the top with evidence and fix.
	a.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
	a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	s := screen()
	for _, want := range []string{"Why: 2 gpu workers Pending: each asks 4 nvidia.com/gpu", "       0/3 nodes are available", "       fix: add GPU nodes"} {
		if !strings.Contains(s, want) {
			t.Fatalf("detail lacks %q:\n%s", want, s)
		}
	}
	delete(rec.Causes, "train-a")
	pod = pod.DeepCopy()
	pod.Status.Phase = corev1.PodRunning
	a.Update(batchMsg{gen: a.gen, deltas: []watch.Delta{{Kind: watch.Pod, Object: pod}}})
	if s := screen(); strings.Contains(s, "Why:") {
		t.Fatalf("healthy cluster still has a Why block:\n%s", s)
	}
	a.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if r := row("train-a"); strings.Contains(r, "gpu") {
		t.Fatalf("healthy row keeps its WHY: %q", r)
	}
}

// whyFns are the diagnosers that record into r.
func whyFns(r *tuitest.Recorder) diagnose.Diagnosers {
	return diagnose.Diagnosers{Cluster: r.Cluster, Job: r.Job, Service: r.Service, Column: r.Column}
}
