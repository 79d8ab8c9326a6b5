package describe

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/kube/redact"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/widgets"
)

// Page shows one object: a readable summary, its recent Events and
// its YAML (without managedFields). It follows the object in the store.
type Page struct {
	host.Base
	wk      watch.Kind
	uid     types.UID
	obj     client.Object
	deleted bool
	tv      widgets.TextView
	// full is the pod read whole from the API server for the YAML (the
	// cache keeps pods trimmed); fetching until it arrives, fullErr if the
	// GET failed.
	full     client.Object
	fetching bool
	fullErr  error
	// yamlOf is the object the YAML section shows (C copies its YAML).
	yamlOf client.Object
}

// describeFullMsg delivers the whole object a describe page asked for.
type describeFullMsg struct {
	p   *Page
	obj client.Object
	err error
}

// NewPage is the describe page of obj, in e; a pod is read whole from the
// API server on Init.
func NewPage(e *host.Env, obj client.Object) *Page {
	wk, _ := watch.KindOf(obj)
	p := &Page{Base: host.Base{E: e, VK: host.DescribeView}, wk: wk, uid: watch.Key(obj), obj: obj}
	_, isPod := obj.(*podview.Pod)
	p.fetching = isPod && e.Sess.Get != nil
	p.refresh()
	return p
}

// Init GETs a pod whole for the YAML.
func (p *Page) Init() tea.Cmd {
	if !p.fetching {
		return nil
	}
	get, ctx, obj := p.E.Sess.Get, p.E.Ctx, p.obj
	return func() tea.Msg {
		full, err := get(ctx, obj)
		return describeFullMsg{p: p, obj: full, err: err}
	}
}

// Receive takes the whole object Init read, for this page only.
func (p *Page) Receive(msg tea.Msg) (tea.Cmd, bool) {
	m, ok := msg.(describeFullMsg)
	if !ok || m.p != p {
		return nil, false
	}
	p.fetching, p.full, p.fullErr = false, m.obj, m.err
	p.refresh()
	return nil, true
}

func (p *Page) refresh() {
	if o, ok := p.E.Store.Get(p.wk, p.uid); ok {
		p.obj = o
	}
	d := &format.Describer{St: p.E.St, Now: p.E.Now()}
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
	p.yamlOf = y
	p.tv.SetLines(describeLines(d, p.E.Scheme.Get(), p.E.Kinds, p.obj, p.E.Store.EventsFor(p.uid), y, note))
}

// CopyText is the YAML the page shows (redacted as shown), for C.
func (p *Page) CopyText() (what, text string) {
	y, err := objectYAML(p.E.Scheme.Get(), p.yamlOf)
	if err != nil {
		return "", ""
	}
	return "the YAML of " + p.obj.GetName(), y
}

// Title is "Describe Kind ns/name", "(deleted)" once it is gone.
func (p *Page) Title() string {
	return host.Titled("Describe "+kindName(p.E.Scheme.Get(), p.obj), p.obj, p.deleted)
}

// Crumb is "describe name".
func (p *Page) Crumb() string { return "describe " + p.obj.GetName() }

// SetSize records the size of the text view.
func (p *Page) SetSize(w, h int) { p.tv.W, p.tv.H = w, h; p.tv.Clamp() }

// View is the visible part of the description.
func (p *Page) View() string { return p.tv.View() }

// Keys is w, which toggles wrapping.
func (p *Page) Keys() []key.Binding { return []key.Binding{p.E.KM.Wrap} }

// Target is the described object, for the actions.
func (p *Page) Target() host.Target {
	return host.Target{View: host.DescribeView, Namespace: p.obj.GetNamespace(), Selected: p.obj, Owner: p.obj}
}

// Update scrolls or toggles wrapping.
func (p *Page) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	return p.tv.HandleKey(p.E.KM, msg), nil
}

// Apply marks the object deleted, or describes it again when a change
// touches it.
func (p *Page) Apply(ch *watch.Changes) {
	if _, deleted := host.Follow(ch, p.wk, p.uid); deleted {
		p.deleted = true
	}
	if ch.Touches(host.UIDSet{p.uid: true}) {
		p.refresh()
	}
}

// gvk is the group, version and kind of a typed object, from the scheme.
func gvk(s *runtime.Scheme, o client.Object) (schema.GroupVersionKind, error) {
	gvks, _, err := s.ObjectKinds(o)
	if err != nil {
		// A record the scheme does not know (a pod's, rayapi/podview):
		// its kind's.
		if k, ok := kinds.Of(o); ok {
			return k.Resource.GroupVersion().WithKind(k.Kind), nil
		}
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

// lines builds the page: summary (common fields, then k's), Events, YAML.
// The YAML is yamlOf's (o itself, or o read whole), under note if any.
func describeLines(d *format.Describer, s *runtime.Scheme, k host.Kinds, o client.Object, events []*corev1.Event, yamlOf client.Object, note string) []string {
	st, now := d.St, d.Now
	d.Field("Name", o.GetName())
	d.Field("Namespace", o.GetNamespace())
	d.Field("Kind", kindName(s, o))
	d.Field("Labels", kvs(o.GetLabels()))
	d.Field("Annotations", kvs(redact.Annotations(o.GetAnnotations())))
	created := o.GetCreationTimestamp()
	d.Field("Created", format.MetaAge(now, &created)+" ago ("+created.UTC().Format(time.RFC3339)+")")
	if refs := o.GetOwnerReferences(); len(refs) > 0 {
		var os []string
		for _, r := range refs {
			os = append(os, r.Kind+" "+r.Name)
		}
		d.Field("Owned by", strings.Join(os, ", "))
	}
	if dt := o.GetDeletionTimestamp(); dt != nil {
		d.Field("Deleting", "since "+format.MetaAge(now, dt)+" (finalizers: "+format.OrNone(strings.Join(o.GetFinalizers(), ", "))+")")
	}
	k.Describe(d, o)

	d.Section(fmt.Sprintf("Events (%d)", len(events)))
	if len(events) == 0 {
		d.Out = append(d.Out, st.Faint.Render("  none"))
	}
	for _, ev := range events {
		line := fmt.Sprintf("  %5s  %-7s  %-22s %s", format.Age(now, watch.EventTime(ev)), ev.Type, ev.Reason, format.OneLine(ev.Message))
		if ev.Type == corev1.EventTypeWarning {
			line = st.Class(styles.Warn).Render(line)
		}
		d.Out = append(d.Out, line)
	}

	d.Section("YAML")
	if note != "" {
		d.Out = append(d.Out, st.Faint.Render("  "+note))
	}
	y, err := objectYAML(s, yamlOf)
	if err != nil {
		d.Out = append(d.Out, st.FlashErr.Render("error: "+err.Error()))
	} else {
		d.Out = append(d.Out, strings.Split(strings.TrimRight(y, "\n"), "\n")...)
	}
	return d.Out
}

// kvs formats a label or annotation map: "a=1, b=2", sorted; "-" if empty.
func kvs(m map[string]string) string {
	if len(m) == 0 {
		return format.None
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for i, k := range ks {
		ks[i] = k + "=" + ansi.Truncate(format.OneLine(m[k]), 60, "...")
	}
	return strings.Join(ks, ", ")
}
