package cluster

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/gauges"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/pages/raylogs"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/table"
	"github.com/raydar/raydar/tui/widgets"
)

// maxDetailEvents is how many recent Events the cluster detail shows.
const maxDetailEvents = 5

// treeRow is a row of the cluster detail: a group (head or worker group)
// or one of its pods.
type treeRow struct {
	id    string
	group string // sort key of the group, e.g. "001"
	name  string // group name
	head  bool
	spec  *rayv1.WorkerGroupSpec // worker groups
	pod   *podview.Pod           // pod rows
	ready int                    // group rows: ready pods
	pods  int                    // group rows: pods
}

// Detail shows one RayCluster: a summary, its head and worker groups
// with min/desired/max/ready and their pods beneath, and its recent Events.
type Detail struct {
	host.Base
	rc      *rayv1.RayCluster
	uid     types.UID
	deleted bool
	t       *table.Model[treeRow]
	events  []*corev1.Event
	podUIDs host.UIDSet
	// Ray's view of the cluster (Session.Capacity), polled on ticks while
	// the page is on top; rayNodes maps pod names to their Ray node.
	cap      *dashboard.Capacity
	capErr   error
	capOK    bool
	rayNodes map[string]*dashboard.RayNode
	// plans are what the autoscaler would do next, per worker group, in
	// rayapi/why's words (why.GroupPlans).
	plans map[string]string
	next  bool // the AUTOSCALER NEXT column is shown
	// sec is the cluster's security line (why.SecurityOf), kept with the
	// rows so that a frame only renders it.
	sec why.Security
	// use is Ray's gauges of the cluster (Session.Gauges), read on ticks
	// while the page is on top: the CPU, MEM, GPU and GRAM columns and the
	// Use block's sparklines.
	use gauges.Cluster
}

// newDetail is the detail page of rc, in e.
func newDetail(e *host.Env, rc *rayv1.RayCluster) *Detail {
	d := &Detail{Base: host.Base{E: e, VK: DetailView}, rc: rc, uid: watch.Key(rc)}
	cols := []table.Column{
		{Title: "NAME", Width: 36, Grow: true, Min: 30, Sort: table.ByName},
		{Title: "MIN", Width: 3, Right: true},
		{Title: "DESIRED", Width: 7, Right: true},
		{Title: "MAX", Width: 3, Right: true},
		{Title: "READY", Width: 5, Right: true},
		{Title: "PHASE", Width: 11, Sort: table.ByStatus},
		{Title: "RESTARTS", Width: 8, Right: true, Drop: 2},
		{Title: "IP", Width: 15, Drop: 3},
		{Title: "NODE", Width: 12, Grow: true, Min: 6, Drop: 4},
		format.AgeColumn(),
	}
	if d.next = rc.Spec.IsAutoscalingEnabled(); d.next {
		// What the autoscaler would do next with a worker group
		// (why.GroupPlans); without autoscaling, nothing but the user
		// scales, and the column is left out.
		cols = append(cols, table.Column{Title: "AUTOSCALER NEXT", Width: 40, Grow: true, Min: 16, Drop: 1})
	}
	if e.Sess.Capacity != nil { // the pod's Ray node: busy, idle or dead
		cols = append(cols, table.Column{Title: "RAY", Width: 4, Drop: 5})
	}
	if e.Sess.Gauges != nil { // what the pod's Ray node uses (kube/gauges)
		cols = append(cols, table.Column{Title: "CPU", Width: 4, Right: true, Drop: 1},
			table.Column{Title: "MEM", Width: 11, Right: true, Drop: 3},
			table.Column{Title: "GPU", Width: 8, Drop: 1},
			table.Column{Title: "GRAM", Width: 13, Right: true, Drop: 3})
	}
	spec := table.Spec[treeRow]{
		Columns: cols,
		ID:      func(r treeRow) string { return r.id },
		Meta: func(r treeRow) table.Meta {
			if r.pod != nil {
				m := format.ObjMeta(r.pod, format.PodStatus(r.pod))
				m.Group = r.group + "1"
				return m
			}
			m := table.Meta{Name: r.name, Group: r.group + "0", Class: styles.OK}
			if r.ready < d.desired(r) {
				m.Class = styles.Pending
			}
			return m
		},
		Cells: func(r treeRow) []string {
			if p := r.pod; p != nil {
				ready, restarts := format.PodReady(p)
				return d.cells([]string{"  " + p.Name, "", "", "", ready, format.PodStatus(p), fmt.Sprint(restarts),
					format.OrNone(p.Status.PodIP), format.OrNone(p.Spec.NodeName), ""}, "", d.rayNodeOf(p.Name), d.useCells(p.Name)...)
			}
			if r.head {
				return d.cells([]string{"head", "1", "1", "1", fmt.Sprintf("%d/1", r.ready), "", "", "", "", ""}, "", "")
			}
			if r.spec == nil { // pods of a group the spec no longer has
				return d.cells([]string{r.name + " (not in spec)", "", "", "", fmt.Sprint(r.ready), "", "", "", "", ""}, "", "")
			}
			s := r.spec
			name := "group " + s.GroupName
			if s.Suspend != nil && *s.Suspend {
				name += " (suspended)"
			}
			return d.cells([]string{name, format.I32(s.MinReplicas), fmt.Sprint(d.desired(r)), format.I32(s.MaxReplicas),
				fmt.Sprintf("%d/%d", r.ready, d.desired(r)), "", "", "", "", ""}, d.plans[s.GroupName], "")
		},
		Live: func(r treeRow, now time.Time, c []string) {
			if r.pod != nil {
				c[9] = format.Age(now, r.pod.CreationTimestamp.Time)
			}
		},
		Markable: func(r treeRow) bool { return r.isWorker() },
	}
	d.t = table.New(spec, e.St, e.KM, e.Now)
	d.refresh()
	return d
}

