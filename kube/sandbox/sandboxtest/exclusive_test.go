package sandboxtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/raydar/raydar/kube/sandbox"
)

// Under make test (the variable set), a process that did not take the lock
// cannot start a control plane: it is refused before anything starts.
func TestStartWithoutTheLockIsRefused(t *testing.T) {
	t.Setenv(sandbox.ExclusiveEnv, filepath.Join(t.TempDir(), "lock"))
	t.Setenv(sandbox.ExclusiveHeldEnv, "")
	_, err := sandbox.Start(context.Background(), sandbox.Options{})
	if err == nil || !strings.Contains(err.Error(), "did not take the lock") {
		t.Fatalf("Start without the lock = %v, want the refusal naming sandboxtest", err)
	}
}

// Exclusive holds the flock until the process ends and marks the
// environment its children inherit; a second holder cannot take it.
func TestExclusiveHoldsTheLockForTheProcessAndItsChildren(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	t.Setenv(sandbox.ExclusiveEnv, path)
	t.Setenv(sandbox.ExclusiveHeldEnv, "")
	if err := Exclusive(); err != nil {
		t.Fatal(err)
	}
	if os.Getenv(sandbox.ExclusiveHeldEnv) == "" {
		t.Fatalf("%s not set after Exclusive: children would be refused", sandbox.ExclusiveHeldEnv)
	}
	other, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	err = syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("a second flock on %s = %v, want EWOULDBLOCK (the lock held)", path, err)
	}
	// Held: a second call (and a child's) neither blocks nor fails.
	if err := Exclusive(); err != nil {
		t.Fatal(err)
	}
}
