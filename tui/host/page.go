package host

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/diagnose"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/table"
)

// Env is what every page shares (soft-serve's Common): styles, keys, the
// clock, the registry of kinds, the scheme (built on first use: only
// describe needs it), the store of the current session and the session's
// context.
type Env struct {
	St  *styles.Styles
	KM  *keys.KeyMap
	Now func() time.Time
	// Kinds is the registry of kinds as pages and actions ask it.
	Kinds  Kinds
	Scheme *LazyScheme
	// Seq numbers the App's log pages (NextSeq); shared by the sessions.
	Seq   *int64
	Store *watch.Store
	// Why is the store's diagnoses (the WHY column, the Why blocks).
	Why  *diagnose.Diagnoses
	Hist *HistoryCache // the History blocks (history.go)
	Sess Session
	Ctx  context.Context
	// Host is the App (ShowDialog, Push).
	Host Host
	// Forwards is the last snapshot of Sess.Forwards (tui/app_forwards.go);
	// SSHUser and SSHHost are who and where raydar runs, for ssh lines.
	Forwards         []portforward.State
	SSHUser, SSHHost string
	// Fleet are the contexts of a fleet view (raydar --context a,b,
	// --all-contexts), one Env each with its own store, session, diagnoses
	// and history, when the lists show more than one context; nil
	// otherwise. The Env that holds them is the fleet's: its Store is
	// empty and its Session has no feed. Its lists merge the members'
	// stores (FleetPage); every page opened from a row, and every action
	// on one, gets the row's member Env, so it reads that context's store
	// and writes through that context's ActionDeps.
	Fleet []*Env
	// Stale says this member's connection is lost (Session.Health): its
	// rows are what was last seen, marked so in a fleet list's CONTEXT
	// column. Set by the App on ticks.
	Stale bool
}

// Env is the Env a page was built with (Base's E): the App runs a page's
// actions and gives it store changes with this Env.
func (b *Base) Env() *Env { return b.E }

// LazyScheme is the one scheme, built on first use (only describe needs
// it); used from Update only.
type LazyScheme struct{ s *runtime.Scheme }

// Get returns the scheme, building it on the first call.
func (l *LazyScheme) Get() *runtime.Scheme {
	if l.s == nil {
		l.s = scheme.New()
	}
	return l.s
}

// SessCtx is the session's context (cancelled on quit and context
// switch); Background without one.
func (e *Env) SessCtx() context.Context {
	if e.Ctx != nil {
		return e.Ctx
	}
	return context.Background()
}

// NextSeq returns a number no other page of the App got (Update only).
func (e *Env) NextSeq() int64 {
	*e.Seq++
	return *e.Seq
}

// Page is one view in the stack. Pages are components: a model with a key
// map (help) and a size. A page embeds Base and writes only what it
// does: title, crumb, view and target, and the defaults it overrides.
type Page interface {
	Kind() ViewKind
	// Title is the title bar's resource name; Crumb the breadcrumb.
	Title() string
	Crumb() string
	SetSize(w, h int)
	SetNamespace(ns string)
	// Apply brings the page up to date with a store change.
	Apply(ch *watch.Changes)
	// Update handles a key the app did not; it reports whether it did.
	Update(msg tea.KeyPressMsg) (bool, tea.Cmd)
	View() string
	// Open returns the page Enter drills down to (nil: none); CanOpen says
	// cheaply whether there may be one (for hints and help).
	Open() Page
	CanOpen() bool
	Target() Target
	// Keys lists the page's own bindings for help and hints.
	Keys() []key.Binding
	// Table is the page's table for filter, sort and marks (nil: none).
	Table() Tabler
}

// Base is the defaults of a page: it knows its env, view and size;
// it has no namespace scope, no table, nothing to open, no keys of its own
// and ignores store changes.
type Base struct {
	E    *Env
	VK   ViewKind
	W, H int
}

// Kind is the page's view kind (VK).
func (b *Base) Kind() ViewKind { return b.VK }

// SetSize records the page's size.
func (b *Base) SetSize(w, h int) { b.W, b.H = w, h }

// SetNamespace does nothing: a page has no namespace scope by default.
func (b *Base) SetNamespace(string) {}

// Apply ignores store changes.
func (b *Base) Apply(*watch.Changes) {}

// Update handles no key.
func (b *Base) Update(tea.KeyPressMsg) (bool, tea.Cmd) { return false, nil }

// Open returns nil: there is nothing to open.
func (b *Base) Open() Page { return nil }

// CanOpen is false: there is nothing to open.
func (b *Base) CanOpen() bool { return false }

// Keys is nil: no keys of the page's own.
func (b *Base) Keys() []key.Binding { return nil }

// Table is nil: no table.
func (b *Base) Table() Tabler { return nil }

// Titled is the title of a detail page about obj: "Kind ns/name", and
// "(deleted)" once it is gone.
func Titled(kind string, obj client.Object, deleted bool) string {
	t := kind + " " + obj.GetNamespace() + "/" + obj.GetName()
	if deleted {
		t += " (deleted)"
	}
	return t
}

