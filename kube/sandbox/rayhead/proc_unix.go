//go:build unix && !linux

package rayhead

import "syscall"

// jobSysProcAttr puts the job in its own process group. (Pdeathsig is
// Linux-only: elsewhere a job can outlive a crashed raydar.)
func jobSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitExited cannot wait without reaping here; it reports false so the
// caller does not signal a process group whose ID may have been reused.
func waitExited(pid int) bool { return false }

func signalGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig)
	}
}
