package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/styles"
)

// serviceDetail shows one RayService: status, conditions, the active and
// pending clusters with their Serve applications and deployments, and the
// progress of an upgrade.
type serviceDetail struct {
	pageBase
	svc     *rayv1.RayService
	uid     types.UID
	deleted bool
	offset  int
}

func newServiceDetail(e *env, s *rayv1.RayService) *serviceDetail {
	return &serviceDetail{pageBase: pageBase{e: e, vk: ServiceDetailView}, svc: s, uid: watch.Key(s)}
}

func (d *serviceDetail) title() string    { return titled(rayv1.KindRayService, d.svc, d.deleted) }
func (d *serviceDetail) crumb() string    { return d.svc.Namespace + "/" + d.svc.Name }
func (d *serviceDetail) setSize(w, h int) { d.w, d.h = w, h; d.clamp() }
func (d *serviceDetail) keys() []key.Binding {
	return []key.Binding{d.e.km.Open, d.e.km.Explain}
}

func (d *serviceDetail) target() Target {
	return Target{View: ServiceDetailView, Namespace: d.svc.Namespace, Selected: d.svc, Owner: d.svc}
}

// open drills down to the active cluster (or the pending one if there is
// no active cluster yet).
func (d *serviceDetail) canOpen() bool {
	return d.svc.Status.ActiveServiceStatus.RayClusterName != "" || d.svc.Status.PendingServiceStatus.RayClusterName != ""
}

func (d *serviceDetail) open() page {
	st := d.svc.Status
	for _, name := range []string{st.ActiveServiceStatus.RayClusterName, st.PendingServiceStatus.RayClusterName} {
		if name == "" {
			continue
		}
		if o, ok := d.e.store.Find(watch.RayCluster, d.svc.Namespace, name); ok {
			return newClusterDetail(d.e, o.(*rayv1.RayCluster))
		}
	}
	return nil
}

func (d *serviceDetail) apply(ch *watch.Changes) {
	followInto(ch, watch.RayService, d.uid, &d.svc, &d.deleted)
	d.clamp()
}

func (d *serviceDetail) update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	if key.Matches(msg, d.e.km.Explain) { // the Serve controller log
		ex, ok := raydash.ExplainRayService(d.svc)
		return true, explainKey(d.svc.Namespace, ex, ok, "the RayService has no RayCluster yet, so no Serve controller log")
	}
	if !scrollKey(d.e.km, msg, &d.offset, fromTop, d.h, len(d.lines())) {
		return false, nil
	}
	d.clamp()
	return true, nil
}

func (d *serviceDetail) clamp() {
	d.offset = clampInt(d.offset, 0, max(len(d.lines())-d.h, 0))
}

func (d *serviceDetail) view() string {
	ls := d.lines()
	end := min(d.offset+max(d.h, 1), len(ls))
	return strings.Join(ls[d.offset:end], "\n")
}

func pct(p *int32) string {
	if p == nil {
		return none
	}
	return fmt.Sprintf("%d%%", *p)
}

