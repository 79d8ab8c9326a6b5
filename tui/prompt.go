package tui

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/pages/forwards"
	"github.com/raydar/raydar/tui/pages/gpus"
	"github.com/raydar/raydar/tui/table"
)

// prompt is the one-line editor of command and filter mode. The cursor is
// always at the end (k9s' prompt works the same way).
type prompt struct {
	text string
	// note is shown beside the prompt: a filter error or the completions.
	note string
	// completion cycling state
	cands   []string
	candIdx int
	base    string // text before the word being completed
}

func (p *prompt) insert(s string) {
	p.text += s
	p.cands = nil
}

func (p *prompt) backspace() bool {
	if p.text == "" {
		return false
	}
	r := []rune(p.text)
	p.text = string(r[:len(r)-1])
	p.cands = nil
	return true
}

func (p *prompt) deleteWord() {
	t := strings.TrimRight(p.text, " ")
	if i := strings.LastIndex(t, " "); i >= 0 {
		p.text = t[:i+1]
	} else {
		p.text = ""
	}
	p.cands = nil
}

// commandWords is every first word the command line knows: the kinds'
// aliases (k9s style) and the commands.
func (a *App) commandWords() []string {
	w := []string{"ns", "namespace", "ctx", "context", "q", "quit", "help", "forwards", "pf", "gpus"}
	w = append(w, a.reg.Aliases()...)
	sort.Strings(w)
	return w
}

func (a *App) promptKey(msg tea.KeyPressMsg) tea.Cmd {
	p := &a.prompt
	switch msg.String() {
	case "ctrl+c":
		return a.quit()
	case "esc":
		if a.mode == modeFilter {
			if t := a.filterTarget(); t != nil {
				_ = t.SetFilter("")
			}
		}
		a.mode = modeNormal
		return nil
	case "enter":
		line := strings.TrimSpace(p.text)
		m := a.mode
		a.mode = modeNormal
		if m == modeFilter {
			if t := a.filterTarget(); t != nil {
				if err := t.SetFilter(line); err != nil {
					a.setFlash(flashErr, err.Error())
				}
			}
			return nil
		}
		if line != "" {
			a.history = append(slices.DeleteFunc(a.history, func(h string) bool { return h == line }), line)
		}
		return a.runCommand(line)
	case "backspace":
		if !p.backspace() {
			if a.mode == modeFilter {
				if t := a.filterTarget(); t != nil {
					_ = t.SetFilter("")
				}
			}
			a.mode = modeNormal
			return nil
		}
	case "ctrl+u":
		p.text, p.cands = "", nil
	case "ctrl+w":
		p.deleteWord()
	case "tab":
		if a.mode == modeCommand {
			a.complete()
		}
		return nil
	case "up", "down":
		if a.mode == modeCommand && len(a.history) > 0 {
			if msg.String() == "up" {
				a.historyAt = max(a.historyAt-1, 0)
			} else {
				a.historyAt = min(a.historyAt+1, len(a.history))
			}
			p.text, p.cands = "", nil
			if a.historyAt < len(a.history) {
				p.text = a.history[a.historyAt]
			}
		}
		return nil
	default:
		if msg.Text == "" {
			return nil
		}
		p.insert(msg.Text)
	}
	a.promptChanged()
	return nil
}

// promptChanged applies the filter as it is typed; an invalid expression
// keeps the previous filter and shows the error beside the prompt.
func (a *App) promptChanged() {
	a.prompt.note = ""
	if a.mode != modeFilter {
		return
	}
	t := a.filterTarget()
	if t == nil {
		return
	}
	if a.top().Table() == nil { // a search: a regular expression
		if err := t.SetFilter(a.prompt.text); err != nil {
			a.prompt.note = err.Error()
		}
		return
	}
	if _, err := table.ParseFilter(a.prompt.text); err != nil {
		a.prompt.note = err.Error()
		return
	}
	_ = t.SetFilter(a.prompt.text)
}

// candidates returns the completions of the last word of text.
func (a *App) candidates(text string) (base string, out []string) {
	fields := strings.Fields(text)
	trailing := strings.HasSuffix(text, " ")
	var word string
	var pool []string
	switch {
	case len(fields) == 0 || (len(fields) == 1 && !trailing):
		if len(fields) == 1 {
			word = fields[0]
		}
		pool = a.commandWords()
	case len(fields) == 1 || (len(fields) == 2 && !trailing):
		if len(fields) == 2 {
			word = fields[1]
		}
		base = fields[0] + " "
		switch fields[0] {
		case "ctx", "context":
			pool = a.contexts
			if a.fleet != nil {
				pool = append([]string{AllContexts}, a.fleetNames()...)
			}
		default:
			if _, ok := a.reg.ByAlias(strings.ToLower(fields[0])); ok || fields[0] == "ns" || fields[0] == "namespace" {
				pool = append([]string{"all"}, a.namespaces()...)
			}
		}
	default:
		return "", nil
	}
	for _, c := range pool {
		if strings.HasPrefix(c, word) {
			out = append(out, c)
		}
	}
	return base, out
}

