package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/tui/host"
)

// The page stack: the root is a kind's list (showList), Enter and actions
// push pages, Esc pops them; every page shares the App's size and
// namespace.

func (a *App) top() host.Page { return a.stack[len(a.stack)-1] }

// bodyHeight is the height left for the page: header, hints, title bar,
// crumbs and the status line take one line each.
func (a *App) bodyHeight() int { return max(a.height-5, 1) }

func (a *App) resize(w, h int) {
	a.width, a.height = w, h
	for _, p := range a.lists {
		p.SetSize(w, a.bodyHeight())
	}
	for _, p := range a.stack {
		p.SetSize(w, a.bodyHeight())
	}
}

// showList makes the list view of the kind of v the root of the stack (the
// first kind's when v is not a list).
func (a *App) showList(v ViewKind) {
	k, ok := a.reg.ByView(v)
	if !ok || k.List != v {
		k = &a.reg.Entries[0]
	}
	p, ok := a.lists[k.List]
	if !ok {
		p = k.Typed.NewList(a.e, k)
		a.lists[k.List] = p
	}
	p.SetNamespace(a.ns)
	p.SetSize(a.width, a.bodyHeight())
	for _, old := range a.stack {
		if old != p {
			closePage(old)
		}
	}
	a.stack = []host.Page{p}
}

func (a *App) push(p host.Page) tea.Cmd {
	p.SetNamespace(a.ns)
	p.SetSize(a.width, a.bodyHeight())
	a.stack = append(a.stack, p)
	if i, ok := p.(host.Initer); ok {
		return tea.Batch(a.track(i.Init()), a.pollAccess())
	}
	return a.pollAccess()
}

func (a *App) pop() {
	if len(a.stack) > 1 {
		closePage(a.top())
		a.stack = a.stack[:len(a.stack)-1]
	}
}

func closePage(p host.Page) {
	if c, ok := p.(host.Closer); ok {
		c.Close()
	}
}

func (a *App) setNamespace(ns string) {
	a.ns = ns
	for _, p := range a.lists {
		p.SetNamespace(ns)
	}
	for _, p := range a.stack {
		p.SetNamespace(ns)
	}
}