// cells ends a row's cells with the AUTOSCALER NEXT cell when that column
// is shown, then the RAY cell and the use cells when theirs are.
func (d *Detail) cells(c []string, next, ray string, use ...string) []string {
	if d.next {
		c = append(c, next)
	}
	if d.E.Sess.Capacity != nil {
		c = append(c, ray)
	}
	if d.E.Sess.Gauges != nil {
		if use == nil {
			use = []string{"", "", "", ""}
		}
		c = append(c, use...)
	}
	return c
}

// useCells are a pod's CPU, MEM, GPU and GRAM cells: "?" while unknown
// (the Use block says why), never 0.
func (d *Detail) useCells(pod string) []string {
	g, ok := d.use.Pod(pod)
	if !ok {
		return []string{gauges.Unknown, gauges.Unknown, gauges.Unknown, gauges.Unknown}
	}
	return []string{g.CPUCell(), g.MemCell(), g.GPUCell(), g.GRAMCell()}
}

// isWorker reports whether the row is a worker pod (the rows that may be
// marked for deletion).
func (r treeRow) isWorker() bool {
	return r.pod != nil && r.pod.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.WorkerNode)
}

// desired is the number of pods a group should have.
func (d *Detail) desired(r treeRow) int {
	if r.head {
		return 1
	}
	if r.spec == nil || r.spec.Replicas == nil {
		return 0
	}
	hosts := max(int(r.spec.NumOfHosts), 1)
	return int(*r.spec.Replicas) * hosts
}

