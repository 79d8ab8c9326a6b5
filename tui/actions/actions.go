package actions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeactions "github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/pages/describe"
	"github.com/raydar/raydar/tui/pages/logs"
	"github.com/raydar/raydar/tui/widgets"
)

// actionTimeout bounds one apply or read made by an action.
const actionTimeout = 30 * time.Second

// ByName returns raydar's actions (tui.DefaultActions) by name, built on
// deps.
func ByName(deps host.ActionDeps) map[string]host.Action {
	r := &actionRunner{base: deps}
	scale := host.Action{Name: host.ActionScale, Key: host.Binding("s", "scale"), Dangerous: true, Run: inSession(r.scale)}
	delWorkers := host.Action{Name: host.ActionDeleteWorkers, Key: host.Binding("ctrl+d", "delete workers"), Dangerous: true, Run: inSession(r.deleteWorkers)}
	stop := host.Action{Name: host.ActionStopJob, Key: host.Binding("x", "stop job"), Dangerous: true, Run: inSession(r.stopJob)}
	trigger := host.Action{Name: host.ActionTrigger, Key: host.Binding("t", "trigger now"), Dangerous: true, Run: inSession(r.trigger)}
	suspend := host.Action{Name: host.ActionSuspend, Key: host.Binding("z", "suspend/resume"), Dangerous: true, Run: inSession(r.suspend)}
	del := host.Action{Name: host.ActionDelete, Key: host.Binding("ctrl+d", "delete"), Dangerous: true, Run: inSession(r.delete)}
	describe := host.Action{Name: host.ActionDescribe, Key: host.Binding("d", "describe"), Run: inSession(r.describe)}
	logs := host.Action{Name: host.ActionLogs, Key: host.Binding("l", "logs"), Run: inSession(r.logs)}
	// Not Dangerous: a forward changes nothing in the cluster (tui/app_forwards.go).
	pf := host.Action{Name: host.ActionPortForward, Key: host.Binding("F", "port-forward"), Run: inSession(r.portForward)}
	// A shell is a write (pods/exec): hidden read-only (shell.go). Not k9s'
	// s, which is scale on the cluster page.
	shell := host.Action{Name: host.ActionShell, Key: host.Binding("a", "shell"), Dangerous: true, Run: inSession(r.shell)}
	edit := host.Action{Name: host.ActionEdit, Key: host.Binding("e", "edit"), Dangerous: true, HintLast: true, Run: inSession(r.edit)}
	byName := map[string]host.Action{}
	for _, act := range []host.Action{scale, delWorkers, stop, trigger, suspend, del, describe, logs, pf, shell, edit} {
		byName[act.Name] = act
	}
	return byName
}

// inSession refuses targets that were not taken by the App (which sets the
// session they belong to).
func inSession(run func(host.Target) tea.Cmd) func(host.Target) tea.Cmd {
	return func(tg host.Target) tea.Cmd {
		if tg.Env == nil {
			return host.ErrMsg(errors.New("this action runs only inside the TUI"))
		}
		return run(tg)
	}
}

// actionRunner holds the deps the actions were built with.
type actionRunner struct{ base host.ActionDeps }

// deps returns the dependencies for the target's session.
func (r *actionRunner) deps(tg host.Target) (host.ActionDeps, error) {
	if d := tg.Env.Sess.Deps; d != nil {
		return *d, nil
	}
	if r.base.Context != "" && r.base.Context != tg.Env.Sess.Context {
		return host.ActionDeps{}, fmt.Errorf("actions are connected to context %s, not %s: nothing was changed", r.base.Context, tg.Env.Sess.Context)
	}
	return r.base, nil
}

// mutator returns the dependencies and the Actions of the target's
// session.
func (r *actionRunner) mutator(tg host.Target) (host.ActionDeps, *kubeactions.Actions, error) {
	d, err := r.deps(tg)
	if err != nil {
		return host.ActionDeps{}, nil, err
	}
	if d.Actions == nil {
		return host.ActionDeps{}, nil, errors.New("changes are not available in this session (no API client)")
	}
	return d, d.Actions, nil
}

// guardOf is what a's confirmation dialogs show and ask of the context
// they write to: its name, and on a protected context the object's name
// typed (kube/actions decides which contexts are protected).
func guardOf(tg host.Target, a *kubeactions.Actions, name string) widgets.Guard {
	ctx := a.Context()
	if ctx == "" {
		ctx = tg.Env.Sess.Context
	}
	return widgets.Guard{Context: ctx, Protected: a.Protected(), Name: name}
}

