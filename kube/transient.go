package kube

import (
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TransientAPIError reports whether err is one a waiting client outlives:
// a 5xx or 429 answer, or a connection that failed, broke or timed out
// (context.DeadlineExceeded is a net.Error); not a port of this process's
// in use.
func TransientAPIError(err error) bool {
	if errors.Is(err, syscall.EADDRINUSE) {
		return false
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		c := st.Status().Code
		return c >= 500 || c == http.StatusTooManyRequests
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF)
}
