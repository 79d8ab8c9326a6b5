package actions

import (
	"context"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"

	kubeactions "github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/edit"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/widgets"
)

// ---- edit ----

// edit opens the selected RayCluster, RayJob, RayService or RayCronJob (a
// detail page's own object) in $KUBE_EDITOR/$EDITOR (kube/edit): the TUI
// gives the terminal to the editor (tea.ExecProcess, through
// host.ExecMsg) and takes it back when it exits; then, as kube/edit's
// Review says, the flash says why nothing is applied, the editor reopens
// with the errors on top, or a confirmation shows the plan (what will not
// take effect on running pods among it) and applies through kube/actions.
func (r *actionRunner) edit(tg host.Target) tea.Cmd {
	obj, kind, _, ok := lifecycleObject(tg)
	if !ok {
		return host.Warn("edit: select a %s first", tg.Env.Kinds.LifecycleKinds())
	}
	_, a, err := r.mutator(tg)
	if err != nil {
		return host.ErrMsg(err)
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	e := &editing{tg: tg, a: a, getenv: os.Getenv,
		title: fmt.Sprintf("Edit %s %s/%s", kind, ns, name), guard: guardOf(tg, a, name), parent: tg.Env.SessCtx()}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(e.parent, actionTimeout)
		defer cancel()
		s, err := edit.Start(ctx, a, kind, ns, name, "")
		if err != nil {
			return host.ResultMsg{Err: err}
		}
		return e.open(s)
	}
}

// editing is one edit's state between the editor's runs: what its
// messages need, taken in Update when e was pressed.
type editing struct {
	tg     host.Target
	a      *kubeactions.Actions
	getenv func(string) string
	title  string
	guard  widgets.Guard
	parent context.Context
}

// open hands the terminal to the editor; its exit comes back as the next
// step's message.
func (e *editing) open(s *edit.Session) tea.Msg {
	cmd := s.Command(e.getenv)
	return host.ExecMsg{Cmd: tea.ExecProcess(cmd, func(err error) tea.Msg {
		if err != nil {
			return host.ResultMsg{Err: fmt.Errorf("the editor (%s) failed: %w; nothing was changed, your edit is in %s", cmd.Args[0], err, s.Path)}
		}
		return e.step(s, s.Review())
	})}
}

// step turns a kube/edit step into the App's next message. It runs in a
// command (the editor's callback, an apply), never in Update.
func (e *editing) step(s *edit.Session, st edit.Step) tea.Msg {
	switch st.Kind {
	case edit.Cancelled:
		return host.ResultMsg{Text: st.Message}
	case edit.Reopen:
		return e.open(s)
	case edit.Confirm:
		lines := append(st.Plan.Lines(), "your edit is in "+s.Path+" (kept if you cancel)")
		apply := func(confirmation string) tea.Cmd {
			return func() tea.Msg {
				ctx, cancel := context.WithTimeout(kubeactions.WithConfirmation(e.parent, confirmation), actionTimeout)
				defer cancel()
				return e.step(s, s.Apply(ctx))
			}
		}
		env := e.tg.Env
		return host.ShowDialogMsg{Dialog: widgets.NewWriteConfirm(env.St, env.KM, e.guard, e.title, lines, "", apply)}
	case edit.Applied:
		text := fmt.Sprintf("edited %s", st.Result.Object)
		if st.Plan != nil {
			text += fmt.Sprintf(" (%d fields changed)", len(st.Plan.Changes))
		}
		if st.Result.EventError != "" {
			text += " (the Event was not recorded: " + st.Result.EventError + ")"
		}
		if st.Result.AuditError != "" {
			text += " (audit log: " + st.Result.AuditError + ")"
		}
		return host.ResultMsg{Text: text}
	}
	err := st.Err
	if st.Message != "" {
		err = fmt.Errorf("%w; %s", err, st.Message)
	}
	return host.ResultMsg{Err: err}
}