// lines renders the whole page; the view shows a window of it.
func (d *serviceDetail) lines() []string {
	st, s, now := d.e.st, d.svc, d.e.now()
	lbl := func(k string) string { return st.Label.Render(k + ":") }
	status := serviceStatus(s)
	upgrade := "-"
	if us := s.Spec.UpgradeStrategy; us != nil && us.Type != nil {
		upgrade = string(*us.Type)
	}
	// The page scrolls: the Why block shows every cause with its details.
	out := whyLines(st, d.e.why.get(d.uid), d.w, 1<<20, true)
	out = append(out,
		fmt.Sprintf("%s %s  %s %d  %s %s  %s %s", lbl("Status"), st.Class(styles.ClassOf(status)).Render(status),
			lbl("Serve endpoints"), s.Status.NumServeEndpoints, lbl("Age"), age(now, s.CreationTimestamp.Time),
			lbl("Upgrade strategy"), upgrade))
	out = append(out, wrap(lbl("Conditions"), strings.Split(conditions(s.Status.Conditions), "  "), d.w)...)
	if c := meta.FindStatusCondition(s.Status.Conditions, string(rayv1.UpgradeInProgress)); c != nil && c.Status == "True" {
		p := s.Status.PendingServiceStatus
		r, t := appsReady(p)
		_, cs := d.cluster(p)
		line := fmt.Sprintf("in progress to %s: apps %d/%d running, workers %d/%d",
			orNone(p.RayClusterName), r, t, cs.AvailableWorkerReplicas, cs.DesiredWorkerReplicas)
		if p.TrafficRoutedPercent != nil || p.TargetCapacity != nil {
			line += fmt.Sprintf(", traffic %s, target capacity %s", pct(p.TrafficRoutedPercent), pct(p.TargetCapacity))
		}
		out = append(out, lbl("Upgrade")+" "+st.Class(styles.Pending).Render(line))
		if c.Message != "" {
			out = append(out, "  "+c.Message)
		}
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

func (d *serviceDetail) clusterLines(title string, ss rayv1.RayServiceStatus) []string {
	st := d.e.st
	if ss.RayClusterName == "" {
		return []string{st.Section.Render(title+":") + " " + st.Faint.Render("none")}
	}
	state, cs := d.cluster(ss)
	r, t := appsReady(ss)
	head := fmt.Sprintf("%s %s  %s, workers %d/%d, apps %d/%d", st.Section.Render(title+":"), ss.RayClusterName,
		orNone(state), cs.AvailableWorkerReplicas, cs.DesiredWorkerReplicas, r, t)
	if ss.TrafficRoutedPercent != nil || ss.TargetCapacity != nil {
		head += fmt.Sprintf(", traffic %s, capacity %s", pct(ss.TrafficRoutedPercent), pct(ss.TargetCapacity))
	}
	out := []string{head}
	if len(ss.Applications) == 0 {
		return append(out, st.Faint.Render("  no applications"))
	}
	out = append(out, st.TableHeader.Render(fmt.Sprintf("  %-30s %-14s %s", "APPLICATION / DEPLOYMENT", "STATUS", "MESSAGE")))
	for _, name := range sortedKeys(ss.Applications) {
		app := ss.Applications[name]
		out = append(out, st.Class(styles.ClassOf(app.Status)).Render(
			fmt.Sprintf("  %-30s %-14s %s", name, orNone(app.Status), oneLine(app.Message))))
		for _, dn := range sortedKeys(app.Deployments) {
			dep := app.Deployments[dn]
			out = append(out, st.Class(styles.ClassOf(dep.Status)).Render(
				fmt.Sprintf("    %-28s %-14s %s", dn, orNone(dep.Status), oneLine(dep.Message))))
		}
	}
	return out
}

// cluster returns the state and status of a service's cluster: from the
// store when the RayCluster is there, else the copy in the service status.
func (d *serviceDetail) cluster(ss rayv1.RayServiceStatus) (string, rayv1.RayClusterStatus) {
	if o, ok := d.e.store.Find(watch.RayCluster, d.svc.Namespace, ss.RayClusterName); ok && ss.RayClusterName != "" {
		rc := o.(*rayv1.RayCluster)
		return clusterStatus(rc), rc.Status
	}
	return string(ss.RayClusterStatus.State), ss.RayClusterStatus
}

// wrap lays out label followed by parts, as many parts per line as fit in
// width; continuation lines are indented.
func wrap(label string, parts []string, width int) []string {
	var out []string
	line, lw := label, ansi.StringWidth(label)
	for _, p := range parts {
		pw := ansi.StringWidth(p)
		if lw+1+pw > width && lw > 2 && line != label {
			out = append(out, line)
			line, lw = "  ", 2
		}
		line += " " + p
		lw += 1 + pw
	}
	return append(out, line)
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
