package service

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/gauges"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/watch"
	rstatus "github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/pages/raylogs"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/widgets"
)

// Detail shows one RayService: status, conditions, the active and
// pending clusters with their Serve applications and deployments, and the
// progress of an upgrade.
type Detail struct {
	host.Base
	svc     *rayv1.RayService
	uid     types.UID
	deleted bool
	offset  int
	// sec is the security line of the serving cluster
	// (why.ServiceSecurity), read again when a RayService or RayCluster
	// changes, not every frame.
	sec why.Security
	// use is Ray's gauges of the active cluster (Session.Gauges), read on
	// ticks while the page is on top: its Serve traffic.
	use gauges.Cluster
}

// newDetail is the detail page of s, in e.
func newDetail(e *host.Env, s *rayv1.RayService) *Detail {
	d := &Detail{Base: host.Base{E: e, VK: DetailView}, svc: s, uid: watch.Key(s)}
	d.sec = why.ServiceSecurity(s, d.activeCluster())
	return d
}

// Title is "RayService ns/name", "(deleted)" once it is gone.
func (d *Detail) Title() string { return host.Titled(rayv1.KindRayService, d.svc, d.deleted) }

// Crumb is "ns/name".
func (d *Detail) Crumb() string { return d.svc.Namespace + "/" + d.svc.Name }

// SetSize records the size and keeps the scroll offset in range.
func (d *Detail) SetSize(w, h int) { d.W, d.H = w, h; d.Clamp() }

// Keys are Enter (the serving RayCluster) and E (the Serve controller's
// log).
func (d *Detail) Keys() []key.Binding {
	return []key.Binding{d.E.KM.Open, d.E.KM.Explain}
}

// Target is the RayService, for the actions.
func (d *Detail) Target() host.Target {
	return host.Target{View: DetailView, Namespace: d.svc.Namespace, Selected: d.svc, Owner: d.svc}
}

// CanOpen says whether Open can drill down to the active cluster (or the
// pending one if there is no active cluster yet).
func (d *Detail) CanOpen() bool {
	return d.svc.Status.ActiveServiceStatus.RayClusterName != "" || d.svc.Status.PendingServiceStatus.RayClusterName != ""
}

// Open is the detail page of the active RayCluster, else of the pending
// one; nil while the store has neither.
func (d *Detail) Open() host.Page {
	st := d.svc.Status
	for _, name := range []string{st.ActiveServiceStatus.RayClusterName, st.PendingServiceStatus.RayClusterName} {
		if name == "" {
			continue
		}
		if o, ok := d.E.Store.Find(watch.RayCluster, d.svc.Namespace, name); ok {
			return d.E.Kinds.Open(d.E, o)
		}
	}
	return nil
}

// Tick reads the active cluster's gauges (its Serve traffic) while the
// page is on top.
func (d *Detail) Tick() tea.Cmd {
	src, name := d.E.Sess.Gauges, d.svc.Status.ActiveServiceStatus.RayClusterName
	if src == nil || name == "" {
		d.use = gauges.Cluster{}
		return nil
	}
	d.use = src.Get(d.svc.Namespace, name)
	return nil
}

// Init reads the gauges at once when the page is pushed.
func (d *Detail) Init() tea.Cmd { return d.Tick() }

// Apply follows the RayService and its serving cluster's security line.
func (d *Detail) Apply(ch *watch.Changes) {
	host.FollowInto(ch, watch.RayService, d.uid, &d.svc, &d.deleted)
	if ch.Any(watch.RayService) || ch.Any(watch.RayCluster) {
		d.sec = why.ServiceSecurity(d.svc, d.activeCluster())
	}
	d.Clamp()
}

// Update opens the Serve controller's log (E) or scrolls the page.
func (d *Detail) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	if key.Matches(msg, d.E.KM.Explain) { // the Serve controller log
		ex, ok := raydash.ExplainRayService(d.svc)
		return true, raylogs.ExplainKey(d.E, d.svc.Namespace, ex, ok, "the RayService has no RayCluster yet, so no Serve controller log")
	}
	if !widgets.ScrollKey(d.E.KM, msg, &d.offset, widgets.FromTop, d.H, len(d.lines())) {
		return false, nil
	}
	d.Clamp()
	return true, nil
}

// Clamp keeps the scroll offset within the page's lines.
func (d *Detail) Clamp() {
	d.offset = format.ClampInt(d.offset, 0, max(len(d.lines())-d.H, 0))
}

// View is the window of the page's lines at the scroll offset.
func (d *Detail) View() string {
	ls := d.lines()
	end := min(d.offset+max(d.H, 1), len(ls))
	return strings.Join(ls[d.offset:end], "\n")
}

