package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/tui/diagnose"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/registry"
	"github.com/raydar/raydar/tui/styles"
)

type mode int

const (
	modeNormal mode = iota
	modeCommand
	modeFilter
	modeHelp
	modeDialog
)

type flashLevel int

const (
	flashInfo flashLevel = iota
	flashWarn
	flashErr
)

type flash struct {
	text    string
	level   flashLevel
	expires time.Time
}

// Messages.
type (
	batchMsg struct {
		gen int
		// env is the member the batch is of (nil: the App's Env).
		env    *host.Env
		deltas []watch.Delta
		err    error
	}
	tickMsg struct{}
	// syncPollMsg re-reads Session.Synced while the header says syncing,
	// so the first full screen does not wait for the next tick.
	syncPollMsg struct{ gen int }
	resizeMsg   struct{ seq int }
	doneMsg     struct{ msg tea.Msg }
	contextsMsg struct {
		names []string
		err   error
	}
	switchedMsg struct {
		name string
		sess Session
		err  error
	}
)

// App is the root model. Create it with New and run it with
// tea.NewProgram(app, ProgramOptions(opts)...).
type App struct {
	opts    Options
	st      *styles.Styles
	km      *keys.KeyMap
	now     func() time.Time
	reg     registry.Kinds
	scheme  host.LazyScheme
	seq     int64
	actions map[ViewKind][]Action

	e          *host.Env
	gen        int
	sessCancel context.CancelFunc

	width, height int
	pending       tea.WindowSizeMsg
	resizeSeq     int

	ns    string
	lists map[ViewKind]host.Page
	stack []host.Page

	mode    mode
	prompt  prompt
	history []string
	// historyAt is the history entry shown in the command prompt.
	historyAt int
	flash     flash
	busy      int
	spin      spinner.Model
	contexts  []string
	role      string
	syncing   bool
	// syncingWhat names what syncing waits for ("Pods, Events"; empty: not
	// known), shown after it in the header.
	syncingWhat string
	dialog      Dialog
	quitting    bool
	// opened are the start-up commands of the pages pushed through the
	// Host during an Update; Update runs them after it.
	opened []tea.Cmd
	// sshUser and sshHost: $USER and the hostname, read once by New, for
	// the forwards' ssh lines.
	sshUser, sshHost string

	// fleet are a fleet view's members and fleetEnv the Env that merges
	// them (nil: one context; app_fleet.go); fleetLine is the header's
	// per-context states (states: each member's), and since when each
	// member has been syncing or lost.
	fleet     []*host.Env
	fleetEnv  *host.Env
	fleetLine string
	states    map[*host.Env]string
	since     map[*host.Env]time.Time

	// tmux: the Program's environment (tea.EnvMsg) has TMUX set, so the
	// clipboard's OSC 52 goes through tmux's passthrough (app_copy.go).
	tmux bool

	// pacer runs the renderer's ticker only while a frame may be waiting
	// (app_pacer.go); nil outside a Program made with ProgramOptions.
	pacer *framePacer
}

