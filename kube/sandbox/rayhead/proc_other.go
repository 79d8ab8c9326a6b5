//go:build !unix

package rayhead

import (
	"os"
	"syscall"
)

// Jobs need /bin/sh and process groups; on other systems they fail to start.

func jobSysProcAttr() *syscall.SysProcAttr { return nil }

func waitExited(pid int) bool { return false }

func signalGroup(pgid int, sig syscall.Signal) {
	if p, err := os.FindProcess(pgid); err == nil {
		_ = p.Kill()
	}
}
