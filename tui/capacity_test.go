package tui

import (
	"errors"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// fakeCapacity answers Get from a fixed capacity and records the calls.
type fakeCapacity struct {
	c     *dashboard.Capacity
	err   error
	ok    bool
	calls []string
}

func (f *fakeCapacity) Get(ns, name string) (*dashboard.Capacity, error, bool) {
	f.calls = append(f.calls, ns+"/"+name)
	return f.c, f.err, f.ok
}

// TestClusterDetailCapacity: Ray's view is read only for the cluster whose
// detail page is on top (when pushed, then on ticks; never from the list,
// never per frame), its nodes are mapped to the pods by IP, and it goes
// into the cluster's diagnosis; a failing dashboard says so.
func TestClusterDetailCapacity(t *testing.T) {
	fc := &fakeCapacity{ok: true, c: &dashboard.Capacity{
		Nodes: []dashboard.RayNode{{IP: "10.0.0.10", Alive: true, Head: true}, {IP: "10.0.0.11", Alive: true, Idle: true},
			{IP: "10.0.0.12"}, {IP: "10.9.9.9", Alive: true}},
		Total:       dashboard.Resources{"CPU": 12, "GPU": 2},
		Used:        dashboard.Resources{"CPU": 4},
		Infeasible:  []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 2}, Count: 4}},
		RunningJobs: 1, Actors: 3,
	}}
	a, err := New(Options{Store: fixture(), Now: clock, NoColor: true, Session: Session{Capacity: fc}})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	a.e.Why.Fn = whyFns(rec)
	a.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	a.Update(tickMsg{})
	_ = a.View()
	if len(fc.calls) != 0 {
		t.Fatalf("capacity read from the list: %v", fc.calls)
	}
	a.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
	a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	for range 3 {
		_ = a.View()
	}
	a.Update(tickMsg{})
	if want := []string{"ml/train-a", "ml/train-a"}; !slices.Equal(fc.calls, want) {
		t.Fatalf("Get calls %v, want %v (on push and on the tick)", fc.calls, want)
	}
	s := a.View().Content
	for _, want := range []string{
		"Ray: 3 nodes alive, 1 idle, 1 dead  CPU 4/12  GPU 0/2  jobs 1  actors 3",
		"infeasible 4 × {GPU: 2}",
	} {
		if !strings.Contains(s, want) {
			t.Fatalf("no %q:\n%s", want, s)
		}
	}
	rayCell := func(pod string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, pod) {
				f := strings.Fields(l)
				return f[len(f)-1]
			}
		}
		t.Fatalf("no pod %s:\n%s", pod, s)
		return ""
	}
	for pod, want := range map[string]string{"train-a-head-x7k2p": "busy", "train-a-cpu-worker-4hq9d": "idle", "train-a-cpu-worker-8mz2n": "dead"} {
		if got := rayCell(pod); got != want {
			t.Errorf("RAY of %s = %q, want %q", pod, got, want)
		}
	}
	if in := rec.Clusters["train-a"]; in.Capacity != fc.c {
		t.Fatal("the capacity is not in the cluster's diagnosis")
	}
	// Leaving the page drops it from the diagnosis and stops the reads.
	a.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	a.Update(tickMsg{})
	if len(fc.calls) != 2 || rec.Clusters["train-a"].Capacity != nil {
		t.Fatalf("after leaving: calls %v, capacity %v", fc.calls, rec.Clusters["train-a"].Capacity)
	}

	// A dashboard that does not answer.
	fc2 := &fakeCapacity{ok: true, err: errors.New("Get \"http://10.0.0.10:8265/api/cluster_status\": connection refused")}
	a, _ = New(Options{Store: fixture(), Now: clock, NoColor: true, Session: Session{Capacity: fc2}})
	a.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	a.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
	a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if s := a.View().Content; !strings.Contains(s, `Ray: dashboard not answering: Get "http://10.0.0.10:8265/api/cluster_status": connection refused`) {
		t.Fatalf("no error shown:\n%s", s)
	}
	// Without a capacity source there is no Ray block and no RAY column.
	a, _ = New(Options{Store: fixture(), Now: clock, NoColor: true})
	a.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	a.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
	a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if s := a.View().Content; strings.Contains(s, "nodes alive") || strings.Contains(s, "dashboard") || strings.Contains(s, " RAY") {
		t.Fatalf("Ray block without a source:\n%s", s)
	}
}