// complete is Tab: a unique candidate completes; several complete to their
// common prefix, and Tab again cycles through them.
func (a *App) complete() {
	p := &a.prompt
	if len(p.cands) > 1 {
		p.candIdx = (p.candIdx + 1) % len(p.cands)
		p.text = p.base + p.cands[p.candIdx]
		return
	}
	base, cands := a.candidates(p.text)
	switch len(cands) {
	case 0:
		return
	case 1:
		p.text = base + cands[0]
		if base == "" && takesArg(cands[0]) {
			p.text += " "
		}
		return
	}
	lcp := cands[0]
	for _, c := range cands[1:] {
		for !strings.HasPrefix(c, lcp) {
			lcp = lcp[:len(lcp)-1]
		}
	}
	cur := strings.TrimPrefix(p.text, base)
	if len(lcp) > len(cur) {
		p.text = base + lcp
		p.cands = nil
		// show the choices without cycling yet
		p.note = strings.Join(cands, " ")
		return
	}
	p.cands, p.base, p.candIdx = cands, base, 0
	p.text = base + cands[0]
	p.note = strings.Join(cands, " ")
}

func takesArg(cmd string) bool {
	switch cmd {
	case "ns", "namespace", "ctx", "context":
		return true
	}
	return false
}

// runCommand executes a command line (without the colon).
func (a *App) runCommand(line string) tea.Cmd {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	cmd, args := strings.ToLower(f[0]), f[1:]
	if k, ok := a.reg.ByAlias(cmd); ok {
		a.showList(k.List)
		if len(args) > 0 {
			a.switchNamespace(args[0])
		}
		return nil
	}
	switch cmd {
	case "q", "q!", "quit", "exit":
		return a.quit()
	case "help", "?":
		a.mode = modeHelp
	case "forwards", "pf":
		e, err := a.forwardsEnv()
		if err != nil {
			a.setFlash(flashWarn, err.Error())
			return nil
		}
		return a.push(forwards.NewPage(e))
	case "gpus":
		return a.push(gpus.NewPage(a.e))
	case "ns", "namespace":
		ns := ""
		if len(args) > 0 {
			ns = args[0]
		}
		a.switchNamespace(ns)
	case "ctx", "context":
		if len(args) == 0 {
			if a.fleet != nil {
				a.setFlash(flashInfo, "contexts: "+strings.Join(a.fleetNames(), " ")+" (:ctx NAME shows one, :ctx "+AllContexts+" every one)")
				return nil
			}
			if len(a.contexts) == 0 {
				a.setFlash(flashInfo, "context: "+format.OrNone(a.e.Sess.Context))
			} else {
				a.setFlash(flashInfo, "contexts: "+strings.Join(a.contexts, " "))
			}
			return nil
		}
		return a.switchContext(args[0])
	default:
		try := ""
		for _, k := range a.reg.Entries {
			try += ":" + k.AliasList()[0] + " "
		}
		a.setFlash(flashErr, fmt.Sprintf("unknown command %q (try %s:ns :ctx :q)", cmd, try))
	}
	return nil
}

func (a *App) switchNamespace(ns string) {
	if ns == "all" || ns == "-A" || ns == "*" {
		ns = ""
	}
	a.setNamespace(ns)
	if ns == "" {
		a.setFlash(flashInfo, "namespace: all")
		return
	}
	if !slices.Contains(a.namespaces(), ns) {
		a.setFlash(flashWarn, fmt.Sprintf("namespace: %s (no Ray objects there yet)", ns))
		return
	}
	a.setFlash(flashInfo, "namespace: "+ns)
}

func (a *App) switchContext(name string) tea.Cmd {
	if a.fleet != nil {
		// A fleet view shows its own contexts; it connects to no other.
		if cmd, ok := a.focusContext(name); ok {
			return cmd
		}
		a.setFlash(flashErr, fmt.Sprintf("context %s is not open in this view (open: %s; :ctx %s shows every one)", name, strings.Join(a.fleetNames(), " "), AllContexts))
		return nil
	}
	b := a.opts.Backend
	if b == nil {
		a.setFlash(flashErr, "switching contexts is not available")
		return nil
	}
	if name == a.e.Sess.Context {
		a.setFlash(flashInfo, "context: "+name)
		return nil
	}
	a.setFlash(flashInfo, "switching to context "+name+"…")
	return a.track(func() tea.Msg {
		sess, err := b.Switch(context.Background(), name)
		return switchedMsg{name: name, sess: sess, err: err}
	})
}
