package host

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/gauges"
	"github.com/raydar/raydar/kube/inspect"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/dashboard"
)

// Session is the TUI's connection to one kubeconfig context: its store's
// feed and what reads and acts beyond the store (logs, capacity, history,
// port-forwards, actions), each nil when the session has none.
type Session struct {
	Context string
	Server  string
	// Namespace is the initial namespace; "" means all namespaces.
	Namespace string
	// Feed delivers batches of deltas (a *watch.Source); nil means the
	// store never changes.
	Feed Feed
	// Role reports the embedded reconciler's role ("leader", "observer",
	// "another operator: NAME", …). It is called on every tick from the UI
	// loop, so it must be cheap (read an atomic). nil shows nothing.
	Role func() string
	// Logs fetches the tail of a Ray job's logs; nil hides logs.
	Logs JobLogs
	// Synced reports whether the feed has delivered the informers' initial
	// lists (watch.Source.Synced); until then the header says "syncing".
	// Called from the UI loop on ticks and batches; nil means synced.
	Synced func() bool
	// Unsynced names, while Synced is false, what it waits for
	// (watch.Source.Unsynced: "Pods", "Events"), after "syncing" in the
	// header; nil names nothing. Called where Synced is.
	Unsynced func() []string
	// Capacity is Ray's own view of a cluster's capacity (its dashboard;
	// kube/raydash.CapacityPoller); nil hides the cluster detail's "Ray"
	// block. Get is called from the UI loop on ticks, for the cluster whose
	// detail page is open only, so it must not block (return what the
	// poller last fetched).
	Capacity CapacitySource
	// Gauges are Ray's own gauges of the clusters on screen (CPU, memory,
	// each GPU, the object store, Serve; a *kube/gauges.Poller): the
	// cluster page's use columns and its sparklines, the :gpus view. Get is
	// called from the UI loop on ticks, for the clusters shown only, so it
	// must not block. nil hides them.
	Gauges GaugeSource
	// Review asks the API server a SubjectAccessReview (a clientset's
	// AuthorizationV1().SubjectAccessReviews().Create): whether the head
	// ServiceAccount of a cluster with enableInTreeAutoscaling on screen
	// may do what Ray's autoscaler needs, as `raydar why` asks
	// (tui/diagnose access.go). It is called inside a tea.Cmd. nil: not
	// asked; only a 403 in the sidecar's last exit says the autoscaler is
	// refused.
	Review inspect.Review
	// Get reads an object whole from the API server (one GET), for the
	// describe page's YAML of a pod: the observe-only cache keeps pods
	// trimmed (watch.SlimPod). It is called inside a tea.Cmd. nil: describe
	// shows the cached object.
	Get func(ctx context.Context, obj client.Object) (client.Object, error)
	// RayLogs reaches Ray's log files through the dashboards
	// (*kube/raydash.RayLogs); nil: the Ray log pages say they are not
	// available.
	RayLogs RayLogSource
	// Deps are this connection's dependencies of the default actions
	// (DefaultActions): a Backend that switches contexts sets them on each
	// Session it returns. nil uses the ActionDeps given to DefaultActions,
	// as long as their Context is this session's.
	Deps *ActionDeps
	// History is this machine's record of the Ray objects (kube/history);
	// nil shows no History blocks.
	History HistorySource
	// Forwards holds the session's port-forwards (shift-f, :forwards;
	// a *portforward.Manager); nil: port-forwarding is not available.
	Forwards Forwarder
	// Health is the connection's state, for a fleet view's header and its
	// stale rows; called from the UI loop on ticks, so it must not block
	// (read what the watch last said). nil: always healthy.
	Health func() Health
}

// Health is a connection's state as a fleet view shows it.
type Health struct {
	// Err is why the API server cannot be reached or refuses the watch,
	// in a few words ("unauthorized", "connection refused"); "" while it
	// answers (or has not answered yet: Session.Synced says so). While it
	// is set, the context's rows are stale: what was last seen.
	Err string
	// Since is when the connection was lost ("" Err: zero).
	Since time.Time
}

// CapacitySource gives Ray's view of a cluster's capacity: the last
// answer of its dashboard (c), the error of the last attempt (err), and
// whether anything is known yet (ok). Get must not block.
type CapacitySource interface {
	Get(namespace, name string) (c *dashboard.Capacity, err error, ok bool)
}

// GaugeSource gives Ray's gauges of a cluster (kube/gauges.Poller): Get
// returns what is known at once and marks the cluster as wanted, so only
// what is on screen is scraped; Idle says whether a GPU counts as idle
// (below IdleBelowPct for IdleFor).
type GaugeSource interface {
	Get(namespace, cluster string) gauges.Cluster
	Idle(g gauges.GPUUse, now time.Time) bool
	IdleBelowPct() float64
	IdleFor() time.Duration
}

