package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/tui/styles"
)

// HistorySource is this machine's record of the Ray objects
// (kube/history's Recorder): the History block of each detail page.
type HistorySource interface {
	// Version grows when entries of the object are recorded; called from
	// the UI loop on ticks, so it must be cheap (a map lookup).
	Version(ref history.Ref) uint64
	// Entries reads the object's timeline, oldest first: I/O, called from
	// a tea.Cmd only.
	Entries(ref history.Ref) ([]history.Entry, error)
	// Note is "" when the record is kept on disk, else why it is in memory.
	Note() string
}

// historyRows is how many entries the fixed-height History block of the
// cluster, job and cronjob pages shows (the newest); historyHeight its
// lines with the heading.
const (
	historyRows   = 3
	historyHeight = 1 + historyRows
)

// historyPage is a detail page with a History block.
type historyPage interface{ historyRef() history.Ref }

// historyCache holds the timelines read for the detail pages, per UID,
// re-read only when the Recorder's version of the object moved. Used from
// the UI loop only; reading is a tea.Cmd (poll), its answer a historyMsg.
type historyCache struct {
	src  HistorySource
	byID map[types.UID]*historyState
}

type historyState struct {
	version uint64
	loaded  bool
	loading bool
	entries []history.Entry
	err     error
}

// historyMsg is a timeline read by poll's command.
type historyMsg struct {
	cache   *historyCache
	uid     types.UID
	version uint64
	entries []history.Entry
	err     error
}

func newHistoryCache(src HistorySource) *historyCache {
	return &historyCache{src: src, byID: map[types.UID]*historyState{}}
}

// poll returns the command that reads ref's timeline when it changed
// since it was last read (nil otherwise, and without a source).
func (h *historyCache) poll(ref history.Ref) tea.Cmd {
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
		return historyMsg{cache: h, uid: ref.UID, version: v, entries: es, err: err}
	}
}

// receive stores a read timeline; messages of an earlier session's cache
// are dropped.
func (h *historyCache) receive(m historyMsg) {
	if h == nil || m.cache != h {
		return
	}
	s := h.byID[m.uid]
	if s == nil {
		return
	}
	s.loading, s.loaded, s.version, s.entries, s.err = false, true, m.version, m.entries, m.err
}

// block renders the History block of the object uid: a heading and the
// newest rows entries, newest first, within width; exactly 1+rows lines
// when pad (the fixed-height pages).
//
// Without a source (nothing records: tests, a session without a store)
// there is no block at all.
func (h *historyCache) block(st *styles.Styles, e *env, uid types.UID, width, rows int, pad bool) []string {
	if h == nil || h.src == nil {
		return nil
	}
	head := st.Section.Render("History") + " " + st.Faint.Render("(this machine's record while raydar ran, not the cluster's)")
	var body []string
	switch s := h.state(uid); {
	case s == nil || !s.loaded:
		head += " " + st.Faint.Render("loading…")
	case s.err != nil:
		head += " " + st.FlashErr.Render("error: "+s.err.Error())
	case len(s.entries) == 0:
		head += " " + st.Faint.Render("nothing recorded yet")
	default:
		now := e.now()
		for i := len(s.entries) - 1; i >= 0 && len(body) < rows; i-- {
			en := &s.entries[i]
			l := fmt.Sprintf("  %5s  %s", age(now, en.Time), oneLine(en.Change()))
			if by := en.By(); by != "" {
				l += "  " + st.Label.Render("by") + " " + by
			}
			if d := en.Detail(); d != "" {
				l += "  " + st.Faint.Render(oneLine(d))
			}
			body = append(body, l)
		}
		if n := len(s.entries) - len(body); n > 0 {
			head += " " + st.Faint.Render(fmt.Sprintf("newest %d of %d: raydar history", len(body), len(s.entries)))
		}
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

// height is the lines of a fixed-height History block: 0 without a source.
func (h *historyCache) height() int {
	if h == nil || h.src == nil {
		return 0
	}
	return historyHeight
}

func (h *historyCache) state(uid types.UID) *historyState {
	if h == nil {
		return nil
	}
	return h.byID[uid]
}

// The detail pages' objects, as kube/history files them.
func (d *clusterDetail) historyRef() history.Ref {
	return refOf(history.KindRayCluster, d.rc.Namespace, d.rc.Name, d.uid)
}
func (d *jobDetail) historyRef() history.Ref {
	return refOf(history.KindRayJob, d.job.Namespace, d.job.Name, d.uid)
}
func (d *serviceDetail) historyRef() history.Ref {
	return refOf(history.KindRayService, d.svc.Namespace, d.svc.Name, d.uid)
}
func (d *cronJobDetail) historyRef() history.Ref {
	return refOf(history.KindRayCronJob, d.cj.Namespace, d.cj.Name, d.uid)
}

func refOf(kind, ns, name string, uid types.UID) history.Ref {
	return history.Ref{Kind: kind, Namespace: ns, Name: name, UID: uid}
}

// historyBlock is the page's History block (fixed height but on the
// scrolling service page).
func (d *clusterDetail) historyBlock() []string {
	return d.e.hist.block(d.e.st, d.e, d.uid, d.w, historyRows, true)
}
func (d *jobDetail) historyBlock() []string {
	return d.e.hist.block(d.e.st, d.e, d.uid, d.w, historyRows, true)
}
func (d *cronJobDetail) historyBlock() []string {
	return d.e.hist.block(d.e.st, d.e, d.uid, d.w, historyRows, true)
}
func (d *serviceDetail) historyBlock() []string {
	return d.e.hist.block(d.e.st, d.e, d.uid, d.w, 10, false)
}
