package widgets

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/kube/gauges"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/styles"
)

// UseLines is a cluster's Use block from Ray's gauges (kube/gauges): the
// cluster's CPU, GPU and object-store memory now, each with a sparkline of
// the last 15 minutes, then the pods whose gauges are unknown and why. The
// cluster page and the job page show it.
func UseLines(st *styles.Styles, u gauges.Cluster, width int) []string {
	lbl := st.Label.Render("Use:")
	if !u.Done {
		return []string{lbl + " " + st.Faint.Render("reading Ray's gauges…")}
	}
	if u.Forbidden {
		return []string{ansi.Truncate(lbl+" "+st.Class(styles.Warn).Render("? proxy forbidden: this identity may not get pods/proxy, so Ray's gauges cannot be read; not asked again before "+
			u.ForbiddenUntil.Format("15:04:05")), width, "…")}
	}
	spark := max(8, min(30, (width-60)/3))
	part := func(name string, s gauges.Series, top float64, cell func(float64) string) string {
		last, ok := u.Last(s)
		if !ok {
			return ""
		}
		return name + " " + cell(last.V) + " " + Sparkline(u.History[s], spark, top, st.Plain)
	}
	var parts []string
	for _, p := range []string{
		part("CPU", gauges.CPU, 100, gauges.Pct),
		part("GPU", gauges.GPU, 100, gauges.Pct),
		part("object store", gauges.ObjectStore, 0, gauges.Bytes),
	} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	line := lbl + " "
	if len(parts) == 0 {
		line += st.Faint.Render("no node reports its gauges yet")
	} else {
		line += strings.Join(parts, "   ") + st.Faint.Render("  (15 min)")
	}
	out := []string{ansi.Truncate(line, width, "…")}
	var unknown []string
	for _, g := range u.Pods {
		if !g.Known() {
			unknown = append(unknown, g.Pod+": "+g.Why())
		}
	}
	if len(unknown) > 0 {
		out = append(out, st.Faint.Render(ansi.Truncate("     "+format.OneLine("? "+strings.Join(unknown, "; ")), width, "…")))
	}
	return out
}

// ServeLine is Serve's traffic on a cluster from Ray's gauges: requests a
// second now with a sparkline, p50 and p99 latency between the last two
// scrapes; "" before two scrapes of a cluster with Serve traffic.
func ServeLine(st *styles.Styles, u gauges.Cluster, width int) string {
	rps, ok := u.Last(gauges.ServeRPS)
	if !ok {
		return ""
	}
	line := fmt.Sprintf("%s %.1f req/s %s", st.Label.Render("Serve traffic:"), rps.V, Sparkline(u.History[gauges.ServeRPS], max(8, min(30, width/4)), 0, st.Plain))
	if p50, ok := u.Last(gauges.ServeP50MS); ok {
		line += fmt.Sprintf("  p50 %.0f ms", p50.V)
	}
	if p99, ok := u.Last(gauges.ServeP99MS); ok {
		line += fmt.Sprintf("  p99 %.0f ms", p99.V)
	}
	return ansi.Truncate(line+st.Faint.Render("  (15 min)"), width, "…")
}