// refresh rebuilds the rows and events from the store.
func (d *Detail) refresh() {
	if o, ok := d.E.Store.Get(watch.RayCluster, d.uid); ok {
		d.rc = o.(*rayv1.RayCluster)
	}
	rc := d.rc
	d.sec = why.SecurityOf(&rc.Spec)
	groups := []treeRow{{id: "group/head", group: "000", name: "head", head: true}}
	idx := map[string]int{}
	for i := range rc.Spec.WorkerGroupSpecs {
		s := &rc.Spec.WorkerGroupSpecs[i]
		idx[s.GroupName] = len(groups)
		groups = append(groups, treeRow{id: "group/" + s.GroupName, group: fmt.Sprintf("%03d", i+1), name: s.GroupName, spec: s})
	}
	var rows []treeRow
	d.podUIDs = host.UIDSet{d.uid: true}
	pods := d.E.Store.PodsOf(watch.ClusterRef{Namespace: rc.Namespace, Name: rc.Name})
	d.plans = map[string]string{}
	if d.next { // no AUTOSCALER NEXT column, no plans to make
		for _, p := range why.GroupPlans(why.ClusterInput{Cluster: rc, Pods: pods, Capacity: d.cap}) {
			d.plans[p.Group] = p.String()
		}
	}
	for _, p := range pods {
		d.podUIDs[watch.Key(p)] = true
		gi := 0
		if p.Labels[rayv1.RayNodeTypeLabelKey] != string(rayv1.HeadNode) {
			g := p.Labels[rayv1.RayNodeGroupLabelKey]
			i, ok := idx[g]
			if !ok {
				i = len(groups)
				idx[g] = i
				groups = append(groups, treeRow{id: "group/" + g, group: fmt.Sprintf("%03d", i), name: g})
			}
			gi = i
		}
		groups[gi].pods++
		if format.PodIsReady(p) {
			groups[gi].ready++
		}
		rows = append(rows, treeRow{id: string(watch.Key(p)), group: groups[gi].group, pod: p})
	}
	d.t.Set(append(groups, rows...))
	uids := make([]types.UID, 0, len(d.podUIDs))
	for u := range d.podUIDs {
		uids = append(uids, u)
	}
	slices.Sort(uids) // Events at the same time keep one order
	ev := d.E.Store.EventsFor(uids...)
	if len(ev) > maxDetailEvents {
		ev = ev[len(ev)-maxDetailEvents:]
	}
	d.events = ev
	d.layout()
}

// Title is "RayCluster ns/name", "(deleted)" once it is gone.
func (d *Detail) Title() string { return host.Titled(rayv1.KindRayCluster, d.rc, d.deleted) }

// Crumb is "ns/name".
func (d *Detail) Crumb() string { return d.rc.Namespace + "/" + d.rc.Name }

// Table is the groups and pods table.
func (d *Detail) Table() host.Tabler { return d.t }

// Keys is L, the Ray log browser of the selected pod's node.
func (d *Detail) Keys() []key.Binding {
	return []key.Binding{d.E.KM.RayLogs}
}

// SetSize records the size and lays the page out again.
func (d *Detail) SetSize(w, h int) { d.W, d.H = w, h; d.layout() }

// Update refuses to mark anything but worker pods (space on the head pod
// or a group row flashes why); ranges skip such rows (Spec.Markable).
func (d *Detail) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	if key.Matches(msg, d.E.KM.RayLogs) { // the selected pod's Ray node, else the head's
		r, _ := d.t.Selected()
		return true, raylogs.ClusterKey(d.E, d.rc, r.pod)
	}
	if key.Matches(msg, d.E.KM.Mark) {
		if r, ok := d.t.Selected(); ok && !r.isWorker() {
			why := "only worker pods can be marked"
			if r.pod != nil || r.head {
				why = "the head pod cannot be marked: only worker pods can be deleted"
			}
			return true, func() tea.Msg { return host.WarnMsg(why) }
		}
	}
	return d.t.HandleKey(msg), nil
}

// rayNodeOf is the RAY cell of a pod: its Ray node alive, idle or dead
// ("" when Ray's capacity is not shown or has no node for the pod).
func (d *Detail) rayNodeOf(pod string) string {
	n := d.rayNodes[pod]
	switch {
	case n == nil:
		return ""
	case !n.Alive:
		return "dead"
	case n.Idle:
		return "idle"
	}
	return "busy"
}

// PollCapacity reads Ray's view of the cluster (on ticks, while the page
// is on top) and hands it to the diagnosis (RayInfeasible), and reads the
// cluster's gauges.
func (d *Detail) PollCapacity() {
	d.pollGauges()
	src := d.E.Sess.Capacity
	if src == nil {
		return
	}
	c, err, ok := src.Get(d.rc.Namespace, d.rc.Name)
	changed := c != d.cap || ok != d.capOK || fmt.Sprint(err) != fmt.Sprint(d.capErr)
	d.cap, d.capErr, d.capOK = c, err, ok
	d.E.Why.SetCapacity(d.uid, c)
	if changed {
		d.mapRayNodes()
		d.refresh()
	}
}

// pollGauges reads the cluster's gauges (marking it as on screen); a new
// scrape redraws the rows.
func (d *Detail) pollGauges() {
	src := d.E.Sess.Gauges
	if src == nil {
		return
	}
	u := src.Get(d.rc.Namespace, d.rc.Name)
	changed := !u.At.Equal(d.use.At) || u.Done != d.use.Done
	d.use = u
	if changed {
		d.E.Why.SetGPUs(d.uid, gpuGauges(u, src, d.E.Now()))
		d.refresh()
	}
}

