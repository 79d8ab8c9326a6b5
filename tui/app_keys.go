package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/tui/host"
)

// key handles a key press according to the mode.
func (a *App) key(msg tea.KeyPressMsg) tea.Cmd {
	km := a.km
	switch a.mode {
	case modeDialog:
		if key.Matches(msg, km.Quit) {
			return a.quit()
		}
		done, cmd := a.dialog.Update(msg)
		if done {
			a.dialog = nil
			a.mode = modeNormal
		}
		return a.track(cmd)
	case modeCommand, modeFilter:
		return a.promptKey(msg)
	case modeHelp:
		switch {
		case key.Matches(msg, km.Quit):
			return a.quit()
		case key.Matches(msg, km.Help, km.Back), msg.String() == "q":
			a.mode = modeNormal
		}
		return nil
	}
	p := a.top()
	switch {
	case key.Matches(msg, km.Quit):
		return a.quit()
	case key.Matches(msg, km.Help):
		a.mode = modeHelp
		return nil
	case key.Matches(msg, km.Command):
		a.mode = modeCommand
		a.prompt = prompt{}
		a.historyAt = len(a.history)
		if a.opts.Backend != nil && a.contexts == nil {
			b := a.opts.Backend
			return func() tea.Msg {
				names, err := b.Contexts()
				return contextsMsg{names, err}
			}
		}
		return nil
	case key.Matches(msg, km.Filter):
		t := a.filterTarget()
		if t == nil {
			a.setFlash(flashWarn, "no filter in this view")
			return nil
		}
		a.mode = modeFilter
		a.prompt = prompt{}
		a.prompt.insert(t.Filter())
		return nil
	case key.Matches(msg, km.Back):
		if t := a.filterTarget(); t != nil && t.Filter() != "" {
			_ = t.SetFilter("")
			return nil
		}
		a.pop()
		return nil
	case key.Matches(msg, km.AllNamespaces):
		a.setNamespace("")
		a.setFlash(flashInfo, "namespace: all")
		return nil
	case key.Matches(msg, km.Open):
		if next := p.Open(); next != nil {
			return a.push(next)
		}
		return nil
	case key.Matches(msg, km.CopyName):
		return a.copyName(p)
	case key.Matches(msg, km.CopyRow):
		return a.copyRow(p)
	}
	for _, act := range a.viewActions(p.Kind()) {
		if key.Matches(msg, act.Key) && act.Run != nil {
			tg := p.Target()
			if tg.Env == nil { // a fleet list sets its row's context's
				tg.Env = a.envOf(p)
			}
			// A fleet list offers every action: a row of a read-only
			// context refuses the writes at once (the choke point would).
			if d := tg.Env.Sess.Deps; act.Dangerous && d != nil && d.Actions != nil && d.Actions.ReadOnly() {
				why := d.Actions.ReadOnlyReason()
				if why == "" {
					why = "read-only"
				}
				a.setFlash(flashWarn, act.Name+" refused: "+why+"; nothing was changed")
				return nil
			}
			return a.track(act.Run(tg))
		}
	}
	handled, cmd := p.Update(msg)
	if handled {
		return a.track(cmd)
	}
	return nil
}

// filterTarget is what the / prompt sets on the top page: its table's
// filter, or its search (log pages); nil when it has neither.
func (a *App) filterTarget() host.Filterer {
	p := a.top()
	if t := p.Table(); t != nil {
		return t
	}
	if s, ok := p.(host.Searcher); ok {
		return s.Searcher()
	}
	return nil
}
