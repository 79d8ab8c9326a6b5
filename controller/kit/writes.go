package kit

import (
	"context"
	"errors"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Ambiguous reports whether a failed write may nevertheless have happened
// (a timeout, a connection reset, a server error, an error that is not
// the API server's answer): its expectation is kept, and the next
// observation reads live (Expectations.MarkUncertain).
func Ambiguous(err error) bool {
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.As(err, &opErr) && opErr.Op == "dial":
		// No connection was made (refused, no route, a dial timeout): the
		// request never left, so nothing happened. Keeping its expectation
		// would make the next pass believe in an object that does not
		// exist and create nothing in its place.
		return false
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), apierrors.IsInternalError(err),
		apierrors.IsUnexpectedServerError(err), apierrors.IsServiceUnavailable(err):
		return true
	case errors.As(err, &netErr), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return true
	}
	var status apierrors.APIStatus
	return !errors.As(err, &status)
}

// Create sends the create of obj, a child of owner, recorded in exp before
// it leaves (ExpectCreate): on success the answer is recorded (Created);
// after an error that says no create happened (AlreadyExists included:
// the object is someone else's, or ours whose answer was lost, and the
// cache shows it) the expectation is dropped; after an Ambiguous error it
// is kept, so that the next pass does not create it a second time. It
// returns the API server's error.
func Create(ctx context.Context, c client.Writer, exp *Expectations, owner types.UID, obj client.Object) error {
	exp.ExpectCreate(owner, obj)
	err := c.Create(ctx, obj)
	switch {
	case err == nil:
		exp.Created(owner, obj)
	case apierrors.IsAlreadyExists(err), !Ambiguous(err):
		exp.CreateFailed(owner, obj)
	}
	return err
}
