package host

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Action names (keys.yaml "actions:" entries).
const (
	ActionScale         = "scale"
	ActionDeleteWorkers = "delete-workers"
	ActionStopJob       = "stop-job"
	ActionTrigger       = "trigger"
	ActionSuspend       = "suspend"
	ActionDelete        = "delete"
	ActionDescribe      = "describe"
	ActionLogs          = "logs"
	ActionEdit          = "edit"
)

// Binding is a key binding of the key k, described as desc in help.
func Binding(k, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(k), key.WithHelp(k, desc))
}

// ErrMsg returns a command that flashes err.
func ErrMsg(err error) tea.Cmd { return func() tea.Msg { return ResultMsg{Err: err} } }

// Warn returns a command that flashes a warning, formatted as fmt.Sprintf.
func Warn(format string, args ...any) tea.Cmd {
	s := fmt.Sprintf(format, args...)
	return func() tea.Msg { return WarnMsg(s) }
}

// ActionPortForward is shift-f's action name (keys.yaml "actions:").
const ActionPortForward = "port-forward"

// ActionShell opens a shell in a Ray container (keys.yaml "actions:").
const ActionShell = "shell"

// ExecMsg hands the terminal to a process (Cmd is a tea.ExecProcess or
// tea.Exec command: the editor of e): the App returns Cmd to the Program
// as it is, outside its busy count, so that the Program runs it; the
// process's callback message comes back to the App.
type ExecMsg struct{ Cmd tea.Cmd }