// gpuGauges is what the diagnosis reads of the cluster's GPUs (its
// GPUsIdle cause); nil before any GPU reported.
func gpuGauges(u gauges.Cluster, src host.GaugeSource, now time.Time) *why.GPUGauges {
	if len(u.GPUs) == 0 {
		return nil
	}
	g := &why.GPUGauges{BelowPct: src.IdleBelowPct(), IdleFor: src.IdleFor()}
	for _, x := range u.GPUs {
		g.GPUs = append(g.GPUs, why.GPUReading{Pod: x.Pod, Index: x.Index, UtilPct: x.UtilPct, Below: x.IdleFor(now).Truncate(time.Minute)})
	}
	return g
}

// useLines is the Use block (widgets.UseLines); nothing without a gauge
// source.
func (d *Detail) useLines() []string {
	if d.E.Sess.Gauges == nil {
		return nil
	}
	return widgets.UseLines(d.E.St, d.use, d.W)
}

// ClustersShown is the page's cluster (its autoscaler access is asked
// while the page is on top); none once it is deleted.
func (d *Detail) ClustersShown() []*rayv1.RayCluster {
	if d.deleted {
		return nil
	}
	return []*rayv1.RayCluster{d.rc}
}

// Init polls Ray's capacity at once when the page is pushed, not a tick
// later.
func (d *Detail) Init() tea.Cmd { d.PollCapacity(); return nil }

// mapRayNodes matches Ray's nodes to the cluster's pods (RayNode.Pod, or
// by IP).
func (d *Detail) mapRayNodes() {
	d.rayNodes = nil
	if d.cap == nil {
		return
	}
	byIP := map[string]string{}
	for _, p := range d.E.Store.PodsOf(watch.ClusterRef{Namespace: d.rc.Namespace, Name: d.rc.Name}) {
		if p.Status.PodIP != "" {
			byIP[p.Status.PodIP] = p.Name
		}
	}
	d.rayNodes = map[string]*dashboard.RayNode{}
	for i := range d.cap.Nodes {
		n := &d.cap.Nodes[i]
		pod := n.Pod // mapped by the poller (Capacity.MapPods), else here
		if pod == "" {
			pod = byIP[n.IP]
		}
		if pod != "" {
			if old := d.rayNodes[pod]; old == nil || !old.Alive { // an alive node wins over a dead one at the same IP
				d.rayNodes[pod] = n
			}
		}
	}
}

const summaryLines = 4

func (d *Detail) eventLines() int { return 1 + max(len(d.events), 1) + d.E.Hist.Height() }

// capLines is the "Ray" block: shown when the session has a capacity
// source.
func (d *Detail) capLines() []string {
	if d.E.Sess.Capacity == nil {
		return nil
	}
	return widgets.CapacityLines(d.E.St, d.cap, d.capErr, d.capOK, d.W)
}

// minTableRows is what the cluster detail keeps for its table (header,
// head, a group, a pod) however long the Why block is.
const minTableRows = 4

// whyBlock is the Why block; capN is len(d.capLines()), which the caller
// has already rendered.
func (d *Detail) whyBlock(capN int) []string {
	cs := d.E.Why.Get(d.uid)
	rest := summaryLines + capN + d.eventLines() + minTableRows
	return widgets.WhyLines(d.E.St, cs, d.W, widgets.WhyBudget(cs, d.H, rest), false)
}

func (d *Detail) layout() {
	capN := len(d.capLines()) + len(d.useLines())
	top := summaryLines + len(d.whyBlock(capN)) + capN
	d.t.SetSize(d.W, max(d.H-top-d.eventLines(), 3))
}

// relayout follows a change of the causes or of Ray's capacity.
func (d *Detail) relayout() { d.layout() }

