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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/kube/redact"
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/styles"
)

// describePage shows one object: a readable summary, its recent Events and
// its YAML (without managedFields). It follows the object in the store.
type describePage struct {
	pageBase
	wk      watch.Kind
	uid     types.UID
	obj     client.Object
	deleted bool
	tv      textView
	// full is the pod read whole from the API server for the YAML (the
	// cache keeps pods trimmed); fetching until it arrives, fullErr if the
	// GET failed.
	full     client.Object
	fetching bool
	fullErr  error
}

// describeFullMsg delivers the whole object a describe page asked for.
type describeFullMsg struct {
	p   *describePage
	obj client.Object
	err error
}

func newDescribePage(e *env, obj client.Object) *describePage {
	wk, _ := watch.KindOf(obj)
	p := &describePage{pageBase: pageBase{e: e, vk: DescribeView}, wk: wk, uid: watch.Key(obj), obj: obj}
	_, isPod := obj.(*corev1.Pod)
	p.fetching = isPod && e.sess.Get != nil
	p.refresh()
	return p
}

// init GETs a pod whole for the YAML.
func (p *describePage) init() tea.Cmd {
	if !p.fetching {
		return nil
	}
	get, ctx, obj := p.e.sess.Get, p.e.ctx, p.obj
	return func() tea.Msg {
		full, err := get(ctx, obj)
		return describeFullMsg{p: p, obj: full, err: err}
	}
}

func (p *describePage) receive(msg tea.Msg) (tea.Cmd, bool) {
	m, ok := msg.(describeFullMsg)
	if !ok || m.p != p {
		return nil, false
	}
	p.fetching, p.full, p.fullErr = false, m.obj, m.err
	p.refresh()
	return nil, true
}

func (p *describePage) refresh() {
	if o, ok := p.e.store.Get(p.wk, p.uid); ok {
		p.obj = o
	}
	d := &describer{st: p.e.st, now: p.e.now()}
	y, note := p.obj, ""
	switch {
	case p.fetching:
		note = "reading the whole pod from the API server…"
	case p.fullErr != nil:
		note = "the cache's trimmed copy: reading the whole pod failed: " + p.fullErr.Error()
	case p.full != nil:
		y = p.full
		if p.full.GetResourceVersion() != p.obj.GetResourceVersion() {
			note = "as read when this page opened (resourceVersion " + p.full.GetResourceVersion() + "; the pod has changed since: d again to re-read)"
		}
	}
	p.tv.setLines(d.lines(p.e.scheme.get(), p.e.reg.of(p.obj), p.obj, p.e.store.EventsFor(p.uid), y, note))
}

func (p *describePage) title() string {
	return titled("Describe "+kindName(p.e.scheme.get(), p.obj), p.obj, p.deleted)
}
func (p *describePage) crumb() string       { return "describe " + p.obj.GetName() }
func (p *describePage) setSize(w, h int)    { p.tv.w, p.tv.h = w, h; p.tv.clamp() }
func (p *describePage) view() string        { return p.tv.view() }
func (p *describePage) keys() []key.Binding { return []key.Binding{p.e.km.Wrap} }
func (p *describePage) target() Target {
	return Target{View: DescribeView, Namespace: p.obj.GetNamespace(), Selected: p.obj, Owner: p.obj}
}

func (p *describePage) update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	return p.tv.key(p.e.km, msg), nil
}

func (p *describePage) apply(ch *watch.Changes) {
	if _, deleted := follow(ch, p.wk, p.uid); deleted {
		p.deleted = true
	}
	if ch.Touches(uidSet{p.uid: true}) {
		p.refresh()
	}
}

// gvk is the group, version and kind of a typed object, from the scheme.
func gvk(s *runtime.Scheme, o client.Object) (schema.GroupVersionKind, error) {
	gvks, _, err := s.ObjectKinds(o)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return gvks[0], nil
}

// kindName is the Kind of a typed object.
func kindName(s *runtime.Scheme, o client.Object) string {
	if k, err := gvk(s, o); err == nil {
		return k.Kind
	}
	return fmt.Sprintf("%T", o)
}

// objectYAML is the object as kubectl get -o yaml shows it, without
// managedFields, and with secrets redacted (kube/redact): Secret data,
// literal passwords and tokens, and their last-applied copies.
func objectYAML(s *runtime.Scheme, o client.Object) (string, error) {
	k, err := gvk(s, o)
	if err != nil {
		return "", err
	}
	c, ok := o.DeepCopyObject().(client.Object)
	if !ok {
		return "", fmt.Errorf("cannot copy %T", o)
	}
	c.SetManagedFields(nil)
	c.GetObjectKind().SetGroupVersionKind(k)
	m, err := redact.Object(c)
	if err != nil {
		return "", err
	}
	b, err := yaml.Marshal(m)
	return string(b), err
}

