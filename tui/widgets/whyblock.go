package widgets

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/styles"
)

// WhyLines renders causes as the Why block at the top of a detail page,
// within width cells and at most maxLines lines: one line per cause, most
// decisive first (the order rayapi/why gives), then, while lines remain,
// each cause's evidence and fix on indented lines beneath it. Nothing at
// all when there are no causes. nested pages (a job's, a service's) name
// the RayCluster a cause of their cluster is about first ("on RayCluster
// ns/name, head").
func WhyLines(st *styles.Styles, cs []why.Cause, width, maxLines int, nested bool) []string {
	if len(cs) == 0 || maxLines <= 0 {
		return nil
	}
	shown, more := cs, 0
	if len(cs) > maxLines {
		shown, more = cs[:max(maxLines-1, 0)], len(cs)-max(maxLines-1, 0)
	}
	left := maxLines - len(shown)
	if more > 0 {
		left--
	}
	cut := func(s string) string {
		s = format.OneLine(s)
		if ansi.StringWidth(s) > width {
			return ansi.Truncate(s, max(width, 1), st.Glyphs.Ellipsis)
		}
		return s
	}
	const indent = "       "
	warn := st.Class(styles.Warn)
	var out []string
	for i, c := range shown {
		lead := "     "
		if i == 0 {
			lead = st.Label.Render("Why:") + " "
		}
		out = append(out, lead+warn.Render(cut(c.Summary)))
		var details []string
		if nested && strings.HasPrefix(c.Subject, rayv1.KindRayCluster+" ") {
			details = append(details, indent+"on "+c.Subject)
		}
		for _, e := range c.Evidence {
			details = append(details, indent+e)
		}
		if c.Fix != "" {
			details = append(details, indent+"fix: "+c.Fix)
		}
		for _, l := range details {
			if left == 0 {
				break
			}
			out = append(out, st.Faint.Render(cut(l)))
			left--
		}
	}
	if more > 0 {
		out = append(out, "     "+warn.Render(fmt.Sprintf("(+%d more)", more)))
	}
	// Summaries are cut before styling; the lead adds 5 cells.
	for i, l := range out {
		if ansi.StringWidth(l) > width {
			out[i] = ansi.Truncate(l, width, st.Glyphs.Ellipsis)
		}
	}
	return out
}

// WhyBudget is how many lines a detail page of height h gives its Why
// block when the rest of the page needs at least rest lines: every
// cause's line if it can, details up to a third of the page.
func WhyBudget(cs []why.Cause, h, rest int) int {
	if len(cs) == 0 {
		return 0
	}
	avail := max(h-rest, 1)
	want := max(min(len(cs), avail), h/3)
	return min(want, avail)
}

// CapacityLines renders Ray's view of a cluster's capacity (the cluster
// detail's "Ray" block): nodes alive, dead and idle, resources used of
// total, pending and infeasible demand, running jobs and actors.
func CapacityLines(st *styles.Styles, c *dashboard.Capacity, err error, ok bool, width int) []string {
	lbl := st.Label.Render("Ray:")
	var out []string
	switch {
	case err != nil:
		out = []string{lbl + " " + st.FlashErr.Render("dashboard not answering: "+format.OneLine(err.Error()))}
	case !ok || c == nil:
		out = []string{lbl + " " + st.Faint.Render("asking the dashboard…")}
	default:
		alive, dead, idle := 0, 0, 0
		for _, n := range c.Nodes {
			switch {
			case !n.Alive:
				dead++
			case n.Idle:
				alive++
				idle++
			default:
				alive++
			}
		}
		nodes := "nodes"
		if alive == 1 {
			nodes = "node"
		}
		l1 := fmt.Sprintf("%s %d %s alive, %d idle, %d dead  %s  jobs %d  actors %d", lbl, alive, nodes, idle, dead,
			resourcesUsed(c.Total, c.Used), c.RunningJobs, c.Actors)
		out = append(out, l1)
		var dem []string
		if len(c.Pending) > 0 {
			dem = append(dem, "pending "+demands(c.Pending))
		}
		if len(c.Infeasible) > 0 {
			dem = append(dem, st.Class(styles.Warn).Render("infeasible "+demands(c.Infeasible)))
		}
		if len(dem) > 0 {
			out = append(out, "     "+strings.Join(dem, "  "))
		}
	}
	for i, l := range out {
		if ansi.StringWidth(l) > width {
			out[i] = ansi.Truncate(l, max(width, 1), st.Glyphs.Ellipsis)
		}
	}
	return out
}

// resourcesUsed is "CPU 3/8  GPU 0/2  memory 4Gi/16Gi  object store 1Gi/4Gi",
// with the custom resources after.
func resourcesUsed(total, used dashboard.Resources) string {
	var parts []string
	seen := map[string]bool{}
	for _, r := range []struct{ name, label string }{{"CPU", "CPU"}, {"GPU", "GPU"}, {"TPU", "TPU"},
		{"memory", "memory"}, {"object_store_memory", "object store"}} {
		seen[r.name] = true
		t, ok := total[r.name]
		if !ok && r.name != "CPU" {
			continue
		}
		parts = append(parts, r.label+" "+amount(r.name, used[r.name])+"/"+amount(r.name, t))
	}
	for _, name := range slices.Sorted(maps.Keys(total)) {
		if !seen[name] {
			parts = append(parts, name+" "+amount(name, used[name])+"/"+amount(name, total[name]))
		}
	}
	return strings.Join(parts, "  ")
}

// demands is "4 × {GPU: 2}, 1 × {CPU: 8}".
func demands(ds []dashboard.Demand) string {
	parts := make([]string, 0, len(ds))
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%d × %s", d.Count, shape(d.Shape)))
	}
	return strings.Join(parts, ", ")
}

// shape is "{CPU: 1, GPU: 2}", names sorted.
func shape(r dashboard.Resources) string {
	parts := make([]string, 0, len(r))
	for _, name := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, name+": "+amount(name, r[name]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// amount prints a Ray resource amount: bytes for the memories, else a
// number without needless decimals.
func amount(name string, v float64) string {
	if name == "memory" || name == "object_store_memory" {
		return bytesIEC(v)
	}
	if v == float64(int64(v)) {
		return fmt.Sprint(int64(v))
	}
	return fmt.Sprintf("%.2g", v)
}

func bytesIEC(v float64) string {
	units := []string{"B", "Ki", "Mi", "Gi", "Ti", "Pi"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v == float64(int64(v)) || v >= 10 {
		return fmt.Sprintf("%.0f%s", v, units[i])
	}
	return fmt.Sprintf("%.1f%s", v, units[i])
}
