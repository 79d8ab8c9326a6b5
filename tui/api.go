package tui

import (
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/pages/cluster"
	"github.com/raydar/raydar/tui/pages/cronjob"
	"github.com/raydar/raydar/tui/pages/gpus"
	"github.com/raydar/raydar/tui/pages/job"
	"github.com/raydar/raydar/tui/pages/pod"
	"github.com/raydar/raydar/tui/pages/service"
)

// The TUI's public types and names are tui/host's (and the kinds' views
// their page packages'), where the pages and actions below the App read
// them; these aliases keep them in the package cmd/raydar imports.

type (
	// ViewKind names a view (host.ViewKind).
	ViewKind = host.ViewKind
	// Session is one connection as the TUI sees it (host.Session).
	Session = host.Session
	// Health is a connection's state in a fleet view (host.Health).
	Health = host.Health
	// CapacitySource gives Ray's view of a cluster's capacity.
	CapacitySource = host.CapacitySource
	// Feed is the live data source.
	Feed = host.Feed
	// JobLogs fetches the logs of the Ray job behind a RayJob.
	JobLogs = host.JobLogs
	// JobLogsFunc adapts a function to JobLogs.
	JobLogsFunc = host.JobLogsFunc
	// Backend rebuilds the data source for another kubeconfig context.
	Backend = host.Backend
	// PodLogs streams a container's logs.
	PodLogs = host.PodLogs
	// PodLogsFunc adapts a function to PodLogs.
	PodLogsFunc = host.PodLogsFunc
	// LogOptions are what a log page asks of PodLogs (container, follow,
	// previous).
	LogOptions = host.LogOptions
	// RayLogSource reaches Ray's log files through a cluster's dashboard.
	RayLogSource = host.RayLogSource
	// HistorySource is this machine's record of the Ray objects.
	HistorySource = host.HistorySource
	// Forwarder holds a session's port-forwards.
	Forwarder = host.Forwarder
	// ActionDeps are what the default actions need from one connection.
	ActionDeps = host.ActionDeps
	// Action is one operation offered in a view.
	Action = host.Action
	// Target is what an action acts on.
	Target = host.Target
	// ResultMsg reports the outcome of an action.
	ResultMsg = host.ResultMsg
	// Dialog is a modal component opened by an action.
	Dialog = host.Dialog
	// ShowDialogMsg opens a dialog.
	ShowDialogMsg = host.ShowDialogMsg
)

// The views (the kinds' page packages' and host's).
const (
	ClustersView      = cluster.ListView
	JobsView          = job.ListView
	ServicesView      = service.ListView
	CronJobsView      = cronjob.ListView
	PodsView          = pod.ListView
	ClusterDetailView = cluster.DetailView
	JobDetailView     = job.DetailView
	ServiceDetailView = service.DetailView
	CronJobDetailView = cronjob.DetailView
	DescribeView      = host.DescribeView
	LogsView          = host.LogsView
	RayLogsView       = host.RayLogsView
	RayLogView        = host.RayLogView
	ForwardsView      = host.ForwardsView
	GPUsView          = gpus.View
)

// Action names (keys.yaml "actions:" entries; host's).
const (
	ActionScale         = host.ActionScale
	ActionDeleteWorkers = host.ActionDeleteWorkers
	ActionStopJob       = host.ActionStopJob
	ActionTrigger       = host.ActionTrigger
	ActionSuspend       = host.ActionSuspend
	ActionDelete        = host.ActionDelete
	ActionDescribe      = host.ActionDescribe
	ActionLogs          = host.ActionLogs
	ActionEdit          = host.ActionEdit
	ActionPortForward   = host.ActionPortForward
	ActionShell         = host.ActionShell
)
