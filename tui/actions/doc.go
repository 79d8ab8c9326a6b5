// Package actions is raydar's actions in the TUI (ByName): scale a worker
// group, delete worker pods, stop a RayJob, trigger a RayCronJob, suspend
// and resume, delete, edit (the object's YAML in $EDITOR, kube/edit),
// describe, follow a pod's logs and port-forward. The
// mutating ones open a confirmation (focus away from Confirm) built from
// kube/actions' Plan functions and apply through kube/actions, the choke
// point (read-only gate, Events, audit log). They open dialogs and pages
// through the session's host.Host and ask the registry through host.Kinds;
// which view offers which is the App's registry (tui.DefaultActions).
package actions
