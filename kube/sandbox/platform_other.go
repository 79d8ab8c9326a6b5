//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// errPlatform is returned by Start on platforms other than Linux: the sandbox
// relies on the parent-death signal so that its children never outlive raydar.
var errPlatform = errors.New("sandbox: only supported on Linux (children must die with their parent; that needs PR_SET_PDEATHSIG)")

func platformCheck() error { return errPlatform }

func childAttr() *syscall.SysProcAttr { return nil }

func wrapBinary(_, _, _ string) (string, error) { return "", errPlatform }

func signalGroup(_ int, _ syscall.Signal) error { return errPlatform }

func waitExited(_ int, _ time.Duration) error { return errPlatform }

func lockFile(_ *os.File) error { return errPlatform }
