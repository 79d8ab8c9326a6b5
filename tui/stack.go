package tui

import tea "charm.land/bubbletea/v2"

// The page stack: the root is a kind's list (showList), Enter and actions
// push pages, Esc pops them; every page shares the App's size and
// namespace.

func (a *App) top() page { return a.stack[len(a.stack)-1] }

// bodyHeight is the height left for the page: header, hints, title bar,
// crumbs and the status line take one line each.
func (a *App) bodyHeight() int { return max(a.height-5, 1) }

func (a *App) resize(w, h int) {
	a.width, a.height = w, h
	for _, p := range a.lists {
		p.setSize(w, a.bodyHeight())
	}
	for _, p := range a.stack {
		p.setSize(w, a.bodyHeight())
	}
}

// showList makes the list view of the kind of v the root of the stack (the
// first kind's when v is not a list).
func (a *App) showList(v ViewKind) {
	k, ok := a.reg.byView(v)
	if !ok || k.list != v {
		k = &a.reg.kinds[0]
	}
	p, ok := a.lists[k.list]
	if !ok {
		p = k.typed.newList(a.e, k)
		a.lists[k.list] = p
	}
	p.setNamespace(a.ns)
	p.setSize(a.width, a.bodyHeight())
	for _, old := range a.stack {
		if old != p {
			closePage(old)
		}
	}
	a.stack = []page{p}
}

func (a *App) push(p page) tea.Cmd {
	p.setNamespace(a.ns)
	p.setSize(a.width, a.bodyHeight())
	a.stack = append(a.stack, p)
	if i, ok := p.(initer); ok {
		return a.track(i.init())
	}
	return nil
}

func (a *App) pop() {
	if len(a.stack) > 1 {
		closePage(a.top())
		a.stack = a.stack[:len(a.stack)-1]
	}
}

// closer is implemented by pages that hold resources while open (a log
// stream); close is called when the page leaves the stack.
type closer interface{ close() }

func closePage(p page) {
	if c, ok := p.(closer); ok {
		c.close()
	}
}

func (a *App) setNamespace(ns string) {
	a.ns = ns
	for _, p := range a.lists {
		p.setNamespace(ns)
	}
	for _, p := range a.stack {
		p.setNamespace(ns)
	}
}
