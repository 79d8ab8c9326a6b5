package actions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/rayapi/scheme"
)

// UnknownActor is the actor recorded when the kube user is not known.
const UnknownActor = "unknown"

// Action names a kind of mutation; it appears in audit lines and results.
type Action string

// The actions.
const (
	ActionScale         Action = "scale"
	ActionDeleteWorkers Action = "delete-workers"
	ActionStopJob       Action = "stop-job"
	ActionStopJobDirect Action = "stop-job-direct"
	ActionSuspend       Action = "suspend"
	ActionResume        Action = "resume"
	ActionDelete        Action = "delete"
	ActionTrigger       Action = "trigger"
	ActionEdit          Action = "edit"
)

// Event reasons of the Events recorded on the changed objects.
const (
	ReasonScaledWorkerGroup = "ScaledWorkerGroup"
	ReasonDeletedWorkers    = "DeletedWorkers"
	ReasonStopRequested     = "StopRequested"
	ReasonSuspended         = "Suspended"
	ReasonResumed           = "Resumed"
	ReasonDeleted           = "Deleted"
	ReasonTriggered         = "Triggered"
	ReasonEdited            = "Edited"
)

// Outcome is how an action ended.
type Outcome string

// Outcomes.
const (
	// OutcomeApplied: the write was made.
	OutcomeApplied Outcome = "applied"
	// OutcomeUnchanged: the object already was as requested; nothing written.
	OutcomeUnchanged Outcome = "unchanged"
	// OutcomeRefused: read-only mode, or a protected context without the
	// object's name confirmed.
	OutcomeRefused Outcome = "refused"
	// OutcomeRejected: invalid request or a spec rule; nothing written.
	OutcomeRejected Outcome = "rejected"
	// OutcomeFailed: an API call failed (forbidden, not found, conflicts
	// that did not settle, unreachable server); nothing written.
	OutcomeFailed Outcome = "failed"
)