// New builds the TUI. It fails only when a view action's key clashes with
// the key map.
func New(opts Options) (*App, error) {
	a := &App{opts: opts, km: opts.Keys, now: opts.Now, reg: kinds()}
	a.sshUser, a.sshHost = portforward.Here()
	if a.km == nil {
		a.km = keys.Default()
	}
	if a.now == nil {
		a.now = time.Now
	}
	switch {
	case opts.NoColor:
		a.st = styles.Plain()
	case opts.Styles != nil:
		a.st = opts.Styles
	default:
		a.st = styles.Default()
	}
	if a.opts.Tick <= 0 {
		a.opts.Tick = time.Second
	}
	if a.opts.ResizeDebounce <= 0 {
		a.opts.ResizeDebounce = 50 * time.Millisecond
	}
	sp := spinner.MiniDot
	if opts.NoColor {
		sp = spinner.Line
	}
	a.spin = spinner.New(spinner.WithSpinner(sp), spinner.WithStyle(a.st.Busy))

	// Actions: rebind from the key file, hide dangerous ones when read-only,
	// refuse clashes with the key map.
	for vk, list := range opts.Actions {
		if a.actions == nil {
			a.actions = map[ViewKind][]Action{}
		}
		var extra []keys.Named
		for _, act := range list {
			if act.Dangerous && opts.ReadOnly {
				continue
			}
			act.Key = a.km.Action(act.Name, act.Key)
			a.actions[vk] = append(a.actions[vk], act)
			b := act.Key
			extra = append(extra, keys.Named{Name: "action " + act.Name, Binding: &b})
		}
		if err := a.km.Check(extra...); err != nil {
			return nil, fmt.Errorf("%s view actions: %w", vk, err)
		}
	}
	if len(opts.Fleet) == 1 { // a fleet of one is that context's view
		opts.Session, opts.Store, opts.Fleet = opts.Fleet[0].Session, opts.Fleet[0].Store, nil
		a.opts = opts
	}
	if len(opts.Fleet) > 1 {
		a.startFleet(opts.Fleet)
	} else {
		store := opts.Store
		if store == nil {
			store = watch.NewStore()
		}
		a.startSession(opts.Session, store)
	}
	a.showList(opts.StartView)
	return a, nil
}

// readOnlyWhy says why the current session's context takes no writes when
// raydar's config file marks it read-only ("" otherwise, and with
// --readonly, which the person chose).
func (a *App) readOnlyWhy() string {
	if d := a.envOf(a.top()).Sess.Deps; d != nil && d.Actions != nil {
		return d.Actions.ReadOnlyReason()
	}
	return ""
}

// viewActions are the actions a view of kind k offers in the current
// session: without the Dangerous ones when its context is read-only (the
// config file; --readonly removed them for good in New). The choke point
// refuses them all the same.
func (a *App) viewActions(k ViewKind) []Action {
	d := a.envOf(a.top()).Sess.Deps
	if d == nil || d.Actions == nil || !d.Actions.ReadOnly() {
		return a.actions[k]
	}
	var out []Action
	for _, act := range a.actions[k] {
		if !act.Dangerous {
			out = append(out, act)
		}
	}
	return out
}

// ProgramOptions are the tea.ProgramOptions that go with opts: with NoColor
// the colour profile is pinned to ASCII whatever the terminal says. They set
// the program's message filter (the frame pacer's, app_pacer.go): a caller
// that set another (tea.WithFilter keeps the last) would turn the pacer off.
func ProgramOptions(opts Options) []tea.ProgramOption {
	return programOptions(opts, newFramePacer(FPS))
}

func programOptions(opts Options, pc *framePacer) []tea.ProgramOption {
	// The renderer writes a changed frame on its ticker: at bubbletea's
	// default 60 Hz a key waits up to 16.7 ms for it; at 120 Hz (its
	// maximum) up to 8.3 ms. An unchanged frame writes nothing. The pacer
	// runs the ticker only while a frame may be waiting, and fast for the
	// first frame after a quiet spell (app_pacer.go).
	o := []tea.ProgramOption{tea.WithFPS(FPS), pc.option(), tea.WithFilter(pc.filter)}
	if opts.NoColor {
		o = append(o, tea.WithColorProfile(colorprofile.Ascii))
	}
	return o
}

// FPS is the renderer's frame rate (see ProgramOptions).
const FPS = 120

func (a *App) logf(format string, args ...any) {
	if a.opts.Logf != nil {
		a.opts.Logf(format, args...)
	}
}

// startSession makes sess the current session with store as its data.
func (a *App) startSession(sess Session, store *watch.Store) {
	a.useEnv(a.newEnv(sess, store, a.newSessionCtx()))
}

