package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

// textView scrolls a block of lines. Without wrap, long lines are cut at
// the width; with wrap they continue on the next rows. The top is a line
// index, so toggling wrap keeps the same line at the top.
type textView struct {
	lines []string
	top   int
	wrap  bool
	w, h  int
}

func (v *textView) setLines(ls []string) {
	v.lines = ls
	v.clamp()
}

func (v *textView) clamp() { v.top = clampInt(v.top, 0, max(len(v.lines)-v.h, 0)) }

// key scrolls or toggles wrap; it reports whether it used the key.
func (v *textView) key(km *keys.KeyMap, msg tea.KeyPressMsg) bool {
	page := max(v.h-1, 1)
	switch {
	case key.Matches(msg, km.Up):
		v.top--
	case key.Matches(msg, km.Down):
		v.top++
	case key.Matches(msg, km.PageUp):
		v.top -= page
	case key.Matches(msg, km.PageDown):
		v.top += page
	case key.Matches(msg, km.Top):
		v.top = 0
	case key.Matches(msg, km.Bottom):
		v.top = len(v.lines)
	case key.Matches(msg, km.Wrap):
		v.wrap = !v.wrap
	default:
		return false
	}
	v.clamp()
	return true
}

// rows renders lines[from:] into at most h rows of at most w cells.
func renderRows(lines []string, from, w, h int, wrap bool) []string {
	out := make([]string, 0, h)
	for i := from; i < len(lines) && len(out) < h; i++ {
		l := lines[i]
		if !wrap {
			if ansi.StringWidth(l) > w {
				l = ansi.Truncate(l, w, "")
			}
			out = append(out, l)
			continue
		}
		for _, r := range strings.Split(ansi.Wrap(l, max(w, 1), ""), "\n") {
			if len(out) == h {
				break
			}
			out = append(out, r)
		}
	}
	return out
}

func (v *textView) view() string {
	return strings.Join(renderRows(v.lines, v.top, v.w, v.h, v.wrap), "\n")
}

// describePage shows one object: a readable summary, its recent Events and
// its YAML (without managedFields). It follows the object in the store.
type describePage struct {
	e       *env
	wk      watch.Kind
	uid     types.UID
	obj     client.Object
	deleted bool
	tv      textView
}

func newDescribePage(e *env, obj client.Object) *describePage {
	wk, _ := watch.KindOf(obj)
	p := &describePage{e: e, wk: wk, uid: watch.Key(obj), obj: obj}
	p.refresh()
	return p
}

func (p *describePage) refresh() {
	if o, ok := p.e.store.Get(p.wk, p.uid); ok {
		p.obj = o
	}
	p.tv.setLines(describeLines(p.e.st, p.obj, p.e.store.EventsFor(p.uid), p.e.now()))
}

func (p *describePage) kind() ViewKind { return DescribeView }
func (p *describePage) title() string {
	t := "Describe " + kindName(p.obj) + " " + p.obj.GetNamespace() + "/" + p.obj.GetName()
	if p.deleted {
		t += " (deleted)"
	}
	return t
}
func (p *describePage) crumb() string       { return "describe " + p.obj.GetName() }
func (p *describePage) setSize(w, h int)    { p.tv.w, p.tv.h = w, h; p.tv.clamp() }
func (p *describePage) setNamespace(string) {}
func (p *describePage) view() string        { return p.tv.view() }
func (p *describePage) open() page          { return nil }
func (p *describePage) canOpen() bool       { return false }
func (p *describePage) tbl() tabler         { return nil }
func (p *describePage) keys() []key.Binding { return []key.Binding{p.e.km.Wrap} }
func (p *describePage) target() Target {
	return Target{View: DescribeView, Namespace: p.obj.GetNamespace(), Selected: p.obj, Owner: p.obj}
}

func (p *describePage) update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	return p.tv.key(p.e.km, msg), nil
}

func (p *describePage) apply(ch *watch.Changes) {
	for _, o := range ch.Deleted[p.wk] {
		if watch.Key(o) == p.uid {
			p.deleted = true
		}
	}
	if ch.Touches(uidSet{p.uid: true}) {
		p.refresh()
	}
}

// kindName is the Kind of a typed object.
func kindName(o client.Object) string {
	switch o.(type) {
	case *rayv1.RayCluster:
		return rayv1.KindRayCluster
	case *rayv1.RayJob:
		return rayv1.KindRayJob
	case *rayv1.RayService:
		return rayv1.KindRayService
	case *corev1.Pod:
		return "Pod"
	case *corev1.Event:
		return "Event"
	}
	return fmt.Sprintf("%T", o)
}