// Apply follows the RayCluster and lists its groups and pods again when a
// change touches it or its pods.
func (d *Detail) Apply(ch *watch.Changes) {
	_, touched := host.Follow(ch, watch.RayCluster, d.uid)
	d.deleted = d.deleted || touched
	if ch.Touches(d.podUIDs) {
		touched = true
	}
	if !touched {
		for _, o := range append(ch.Upserted[watch.Pod], ch.Deleted[watch.Pod]...) {
			if o.GetNamespace() == d.rc.Namespace && o.GetLabels()[rayv1.RayClusterLabelKey] == d.rc.Name {
				touched = true
				break
			}
		}
	}
	if touched {
		d.mapRayNodes()
		d.refresh()
	}
	d.layout() // the Why block may have changed with the store
}

// Target is the cluster with the selected pod (or group) and the marked
// pods, for the actions.
func (d *Detail) Target() host.Target {
	t := host.Target{View: DetailView, Namespace: d.rc.Namespace, Owner: d.rc}
	if r, ok := d.t.Selected(); ok {
		if r.pod != nil {
			t.Selected = r.pod
			t.Group = r.pod.Labels[rayv1.RayNodeGroupLabelKey]
		} else {
			t.Group = r.name
		}
	}
	for _, r := range d.t.Marked() {
		if r.pod != nil {
			t.Marked = append(t.Marked, r.pod)
		}
	}
	return t
}

// View is the Why block, the summary, Ray's capacity, the groups and pods
// table, the recent Events and the History block.
func (d *Detail) View() string {
	st, rc, now := d.E.St, d.rc, d.E.Now()
	s := rc.Status
	lbl := func(k string) string { return st.Label.Render(k + ":") }
	status := format.ClusterStatus(rc)
	l1 := fmt.Sprintf("%s %s  %s %d/%d available, %d ready (min %d, max %d)  %s %s",
		lbl("State"), st.Class(styles.ClassOf(status)).Render(status),
		lbl("Workers"), s.AvailableWorkerReplicas, s.DesiredWorkerReplicas, s.ReadyWorkerReplicas,
		s.MinWorkerReplicas, s.MaxWorkerReplicas, lbl("Age"), format.Age(now, rc.CreationTimestamp.Time))
	l2 := fmt.Sprintf("%s %s CPU, %s memory, %s GPU  %s %s  %s %s",
		lbl("Desired"), format.Qty(s.DesiredCPU), format.Qty(s.DesiredMemory), format.Qty(s.DesiredGPU),
		lbl("Head"), format.OrNone(s.Head.PodIP), lbl("Ray"), format.OrNone(rc.Spec.RayVersion))
	l3 := lbl("Conditions") + " " + format.Conditions(s.Conditions)
	l4 := lbl("Security") + " " + format.Security(st, d.sec)
	var b strings.Builder
	capl := append(d.capLines(), d.useLines()...)
	for _, l := range d.whyBlock(len(capl)) {
		b.WriteString(l + "\n")
	}
	b.WriteString(l1 + "\n" + l2 + "\n" + l3 + "\n" + l4 + "\n")
	for _, l := range capl {
		b.WriteString(l + "\n")
	}
	b.WriteString(d.t.View())
	b.WriteString("\n" + st.Section.Render("Events"))
	if len(d.events) == 0 {
		b.WriteString("\n" + st.Faint.Render("  none"))
	}
	for _, ev := range d.events {
		obj := ev.InvolvedObject.Name
		if ev.InvolvedObject.Kind != rayv1.KindRayCluster {
			obj = strings.ToLower(ev.InvolvedObject.Kind) + "/" + obj
		} else {
			obj = "raycluster"
		}
		line := fmt.Sprintf("  %5s  %-7s  %-22s %-24s %s", format.Age(now, watch.EventTime(ev)), ev.Type, ev.Reason, obj,
			strings.ReplaceAll(ev.Message, "\n", " "))
		if ev.Type == corev1.EventTypeWarning {
			line = st.Class(styles.Warn).Render(line)
		}
		b.WriteString("\n" + line)
	}
	for _, l := range d.historyBlock() {
		b.WriteString("\n" + l)
	}
	return b.String()
}

// historyBlock is the page's History block (fixed height).
func (d *Detail) historyBlock() []string {
	return d.E.Hist.Block(d.E.St, d.E, d.uid, d.W, host.HistoryRows, true)
}

// HistoryRef is the RayCluster as kube/history files it.
func (d *Detail) HistoryRef() history.Ref {
	return host.RefOf(rayv1.KindRayCluster, d.rc.Namespace, d.rc.Name, d.uid)
}