// newSessionCtx ends the previous session's context and starts the next
// one's: what was asked for the previous session is dropped (gen).
func (a *App) newSessionCtx() context.Context {
	if a.sessCancel != nil {
		a.sessCancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.sessCancel = cancel
	a.gen++
	return ctx
}

// Init starts the feed and the clock.
func (a *App) Init() tea.Cmd {
	return tea.Batch(a.nextBatch(), a.tick(), a.watchForwards(), a.syncPoll())
}

// nextBatch waits for the next batch of every member.
func (a *App) nextBatch() tea.Cmd {
	ms := a.members()
	cmds := make([]tea.Cmd, len(ms))
	for i, m := range ms {
		cmds[i] = a.nextBatchOf(m)
	}
	return tea.Batch(cmds...)
}

// readSynced re-reads e's Synced (nil: synced) and, while syncing, what it
// waits for: up to maxSyncingNames lists by name, else how many (at start
// every list is loading; a slow one is named once the others are in).
func (a *App) readSynced(e *host.Env) {
	a.syncing = e.Sess.Synced != nil && !e.Sess.Synced()
	a.syncingWhat = ""
	if a.syncing && e.Sess.Unsynced != nil {
		names := e.Sess.Unsynced()
		if len(names) > maxSyncingNames {
			a.syncingWhat = fmt.Sprintf("%d lists", len(names))
		} else {
			a.syncingWhat = strings.Join(names, ", ")
		}
	}
}

// maxSyncingNames is how many loading lists the header names.
const maxSyncingNames = 2

// syncPollEvery is how often the TUI re-reads Synced while syncing.
const syncPollEvery = 50 * time.Millisecond

func (a *App) syncPoll() tea.Cmd {
	if !a.syncing {
		return nil
	}
	gen := a.gen
	return tea.Tick(syncPollEvery, func(time.Time) tea.Msg { return syncPollMsg{gen} })
}

// nextBatchOf waits for the next batch of member e's feed.
func (a *App) nextBatchOf(e *host.Env) tea.Cmd {
	feed, ctx, gen := e.Sess.Feed, e.Ctx, a.gen
	if feed == nil {
		return nil
	}
	return func() tea.Msg {
		ds, err := feed.Next(ctx)
		return batchMsg{gen: gen, env: e, deltas: ds, err: err}
	}
}

func (a *App) tick() tea.Cmd {
	return tea.Tick(a.opts.Tick, func(time.Time) tea.Msg { return tickMsg{} })
}

// Update implements tea.Model.
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := a.update(msg)
	if len(a.opened) > 0 {
		cmd = tea.Batch(append(a.opened, cmd)...)
		a.opened = nil
	}
	return a, cmd
}

// appHost is the App as pages and actions talk to it (Host).
type appHost struct{ a *App }

// ShowDialog implements Host.
func (h appHost) ShowDialog(d Dialog) { h.a.dialog, h.a.mode = d, modeDialog }

// Push implements Host.
func (h appHost) Push(p host.Page) {
	if cmd := h.a.push(p); cmd != nil {
		h.a.opened = append(h.a.opened, cmd)
	}
}

