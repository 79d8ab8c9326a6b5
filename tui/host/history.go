package host

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/styles"
)

// HistoryRows is how many entries the fixed-height History block of the
// cluster, job and cronjob pages shows (the newest); HistoryHeight its
// lines with the heading.
const (
	HistoryRows   = 3
	HistoryHeight = 1 + HistoryRows
)

// HistoryCache holds the timelines read for the detail pages, per UID,
// re-read only when the Recorder's version of the object moved. Used from
// the UI loop only; reading is a tea.Cmd (Poll), its answer a HistoryMsg.
type HistoryCache struct {
	src  HistorySource
	byID map[types.UID]*historyState
}

type historyState struct {
	version uint64
	loaded  bool
	loading bool
	// entries are the object's own (its UID's, or with no UID recorded);
	// earlier counts those of other objects of its name (deleted and
	// created again, or a cluster of the same context name before), which
	// the timeline keeps (kube/history Ref.key) and the page must not
	// present as this object's.
	entries []history.Entry
	earlier int
	err     error
}

// HistoryMsg is a timeline read by Poll's command.
type HistoryMsg struct {
	cache   *HistoryCache
	uid     types.UID
	version uint64
	entries []history.Entry
	err     error
}

// NewHistoryCache is an empty cache reading timelines from src (nil: the
// History blocks show nothing).
func NewHistoryCache(src HistorySource) *HistoryCache {
	return &HistoryCache{src: src, byID: map[types.UID]*historyState{}}
}

// Poll returns the command that reads ref's timeline when it changed
// since it was last read (nil otherwise, and without a source).
func (h *HistoryCache) Poll(ref history.Ref) tea.Cmd {
	if h == nil || h.src == nil {
		return nil
	}
	v := h.src.Version(ref)
	s := h.byID[ref.UID]
	if s == nil {
		if len(h.byID) > 256 { // pages closed long ago
			clear(h.byID)
		}
		s = &historyState{}
		h.byID[ref.UID] = s
	}
	if s.loading || (s.loaded && s.version == v) {
		return nil
	}
	s.loading = true
	src := h.src
	return func() tea.Msg {
		es, err := src.Entries(ref)
		return HistoryMsg{cache: h, uid: ref.UID, version: v, entries: es, err: err}
	}
}

// Receive stores a read timeline; messages of an earlier session's cache
// are dropped.
func (h *HistoryCache) Receive(m HistoryMsg) {
	if h == nil || m.cache != h {
		return
	}
	s := h.byID[m.uid]
	if s == nil {
		return
	}
	s.loading, s.loaded, s.version, s.err = false, true, m.version, m.err
	s.entries, s.earlier = ownEntries(m.entries, m.uid)
}

// ownEntries keeps the entries of the object uid (and those that name no
// UID) and counts the others.
func ownEntries(all []history.Entry, uid types.UID) (own []history.Entry, earlier int) {
	own = make([]history.Entry, 0, len(all))
	for _, e := range all {
		if e.UID == "" || uid == "" || e.UID == uid {
			own = append(own, e)
		}
	}
	return own, len(all) - len(own)
}

// Block renders the History block of the object uid: a heading and the
// newest rows entries, newest first, within width; exactly 1+rows lines
// when pad (the fixed-height pages).
//
// Without a source (nothing records: tests, a session without a store)
// there is no block at all.
func (h *HistoryCache) Block(st *styles.Styles, e *Env, uid types.UID, width, rows int, pad bool) []string {
	if h == nil || h.src == nil {
		return nil
	}
	head := st.Section.Render("History") + " " + st.Faint.Render("(this machine's record while raydar ran, not the cluster's)")
	var body []string
	s := h.state(uid)
	switch {
	case s == nil || !s.loaded:
		head += " " + st.Faint.Render("loading…")
	case s.err != nil:
		head += " " + st.FlashErr.Render("error: "+s.err.Error())
	case len(s.entries) == 0:
		head += " " + st.Faint.Render("nothing recorded yet")
	default:
		now := e.Now()
		for i := len(s.entries) - 1; i >= 0 && len(body) < rows; i-- {
			en := &s.entries[i]
			l := fmt.Sprintf("  %5s  %s", format.Age(now, en.Time), format.OneLine(en.Change()))
			if by := en.By(); by != "" {
				l += "  " + st.Label.Render("by") + " " + by
			}
			if d := en.Detail(); d != "" {
				l += "  " + st.Faint.Render(format.OneLine(d))
			}
			body = append(body, l)
		}
		if n := len(s.entries) - len(body); n > 0 {
			head += " " + st.Faint.Render(fmt.Sprintf("newest %d of %d: raydar history", len(body), len(s.entries)))
		}
	}
	if s != nil && s.loaded && s.err == nil && s.earlier > 0 {
		what := "entries"
		if s.earlier == 1 {
			what = "entry"
		}
		head += " " + st.Faint.Render(fmt.Sprintf("(%d %s of earlier objects of this name left out)", s.earlier, what))
	}
	if h.src.Note() != "" {
		head += " " + st.Class(styles.Warn).Render(h.src.Note())
	}
	out := append([]string{head}, body...)
	for pad && len(out) < 1+rows {
		out = append(out, "")
	}
	for i, l := range out {
		if ansi.StringWidth(l) > width {
			out[i] = ansi.Truncate(l, max(width, 1), st.Glyphs.Ellipsis)
		}
	}
	return out
}

// Height is the lines of a fixed-height History block: 0 without a source.
func (h *HistoryCache) Height() int {
	if h == nil || h.src == nil {
		return 0
	}
	return HistoryHeight
}

func (h *HistoryCache) state(uid types.UID) *historyState {
	if h == nil {
		return nil
	}
	return h.byID[uid]
}

// RefOf is the history.Ref of the object kind ns/name with uid.
func RefOf(kind, ns, name string, uid types.UID) history.Ref {
	return history.Ref{Kind: kind, Namespace: ns, Name: name, UID: uid}
}
