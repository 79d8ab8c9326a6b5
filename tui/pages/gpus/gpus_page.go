package gpus

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/raydar/raydar/kube/gauges"
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/widgets"
)

// View is the page's view kind (its breadcrumb).
const View host.ViewKind = "gpus"

// Page lists the GPUs held by Ray pods, idle first; z suspends (or
// resumes) and s scales the selected GPU's cluster and worker group.
type Page struct {
	host.Base
	ns     string
	cursor int
	top    int // the first row on screen
	rows   []row
	// unknown are the pods of GPU clusters whose gauges are not known,
	// with why; waiting counts the clusters not read yet.
	unknown []string
	waiting int
	asked   int // clusters asked on the last tick
}

type row struct {
	env *host.Env // the row's context's session
	gauges.GPUUse
	idle bool
}

// NewPage is the :gpus page of e (a fleet's Env: every member's clusters).
func NewPage(e *host.Env) *Page {
	p := &Page{Base: host.Base{E: e, VK: View}}
	p.poll()
	return p
}

// Title is "GPUs".
func (p *Page) Title() string { return "GPUs" }

// Crumb is "gpus".
func (p *Page) Crumb() string { return "gpus" }

// SetNamespace scopes the page to ns ("": all namespaces).
func (p *Page) SetNamespace(ns string) { p.ns = ns; p.poll() }

// Target is the selected GPU's RayCluster (Selected and Owner) and its
// pod's worker group, in the row's context: suspend (z) and scale (s) act
// on them through the usual confirmed actions.
func (p *Page) Target() host.Target {
	t := host.Target{View: View, Namespace: p.ns}
	if len(p.rows) == 0 {
		return t
	}
	r := p.rows[format.ClampInt(p.cursor, 0, len(p.rows)-1)]
	if o, ok := r.env.Store.Find(watch.RayCluster, r.Namespace, r.Cluster); ok {
		t.Selected, t.Owner, t.Group, t.Env = o, o, r.Group, r.env
	}
	return t
}

// Tick reads the gauges again (while the page is on top).
func (p *Page) Tick() tea.Cmd { p.poll(); return nil }

func (p *Page) poll() {
	envs := p.E.Fleet
	if envs == nil {
		envs = []*host.Env{p.E}
	}
	now := p.E.Now()
	p.rows, p.unknown, p.waiting, p.asked = nil, nil, 0, 0
	for _, e := range envs {
		src := e.Sess.Gauges
		if src == nil {
			continue
		}
		for _, o := range e.Store.List(watch.RayCluster) {
			rc := o.(*rayv1.RayCluster)
			if (p.ns != "" && rc.Namespace != p.ns) || !gauges.AsksGPUs(rc) {
				continue
			}
			p.asked++
			c := src.Get(rc.Namespace, rc.Name)
			if !c.Done {
				p.waiting++
				continue
			}
			for _, g := range c.GPUs {
				p.rows = append(p.rows, row{env: e, GPUUse: g, idle: src.Idle(g, now)})
			}
			for _, pg := range c.Pods {
				if !pg.Known() {
					p.unknown = append(p.unknown, rc.Namespace+"/"+pg.Pod+": "+pg.Why())
				}
			}
		}
	}
	slices.SortStableFunc(p.rows, func(a, b row) int {
		if a.idle != b.idle {
			if a.idle {
				return -1
			}
			return 1
		}
		return cmp.Or(-cmp.Compare(a.IdleFor(now), b.IdleFor(now)), cmp.Compare(a.UtilPct, b.UtilPct),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.Index, b.Index))
	})
	slices.Sort(p.unknown)
}

// Update moves the cursor.
func (p *Page) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	km := p.E.KM
	switch {
	case key.Matches(msg, km.Up):
		p.cursor = max(p.cursor-1, 0)
	case key.Matches(msg, km.Down):
		p.cursor = min(p.cursor+1, max(len(p.rows)-1, 0))
	default:
		return false, nil
	}
	return true, nil
}

// threshold is "below 5% for 10m".
func (p *Page) threshold() string {
	src := p.E.Sess.Gauges
	if src == nil && len(p.E.Fleet) > 0 {
		src = p.E.Fleet[0].Sess.Gauges
	}
	if src == nil {
		return ""
	}
	d := duration.HumanDuration(src.IdleFor()) // "30s", "10m", "2h", as kubectl's ages
	return fmt.Sprintf("idle: below %s for %s", gauges.Pct(src.IdleBelowPct()), d)
}

// View lists the GPUs, idle first, then why some pods' gauges are unknown.
func (p *Page) View() string {
	st := p.E.St
	if p.asked == 0 {
		return st.Faint.Render("no RayCluster in scope asks for GPUs (or this session reads no gauges)")
	}
	now := p.E.Now()
	fleet := p.E.Fleet != nil
	hdr := fmt.Sprintf("  %-20s %-28s %-40s %3s %-22s %5s %8s %10s  %s", "NAMESPACE", "CLUSTER", "POD", "GPU", "NAME", "UTIL", "IDLE FOR", "IDLE GPU-H", "GRAM")
	if fleet {
		hdr = fmt.Sprintf("  %-14s", "CONTEXT") + hdr[1:]
	}
	lines := []string{st.Faint.Render(p.threshold() + "; GPU-hours since raydar started watching"), st.TableHeader.Render(hdr)}
	if len(p.rows) == 0 {
		lines = append(lines, st.Faint.Render("  no GPU reports its gauges yet"))
	}
	p.cursor = format.ClampInt(p.cursor, 0, max(len(p.rows)-1, 0))
	// Only the rows on screen are formatted, the cursor's among them.
	body := max(p.H-len(lines), 1)
	p.top = format.ClampInt(p.top, max(p.cursor-body+1, 0), p.cursor)
	for i := p.top; i < min(len(p.rows), p.top+body); i++ {
		r := p.rows[i]
		cur := "  "
		if i == p.cursor {
			cur = st.Glyphs.Cursor + " "
		}
		idleFor := "-"
		if d := r.IdleFor(now); d > 0 {
			idleFor = format.Age(now, now.Add(-d))
		}
		gram := gauges.Unknown
		if r.GRAMTotalMiB > 0 {
			gram = gauges.Bytes(r.GRAMUsedMiB*(1<<20)) + "/" + gauges.Bytes(r.GRAMTotalMiB*(1<<20))
		}
		line := fmt.Sprintf("%-20s %-28s %-40s %3d %-22s %5s %8s %10.2f  %s", r.Namespace, r.Cluster, r.Pod, r.Index,
			format.OrNone(r.Name), gauges.Pct(r.UtilPct), idleFor, r.IdleGPUHours(), gram)
		if fleet {
			line = fmt.Sprintf("%-14s ", r.env.Sess.Context) + line
		}
		if r.idle {
			line = st.Class(styles.Warn).Render(line + "  idle")
		}
		lines = append(lines, cur+line)
	}
	if p.waiting > 0 {
		lines = append(lines, st.Faint.Render(fmt.Sprintf("  reading the gauges of %d cluster(s)…", p.waiting)))
	}
	if len(p.unknown) > 0 {
		lines = append(lines, "", st.Section.Render("Not known"))
		for _, u := range p.unknown {
			lines = append(lines, "  ? "+format.OneLine(u))
		}
	}
	return strings.Join(widgets.RenderRows(lines, 0, p.W, p.H, false), "\n")
}

var _ host.Ticker = (*Page)(nil)