func (a *App) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		if a.width == 0 || a.height == 0 {
			a.resize(msg.Width, msg.Height)
			return nil
		}
		if msg.Width == a.width && msg.Height == a.height {
			a.pending = tea.WindowSizeMsg{}
			return nil
		}
		a.pending = msg
		a.resizeSeq++
		seq := a.resizeSeq
		return tea.Tick(a.opts.ResizeDebounce, func(time.Time) tea.Msg { return resizeMsg{seq} })
	case resizeMsg:
		if msg.seq == a.resizeSeq && a.pending.Width > 0 {
			a.resize(a.pending.Width, a.pending.Height)
			a.pending = tea.WindowSizeMsg{}
		}
	case tea.KeyPressMsg:
		return a.key(msg)
	case tea.PasteMsg:
		if a.mode == modeCommand || a.mode == modeFilter {
			a.prompt.insert(strings.ReplaceAll(msg.Content, "\n", " "))
			a.promptChanged()
		}
	case batchMsg:
		return a.applyBatch(msg)
	case tickMsg:
		return tea.Batch(a.onTick(), a.tick())
	case syncPollMsg:
		if msg.gen != a.gen || !a.syncing {
			return nil
		}
		a.readSynced(a.e)
		return a.syncPoll()
	case spinner.TickMsg:
		if a.busy > 0 {
			var cmd tea.Cmd
			a.spin, cmd = a.spin.Update(msg)
			return cmd
		}
	case doneMsg:
		a.busy = max(a.busy-1, 0)
		if b, ok := msg.msg.(tea.BatchMsg); ok {
			return tea.Batch(b...)
		}
		if msg.msg == nil {
			return nil
		}
		return a.update(msg.msg)
	case ResultMsg:
		if msg.Err != nil {
			a.setFlash(flashErr, msg.Err.Error())
		} else if msg.Text != "" {
			a.setFlash(flashInfo, msg.Text)
		}
	case ShowDialogMsg:
		if msg.Dialog != nil {
			a.e.Host.ShowDialog(msg.Dialog)
		}
	case host.PushMsg:
		if p := msg.Build(); p != nil {
			return a.push(p)
		}
	case host.HistoryMsg:
		for _, m := range a.members() { // the cache that asked takes it
			m.Hist.Receive(msg)
		}
	case diagnose.AccessMsg:
		for _, m := range a.members() { // the diagnoses that asked take it
			m.Why.ReceiveAccess(msg)
		}
		a.applyWhy()
	case diagnose.GatewayMsg:
		for _, m := range a.members() {
			m.Why.ReceiveGateway(msg)
		}
		a.applyWhy()
	case host.WarnMsg:
		a.setFlash(flashWarn, string(msg))
	case host.ExecMsg:
		return msg.Cmd
	case tea.EnvMsg:
		a.tmux = msg.Getenv("TMUX") != ""
	case forwardsMsg:
		return a.onForwards(msg)
	case contextsMsg:
		if msg.err != nil {
			a.logf("listing contexts: %v", msg.err)
		} else {
			a.contexts = msg.names
		}
	case switchedMsg:
		if msg.err != nil {
			a.setFlash(flashErr, fmt.Sprintf("context %s: %v", msg.name, msg.err))
			return nil
		}
		var root ViewKind
		if len(a.stack) > 0 {
			root = a.stack[0].Kind()
		}
		a.startSession(msg.sess, watch.NewStore())
		a.showList(root)
		a.setFlash(flashInfo, "context: "+msg.sess.Context)
		return tea.Batch(a.nextBatch(), a.watchForwards(), a.syncPoll())
	default:
		for _, p := range a.stack {
			if r, ok := p.(host.Receiver); ok {
				if cmd, handled := r.Receive(msg); handled {
					return cmd
				}
			}
		}
	}
	return nil
}

func (a *App) applyBatch(msg batchMsg) tea.Cmd {
	if msg.gen != a.gen {
		return nil // from a previous context
	}
	e := msg.env
	if e == nil {
		e = a.e
	}
	if msg.err != nil {
		if !errors.Is(msg.err, context.Canceled) {
			a.logf("feed %s: %v", e.Sess.Context, msg.err)
			a.setFlash(flashErr, "watch stopped: "+msg.err.Error())
		}
		return nil
	}
	if a.syncing && e == a.e {
		a.readSynced(a.e)
	}
	ch := e.Store.Apply(msg.deltas)
	var cmds []tea.Cmd
	if !ch.Empty() {
		e.Why.Update(&ch)
		// A page takes the changes of its own context: a fleet list
		// those of each member.
		for _, p := range a.lists {
			if a.envOf(p) == e {
				p.Apply(&ch)
			} else if fp, ok := p.(host.FleetPage); ok {
				fp.ApplyFrom(e, &ch)
			}
		}
		a.applyWhy()
		for _, p := range a.stack[1:] {
			if a.envOf(p) != e {
				continue
			}
			if c := applyCmd(p, &ch); c != nil {
				cmds = append(cmds, c)
			}
		}
	}
	cmds = append(cmds, a.nextBatchOf(e))
	return tea.Batch(cmds...)
}

func applyCmd(p host.Page, ch *watch.Changes) tea.Cmd {
	if c, ok := p.(host.CmdApplier); ok {
		return c.ApplyCmd(ch)
	}
	p.Apply(ch)
	return nil
}

