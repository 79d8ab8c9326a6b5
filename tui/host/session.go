package host

import (
	"context"
	"io"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/dashboard"
)

// PodLogs streams a container's logs (the lead implements it with
// client-go's GetLogs(...).Stream, o as its PodLogOptions). The TUI reads
// the stream in a goroutine and closes it when the log page closes.
// Implementations should bound the initial tail (TailLines): the page keeps
// only the last MaxPodLogLines lines anyway.
type PodLogs interface {
	PodLogs(ctx context.Context, namespace, pod string, o LogOptions) (io.ReadCloser, error)
}

// LogOptions are what a log page asks of PodLogs: corev1.PodLogOptions'
// Container, Follow and Previous.
type LogOptions struct {
	// Container is the container's name.
	Container string
	// Follow keeps the stream open for new lines.
	Follow bool
	// Previous asks for the logs of the container's previous instance, the
	// one that ended before its last restart (kubectl logs --previous).
	Previous bool
}

// PodLogsFunc adapts a function to PodLogs.
type PodLogsFunc func(ctx context.Context, namespace, pod string, o LogOptions) (io.ReadCloser, error)

// PodLogs implements PodLogs.
func (f PodLogsFunc) PodLogs(ctx context.Context, namespace, pod string, o LogOptions) (io.ReadCloser, error) {
	return f(ctx, namespace, pod, o)
}

// ActionDeps are what the default actions need from one connection.
type ActionDeps struct {
	// Context is the kubeconfig context these dependencies act on. When it
	// is set and the TUI has switched to another context whose Session
	// carries no Deps, the mutating actions refuse instead of acting on the
	// wrong cluster.
	Context string
	// Actions is the mutation choke point (read-only gate, Events, audit).
	// nil: the mutating actions report that they are unavailable.
	Actions *actions.Actions
	// Reader lists what a delete takes with it that the TUI's store does
	// not hold (Services, batch Jobs and their pods); it is called inside a
	// command. nil: Actions.Client().
	Reader client.Reader
	// PodLogs streams pod logs; nil: the logs action says it is unavailable.
	PodLogs PodLogs
	// OtherOperator reports whether another operator (KubeRay) reconciles
	// the object, so raydar's RayJob reconciler will not see a stop
	// request: the stop then goes through the Ray dashboard
	// (StopJobDirect, which needs actions.Options.JobStopper). nil: never.
	// Called from Update; it must be cheap.
	OtherOperator func(obj client.Object) bool
}

// Forwarder holds a session's port-forwards (*portforward.Manager). Start
// and Stop are called inside commands; Snapshot and Changed never block.
type Forwarder interface {
	Start(spec portforward.Spec) (*portforward.Forward, error)
	Stop(id int) error
	Snapshot() []portforward.State
	Changed() <-chan struct{}
}

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

// RayLogSource reaches Ray's log files through a cluster's dashboard
// (*kube/raydash.RayLogs). Its methods do I/O: the TUI calls them inside
// commands and reader goroutines, never from Update or View.
type RayLogSource interface {
	// List lists a node's log files.
	List(ctx context.Context, namespace, cluster string, node dashboard.LogNode) (dashboard.LogFiles, error)
	// Open opens a file: its tail, then, with follow, what is appended.
	Open(ctx context.Context, namespace, cluster string, req dashboard.LogRequest, follow bool) (io.ReadCloser, error)
	// Resolve finds the file of an explanation on the head node.
	Resolve(ctx context.Context, namespace string, e raydash.Explanation, head dashboard.LogNode) (dashboard.LogRequest, error)
}
