// Package keys owns the TUI's one KeyMap: every key the TUI reacts to outside
// a text prompt, with its help text, and the loader that rebinds keys from
// $XDG_CONFIG_HOME/raydar/keys.yaml.
//
// Key names are Bubble Tea v2 key strings: "a", "N" (shift-n), "ctrl+c",
// "space", "ctrl+space", "pgdown", "esc", "enter", "tab", "?", "/".
package keys

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
)

// KeyMap holds every rebindable binding. Text typed into the command and
// filter prompts is not rebindable (enter, esc, tab and backspace there are
// fixed), just as in k9s, nor is the editing of a dialog's text fields
// (backspace, ctrl+u); moving between a dialog's fields and buttons,
// choosing and cancelling are (the Dialog bindings).
type KeyMap struct {
	Quit          key.Binding
	Help          key.Binding
	Command       key.Binding
	Filter        key.Binding
	Back          key.Binding
	Open          key.Binding
	AllNamespaces key.Binding
	Refresh       key.Binding

	Up       key.Binding
	Down     key.Binding
	Top      key.Binding
	Bottom   key.Binding
	PageUp   key.Binding
	PageDown key.Binding

	SortName   key.Binding
	SortAge    key.Binding
	SortStatus key.Binding

	Mark       key.Binding
	MarkRange  key.Binding
	ClearMarks key.Binding

	// Wrap toggles line wrapping and Follow toggles following new lines in
	// the describe and log pages.
	Wrap   key.Binding
	Follow key.Binding

	// Previous switches a pod's log page between the container's current
	// instance and the one before its last restart (kubectl logs
	// --previous); Container opens the container picker of a pod with
	// several containers.
	Previous  key.Binding
	Container key.Binding

	// SearchNext and SearchPrev go to the next and previous match of the
	// search (/) in the log pages.
	SearchNext key.Binding
	SearchPrev key.Binding

	// RayLogs opens the Ray log browser of a cluster's node (cluster
	// detail: the selected pod's node, else the head's; pods list: the
	// selected pod's node), and Explain opens
	// the Ray log file that explains an object's state (job detail: the
	// runtime env setup log of a PENDING job, the driver log of a failed
	// one; service detail: the Serve controller log).
	RayLogs key.Binding
	Explain key.Binding
	// CopyName copies the selected object's name (a detail page's own
	// object when no row holds one) to the terminal's clipboard (OSC 52);
	// CopyRow the selected row as shown, its cells separated by tabs, or
	// a describe page's YAML.
	CopyName key.Binding
	CopyRow  key.Binding
	// StopForward stops the selected port-forward in the forwards view
	// (:forwards; shift-f, the action that starts one, is a view action).
	StopForward key.Binding

	// The keys of the dialogs (tui/widgets: the confirmations, the scale
	// and port-forward dialogs). A dialog is modal, so they may share keys
	// with the bindings of the pages (GroupDialog is disjoint from every
	// other group). DialogNext and DialogPrev move the focus (in a
	// confirmation: switch between Cancel and Confirm); DialogSwitch
	// switches between the buttons, once letters typed into a field were
	// taken (h and l are letters of a name to type); DialogUp and
	// DialogDown move between a form's fields; DialogToggle toggles a
	// port-forward preset; DialogChoose leaves a form's fields for its
	// buttons, or chooses the focused button; DialogCancel closes the
	// dialog with nothing done.
	DialogNext   key.Binding
	DialogPrev   key.Binding
	DialogSwitch key.Binding
	DialogUp     key.Binding
	DialogDown   key.Binding
	DialogToggle key.Binding
	DialogChoose key.Binding
	DialogCancel key.Binding

	// actions holds user overrides for view actions (issue 7), by action
	// name; see Action.
	actions map[string][]string
}

// Group names used in help.
const (
	GroupGeneral    = "General"
	GroupNavigation = "Navigation"
	GroupSort       = "Sort"
	GroupMarks      = "Marks"
	GroupText       = "Text"
	GroupSearch     = "Search"
	GroupRay        = "Ray"
	GroupDialog     = "Dialog"
)

// disjointGroups are groups whose bindings never act on the same page, so
// they may share keys: sorting is a table's, searching a log page's.
var disjointGroups = map[[2]string]bool{{GroupSort, GroupSearch}: true, {GroupSearch, GroupSort}: true}

// disjoint reports whether bindings of groups a and b never act at the same
// time: a sort and a search binding, or a dialog's and any other (a dialog
// is modal: while it is open, only its bindings act).
func disjoint(a, b string) bool {
	return disjointGroups[[2]string{a, b}] || (a != b && (a == GroupDialog || b == GroupDialog))
}

// Named is one binding with its config-file name and help group.
type Named struct {
	Name    string
	Group   string
	Binding *key.Binding
}

