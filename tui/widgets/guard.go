package widgets

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/tui/styles"
)

// Guard is what a write's confirmation knows of the kube context it writes
// to (kube/actions decides; the dialog shows it). Every confirmation names
// the context; on a protected one it shows it as a badge and keeps Confirm
// disabled until Name is typed exactly.
type Guard struct {
	// Context is the kubeconfig context written to ("": unknown).
	Context string
	// Protected: raydar's config file marks the context protected.
	Protected bool
	// Name is what must be typed: the name of the object written.
	Name string
}

// maxNameLen bounds what can be typed to confirm (a DNS subdomain).
const maxNameLen = 253

// guardInput is a confirmation's context line and, on a protected
// context, the field the object's name is typed into.
type guardInput struct {
	Guard
	typed string
}

// ok reports whether the confirmation may go ahead: always on a context
// that is not protected, else once the typed text equals the name.
func (g *guardInput) ok() bool { return !g.Protected || g.typed == g.Name }

// handleKey edits the typed text on a protected context; it reports
// whether the key was taken.
func (g *guardInput) handleKey(msg tea.KeyPressMsg) bool {
	if !g.Protected {
		return false
	}
	switch msg.String() {
	case "backspace":
		if r := []rune(g.typed); len(r) > 0 {
			g.typed = string(r[:len(r)-1])
		}
		return true
	case "ctrl+u":
		g.typed = ""
		return true
	}
	if msg.Text == "" || strings.ContainsAny(msg.Text, "\n\t") {
		return false
	}
	if len(g.typed)+len(msg.Text) <= maxNameLen {
		g.typed += msg.Text
	}
	return true
}

// header is the line under the title: the context, as a badge when
// protected.
func (g *guardInput) header(st *styles.Styles) []string {
	if g.Context == "" && !g.Protected {
		return nil
	}
	if !g.Protected {
		return []string{st.Label.Render("context:") + " " + g.Context}
	}
	return []string{st.Protected.Render(" PROTECTED context " + g.Context + " ")}
}

// input is the name field of a protected context, with what is wrong.
func (g *guardInput) input(st *styles.Styles, width int) []string {
	if !g.Protected {
		return nil
	}
	w := max(width, 1)
	out := []string{"", ansi.Wrap(fmt.Sprintf("type %s to confirm: ", g.Name), w, "") + g.typed + st.Prompt.Render(Caret(st.Plain))}
	if g.typed != "" && !g.ok() {
		out = append(out, st.FlashWarn.Render(ansi.Wrap(fmt.Sprintf("%q is not %s", g.typed, g.Name), w, "")))
	}
	return out
}