// Feed is the live data source: Next blocks until a batch is ready (see
// watch.Source.Next).
type Feed interface {
	Next(ctx context.Context) ([]watch.Delta, error)
}

// JobLogs fetches the logs of the Ray job behind a RayJob (through the Ray
// dashboard). It is called inside a tea.Cmd, never from View.
type JobLogs interface {
	JobLogs(ctx context.Context, namespace, rayJobName string) (string, error)
}

// JobLogsFunc adapts a function to JobLogs.
type JobLogsFunc func(ctx context.Context, namespace, rayJobName string) (string, error)

// JobLogs implements JobLogs.
func (f JobLogsFunc) JobLogs(ctx context.Context, namespace, rayJobName string) (string, error) {
	return f(ctx, namespace, rayJobName)
}

// Backend rebuilds the data source for another kubeconfig context. Both
// methods are called inside tea.Cmds.
type Backend interface {
	// Contexts lists the kubeconfig's context names (for :ctx completion).
	Contexts() ([]string, error)
	// Switch connects to the named context and returns its session. The
	// TUI stops reading the previous session's Feed; the Backend should stop
	// the previous cache.
	Switch(ctx context.Context, contextName string) (Session, error)
}

// ViewKind names a view; its value is the view's breadcrumb. The list and
// detail views of each kind are declared with the kind's registry entry, in
// its page package (tui/pages/cluster's ListView and DetailView, …); a list
// view's value is its kind's resource (rayapi/kinds), a detail view's its
// kind in lower case. The views that are no kind's are declared here.
type ViewKind string

// The views of every kind.
const (
	// DescribeView is the describe page of one object (d).
	DescribeView ViewKind = "describe"
	// LogsView is the log page of one pod (l).
	LogsView ViewKind = "logs"
)

// String is the view kind, "view" when empty.
func (v ViewKind) String() string {
	if v == "" {
		return "view"
	}
	return string(v)
}

// Action is one operation offered in a view (issue 7: scale, delete marked
// workers, stop job, suspend/resume, delete, describe, logs). Every mutation
// goes through kube/actions; the TUI only binds keys, shows help and runs
// the returned command with the busy indicator on.
type Action struct {
	// Name identifies the action in keys.yaml ("actions:") and audit logs.
	Name string
	// Key is the default binding with its help text.
	Key key.Binding
	// Dangerous actions are hidden in read-only mode.
	Dangerous bool
	// HintLast puts the action's hint after the page's own keys, so that
	// they show on a narrow terminal (edit: every kind's page offers it).
	HintLast bool
	// Run is called from Update with the current target and returns the
	// command that does the work (a dialog, an API call…). The command's
	// message is delivered back to the TUI: return a ResultMsg to flash the
	// outcome, or a ShowDialogMsg to open a dialog.
	Run func(Target) tea.Cmd
}

// Target is what an action acts on.
type Target struct {
	View ViewKind
	// Namespace is the namespace scope ("" = all).
	Namespace string
	// Selected is the object under the cursor (nil if none): a RayCluster,
	// RayJob, RayService, RayCronJob or Pod. In the cluster detail view it
	// is the selected pod, or nil on a group row; in the RayCronJob detail
	// the selected RayJob.
	Selected client.Object
	// Group is the worker group of the selected row in the cluster detail
	// view ("" otherwise).
	Group string
	// Marked are the marked rows' objects, in row order (empty: none).
	Marked []client.Object
	// Owner is the object the view is about (the RayCluster of the cluster
	// detail, the RayJob or RayService of theirs); nil in list views.
	Owner client.Object

	// Env is the session the target was taken in, set by the App before
	// Run (nil outside it): the default actions read its store and styles
	// inside Run, which is called from Update, never from a command, and
	// open their dialogs and pages through its Host.
	Env *Env
}

// Host is the App as a page or an action talks to it, within the Update
// that runs them: a dialog or page opened through it gets the keys typed
// right after. This is the one way dialogs open: a command that builds one
// later returns a ShowDialogMsg (or a PushMsg), which the App hands to the
// same Host.
type Host interface {
	// ShowDialog opens d; it receives every key until it is done.
	ShowDialog(d Dialog)
	// Push pushes p on the page stack; its start-up work (initer) runs
	// after the Update.
	Push(p Page)
}

// ResultMsg reports the outcome of an action: the TUI flashes Text, or Err
// as an error.
type ResultMsg struct {
	Text string
	Err  error
}

// Dialog is a modal component opened by an action (a scale form, a
// confirmation). While open it receives every key press.
type Dialog interface {
	// Update handles a key; done closes the dialog; cmd runs with the busy
	// indicator.
	Update(msg tea.KeyPressMsg) (done bool, cmd tea.Cmd)
	// View renders the dialog's content within width cells.
	View(width int) string
}

// ShowDialogMsg opens a dialog.
type ShowDialogMsg struct{ Dialog Dialog }
