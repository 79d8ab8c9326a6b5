package actions

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ErrReadOnly is matched (errors.Is) by every refusal of read-only mode.
var ErrReadOnly = errors.New("read-only mode")

// ErrInvalid is matched (errors.Is) by every *InvalidError.
var ErrInvalid = errors.New("invalid request")

// ReadOnlyError is returned by every apply method when Options.ReadOnly is set.
type ReadOnlyError struct {
	Action Action
	Object ObjectRef
	// Reason says why when the config file made the context read-only.
	Reason string
}

// Error says which action on which object read-only mode refused, and why.
func (e *ReadOnlyError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("read-only: %s %s refused (%s; nothing was changed)", e.Action, e.Object, e.Reason)
	}
	return fmt.Sprintf("read-only mode: %s %s refused (raydar runs with --readonly; nothing was changed)", e.Action, e.Object)
}

// Is makes errors.Is(err, ErrReadOnly) true.
func (e *ReadOnlyError) Is(target error) bool { return target == ErrReadOnly }

// InvalidError is a request refused before anything was written: bad input,
// an object in a state the action does not apply to, or a rule of rayapi/v1
// validation the change would break (Fields).
type InvalidError struct {
	// Reason says, in words, why; empty when Fields say it all.
	Reason string
	// Fields are the spec rules the change would break.
	Fields field.ErrorList
}

// Error is the reason and the broken spec rules, joined by "; ".
func (e *InvalidError) Error() string {
	var parts []string
	if e.Reason != "" {
		parts = append(parts, e.Reason)
	}
	for _, f := range e.Fields {
		parts = append(parts, f.Error())
	}
	return strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalidf(format string, args ...any) *InvalidError {
	return &InvalidError{Reason: fmt.Sprintf(format, args...)}
}

// APIError is an API call that was refused or failed. Its message is meant
// for people; Unwrap returns the API server's error, so apierrors.IsForbidden,
// IsNotFound and IsConflict work on it.
type APIError struct {
	// Verb is the API verb: get, list, patch, delete, create.
	Verb string
	// Resource is the plural resource name: rayclusters, pods, events.
	Resource  string
	Namespace string
	// Name is empty for list.
	Name string
	// User is the kube user the call was made as (Options.Actor).
	User string
	Err  error
}

// Error says which call on what in which namespace failed, with the API
// server's reason.
func (e *APIError) Error() string {
	what := e.Resource
	if e.Name != "" {
		what = fmt.Sprintf("%s %q", singular(e.Resource), e.Name)
	}
	detail := ""
	var st apierrors.APIStatus
	if errors.As(e.Err, &st) {
		detail = st.Status().Message
	}
	switch {
	case apierrors.IsForbidden(e.Err):
		return fmt.Sprintf("forbidden: user %s cannot %s %s in namespace %s (API server: %s)",
			e.User, e.Verb, e.Resource, e.Namespace, detail)
	case apierrors.IsUnauthorized(e.Err):
		return fmt.Sprintf("unauthorized: the API server did not accept the credentials of user %s (%s)", e.User, detail)
	case apierrors.IsNotFound(e.Err):
		return fmt.Sprintf("%s not found in namespace %s", what, e.Namespace)
	case apierrors.IsConflict(e.Err):
		return fmt.Sprintf("conflict: %s in namespace %s kept changing while raydar tried to %s it; nothing was changed, try again (%s)",
			what, e.Namespace, e.Verb, detail)
	case apierrors.IsInvalid(e.Err):
		return fmt.Sprintf("the API server rejected the change to %s in namespace %s: %s", what, e.Namespace, detail)
	case detail != "":
		return fmt.Sprintf("cannot %s %s in namespace %s: %s", e.Verb, what, e.Namespace, detail)
	}
	return fmt.Sprintf("cannot %s %s in namespace %s: %v", e.Verb, what, e.Namespace, e.Err)
}

// Unwrap returns the API server's error.
func (e *APIError) Unwrap() error { return e.Err }

// apiErr wraps err (nil stays nil) for people. Conflicts pass unwrapped so
// that retry.RetryOnConflict sees them; run wraps what is left afterwards.
func (a *Actions) apiErr(err error, verb, resource, ns, name string) error {
	if err == nil {
		return nil
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return err
	}
	if apierrors.IsConflict(err) && verb != "create" {
		return err
	}
	return &APIError{Verb: verb, Resource: resource, Namespace: ns, Name: name, User: a.actor, Err: err}
}

// singular turns a plural resource name into the word used for one object.
func singular(resource string) string {
	return strings.TrimSuffix(resource, "s")
}

// outcomeOf classifies an error into an Outcome.
func outcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return OutcomeApplied
	case errors.Is(err, ErrReadOnly), errors.Is(err, ErrProtected):
		return OutcomeRefused
	case errors.Is(err, ErrInvalid):
		return OutcomeRejected
	}
	return OutcomeFailed
}