// describer builds the lines of a describe page; each kind adds its own
// fields (kind.describe) between the common ones and the Events.
type describer struct {
	st  *styles.Styles
	now time.Time
	out []string
}

// field is a "Label: value" line.
func (d *describer) field(k, v string) {
	d.out = append(d.out, d.st.Label.Render(fmt.Sprintf("%-16s", k+":"))+oneLine(v))
}

// label starts an indented list.
func (d *describer) label(k string) { d.out = append(d.out, d.st.Label.Render(k+":")) }

// sub is a line of an indented list.
func (d *describer) sub(s string) { d.out = append(d.out, "  "+oneLine(s)) }

func (d *describer) section(s string) { d.out = append(d.out, "", d.st.Section.Render(s)) }

// conds lists conditions, one a line.
func (d *describer) conds(cs []metav1.Condition) {
	if len(cs) == 0 {
		d.field("Conditions", none)
		return
	}
	d.label("Conditions")
	for _, c := range cs {
		s := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		if c.Message != "" {
			s += ": " + c.Message
		}
		d.sub(s)
	}
}

// lines builds the page: summary (common fields, then k's), Events, YAML.
// The YAML is yamlOf's (o itself, or o read whole), under note if any.
func (d *describer) lines(s *runtime.Scheme, k *kind, o client.Object, events []*corev1.Event, yamlOf client.Object, note string) []string {
	st, now := d.st, d.now
	d.field("Name", o.GetName())
	d.field("Namespace", o.GetNamespace())
	d.field("Kind", kindName(s, o))
	d.field("Labels", kvs(o.GetLabels()))
	d.field("Annotations", kvs(redact.Annotations(o.GetAnnotations())))
	created := o.GetCreationTimestamp()
	d.field("Created", metaAge(now, &created)+" ago ("+created.UTC().Format(time.RFC3339)+")")
	if refs := o.GetOwnerReferences(); len(refs) > 0 {
		var os []string
		for _, r := range refs {
			os = append(os, r.Kind+" "+r.Name)
		}
		d.field("Owned by", strings.Join(os, ", "))
	}
	if dt := o.GetDeletionTimestamp(); dt != nil {
		d.field("Deleting", "since "+metaAge(now, dt)+" (finalizers: "+orNone(strings.Join(o.GetFinalizers(), ", "))+")")
	}
	if k != nil {
		k.typed.describe(d, o)
	}

	d.section(fmt.Sprintf("Events (%d)", len(events)))
	if len(events) == 0 {
		d.out = append(d.out, st.Faint.Render("  none"))
	}
	for _, ev := range events {
		line := fmt.Sprintf("  %5s  %-7s  %-22s %s", age(now, watch.EventTime(ev)), ev.Type, ev.Reason, oneLine(ev.Message))
		if ev.Type == corev1.EventTypeWarning {
			line = st.Class(styles.Warn).Render(line)
		}
		d.out = append(d.out, line)
	}

	d.section("YAML")
	if note != "" {
		d.out = append(d.out, st.Faint.Render("  "+note))
	}
	y, err := objectYAML(s, yamlOf)
	if err != nil {
		d.out = append(d.out, st.FlashErr.Render("error: "+err.Error()))
	} else {
		d.out = append(d.out, strings.Split(strings.TrimRight(y, "\n"), "\n")...)
	}
	return d.out
}

// describeCluster is the RayCluster's part of its describe page.
func describeCluster(d *describer, x *rayv1.RayCluster) {
	s := x.Status
	d.field("State", clusterStatus(x))
	d.field("Ray version", orNone(x.Spec.RayVersion))
	d.field("Suspended", fmt.Sprint(x.Spec.IsSuspended()))
	d.field("Autoscaling", onOff(x.Spec.IsAutoscalingEnabled()))
	d.field("Workers", fmt.Sprintf("%d/%d available, %d ready (min %d, max %d)", s.AvailableWorkerReplicas,
		s.DesiredWorkerReplicas, s.ReadyWorkerReplicas, s.MinWorkerReplicas, s.MaxWorkerReplicas))
	d.field("Resources", fmt.Sprintf("%s CPU, %s memory, %s GPU", qty(s.DesiredCPU), qty(s.DesiredMemory), qty(s.DesiredGPU)))
	d.field("Head", fmt.Sprintf("pod IP %s, service %s (%s)", orNone(s.Head.PodIP), orNone(s.Head.ServiceName), orNone(s.Head.ServiceIP)))
	d.label("Worker groups")
	if len(x.Spec.WorkerGroupSpecs) == 0 {
		d.sub(none)
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
		d.sub(line)
	}
	d.conds(s.Conditions)
}