// Follow finds the object a detail page is about (uid, of store kind wk)
// in a store change: its new version (nil: not upserted) and whether it
// was deleted.
func Follow(ch *watch.Changes, wk watch.Kind, uid types.UID) (up client.Object, deleted bool) {
	for _, o := range ch.Deleted[wk] {
		if watch.Key(o) == uid {
			deleted = true
		}
	}
	for _, o := range ch.Upserted[wk] {
		if watch.Key(o) == uid {
			up = o
		}
	}
	return up, deleted
}

// FollowInto brings a detail page's object up to date with ch: *obj
// becomes its new version and *deleted sticks once it is deleted.
func FollowInto[V client.Object](ch *watch.Changes, wk watch.Kind, uid types.UID, obj *V, deleted *bool) {
	up, del := Follow(ch, wk, uid)
	*deleted = *deleted || del
	if v, ok := up.(V); ok {
		*obj = v
	}
}

// Tabler is the part of table.Model the app drives without knowing V.
type Tabler interface {
	SetFilter(string) error
	Filter() string
	Len() int
	Total() int
	MarkCount() int
	Marks() bool
	Sorting() (table.SortKey, bool)
	HandleKey(tea.KeyPressMsg) bool
	// SelectedRow is the selected row's cells as shown (C copies them).
	SelectedRow() []string
}

// Copier is a page whose C copies a text of its own rather than a table
// row: the describe page's YAML. what names it for the flash ("the YAML
// of raycluster x").
type Copier interface {
	CopyText() (what, text string)
}

// UIDSet is a set of object UIDs a detail page depends on.
type UIDSet = map[types.UID]bool

// PushMsg pushes the page build returns (nil: nothing) on the stack;
// build runs in Update, so it may read the store. Build holds the Env it
// builds with: the one of the page or row that asked (in a fleet view a
// row's context's, which the App cannot tell from the page on top).
type PushMsg struct{ Build func() Page }

// WarnMsg flashes a warning.
type WarnMsg string

// Receiver is implemented by pages that get their own messages (job logs).
type Receiver interface {
	Receive(msg tea.Msg) (tea.Cmd, bool)
}

// Initer is implemented by pages that start work when pushed.
type Initer interface{ Init() tea.Cmd }

// Ticker is implemented by pages that do periodic work while on top.
type Ticker interface{ Tick() tea.Cmd }

// CmdApplier is implemented by pages whose refresh on a store change starts
// work (the job page refetches logs when the job's status changes).
type CmdApplier interface {
	ApplyCmd(ch *watch.Changes) tea.Cmd
}

// CapacityPoller is a page that polls Ray's capacity on ticks (the
// cluster detail).
type CapacityPoller interface{ PollCapacity() }

// ClustersShower is a page that shows RayClusters' diagnoses: a list's
// RayCluster rows on screen, the cluster of a detail page (a job's, a
// service's active and pending ones). While it is on top their autoscaler
// access is asked (diagnose.PollAccess). Called from Update on ticks: it
// reads the store only.
type ClustersShower interface{ ClustersShown() []*rayv1.RayCluster }

// FleetPage is a page that shows the objects of several contexts (a list
// of a fleet view, Env.Fleet): the App gives it each member's store
// changes with that member's Env (ApplyFrom, instead of Apply), and asks
// the autoscaler access of the RayClusters it shows per member
// (ClustersShownIn, instead of ClustersShown).
type FleetPage interface {
	ApplyFrom(e *Env, ch *watch.Changes)
	ClustersShownIn(e *Env) []*rayv1.RayCluster
}

// HistoryPage is a detail page with a History block.
type HistoryPage interface{ HistoryRef() history.Ref }

// Filterer is what the / prompt sets: a table's filter, or a log page's
// search.
type Filterer interface {
	SetFilter(string) error
	Filter() string
}

// Searcher is a page without a table whose / prompt searches its text.
type Searcher interface {
	Searcher() Filterer
}

// Closer is implemented by pages that hold resources while open (a log
// stream); close is called when the page leaves the stack.
type Closer interface{ Close() }

// Kinds is what pages and actions ask of the registry of kinds (the
// App's).
type Kinds interface {
	// IsDetail reports whether v is a kind's detail view.
	IsDetail(v ViewKind) bool
	// Lifecycle is the kind suspend/resume and delete act on for obj, and
	// whether obj is suspended; ok is false when they do not apply.
	Lifecycle(obj client.Object) (kind actions.Kind, suspended, ok bool)
	// LifecycleKinds names those kinds for messages: "RayCluster, RayJob,
	// RayService or RayCronJob".
	LifecycleKinds() string
	// Describe adds the fields of obj's kind to a describe page.
	Describe(d *format.Describer, obj client.Object)
	// Open is the page of obj its kind's list drills down to (its detail
	// page), in e (nil: none). A page opens another kind's page through it,
	// so no page package imports another kind's.
	Open(e *Env, obj client.Object) Page
}
