//go:build linux

package rayhead

import (
	"syscall"
	"unsafe"
)

// jobSysProcAttr puts the job in its own process group (so it can be
// signalled as a whole) and has the kernel SIGKILL the shell if the thread
// that started it, i.e. this process, dies.
func jobSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitExited blocks until process pid has exited, without reaping it: while
// the zombie exists its PID, and so its process-group ID, cannot be reused,
// which makes signalling the group afterwards safe.
func waitExited(pid int) bool {
	const (
		pPID    = 1
		wExited = 0x4
		wNoWait = 0x1000000
	)
	var siginfo [128]byte
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&siginfo[0])), wExited|wNoWait, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		return errno == 0
	}
}

// signalGroup sends sig to every process in process group pgid.
func signalGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig)
	}
}