// applyWhy re-projects the list rows whose WHY cell changed.
func (a *App) applyWhy() {
	for _, p := range a.lists {
		if w, ok := p.(interface{ ApplyWhy() }); ok {
			w.ApplyWhy()
		}
	}
	for _, p := range a.stack[1:] {
		if r, ok := p.(interface{ relayout() }); ok {
			r.relayout()
		}
	}
	for _, m := range a.members() {
		m.Why.ClearChanged()
	}
}

func (a *App) onTick() tea.Cmd {
	if a.e.Sess.Role != nil {
		a.role = a.e.Sess.Role()
	}
	for _, m := range a.members() {
		if m.Sess.Role != nil {
			m.Why.SetRole(m.Sess.Role())
		}
		m.Why.RefreshTimed()
	}
	// Ray's capacity is polled for the cluster whose detail page is on
	// top only; leaving it drops it from the diagnosis.
	if cp, ok := a.top().(host.CapacityPoller); ok {
		cp.PollCapacity()
		a.fleetCapacity(a.envOf(a.top()))
	} else {
		a.fleetCapacity(nil)
	}
	a.applyWhy()
	if a.syncing {
		a.readSynced(a.e)
	}
	a.markStale()
	a.fleetHeader()
	if a.flash.text != "" && !a.flash.expires.IsZero() && a.now().After(a.flash.expires) {
		a.flash = flash{}
	}
	var hist tea.Cmd
	if hp, ok := a.top().(host.HistoryPage); ok {
		hist = a.envOf(a.top()).Hist.Poll(hp.HistoryRef())
	}
	if t, ok := a.top().(host.Ticker); ok {
		return tea.Batch(hist, a.pollAccess(), a.pollGateways(), a.track(t.Tick()))
	}
	return tea.Batch(hist, a.pollAccess(), a.pollGateways())
}

// pollGateways reads, for every context, the Gateway API objects of the
// RayServices that upgrade incrementally (those due only; the answers
// come back as diagnose.GatewayMsg). Not tracked by the busy indicator.
func (a *App) pollGateways() tea.Cmd {
	var cmds []tea.Cmd
	for _, m := range a.members() {
		cmds = append(cmds, m.Why.PollGateways())
	}
	return tea.Batch(cmds...)
}

// pollAccess asks, for the clusters the page on top shows, whether their
// autoscaler's ServiceAccount may do its work (those due only; the
// answers come back as diagnose.AccessMsg). Not tracked by the busy
// indicator: nothing waits for it.
func (a *App) pollAccess() tea.Cmd {
	if f, ok := a.top().(host.FleetPage); ok && a.envOf(a.top()).Fleet != nil {
		var cmds []tea.Cmd
		for _, m := range a.fleet {
			cmds = append(cmds, m.Why.PollAccess(f.ClustersShownIn(m)))
		}
		return tea.Batch(cmds...)
	}
	if s, ok := a.top().(host.ClustersShower); ok {
		return a.envOf(a.top()).Why.PollAccess(s.ClustersShown())
	}
	return nil
}

// track runs cmd with the busy indicator on until it returns.
func (a *App) track(cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	a.busy++
	wrapped := func() tea.Msg { return doneMsg{cmd()} }
	if a.busy == 1 {
		return tea.Batch(wrapped, a.spin.Tick)
	}
	return wrapped
}

func (a *App) setFlash(level flashLevel, text string) {
	d := 5 * time.Second
	if level == flashErr {
		d = 10 * time.Second
	}
	a.flash = flash{text: text, level: level, expires: a.now().Add(d)}
}

func (a *App) quit() tea.Cmd {
	a.quitting = true
	if a.sessCancel != nil {
		a.sessCancel()
	}
	return tea.Quit
}

// View implements tea.Model.
func (a *App) View() tea.View {
	s := a.render()
	a.pacer.viewed(s)
	v := tea.NewView(s)
	v.AltScreen = true
	v.WindowTitle = "raydar"
	return v
}