// applyAction runs an apply method in a command, with what the dialog
// had typed to confirm it (kube/actions.WithConfirmation: the choke point
// checks it on a protected context), and turns its outcome into a
// ResultMsg.
func applyAction(tg host.Target, apply func(ctx context.Context) (*kubeactions.Result, error), ok func(*kubeactions.Result) string) func(confirmation string) tea.Cmd {
	parent := tg.Env.SessCtx()
	return func(confirmation string) tea.Cmd {
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(kubeactions.WithConfirmation(parent, confirmation), actionTimeout)
			defer cancel()
			res, err := apply(ctx)
			if err != nil {
				return host.ResultMsg{Err: err}
			}
			if res.Outcome == kubeactions.OutcomeUnchanged {
				return host.ResultMsg{Text: "no change: " + res.Object.String() + " already is as asked"}
			}
			text := ok(res)
			if res.EventError != "" {
				text += " (the Event was not recorded: " + res.EventError + ")"
			}
			if res.AuditError != "" {
				text += " (audit log: " + res.AuditError + ")"
			}
			return host.ResultMsg{Text: text}
		}
	}
}

// ---- scale ----

func (r *actionRunner) scale(tg host.Target) tea.Cmd {
	rc, ok := tg.Owner.(*rayv1.RayCluster)
	if !ok {
		return host.Warn("scale: open a RayCluster first")
	}
	if tg.Group == "" || tg.Group == "head" || tg.Group == rayv1.RayNodeHeadGroupLabelValue {
		return host.Warn("scale: select a worker group (or one of its pods); the head group has one pod")
	}
	if _, ok := rc.Spec.WorkerGroup(tg.Group); !ok {
		return host.Warn("scale: group %s is not in the spec of %s/%s", tg.Group, rc.Namespace, rc.Name)
	}
	_, a, err := r.mutator(tg)
	if err != nil {
		return host.ErrMsg(err)
	}
	ns, name, group := rc.Namespace, rc.Name, tg.Group
	d := widgets.NewScaleDialog(tg.Env.St, tg.Env.KM, guardOf(tg, a, name), rc, group, func(req kubeactions.ScaleRequest, confirmation string) tea.Cmd {
		return applyAction(tg, func(ctx context.Context) (*kubeactions.Result, error) {
			return a.ScaleGroup(ctx, ns, name, group, req)
		}, func(res *kubeactions.Result) string {
			p, _ := res.Plan.(*kubeactions.ScalePlan)
			if p == nil {
				return fmt.Sprintf("scaled %s/%s group %s", ns, name, group)
			}
			return fmt.Sprintf("scaled %s/%s group %s: replicas %d → %d", ns, name, group, p.Current.Replicas, p.New.Replicas)
		})(confirmation)
	})
	return showDialog(tg, d)
}

// ---- delete workers ----

func (r *actionRunner) deleteWorkers(tg host.Target) tea.Cmd {
	rc, ok := tg.Owner.(*rayv1.RayCluster)
	if !ok {
		return host.Warn("delete workers: open a RayCluster first")
	}
	var names []string
	for _, o := range tg.Marked {
		names = append(names, o.GetName())
	}
	if len(names) == 0 {
		p, ok := tg.Selected.(*podview.Pod)
		switch {
		case !ok:
			return host.Warn("delete workers: mark worker pods with space (or select one) first")
		case p.Labels[rayv1.RayNodeTypeLabelKey] != string(rayv1.WorkerNode):
			return host.Warn("delete workers: %s is the head pod; only workers can be deleted", p.Name)
		}
		names = []string{p.Name}
	}
	_, a, err := r.mutator(tg)
	if err != nil {
		return host.ErrMsg(err)
	}
	// Every pod of the cluster the TUI knows, for the plan (multi-host
	// groups need the other hosts of a replica).
	var pods []corev1.Pod
	for _, p := range tg.Env.Store.PodsOf(watch.ClusterRef{Namespace: rc.Namespace, Name: rc.Name}) {
		pods = append(pods, *p.Corev1())
	}
	req := kubeactions.DeleteWorkersRequest{Pods: names}
	ns, name := rc.Namespace, rc.Name
	plan, err := kubeactions.PlanDeleteWorkers(rc, pods, req)
	title := fmt.Sprintf("Delete worker pods of RayCluster %s/%s", ns, name)
	if err != nil {
		return showDialog(tg, widgets.NewWriteConfirm(tg.Env.St, tg.Env.KM, guardOf(tg, a, name), title, []string{"nothing can be deleted:"}, err.Error(), nil))
	}
	apply := applyAction(tg, func(ctx context.Context) (*kubeactions.Result, error) {
		return a.DeleteWorkers(ctx, ns, name, req)
	}, func(res *kubeactions.Result) string {
		p, _ := res.Plan.(*kubeactions.DeleteWorkersPlan)
		if p == nil {
			return fmt.Sprintf("deleting workers of %s/%s", ns, name)
		}
		return fmt.Sprintf("deleting %d worker pods of %s/%s: %s", len(p.Pods), ns, name, strings.Join(p.Pods, ", "))
	})
	return showDialog(tg, widgets.NewWriteConfirm(tg.Env.St, tg.Env.KM, guardOf(tg, a, name), title, deleteWorkersLines(plan), "", apply))
}

