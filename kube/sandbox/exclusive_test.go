package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// The lock is held for the process's life: the garbage collector must not
// close its file (and release it) once Exclusive has returned.
func TestExclusiveOutlivesTheGarbageCollector(t *testing.T) {
	saved := heldLock
	t.Cleanup(func() { heldLock = saved })
	path := filepath.Join(t.TempDir(), "lock")
	t.Setenv(ExclusiveEnv, path)
	t.Setenv(ExclusiveHeldEnv, "")
	if err := Exclusive(); err != nil {
		t.Fatal(err)
	}
	held := heldLock
	t.Cleanup(func() { _ = held.Close() })
	for range 3 {
		runtime.GC() // runs the finalizers of what is unreachable
	}
	other, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		t.Fatal("another open file took the lock: Exclusive's lock was released after a garbage collection")
	}
}
