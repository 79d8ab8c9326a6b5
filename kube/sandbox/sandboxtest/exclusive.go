// Package sandboxtest is what test processes that run a control plane
// (kube/sandbox) share: taking the lock that keeps `make test`'s packages,
// built and run two at a time, from running two control planes at once
// (sandbox.Exclusive).
package sandboxtest

import (
	"fmt"
	"os"
	"testing"

	"github.com/raydar/raydar/kube/sandbox"
)

// MustExclusive takes the lock (sandbox.Exclusive) for TestMain, after
// flag.Parse and only when the package will start a control plane (not
// with -short), before the first sandbox.Start or child `raydar sandbox`.
// It exits the process on error.
func MustExclusive() {
	if err := sandbox.Exclusive(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Exclusive is sandbox.Exclusive, for callers that handle the error.
func Exclusive() error { return sandbox.Exclusive() }

// Lock takes the lock in a test of a package without a TestMain: it is then
// held from the first such test to the end of the process.
func Lock(tb testing.TB) {
	tb.Helper()
	if err := sandbox.Exclusive(); err != nil {
		tb.Fatal(err)
	}
}
