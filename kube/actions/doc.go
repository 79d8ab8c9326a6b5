// Package actions owns every change raydar makes to a cluster on behalf of a
// person, from the TUI or from the CLI: scaling a worker group, deleting
// specific workers, stopping a RayJob, triggering a RayCronJob now,
// suspending, resuming, deleting and editing (the whole object as the
// person edited it, kube/edit) a RayCluster, RayJob, RayService or
// RayCronJob, and running a command or a shell in a Ray container (Exec,
// exec.go: pods/exec is a write, audited, refused read-only, its Event on
// the pod). It is the one choke point for them: the TUI dialogs and the
// CLI sub-commands call the same functions, so both behave identically.
//
// Each action comes in two halves:
//
//   - a pure Plan function (PlanScale, PlanDeleteWorkers, PlanStopJob,
//     PlanTrigger, PlanSuspend, PlanDelete, PlanEdit) that validates the
//     request against an object the caller already has (the TUI's cache)
//     and returns a preview to show before confirming, or a clear error;
//     and a Preview method that reads the object first, for callers
//     without a cache (the CLI);
//   - an apply method on Actions (ScaleGroup, DeleteWorkers, StopJob,
//     StopJobDirect, Trigger, Suspend, Resume, Delete, Edit).
//
// Every apply method, in order:
//  1. refuses with an error matching ErrReadOnly when Options.ReadOnly is
//     set, and with one matching ErrProtected when Options.Protected is set
//     and the context.Context carries no confirmation equal to the object's
//     name (WithConfirmation), before any I/O (no API call, no audit line).
//     Policy (guard.go) sets both per kube context from raydar's config
//     file;
//  2. makes sure the audit log can be written, and refuses otherwise;
//  3. reads the object fresh, re-plans from that read, and makes ONE write
//     that carries the resourceVersion it was planned on, so it fails with
//     409 Conflict if the object changed meanwhile; on a conflict it starts
//     over from a fresh read (retry.RetryOnConflict; Edit instead returns
//     the conflict, as it writes what a person edited from the version
//     read: kube/edit reopens the editor on the new one). Nothing is written
//     half: one request per action (Trigger creates one RayJob instead: a
//     create cannot conflict, and its name, the same within a minute, makes
//     a retry find it there, OutcomeUnchanged);
//  4. records a Kubernetes Event on the object (reportingController
//     rayv1.AuditEventSource) saying what was done, by whom, from raydar;
//  5. appends one JSON line to the audit log (time, actor, context, action,
//     object, details, outcome and error), also for rejected and failed
//     attempts.
//
// Errors are typed: *ReadOnlyError (errors.Is ErrReadOnly), *InvalidError
// (errors.Is ErrInvalid; bad input or a spec rule of rayapi/v1 validation),
// *APIError (a refused or failed API call, worded for people: "forbidden:
// user alice cannot patch rayclusters in namespace team-a"; it unwraps to the
// API status error so apierrors.IsForbidden and friends work).
package actions