// lines renders the whole page; the view shows a window of it.
func (d *Detail) lines() []string {
	st, s, now := d.E.St, d.svc, d.E.Now()
	lbl := func(k string) string { return st.Label.Render(k + ":") }
	status := format.ServiceStatus(s)
	upgrade := "-"
	if us := s.Spec.UpgradeStrategy; us != nil && us.Type != nil {
		upgrade = string(*us.Type)
	}
	// The page scrolls: the Why block shows every cause with its details.
	out := widgets.WhyLines(st, d.E.Why.Get(d.uid), d.W, 1<<20, true)
	out = append(out,
		fmt.Sprintf("%s %s  %s %d  %s %s  %s %s", lbl("Status"), st.Class(styles.ClassOf(status)).Render(status),
			lbl("Serve endpoints"), s.Status.NumServeEndpoints, lbl("Age"), format.Age(now, s.CreationTimestamp.Time),
			lbl("Upgrade strategy"), upgrade))
	out = append(out, format.Wrap(lbl("Conditions"), strings.Split(format.Conditions(s.Status.Conditions), "  "), d.W)...)
	out = append(out, lbl("Security")+" "+format.Security(st, d.sec))
	if l := widgets.ServeLine(st, d.use, d.W); l != "" {
		out = append(out, l)
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, string(rayv1.UpgradeInProgress)); c != nil && c.Status == "True" {
		p := s.Status.PendingServiceStatus
		r, t := format.AppsReady(p)
		_, cs := d.cluster(p)
		line := fmt.Sprintf("in progress to %s: apps %d/%d running, workers %d/%d",
			format.OrNone(p.RayClusterName), r, t, cs.AvailableWorkerReplicas, cs.DesiredWorkerReplicas)
		out = append(out, lbl("Upgrade")+" "+st.Class(styles.Pending).Render(line))
		if c.Message != "" {
			out = append(out, "  "+c.Message)
		}
	}
	// The split of an incremental upgrade, its countdown moving with the
	// page's clock (rayapi/status: raydar get's TRAFFIC says the same).
	if u, ok := rstatus.IncrementalUpgrade(s); ok {
		out = append(out, format.Wrap(lbl("Traffic"), strings.Fields(u.Words(now)), d.W)...)
	}
	out = append(out, "")
	out = append(out, d.clusterLines("Active cluster", s.Status.ActiveServiceStatus)...)
	out = append(out, "")
	out = append(out, d.clusterLines("Pending cluster", s.Status.PendingServiceStatus)...)
	if hb := d.historyBlock(); len(hb) > 0 {
		out = append(append(out, ""), hb...)
	}
	return out
}

func (d *Detail) clusterLines(title string, ss rayv1.RayServiceStatus) []string {
	st := d.E.St
	if ss.RayClusterName == "" {
		return []string{st.Section.Render(title+":") + " " + st.Faint.Render("none")}
	}
	state, cs := d.cluster(ss)
	r, t := format.AppsReady(ss)
	head := fmt.Sprintf("%s %s  %s, workers %d/%d, apps %d/%d", st.Section.Render(title+":"), ss.RayClusterName,
		format.OrNone(state), cs.AvailableWorkerReplicas, cs.DesiredWorkerReplicas, r, t)
	out := []string{head}
	if len(ss.Applications) == 0 {
		return append(out, st.Faint.Render("  no applications"))
	}
	out = append(out, st.TableHeader.Render(fmt.Sprintf("  %-30s %-14s %s", "APPLICATION / DEPLOYMENT", "STATUS", "MESSAGE")))
	for _, name := range slices.Sorted(maps.Keys(ss.Applications)) {
		app := ss.Applications[name]
		out = append(out, st.Class(styles.ClassOf(app.Status)).Render(
			fmt.Sprintf("  %-30s %-14s %s", name, format.OrNone(app.Status), format.OneLine(app.Message))))
		for _, dn := range slices.Sorted(maps.Keys(app.Deployments)) {
			dep := app.Deployments[dn]
			out = append(out, st.Class(styles.ClassOf(dep.Status)).Render(
				fmt.Sprintf("    %-28s %-14s %s", dn, format.OrNone(dep.Status), format.OneLine(dep.Message))))
		}
	}
	return out
}

// cluster returns the state and status of a service's cluster: from the
// store when the RayCluster is there, else the copy in the service status.
func (d *Detail) cluster(ss rayv1.RayServiceStatus) (string, rayv1.RayClusterStatus) {
	if o, ok := d.E.Store.Find(watch.RayCluster, d.svc.Namespace, ss.RayClusterName); ok && ss.RayClusterName != "" {
		rc := o.(*rayv1.RayCluster)
		return format.ClusterStatus(rc), rc.Status
	}
	return string(ss.RayClusterStatus.State), ss.RayClusterStatus
}

// ClustersShown are the RayService's active and pending RayClusters,
// whose causes the service's Why block states as well (their autoscaler
// access is asked while the page is on top).
func (d *Detail) ClustersShown() []*rayv1.RayCluster {
	var out []*rayv1.RayCluster
	st := d.svc.Status
	for _, name := range []string{st.ActiveServiceStatus.RayClusterName, st.PendingServiceStatus.RayClusterName} {
		if o, ok := d.E.Store.Find(watch.RayCluster, d.svc.Namespace, name); ok && name != "" {
			out = append(out, o.(*rayv1.RayCluster))
		}
	}
	return out
}

// activeCluster is the RayService's active RayCluster in the store, nil
// when it has none yet.
func (d *Detail) activeCluster() *rayv1.RayCluster {
	name := d.svc.Status.ActiveServiceStatus.RayClusterName
	if name == "" {
		return nil
	}
	if o, ok := d.E.Store.Find(watch.RayCluster, d.svc.Namespace, name); ok {
		return o.(*rayv1.RayCluster)
	}
	return nil
}

// historyBlock is the page's History block (on the scrolling page: up to
// ten entries, not padded).
func (d *Detail) historyBlock() []string {
	return d.E.Hist.Block(d.E.St, d.E, d.uid, d.W, 10, false)
}

// HistoryRef is the RayService as kube/history files it.
func (d *Detail) HistoryRef() history.Ref {
	return host.RefOf(rayv1.KindRayService, d.svc.Namespace, d.svc.Name, d.uid)
}
