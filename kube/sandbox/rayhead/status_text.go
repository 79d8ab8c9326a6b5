package rayhead

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// The text `ray status` prints, as the dashboard answers it
// (/api/cluster_status?format=1: reporter_head.py get_cluster_status →
// debug_status, the autoscaler v2 ClusterStatusFormatter's layout, the one
// rayapi/dashboard's textDemands reads): the alive nodes by node type,
// Active (something placed on them) or Idle, then the resources used of
// the total, then the demand that fits nowhere. It is what a `ray status`
// in an exec into a simulated Ray container prints
// (kube/sandbox/execsim).

// separator is the dashes under each section title.
const separator = "---------------------------------------------------------------"

// statusText formats the head's capacity at now. Called with h.mu held.
func (h *Head) statusText(now time.Time) string {
	c := &h.cap
	var b strings.Builder
	fmt.Fprintf(&b, "======== Autoscaler status: %s ========\n", now.Format("2006-01-02 15:04:05.000000"))
	b.WriteString("Node status\n" + separator + "\n")
	active, idle := &typeCounts{}, &typeCounts{}
	used, total := dashboard.Resources{}, dashboard.Resources{}
	for _, n := range c.nodes {
		if !n.alive {
			continue
		}
		used.Add(n.used, 1)
		total.Add(n.Total, 1)
		if n.idleSince.IsZero() {
			active.add(n.Group)
		} else {
			idle.add(n.Group)
		}
	}
	b.WriteString("Active:\n" + active.lines("(no active nodes)"))
	b.WriteString("Idle:\n" + idle.lines("(no idle nodes)"))
	b.WriteString("Pending:\n (no pending nodes)\nRecent failures:\n (no failures)\n\n")
	b.WriteString("Resources\n" + separator + "\nTotal Usage:\n")
	keys := make([]string, 0, len(total))
	for k := range total {
		if !strings.HasPrefix(k, "node:") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys) // Python's sorted(): CPU, GPU, memory, object_store_memory
	if len(keys) == 0 {
		b.WriteString(" (no resources)\n")
	}
	for _, k := range keys {
		if k == "memory" || k == "object_store_memory" {
			fmt.Fprintf(&b, " %s/%s %s\n", formatMemory(used[k]), formatMemory(total[k]), k)
		} else {
			fmt.Fprintf(&b, " %s/%s %s\n", pyFloat(used[k]), pyFloat(total[k]), k)
		}
	}
	b.WriteString("\nTotal Constraints:\n (no request_resources() constraints)\nTotal Demands:\n")
	if len(c.demand) == 0 {
		b.WriteString(" (no resource demands)\n")
	}
	for _, d := range c.demand {
		fmt.Fprintf(&b, " %s: %d+ pending tasks/actors\n", pyDict(d.Shape), d.Count)
	}
	return b.String()
}

// typeCounts counts nodes per node type, in the order first seen.
type typeCounts struct {
	order []string
	n     map[string]int
}

func (t *typeCounts) add(group string) {
	if t.n == nil {
		t.n = map[string]int{}
	}
	if t.n[group] == 0 {
		t.order = append(t.order, group)
	}
	t.n[group]++
}

func (t *typeCounts) lines(none string) string {
	if len(t.order) == 0 {
		return " " + none + "\n"
	}
	var b strings.Builder
	for _, g := range t.order {
		fmt.Fprintf(&b, " %d %s\n", t.n[g], g)
	}
	return b.String()
}

// pyFloat is Python's str() of a float: 3.0, 0.5, 1000000000.0.
func pyFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// formatMemory is Ray's format_memory (python/ray/autoscaler/_private/util.py).
func formatMemory(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2fGiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2fMiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.2fKiB", b/(1<<10))
	}
	return strconv.FormatFloat(b, 'f', -1, 64) + "B"
}

// pyDict is a Python dict's repr of a resource shape, keys sorted.
func pyDict(r dashboard.Resources) string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("'%s': %s", k, pyFloat(r[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// handleStatusText answers /api/cluster_status?format=1.
func (h *Head) handleStatusText(w http.ResponseWriter) {
	h.mu.Lock()
	text := h.statusText(time.Now())
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, dashboard.RestResponse[dashboard.FormattedStatus]{Result: true, Msg: "Got formatted cluster status.",
		Data: dashboard.FormattedStatus{ClusterStatus: text}})
}