// describeJob is the RayJob's part of its describe page.
func describeJob(d *describer, x *rayv1.RayJob) {
	s, now := x.Status, d.now
	d.field("Job status", orNone(string(s.JobStatus)))
	d.field("Deployment", orNone(string(s.JobDeploymentStatus)))
	d.field("Cluster", orNone(s.RayClusterName))
	d.field("Job ID", orNone(s.JobId))
	d.field("Mode", orNone(string(x.Spec.SubmissionMode)))
	d.field("Entrypoint", orNone(redact.Flags(x.Spec.Entrypoint)))
	d.field("Start", metaAge(now, s.StartTime))
	d.field("End", metaAge(now, s.EndTime))
	d.field("Duration", jobDuration(now, x))
	d.field("Suspend", fmt.Sprint(x.Spec.Suspend))
	d.field("Shutdown after", fmt.Sprint(x.Spec.ShutdownAfterJobFinishes))
	d.field("Reason", orNone(string(s.Reason)))
	d.field("Message", orNone(s.Message))
	if v := x.Annotations[rayv1.StopRequestedAnnotationKey]; v != "" {
		d.field("Stop requested", v)
	}
	d.conds(s.Conditions)
}

// describeCronJob is the RayCronJob's part of its describe page.
func describeCronJob(d *describer, x *rayv1.RayCronJob) {
	d.field("Status", cronStatus(x))
	d.field("Schedule", x.Spec.Schedule)
	d.field("In words", cronWords(x))
	tz := none
	if x.Spec.TimeZone != nil {
		tz = *x.Spec.TimeZone
	}
	d.field("Time zone", tz)
	d.field("Suspend", fmt.Sprint(x.Spec.IsSuspended()))
	d.field("Last schedule", metaAge(d.now, x.Status.LastScheduleTime))
	d.field("Next run", cronNextRun(x, d.now))
	d.field("Entrypoint", orNone(redact.Flags(x.Spec.JobTemplate.Entrypoint)))
	d.conds(x.Status.Conditions)
}

// describeService is the RayService's part of its describe page.
func describeService(d *describer, x *rayv1.RayService) {
	s := x.Status
	d.field("Status", serviceStatus(x))
	d.field("Suspend", fmt.Sprint(x.Spec.Suspend))
	d.field("Active cluster", orNone(s.ActiveServiceStatus.RayClusterName))
	d.field("Pending cluster", orNone(s.PendingServiceStatus.RayClusterName))
	d.field("Endpoints", fmt.Sprint(s.NumServeEndpoints))
	for _, side := range []struct {
		name string
		ss   rayv1.RayServiceStatus
	}{{"Active apps", s.ActiveServiceStatus}, {"Pending apps", s.PendingServiceStatus}} {
		if len(side.ss.Applications) == 0 {
			continue
		}
		d.label(side.name)
		for _, n := range sortedKeys(side.ss.Applications) {
			d.sub(n + " " + orNone(side.ss.Applications[n].Status))
		}
	}
	d.conds(s.Conditions)
}

// describePod is a Ray pod's part of its describe page.
func describePod(d *describer, x *corev1.Pod) {
	ready, restarts := podReady(x)
	d.field("Status", podStatus(x))
	d.field("Ready", ready)
	d.field("Restarts", fmt.Sprint(restarts))
	d.field("Node", orNone(x.Spec.NodeName))
	d.field("IP", orNone(x.Status.PodIP))
	d.field("Cluster", orNone(x.Labels[rayv1.RayClusterLabelKey]))
	d.field("Group", orNone(x.Labels[rayv1.RayNodeGroupLabelKey]))
	d.field("Node type", orNone(x.Labels[rayv1.RayNodeTypeLabelKey]))
	d.label("Containers")
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
		d.sub(fmt.Sprintf("%s  image %s, ready %t, restarts %d, %s", c.Name, orNone(c.Image), s.Ready, s.RestartCount, state))
	}
	d.label("Conditions")
	if len(x.Status.Conditions) == 0 {
		d.sub(none)
	}
	for _, c := range x.Status.Conditions {
		d.sub(fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
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
