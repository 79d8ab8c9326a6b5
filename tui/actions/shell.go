package actions

import (
	"errors"
	"fmt"
	"io"

	tea "charm.land/bubbletea/v2"

	kubeactions "github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/podexec"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/widgets"
)

// ---- shell ----

// The shell runs in this process, not in a child raydar: Bubble Tea gives
// the terminal to a tea.ExecCommand (shellCommand) that execs through the
// session's own kube/actions.Actions, so the shell goes to the context,
// credentials and guardrails the session has, through the one choke
// point, with nothing to rebuild for a child's command line. kube/podexec
// does the terminal's part (raw mode, size, an input that stops being read
// when the shell ends, so the TUI gets its keys back).

// shell opens a shell in the Ray container of the selected pod (pods view,
// cluster page) or, on the cluster page with a group row selected, of the
// cluster's head.
func (r *actionRunner) shell(tg host.Target) tea.Cmd {
	var cluster, pod, ns string
	if p, ok := tg.Selected.(*podview.Pod); ok {
		cluster, pod, ns = p.Labels[rayv1.RayClusterLabelKey], p.Name, p.Namespace
		if cluster == "" {
			return host.Warn("shell: pod %s is not a Ray pod (no %s label)", p.Name, rayv1.RayClusterLabelKey)
		}
	} else if rc, ok := tg.Owner.(*rayv1.RayCluster); ok {
		cluster, ns = rc.Name, rc.Namespace
	} else {
		return host.Warn("shell: select a Ray pod, or open a RayCluster (its head)")
	}
	_, a, err := r.mutator(tg)
	if err != nil {
		return host.ErrMsg(err)
	}
	where := "the head of " + ns + "/" + cluster
	if pod != "" {
		where = "pod " + ns + "/" + pod
	}
	parent := tg.Env.SessCtx()
	open := func(confirmation string) tea.Cmd {
		c := &shellCommand{run: func(s podexec.Streams) (*kubeactions.Result, error) {
			return a.Exec(kubeactions.WithConfirmation(parent, confirmation), ns, cluster, kubeactions.ExecRequest{Pod: pod}, s)
		}, banner: fmt.Sprintf("raydar: a shell in %s; exit it to return", where)}
		exec := tea.Exec(c, func(err error) tea.Msg {
			if err != nil {
				return host.ResultMsg{Err: fmt.Errorf("shell in %s: %w", where, err)}
			}
			text := "shell in " + where + " ended"
			if res := c.res; res != nil {
				if p, ok := res.Plan.(*kubeactions.ExecPlan); ok {
					text = fmt.Sprintf("shell in %s/%s (container %s) ended", p.Namespace, p.Pod, p.Container)
				}
				if res.AuditError != "" {
					text += " (audit log: " + res.AuditError + ")"
				}
			}
			return host.ResultMsg{Text: text}
		})
		// The Program alone can give the terminal away: host.ExecMsg
		// hands it the exec (as the editor of e).
		return func() tea.Msg { return host.ExecMsg{Cmd: exec} }
	}
	if a.Protected() {
		// A protected context wants the RayCluster's name typed first.
		title := "Open a shell in " + where
		if pod != "" {
			title += " of RayCluster " + cluster
		}
		return showDialog(tg, widgets.NewWriteConfirm(tg.Env.St, tg.Env.KM, guardOf(tg, a, cluster), title,
			[]string{"a shell in the Ray container can change anything in it; it is audited"}, "", open))
	}
	return open("")
}

// shellCommand is the shell as a tea.ExecCommand: Bubble Tea releases the
// terminal, Run execs with a TTY on it, and Bubble Tea takes it back.
type shellCommand struct {
	run    func(podexec.Streams) (*kubeactions.Result, error)
	banner string
	in     io.Reader
	out    io.Writer
	res    *kubeactions.Result
}

func (c *shellCommand) SetStdin(r io.Reader)  { c.in = r }
func (c *shellCommand) SetStdout(w io.Writer) { c.out = w }
func (c *shellCommand) SetStderr(io.Writer)   {} // a TTY merges stderr into stdout

// Run runs the shell on the terminal. The shell's own exit status is not
// an error (its last command's); refusals and failures are.
func (c *shellCommand) Run() error {
	t, ok, err := podexec.MakeTerminal(c.in, c.out)
	switch {
	case err != nil:
		return err
	case !ok:
		return errors.New("the TUI's input is not a terminal")
	}
	defer t.Close()
	fmt.Fprintf(c.out, "%s\r\n", c.banner)
	c.res, err = c.run(podexec.Streams{In: t.Input(), Out: c.out, TTY: true, Sizes: t.Sizes()})
	var ee *podexec.ExitError
	if errors.As(err, &ee) {
		return nil
	}
	return err
}
