// Package logs is the page that follows one pod's container logs (l): a
// widgets.LogView over Session's PodLogs.
package logs