// deleteWorkersLines are the plan's lines with one pod a line, so that
// long pod names are never broken.
func deleteWorkersLines(p *kubeactions.DeleteWorkersPlan) []string {
	ls := []string{p.Lines()[0]}
	for _, g := range p.Groups {
		s := fmt.Sprintf("group %s: replicas %d → %d", g.Group, g.Current.Replicas, g.New.Replicas)
		if g.Current.Min != g.New.Min {
			s += fmt.Sprintf(", minReplicas %d → %d", g.Current.Min, g.New.Min)
		}
		ls = append(ls, s)
		for _, pod := range g.Pods {
			ls = append(ls, "  "+pod)
		}
	}
	for _, w := range p.Warnings {
		ls = append(ls, "warning: "+w)
	}
	return ls
}

// ---- stop job ----

func (r *actionRunner) stopJob(tg host.Target) tea.Cmd {
	j, ok := tg.Selected.(*rayv1.RayJob)
	if !ok {
		return host.Warn("stop: select a RayJob first")
	}
	d, a, err := r.mutator(tg)
	if err != nil {
		return host.ErrMsg(err)
	}
	ns, name := j.Namespace, j.Name
	direct := d.OtherOperator != nil && d.OtherOperator(j)
	title := fmt.Sprintf("Stop RayJob %s/%s", ns, name)
	var plan *kubeactions.StopJobPlan
	var apply func(confirmation string) tea.Cmd
	if direct {
		plan, err = kubeactions.PlanStopJobDirect(j)
		apply = applyAction(tg, func(ctx context.Context) (*kubeactions.Result, error) { return a.StopJobDirect(ctx, ns, name) },
			func(res *kubeactions.Result) string {
				return fmt.Sprintf("stopped the Ray job of RayJob %s/%s through the Ray dashboard", ns, name)
			})
	} else {
		plan, err = kubeactions.PlanStopJob(j, a.Actor(), tg.Env.Now())
		apply = applyAction(tg, func(ctx context.Context) (*kubeactions.Result, error) { return a.StopJob(ctx, ns, name) },
			func(res *kubeactions.Result) string {
				return fmt.Sprintf("stop requested for RayJob %s/%s; the RayJob reconciler stops it", ns, name)
			})
	}
	if err != nil {
		return showDialog(tg, widgets.NewWriteConfirm(tg.Env.St, tg.Env.KM, guardOf(tg, a, name), title, []string{"the job cannot be stopped:"}, err.Error(), nil))
	}
	return showDialog(tg, widgets.NewWriteConfirm(tg.Env.St, tg.Env.KM, guardOf(tg, a, name), title, plan.Lines(), "", apply))
}

// ---- trigger now ----

func (r *actionRunner) trigger(tg host.Target) tea.Cmd {
	obj, _, _, _ := lifecycleObject(tg)
	cj, ok := obj.(*rayv1.RayCronJob)
	if !ok {
		return host.Warn("trigger: select a RayCronJob first")
	}
	_, a, err := r.mutator(tg)
	if err != nil {
		return host.ErrMsg(err)
	}
	ns, name := cj.Namespace, cj.Name
	title := fmt.Sprintf("Trigger RayCronJob %s/%s now", ns, name)
	plan, err := kubeactions.PlanTrigger(cj, tg.Env.Now())
	if err != nil {
		return showDialog(tg, widgets.NewWriteConfirm(tg.Env.St, tg.Env.KM, guardOf(tg, a, name), title, []string{"it cannot run now:"}, err.Error(), nil))
	}
	if _, exists := tg.Env.Store.Find(watch.RayJob, ns, plan.Job); exists {
		plan.AlreadyExists = true
	}
	apply := applyAction(tg, func(ctx context.Context) (*kubeactions.Result, error) { return a.Trigger(ctx, ns, name) },
		func(res *kubeactions.Result) string {
			job := plan.Job
			if p, _ := res.Plan.(*kubeactions.TriggerPlan); p != nil {
				job = p.Job
			}
			return fmt.Sprintf("triggered RayCronJob %s/%s: created RayJob %s", ns, name, job)
		})
	return showDialog(tg, widgets.NewWriteConfirm(tg.Env.St, tg.Env.KM, guardOf(tg, a, name), title, plan.Lines(), "", apply))
}