// Default returns the k9s-like default key map.
func Default() *KeyMap {
	b := func(help, desc string, ks ...string) key.Binding {
		return key.NewBinding(key.WithKeys(ks...), key.WithHelp(help, desc))
	}
	return &KeyMap{
		Quit:          b("ctrl+c", "quit", "ctrl+c"),
		Help:          b("?", "help", "?"),
		Command:       b(":", "command", ":"),
		Filter:        b("/", "filter", "/"),
		Back:          b("esc", "back", "esc"),
		Open:          b("enter", "open", "enter"),
		AllNamespaces: b("0", "all ns", "0"),
		Refresh:       b("ctrl+r", "reload", "ctrl+r"),

		Up:       b("k/↑", "up", "k", "up"),
		Down:     b("j/↓", "down", "j", "down"),
		Top:      b("g/home", "top", "g", "home"),
		Bottom:   b("G/end", "bottom", "G", "end"),
		PageUp:   b("pgup/ctrl+b", "page up", "pgup", "ctrl+b"),
		PageDown: b("pgdn/ctrl+f", "page down", "pgdown", "ctrl+f"),

		SortName:   b("N", "sort: name", "N"),
		SortAge:    b("A", "sort: age", "A"),
		SortStatus: b("S", "sort: status", "S"),

		Mark:       b("space", "mark", "space"),
		MarkRange:  b("ctrl+space", "mark range", "ctrl+space"),
		ClearMarks: b("ctrl+\\", "clear marks", "ctrl+\\"),

		Wrap:   b("w", "wrap", "w"),
		Follow: b("f", "follow", "f"),

		Previous:  b("p", "previous logs", "p"),
		Container: b("o", "container", "o"),

		SearchNext: b("n", "next match", "n"),
		SearchPrev: b("N", "previous match", "N"),

		RayLogs:     b("L", "ray logs", "L"),
		Explain:     b("E", "explaining log", "E"),
		StopForward: b("ctrl+k", "stop forward", "ctrl+k"),
		CopyName:    b("c", "copy name", "c"),
		CopyRow:     b("C", "copy row/YAML", "C"),

		DialogNext:   b("tab", "next", "tab"),
		DialogPrev:   b("shift+tab", "previous", "shift+tab"),
		DialogSwitch: b("←/→", "switch", "left", "right", "h", "l"),
		DialogUp:     b("↑", "up", "up"),
		DialogDown:   b("↓", "down", "down"),
		DialogToggle: b("space", "toggle", "space"),
		DialogChoose: b("enter", "choose", "enter"),
		DialogCancel: b("esc", "cancel", "esc"),
	}
}

// All lists every binding with its config name, in help order.
func (k *KeyMap) All() []Named {
	return []Named{
		{"quit", GroupGeneral, &k.Quit},
		{"help", GroupGeneral, &k.Help},
		{"command", GroupGeneral, &k.Command},
		{"filter", GroupGeneral, &k.Filter},
		{"back", GroupGeneral, &k.Back},
		{"open", GroupGeneral, &k.Open},
		{"all-namespaces", GroupGeneral, &k.AllNamespaces},
		{"refresh", GroupGeneral, &k.Refresh},
		{"up", GroupNavigation, &k.Up},
		{"down", GroupNavigation, &k.Down},
		{"top", GroupNavigation, &k.Top},
		{"bottom", GroupNavigation, &k.Bottom},
		{"page-up", GroupNavigation, &k.PageUp},
		{"page-down", GroupNavigation, &k.PageDown},
		{"sort-name", GroupSort, &k.SortName},
		{"sort-age", GroupSort, &k.SortAge},
		{"sort-status", GroupSort, &k.SortStatus},
		{"mark", GroupMarks, &k.Mark},
		{"mark-range", GroupMarks, &k.MarkRange},
		{"clear-marks", GroupMarks, &k.ClearMarks},
		{"wrap", GroupText, &k.Wrap},
		{"follow", GroupText, &k.Follow},
		{"previous-logs", GroupText, &k.Previous},
		{"container", GroupText, &k.Container},
		{"search-next", GroupSearch, &k.SearchNext},
		{"search-prev", GroupSearch, &k.SearchPrev},
		{"ray-logs", GroupRay, &k.RayLogs},
		{"explain", GroupRay, &k.Explain},
		{"stop-forward", GroupGeneral, &k.StopForward},
		{"copy", GroupGeneral, &k.CopyName},
		{"copy-row", GroupGeneral, &k.CopyRow},
		{"dialog-next", GroupDialog, &k.DialogNext},
		{"dialog-prev", GroupDialog, &k.DialogPrev},
		{"dialog-switch", GroupDialog, &k.DialogSwitch},
		{"dialog-up", GroupDialog, &k.DialogUp},
		{"dialog-down", GroupDialog, &k.DialogDown},
		{"dialog-toggle", GroupDialog, &k.DialogToggle},
		{"dialog-choose", GroupDialog, &k.DialogChoose},
		{"dialog-cancel", GroupDialog, &k.DialogCancel},
	}
}

// Action returns the binding for a view action named name: def, with its
// keys replaced when the user's file has an "actions:" entry for name. The
// help text keeps def's description and shows the new keys.
func (k *KeyMap) Action(name string, def key.Binding) key.Binding {
	ks, ok := k.actions[name]
	if !ok {
		return def
	}
	return rebind(def, ks)
}

// Check reports keys bound to more than one binding, including the extra
// bindings given (view actions). Disabled bindings are ignored, and so are
// keys shared by bindings of disjoint groups (a sort key and a search key).
func (k *KeyMap) Check(extra ...Named) error {
	owners := map[string][]Named{}
	var errs []string
	for _, n := range append(k.All(), extra...) {
		if !n.Binding.Enabled() {
			continue
		}
	keys:
		for _, s := range n.Binding.Keys() {
			for _, o := range owners[s] {
				if o.Name != n.Name && !disjoint(o.Group, n.Group) {
					errs = append(errs, fmt.Sprintf("key %q is bound to both %s and %s", s, o.Name, n.Name))
					continue keys
				}
			}
			owners[s] = append(owners[s], n)
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// rebind returns b with keys ks and help key text derived from ks; an empty
// ks disables the binding.
func rebind(b key.Binding, ks []string) key.Binding {
	desc := b.Help().Desc
	if len(ks) == 0 {
		nb := key.NewBinding(key.WithHelp("", desc))
		nb.SetEnabled(false)
		return nb
	}
	return key.NewBinding(key.WithKeys(ks...), key.WithHelp(strings.Join(ks, "/"), desc))
}