// ObjectRef names the object an action is about.
type ObjectRef struct {
	Kind      Kind   `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String is "kind ns/name", the kind in lower case.
func (r ObjectRef) String() string {
	return fmt.Sprintf("%s %s/%s", strings.ToLower(kindName(r.Kind)), r.Namespace, r.Name)
}

// Plan is the preview of an action: what it will do, shown before confirming.
type Plan interface {
	// Lines describe the plan for people, one statement per line, warnings
	// last (prefixed "warning: ").
	Lines() []string
}

// Result is what an apply method did. It is returned also with an error
// (then Outcome says which kind), so callers can show the plan that was
// refused; it is the CLI's JSON output and the body of the audit line.
type Result struct {
	Time    time.Time `json:"time"`
	Actor   string    `json:"actor"`
	Context string    `json:"context,omitempty"`
	Action  Action    `json:"action"`
	Object  ObjectRef `json:"object"`
	// Plan is the plan as applied, computed from the last fresh read; nil
	// when the action failed before planning.
	Plan    Plan    `json:"plan,omitempty"`
	Outcome Outcome `json:"outcome"`
	Error   string  `json:"error,omitempty"`
	// Attempts counts writes tried (more than 1 after conflicts).
	Attempts int `json:"attempts,omitempty"`
	// EventError is set when the change was applied but its Event could not
	// be recorded.
	EventError string `json:"eventError,omitempty"`
	// AuditError is set when the audit line could not be written after the
	// change was applied.
	AuditError string `json:"auditError,omitempty"`
}

// Options configure Actions.
type Options struct {
	// ReadOnly refuses every mutation with ErrReadOnly, before any I/O.
	ReadOnly bool
	// ReadOnlyReason says why, when the config file made the context
	// read-only (Policy.Apply); "" for --readonly.
	ReadOnlyReason string
	// Protected refuses every mutation with ErrProtected, before any I/O,
	// unless the context carries a confirmation equal to the object's name
	// (WithConfirmation).
	Protected bool
	// ProtectedWhy says where the context was marked protected ("in PATH").
	ProtectedWhy string
	// Actor is the kube user the actions are taken as (kube.Target.User);
	// UnknownActor when empty.
	Actor string
	// Context is the kubeconfig context, recorded in the audit log.
	Context string
	// AuditLogPath is the JSON-lines audit file; DefaultAuditLogPath when empty.
	AuditLogPath string
	// Recorder records the Events; a synchronous events.k8s.io/v1 writer on
	// the same client when nil (see NewAPIRecorder).
	Recorder EventRecorder
	// Clock stamps audit lines, Events and stop requests; the real clock when nil.
	Clock clock.PassiveClock
	// JobStopper stops Ray jobs through the dashboard for StopJobDirect.
	JobStopper JobStopper
	// ConflictBackoff bounds the retries on 409 Conflict; ConflictBackoff
	// (the package variable) when zero.
	ConflictBackoff wait.Backoff
	// Config is the API server configuration Exec streams through
	// (pods/exec); NewForConfig sets it.
	Config *rest.Config
	// Exec runs an exec; podexec.Run when nil (tests replace it).
	Exec ExecFunc
	// Unsupported lists the fields the running operator refuses, for the
	// warnings of an edit (PlanEdit); nil: none said.
	Unsupported Unsupported
}

// ConflictBackoff is the default retry schedule on 409 Conflict: up to 8
// attempts within about 2.5 seconds, enough for a busy controller that
// writes status.
var ConflictBackoff = wait.Backoff{Steps: 8, Duration: 20 * time.Millisecond, Factor: 2, Jitter: 0.2}

// Actions applies mutations through one client. Safe for concurrent use.
type Actions struct {
	c       client.Client
	opts    Options
	actor   string
	clock   clock.PassiveClock
	rec     EventRecorder
	audit   *auditLog
	backoff wait.Backoff
}

// New returns Actions on c, whose scheme must know ray.io/v1 and core types.
func New(c client.Client, opts Options) (*Actions, error) {
	if c == nil {
		return nil, errors.New("actions: nil client")
	}
	a := &Actions{c: c, opts: opts, actor: opts.Actor, clock: opts.Clock, rec: opts.Recorder, backoff: opts.ConflictBackoff}
	if a.actor == "" {
		a.actor = UnknownActor
	}
	// Every write names raydar and the user as its field manager, so that
	// managedFields (and raydar history) tell a change made here from the
	// autoscaler's or kubectl's.
	a.c = client.WithFieldOwner(c, history.FieldManagerFor(a.actor))
	if a.clock == nil {
		a.clock = clock.RealClock{}
	}
	if a.backoff.Steps == 0 {
		a.backoff = ConflictBackoff
	}
	path := opts.AuditLogPath
	if path == "" {
		p, err := DefaultAuditLogPath()
		if err != nil {
			return nil, err
		}
		path = p
	}
	a.audit = &auditLog{path: path}
	if a.rec == nil {
		a.rec = NewAPIRecorder(c, a.clock)
	}
	return a, nil
}

// NewForTarget returns Actions for a resolved kubeconfig target: a new client
// for t.Config, Actor t.User and Context t.ContextName unless opts set them.
func NewForTarget(t *kube.Target, opts Options) (*Actions, error) {
	if opts.Actor == "" {
		opts.Actor = t.User
	}
	if opts.Context == "" {
		opts.Context = t.ContextName
	}
	return NewForConfig(t.Config, opts)
}

// NewForConfig returns Actions with a new client for cfg.
func NewForConfig(cfg *rest.Config, opts Options) (*Actions, error) {
	if opts.Config == nil {
		opts.Config = cfg
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, fmt.Errorf("actions: client: %w", err)
	}
	return New(c, opts)
}

// ReadOnly reports whether every mutation is refused. The TUI hides the
// mutating key hints when true.
func (a *Actions) ReadOnly() bool { return a.opts.ReadOnly }

// Actor is the kube user actions are recorded as.
func (a *Actions) Actor() string { return a.actor }

// Client is the client actions read and write with.
func (a *Actions) Client() client.Client { return a.c }

// AuditLogPath is the file audit lines are appended to.
func (a *Actions) AuditLogPath() string { return a.audit.path }

// change is what a successful write did, for its Event.
type change struct {
	// obj is the object after the write (or the deleted object).
	obj    client.Object
	reason string
	// verb is the Event's action ("Scale", "Delete", …).
	verb string
	// what says what was done, without who: "Scaled worker group …".
	what string
}

// run is the choke point: every apply method passes through it. body reads,
// plans (setting r.Plan), writes, and returns the change (nil when nothing
// needed writing).
func (a *Actions) run(ctx context.Context, action Action, ref ObjectRef, body func(r *Result) (*change, error)) (*Result, error) {
	r := &Result{Time: a.clock.Now().UTC(), Actor: a.actor, Context: a.opts.Context, Action: action, Object: ref}
	if a.opts.ReadOnly {
		err := &ReadOnlyError{Action: action, Object: ref, Reason: a.opts.ReadOnlyReason}
		r.Outcome, r.Error = OutcomeRefused, err.Error()
		return r, err
	}
	if err := a.CheckConfirmation(ref, confirmationFrom(ctx)); err != nil {
		r.Outcome, r.Error = OutcomeRefused, err.Error()
		return r, err
	}
	if err := a.audit.check(); err != nil {
		err = fmt.Errorf("%s refused: the audit log cannot be written (%w); nothing was changed", action, err)
		r.Outcome, r.Error = OutcomeFailed, err.Error()
		return r, err
	}
	ch, err := body(r)
	if err != nil && apierrors.IsConflict(err) {
		err = &APIError{Verb: verbOf(action), Resource: resourceOf(ref.Kind), Namespace: ref.Namespace, Name: ref.Name, User: a.actor, Err: err}
	}
	r.Outcome = outcomeOf(err)
	if err != nil {
		r.Error = err.Error()
	}
	if err == nil && ch == nil {
		r.Outcome = OutcomeUnchanged
	}
	if ch != nil {
		note := fmt.Sprintf("%s, by %s from raydar", ch.what, a.actor)
		if a.opts.Context != "" {
			note = fmt.Sprintf("%s, by %s (context %s) from raydar", ch.what, a.actor, a.opts.Context)
		}
		if evErr := a.rec.Record(ctx, ch.obj, eventTypeNormal, ch.reason, ch.verb, note); evErr != nil {
			r.EventError = a.apiErr(evErr, "create", "events", ref.Namespace, "").Error()
		}
	}
	if auErr := a.audit.append(r); auErr != nil {
		r.AuditError = auErr.Error()
	}
	return r, err
}

// runWrite is run for the actions that write the object. Each attempt
// reads the object fresh, plans (setting r.Plan) and makes ONE write that
// carries the resourceVersion it planned on, returning the change (nil when
// nothing needed writing). An attempt that fails with a conflict starts over
// (at most a.backoff.Steps times); r counts the attempts.
func (a *Actions) runWrite(ctx context.Context, action Action, ref ObjectRef, attempt func(r *Result) (*change, error)) (*Result, error) {
	return a.run(ctx, action, ref, func(r *Result) (*change, error) {
		var ch *change
		err := retry.RetryOnConflict(a.backoff, func() error {
			r.Attempts++
			var err error
			ch, err = attempt(r)
			return err
		})
		return ch, err
	})
}

// patch writes out over base with an optimistic-locked merge patch (a 409
// when the object changed since base was read), the error worded for ref.
func (a *Actions) patch(ctx context.Context, ref ObjectRef, out, base client.Object) error {
	if err := a.c.Patch(ctx, out, optimisticMergeFrom(base)); err != nil {
		return a.apiErr(err, "patch", resourceOf(ref.Kind), ref.Namespace, ref.Name)
	}
	return nil
}

func verbOf(action Action) string {
	switch action {
	case ActionDelete:
		return "delete"
	case ActionTrigger, ActionExec:
		return "create"
	}
	return "patch"
}

func optimisticMergeFrom(obj client.Object) client.Patch {
	return client.MergeFromWithOptions(obj, client.MergeFromWithOptimisticLock{})
}