// ---- suspend / resume ----

// lifecycleObject returns the object suspend/resume and delete act on,
// its kind and whether it is suspended: the selection in lists, the
// detail's object in details, if its kind has a lifecycle (Kinds.Lifecycle).
func lifecycleObject(tg host.Target) (obj client.Object, kind kubeactions.Kind, suspended, ok bool) {
	obj = tg.Selected
	if tg.Env.Kinds.IsDetail(tg.View) {
		obj = tg.Owner
	}
	kind, suspended, ok = tg.Env.Kinds.Lifecycle(obj)
	if !ok {
		return nil, nil, false, false
	}
	return obj, kind, suspended, true
}

// showDialog opens d at once, through the App (Host).
func showDialog(tg host.Target, d host.Dialog) tea.Cmd {
	tg.Env.Host.ShowDialog(d)
	return nil
}

// pushPage pushes p at once, through the App (Host).
func pushPage(tg host.Target, p host.Page) tea.Cmd {
	tg.Env.Host.Push(p)
	return nil
}

func (r *actionRunner) suspend(tg host.Target) tea.Cmd {
	obj, kind, suspended, ok := lifecycleObject(tg)
	if !ok {
		return host.Warn("suspend/resume: select a %s first", tg.Env.Kinds.LifecycleKinds())
	}
	_, a, err := r.mutator(tg)
	if err != nil {
		return host.ErrMsg(err)
	}
	suspend := !suspended
	verb, done := "Resume", "resumed"
	if suspend {
		verb, done = "Suspend", "suspended"
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	title := fmt.Sprintf("%s %s %s/%s", verb, kind, ns, name)
	plan, err := kubeactions.PlanSuspend(obj, suspend)
	if err != nil {
		return showDialog(tg, widgets.NewWriteConfirm(tg.Env.St, tg.Env.KM, guardOf(tg, a, name), title, []string{strings.ToLower(verb) + " is not possible:"}, err.Error(), nil))
	}
	apply := applyAction(tg, func(ctx context.Context) (*kubeactions.Result, error) {
		if suspend {
			return a.Suspend(ctx, kind, ns, name)
		}
		return a.Resume(ctx, kind, ns, name)
	}, func(*kubeactions.Result) string { return fmt.Sprintf("%s %s %s/%s", done, kind, ns, name) })
	return showDialog(tg, widgets.NewWriteConfirm(tg.Env.St, tg.Env.KM, guardOf(tg, a, name), title, plan.Lines(), "", apply))
}

// ---- delete ----

func (r *actionRunner) delete(tg host.Target) tea.Cmd {
	obj, kind, _, ok := lifecycleObject(tg)
	if !ok {
		return host.Warn("delete: select a %s first", tg.Env.Kinds.LifecycleKinds())
	}
	d, a, err := r.mutator(tg)
	if err != nil {
		return host.ErrMsg(err)
	}
	reader := d.Reader
	if reader == nil {
		reader = a.Client()
	}
	// RayJobs, RayClusters and Ray pods come from the store (read here, in
	// Update); Services, batch Jobs and their pods, which the store does
	// not hold, from the reader inside the command.
	ns, name := obj.GetNamespace(), obj.GetName()
	var rel kubeactions.Related
	for _, o := range tg.Env.Store.List(watch.RayJob) {
		if o.GetNamespace() == ns {
			rel.RayJobs = append(rel.RayJobs, *o.(*rayv1.RayJob))
		}
	}
	for _, o := range tg.Env.Store.List(watch.RayCluster) {
		if o.GetNamespace() == ns {
			rel.RayClusters = append(rel.RayClusters, *o.(*rayv1.RayCluster))
		}
	}
	for _, o := range tg.Env.Store.List(watch.Pod) {
		if o.GetNamespace() == ns {
			rel.Pods = append(rel.Pods, *o.(*podview.Pod).Corev1())
		}
	}
	st, km, parent, guard := tg.Env.St, tg.Env.KM, tg.Env.SessCtx(), guardOf(tg, a, name)
	title := fmt.Sprintf("Delete %s %s/%s", kind, ns, name)
	apply := applyAction(tg, func(ctx context.Context) (*kubeactions.Result, error) { return a.Delete(ctx, kind, ns, name) },
		func(res *kubeactions.Result) string {
			s := fmt.Sprintf("deleted %s %s/%s", kind, ns, name)
			if p, _ := res.Plan.(*kubeactions.DeletePlan); p != nil && len(p.Dependents) > 0 {
				s += fmt.Sprintf(" and %d objects it owned", len(p.Dependents))
			}
			return s
		})
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(parent, actionTimeout)
		defer cancel()
		warnings := relatedFromReader(ctx, reader, ns, &rel)
		plan, err := kubeactions.PlanDelete(obj, rel)
		if err != nil {
			return host.ShowDialogMsg{Dialog: widgets.NewWriteConfirm(st, km, guard, title, []string{"nothing can be deleted:"}, err.Error(), nil)}
		}
		plan.Warnings = append(plan.Warnings, warnings...)
		return host.ShowDialogMsg{Dialog: widgets.NewWriteConfirm(st, km, guard, title, deleteLines(plan), "", apply)}
	}
}

