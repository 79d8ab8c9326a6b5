package tui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/scheme"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/table"
)

// env is what every page shares (soft-serve's Common): styles, keys, the
// clock, the registry of kinds, the scheme (built on first use: only
// describe needs it), the store of the current session and the session's
// context.
type env struct {
	st     *styles.Styles
	km     *keys.KeyMap
	now    func() time.Time
	reg    *registry
	scheme *lazyScheme
	// seq numbers the App's log pages (nextSeq); shared by the sessions.
	seq   *int64
	store *watch.Store
	// why is the store's diagnoses (the WHY column, the Why blocks).
	why  *diagnoses
	hist *historyCache // the History blocks (tui/history.go)
	sess Session
	ctx  context.Context
	// forwards is the last snapshot of sess.Forwards (forwards.go);
	// sshUser and sshHost are who and where raydar runs, for ssh lines.
	forwards         []portforward.State
	sshUser, sshHost string
}

// lazyScheme is the one scheme, built on first use (only describe needs
// it); used from Update only.
type lazyScheme struct{ s *runtime.Scheme }

func (l *lazyScheme) get() *runtime.Scheme {
	if l.s == nil {
		l.s = scheme.New()
	}
	return l.s
}

// nextSeq returns a number no other page of the App got (Update only).
func (e *env) nextSeq() int64 {
	*e.seq++
	return *e.seq
}

// page is one view in the stack. Pages are components: a model with a key
// map (help) and a size. A page embeds pageBase and writes only what it
// does: title, crumb, view and target, and the defaults it overrides.
type page interface {
	kind() ViewKind
	// title is the title bar's resource name; crumb the breadcrumb.
	title() string
	crumb() string
	setSize(w, h int)
	setNamespace(ns string)
	// apply brings the page up to date with a store change.
	apply(ch *watch.Changes)
	// update handles a key the app did not; it reports whether it did.
	update(msg tea.KeyPressMsg) (bool, tea.Cmd)
	view() string
	// open returns the page Enter drills down to (nil: none); canOpen says
	// cheaply whether there may be one (for hints and help).
	open() page
	canOpen() bool
	target() Target
	// keys lists the page's own bindings for help and hints.
	keys() []key.Binding
	// tbl is the page's table for filter, sort and marks (nil: none).
	tbl() tabler
}

// pageBase is the defaults of a page: it knows its env, view and size;
// it has no namespace scope, no table, nothing to open, no keys of its own
// and ignores store changes.
type pageBase struct {
	e    *env
	vk   ViewKind
	w, h int
}

func (b *pageBase) kind() ViewKind                         { return b.vk }
func (b *pageBase) setSize(w, h int)                       { b.w, b.h = w, h }
func (b *pageBase) setNamespace(string)                    {}
func (b *pageBase) apply(*watch.Changes)                   {}
func (b *pageBase) update(tea.KeyPressMsg) (bool, tea.Cmd) { return false, nil }
func (b *pageBase) open() page                             { return nil }
func (b *pageBase) canOpen() bool                          { return false }
func (b *pageBase) keys() []key.Binding                    { return nil }
func (b *pageBase) tbl() tabler                            { return nil }

// titled is the title of a detail page about obj: "Kind ns/name", and
// "(deleted)" once it is gone.
func titled(kind string, obj client.Object, deleted bool) string {
	t := kind + " " + obj.GetNamespace() + "/" + obj.GetName()
	if deleted {
		t += " (deleted)"
	}
	return t
}

// follow finds the object a detail page is about (uid, of store kind wk)
// in a store change: its new version (nil: not upserted) and whether it
// was deleted.
func follow(ch *watch.Changes, wk watch.Kind, uid types.UID) (up client.Object, deleted bool) {
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

// followInto brings a detail page's object up to date with ch: *obj
// becomes its new version and *deleted sticks once it is deleted.
func followInto[V client.Object](ch *watch.Changes, wk watch.Kind, uid types.UID, obj *V, deleted *bool) {
	up, del := follow(ch, wk, uid)
	*deleted = *deleted || del
	if v, ok := up.(V); ok {
		*obj = v
	}
}

// tabler is the part of table.Model the app drives without knowing V.
type tabler interface {
	SetFilter(string) error
	Filter() string
	Len() int
	Total() int
	MarkCount() int
	Marks() bool
	Sorting() (table.SortKey, bool)
	HandleKey(tea.KeyPressMsg) bool
}

// uidSet is a set of object UIDs a detail page depends on.
type uidSet = map[types.UID]bool