// objectYAML is the object as kubectl get -o yaml shows it, without
// managedFields.
func objectYAML(o client.Object) (string, error) {
	c, ok := o.DeepCopyObject().(client.Object)
	if !ok {
		return "", fmt.Errorf("cannot copy %T", o)
	}
	c.SetManagedFields(nil)
	switch c.(type) {
	case *corev1.Pod, *corev1.Event:
		c.GetObjectKind().SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kindName(o)))
	default:
		c.GetObjectKind().SetGroupVersionKind(rayv1.GroupVersion.WithKind(kindName(o)))
	}
	b, err := yaml.Marshal(c)
	return string(b), err
}

// describeLines builds the page: summary, Events, YAML.
func describeLines(st *styles.Styles, o client.Object, events []*corev1.Event, now time.Time) []string {
	var out []string
	field := func(k, v string) {
		out = append(out, st.Label.Render(fmt.Sprintf("%-16s", k+":"))+oneLine(v))
	}
	sub := func(s string) { out = append(out, "  "+oneLine(s)) }
	section := func(s string) { out = append(out, "", st.Section.Render(s)) }

	field("Name", o.GetName())
	field("Namespace", o.GetNamespace())
	field("Kind", kindName(o))
	field("Labels", kvs(o.GetLabels()))
	field("Annotations", kvs(o.GetAnnotations()))
	created := o.GetCreationTimestamp()
	field("Created", metaAge(now, &created)+" ago ("+created.UTC().Format(time.RFC3339)+")")
	if refs := o.GetOwnerReferences(); len(refs) > 0 {
		var os []string
		for _, r := range refs {
			os = append(os, r.Kind+" "+r.Name)
		}
		field("Owned by", strings.Join(os, ", "))
	}
	if dt := o.GetDeletionTimestamp(); dt != nil {
		field("Deleting", "since "+metaAge(now, dt)+" (finalizers: "+orNone(strings.Join(o.GetFinalizers(), ", "))+")")
	}
	conds := func(cs []metav1.Condition) {
		if len(cs) == 0 {
			field("Conditions", none)
			return
		}
		out = append(out, st.Label.Render("Conditions:"))
		for _, c := range cs {
			s := fmt.Sprintf("%s=%s", c.Type, c.Status)
			if c.Reason != "" {
				s += " (" + c.Reason + ")"
			}
			if c.Message != "" {
				s += ": " + c.Message
			}
			sub(s)
		}
	}

	switch x := o.(type) {
	case *rayv1.RayCluster:
		s := x.Status
		field("State", clusterStatus(x))
		field("Ray version", orNone(x.Spec.RayVersion))
		field("Suspended", fmt.Sprint(x.Spec.IsSuspended()))
		field("Autoscaling", onOff(x.Spec.IsAutoscalingEnabled()))
		field("Workers", fmt.Sprintf("%d/%d available, %d ready (min %d, max %d)", s.AvailableWorkerReplicas,
			s.DesiredWorkerReplicas, s.ReadyWorkerReplicas, s.MinWorkerReplicas, s.MaxWorkerReplicas))
		field("Resources", fmt.Sprintf("%s CPU, %s memory, %s GPU", qty(s.DesiredCPU), qty(s.DesiredMemory), qty(s.DesiredGPU)))
		field("Head", fmt.Sprintf("pod IP %s, service %s (%s)", orNone(s.Head.PodIP), orNone(s.Head.ServiceName), orNone(s.Head.ServiceIP)))
		out = append(out, st.Label.Render("Worker groups:"))
		if len(x.Spec.WorkerGroupSpecs) == 0 {
			sub(none)
		}
		for i := range x.Spec.WorkerGroupSpecs {
			g := &x.Spec.WorkerGroupSpecs[i]
			line := fmt.Sprintf("%-12s min %s / replicas %s / max %s, %d host(s) per replica", g.GroupName,
				i32(g.MinReplicas), i32(g.Replicas), i32(g.MaxReplicas), g.Hosts())
			if g.IsSuspended() {
				line += ", suspended"
			}
			if n := len(g.ScaleStrategy.WorkersToDelete); n > 0 {
				line += fmt.Sprintf(", %d to delete", n)
			}
			sub(line)
		}
		conds(s.Conditions)
	case *rayv1.RayJob:
		s := x.Status
		field("Job status", orNone(string(s.JobStatus)))
		field("Deployment", orNone(string(s.JobDeploymentStatus)))
		field("Cluster", orNone(s.RayClusterName))
		field("Job ID", orNone(s.JobId))
		field("Mode", orNone(string(x.Spec.SubmissionMode)))
		field("Entrypoint", orNone(x.Spec.Entrypoint))
		field("Start", metaAge(now, s.StartTime))
		field("End", metaAge(now, s.EndTime))
		field("Duration", jobDuration(now, x))
		field("Suspend", fmt.Sprint(x.Spec.Suspend))
		field("Shutdown after", fmt.Sprint(x.Spec.ShutdownAfterJobFinishes))
		field("Reason", orNone(string(s.Reason)))
		field("Message", orNone(s.Message))
		if v := x.Annotations[rayv1.StopRequestedAnnotationKey]; v != "" {
			field("Stop requested", v)
		}
		conds(s.Conditions)
	case *rayv1.RayService:
		s := x.Status
		field("Status", serviceStatus(x))
		field("Suspend", fmt.Sprint(x.Spec.Suspend))
		field("Active cluster", orNone(s.ActiveServiceStatus.RayClusterName))
		field("Pending cluster", orNone(s.PendingServiceStatus.RayClusterName))
		field("Endpoints", fmt.Sprint(s.NumServeEndpoints))
		for _, side := range []struct {
			name string
			ss   rayv1.RayServiceStatus
		}{{"Active apps", s.ActiveServiceStatus}, {"Pending apps", s.PendingServiceStatus}} {
			if len(side.ss.Applications) == 0 {
				continue
			}
			out = append(out, st.Label.Render(side.name+":"))
			for _, n := range sortedKeys(side.ss.Applications) {
				sub(n + " " + orNone(side.ss.Applications[n].Status))
			}
		}
		conds(s.Conditions)
	case *corev1.Pod:
		ready, restarts := podReady(x)
		field("Status", podStatus(x))
		field("Ready", ready)
		field("Restarts", fmt.Sprint(restarts))
		field("Node", orNone(x.Spec.NodeName))
		field("IP", orNone(x.Status.PodIP))
		field("Cluster", orNone(x.Labels[rayv1.RayClusterLabelKey]))
		field("Group", orNone(x.Labels[rayv1.RayNodeGroupLabelKey]))
		field("Node type", orNone(x.Labels[rayv1.RayNodeTypeLabelKey]))
		out = append(out, st.Label.Render("Containers:"))
		cs := map[string]corev1.ContainerStatus{}
		for _, c := range x.Status.ContainerStatuses {
			cs[c.Name] = c
		}
		for _, c := range x.Spec.Containers {
			s := cs[c.Name]
			state := none
			switch {
			case s.State.Running != nil:
				state = "running"
			case s.State.Terminated != nil:
				state = "terminated (" + s.State.Terminated.Reason + ")"
			case s.State.Waiting != nil && s.State.Waiting.Reason != "":
				state = "waiting (" + s.State.Waiting.Reason + ")"
			}
			sub(fmt.Sprintf("%s  image %s, ready %t, restarts %d, %s", c.Name, orNone(c.Image), s.Ready, s.RestartCount, state))
		}
		out = append(out, st.Label.Render("Conditions:"))
		if len(x.Status.Conditions) == 0 {
			sub(none)
		}
		for _, c := range x.Status.Conditions {
			sub(fmt.Sprintf("%s=%s", c.Type, c.Status))
		}
	}

	section(fmt.Sprintf("Events (%d)", len(events)))
	if len(events) == 0 {
		out = append(out, st.Faint.Render("  none"))
	}
	for _, ev := range events {
		line := fmt.Sprintf("  %5s  %-7s  %-22s %s", age(now, watch.EventTime(ev)), ev.Type, ev.Reason, oneLine(ev.Message))
		if ev.Type == corev1.EventTypeWarning {
			line = st.Class(styles.Warn).Render(line)
		}
		out = append(out, line)
	}

	section("YAML")
	y, err := objectYAML(o)
	if err != nil {
		out = append(out, st.FlashErr.Render("error: "+err.Error()))
	} else {
		out = append(out, strings.Split(strings.TrimRight(y, "\n"), "\n")...)
	}
	return out
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// kvs formats a label or annotation map: "a=1, b=2", sorted; "-" if empty.
func kvs(m map[string]string) string {
	if len(m) == 0 {
		return none
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for i, k := range ks {
		ks[i] = k + "=" + ansi.Truncate(oneLine(m[k]), 60, "...")
	}
	return strings.Join(ks, ", ")
}