// relatedFromReader adds the namespace's Services, batch Jobs and the
// Jobs' pods to rel; what cannot be listed becomes a warning.
func relatedFromReader(ctx context.Context, rd client.Reader, ns string, rel *kubeactions.Related) []string {
	var warnings []string
	list := func(l client.ObjectList, what string, opts ...client.ListOption) bool {
		if err := rd.List(ctx, l, append(opts, client.InNamespace(ns))...); err != nil {
			warnings = append(warnings, fmt.Sprintf("could not list %s (%v): what else goes may be incomplete", what, err))
			return false
		}
		return true
	}
	var svcs corev1.ServiceList
	if list(&svcs, "services") {
		rel.Services = svcs.Items
	}
	var jobs batchv1.JobList
	if list(&jobs, "jobs") && len(jobs.Items) > 0 {
		rel.Jobs = jobs.Items
		names := make([]string, 0, len(jobs.Items))
		for i := range jobs.Items {
			names = append(names, jobs.Items[i].Name)
		}
		if req, err := labels.NewRequirement(batchv1.JobNameLabel, selection.In, names); err == nil {
			var pods corev1.PodList
			if list(&pods, "pods", client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*req)}) {
				rel.Pods = append(rel.Pods, pods.Items...)
			}
		}
	}
	return warnings
}

// maxDeleteDependents is how many dependents the delete dialog names one
// by one; the rest are counted.
const maxDeleteDependents = 8

// deleteLines are the plan's lines with the dependents list cut short.
func deleteLines(p *kubeactions.DeletePlan) []string {
	if len(p.Dependents) <= maxDeleteDependents {
		return p.Lines()
	}
	cut := *p
	cut.Dependents = p.Dependents[:maxDeleteDependents]
	ls := cut.Lines()
	// Lines: "delete …", "also deleted: <summary>", dependents…; keep the
	// full summary and say how many are not named.
	full := p.Lines()
	ls[1] = full[1]
	at := 2 + maxDeleteDependents
	more := fmt.Sprintf("  … and %d more", len(p.Dependents)-maxDeleteDependents)
	return append(ls[:at:at], append([]string{more}, ls[at:]...)...)
}

// ---- describe and logs ----

func (r *actionRunner) describe(tg host.Target) tea.Cmd {
	obj := tg.Selected
	if obj == nil { // a detail view's row without an object (a group)
		obj = tg.Owner
	}
	if obj == nil {
		return host.Warn("describe: nothing selected")
	}
	return pushPage(tg, describe.NewPage(tg.Env, obj))
}

func (r *actionRunner) logs(tg host.Target) tea.Cmd {
	p, ok := tg.Selected.(*podview.Pod)
	if !ok {
		return host.Warn("logs: select a pod first")
	}
	d, err := r.deps(tg)
	if err != nil {
		return host.ErrMsg(err)
	}
	if d.PodLogs == nil {
		return host.ErrMsg(errors.New("pod logs are not available in this session"))
	}
	logs.Open(tg.Env, p, d.PodLogs) // a picker first on a pod with several containers
	return nil
}
