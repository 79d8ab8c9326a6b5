package widgets

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/styles"
)

func causes(n int) []why.Cause {
	var cs []why.Cause
	for i := range n {
		cs = append(cs, why.Cause{Code: "C", Summary: fmt.Sprint("cause ", i+1), Evidence: []string{fmt.Sprint("evidence ", i+1)}, Fix: fmt.Sprint("fix ", i+1)})
	}
	return cs
}

func TestWhyLines(t *testing.T) {
	st := styles.Plain()
	cases := []struct {
		n, width, max int
		want          []string
	}{
		{0, 80, 10, nil},
		{1, 80, 10, []string{"Why: cause 1", "       evidence 1", "       fix: fix 1"}},
		{2, 80, 3, []string{"Why: cause 1", "       evidence 1", "     cause 2"}}, // summaries first, details while lines remain
		{2, 80, 2, []string{"Why: cause 1", "     cause 2"}},
		{4, 80, 3, []string{"Why: cause 1", "     cause 2", "     (+2 more)"}},
		{1, 10, 10, []string{"Why: caus~", "       ev~", "       fi~"}},
	}
	for _, c := range cases {
		got := WhyLines(st, causes(c.n), c.width, c.max, false)
		if !slices.Equal(got, c.want) {
			t.Errorf("%d causes in %d×%d: %q, want %q", c.n, c.width, c.max, got, c.want)
		}
	}
}

func TestCapacityLines(t *testing.T) {
	st := styles.Plain()
	c := &dashboard.Capacity{
		Nodes:       []dashboard.RayNode{{IP: "10.0.0.1", Alive: true, Head: true}, {IP: "10.0.0.2", Alive: true, Idle: true}, {IP: "10.0.0.3"}},
		Total:       dashboard.Resources{"CPU": 8, "GPU": 2, "memory": 16 << 30, "object_store_memory": 4 << 30},
		Used:        dashboard.Resources{"CPU": 3, "memory": 2.5 * (1 << 30)},
		Pending:     []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 1}, Count: 3}},
		Infeasible:  []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 2}, Count: 4}},
		RunningJobs: 1, Actors: 12,
	}
	got := strings.Join(CapacityLines(st, c, nil, true, 200), "\n")
	want := "Ray: 2 nodes alive, 1 idle, 1 dead  CPU 3/8  GPU 0/2  memory 2.5Gi/16Gi  object store 0B/4Gi  jobs 1  actors 12\n" +
		"     pending 3 × {CPU: 1}  infeasible 4 × {GPU: 2}"
	if got != want {
		t.Errorf("capacity:\n%s\nwant\n%s", got, want)
	}
	if got := CapacityLines(st, nil, fmt.Errorf("dial tcp 10.0.0.1:8265: connection refused"), true, 200); got[0] != "Ray: dashboard not answering: dial tcp 10.0.0.1:8265: connection refused" {
		t.Errorf("error: %q", got)
	}
	one := &dashboard.Capacity{Nodes: []dashboard.RayNode{{IP: "10.0.0.1", Alive: true, Head: true}}, Total: dashboard.Resources{"CPU": 1}}
	if got := CapacityLines(st, one, nil, true, 200); got[0] != "Ray: 1 node alive, 0 idle, 0 dead  CPU 0/1  jobs 0  actors 0" {
		t.Errorf("one node: %q", got)
	}
	if got := CapacityLines(st, nil, nil, false, 200); got[0] != "Ray: asking the dashboard…" {
		t.Errorf("unknown: %q", got)
	}
}
