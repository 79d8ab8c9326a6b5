package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ExclusiveEnv names the lock file that `make test` sets so that its test
// processes, run two at a time (go test -p 2, which links the next
// package's tests while one runs), never run two control planes at once on
// the machine's cores: every test process that starts a sandbox takes the
// lock first (Exclusive; kube/sandbox/sandboxtest in TestMain). Start
// refuses to start a sandbox while the variable is set and neither this
// process nor the test process that started it has taken the lock, so a
// package that forgets fails at once instead of running beside another.
const ExclusiveEnv = "RAYDAR_TEST_EXCLUSIVE"

// ExclusiveHeldEnv is set by Exclusive once the lock is held: the children
// the test starts (`raydar sandbox`, `raydar demo`) inherit it and run
// under their parent's lock.
const ExclusiveHeldEnv = "RAYDAR_TEST_EXCLUSIVE_HELD"

// heldLock is the lock file Exclusive keeps open for the process's life.
var heldLock *os.File

// exclusiveCheck is Start's check of ExclusiveEnv.
func exclusiveCheck() error {
	if p := os.Getenv(ExclusiveEnv); p != "" && os.Getenv(ExclusiveHeldEnv) == "" {
		return fmt.Errorf("sandbox: %s=%s is set (make test) but this test process did not take the lock: call sandboxtest.MustExclusive() in the package's TestMain (or sandboxtest.Lock(t)) before starting a sandbox", ExclusiveEnv, p)
	}
	return nil
}

// Exclusive blocks, for test processes, until this process holds the
// machine's control-plane lock, the file ExclusiveEnv names, and holds it
// until the process exits (the kernel releases a flock with its process).
// Without the variable (a plain go test, raydar itself) it does nothing.
// It says on stderr when it had to wait, and how long.
func Exclusive() error {
	path := os.Getenv(ExclusiveEnv)
	if path == "" || os.Getenv(ExclusiveHeldEnv) != "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("sandbox: the test lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("sandbox: the test lock: %w", err)
	}
	// f stays open, and locked, for the life of the process: held here,
	// or the garbage collector's finalizer closes it and the lock goes
	// with it (it did: two benchmark processes held it at once).
	heldLock = f
	begin := time.Now()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			return fmt.Errorf("sandbox: locking %s: %w", path, err)
		}
		fmt.Fprintf(os.Stderr, "sandbox: waited %s for another test process's control plane to finish (%s)\n",
			time.Since(begin).Round(time.Millisecond), path)
	}
	return os.Setenv(ExclusiveHeldEnv, "1")
}
