package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What a waiting client outlives, and what it must not wait for.
func TestTransientAPIError(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewTooManyRequests("slow down", 1), true},
		{apierrors.NewServiceUnavailable("restarting"), true},
		{apierrors.NewInternalError(errors.New("etcd")), true},
		{apierrors.NewServerTimeout(pods, "create", 1), true},
		{apierrors.NewTimeoutError("timed out", 1), true},
		{fmt.Errorf("create: %w", context.DeadlineExceeded), true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{syscall.ECONNRESET, true},
		{apierrors.NewNotFound(pods, "x"), false},
		{apierrors.NewAlreadyExists(pods, "x"), false},
		{apierrors.NewForbidden(pods, "x", errors.New("no")), false},
		{&net.OpError{Op: "listen", Err: syscall.EADDRINUSE}, false},
		{errors.New("bad options"), false},
	} {
		if got := TransientAPIError(tc.err); got != tc.want {
			t.Errorf("TransientAPIError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
