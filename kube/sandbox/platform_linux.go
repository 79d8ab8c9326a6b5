//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// platformCheck reports what this platform lacks for a sandbox.
func platformCheck() error {
	if _, err := exec.LookPath("setpriv"); err != nil {
		return fmt.Errorf("sandbox: setpriv (util-linux) not found in PATH: it is needed so that etcd and kube-apiserver die with their parent: %w", err)
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		return fmt.Errorf("sandbox: /bin/sh: %w", err)
	}
	return nil
}

// childAttr makes a child process the leader of its own process group (so that
// a terminal's Ctrl-C reaches only raydar, which then stops the child in
// order) and has the kernel kill it when the thread that started it exits.
// Children are started on the spawner's locked thread, which lives until Stop,
// so "the thread exits" means "the sandbox is stopped or raydar is gone".
// Go's fork code re-checks the parent after setting the signal, so a parent
// that dies during the fork is handled too.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// wrapBinary writes an executable script into dir that runs real with the
// parent-death signal set. envtest starts etcd and kube-apiserver itself with
// no way to pass SysProcAttr, so its binary paths point at these scripts.
//
// setpriv sets PR_SET_PDEATHSIG and execs a shell that first checks that its
// parent is still this process (closing the window in which the parent died
// before the signal was armed) and then execs the real binary; the signal
// survives both execs, and the pid stays that of the process envtest started,
// so envtest's own stop (SIGTERM to the pid) still works. Before that the
// script writes its pid to pidPath(dir, name), for Stop to wait on (envtest
// does not say which process it started).
func wrapBinary(dir, name, real string) (string, error) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return "", err
	}
	guard := fmt.Sprintf(`[ "$PPID" = %d ] || exit 125; exec "$0" "$@"`, os.Getpid())
	script := strings.Join([]string{
		"#!/bin/sh",
		"# Written by raydar's kube/sandbox: runs " + name + " so that it dies with its parent.",
		"echo $$ >" + shQuote(pidPath(dir, name)),
		"exec " + shQuote(setpriv) + " --pdeathsig KILL -- /bin/sh -c " + shQuote(guard) + " " + shQuote(real) + ` "$@"`,
		"",
	}, "\n")
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		return "", err
	}
	return p, nil
}

// shQuote quotes s for a POSIX shell.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) error {
	return syscall.Kill(-pid, sig)
}

// waitExited waits until the process pid, a child of this process, has
// exited (a zombie not yet reaped counts as exited), for at most timeout. A
// pid that is gone, or that now names a process that is not our child, has
// exited too.
func waitExited(pid int, timeout time.Duration) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(fd)
	if ppid, ok := parentOf(pid); !ok || ppid != os.Getpid() {
		return nil // reaped, and the number taken by someone else's process
	}
	deadline := time.Now().Add(timeout)
	for {
		ms := int(time.Until(deadline).Milliseconds())
		if ms <= 0 {
			return fmt.Errorf("pid %d still running %s after it was told to stop", pid, timeout)
		}
		// The pidfd becomes readable when the process exits.
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("poll on pid %d: %w", pid, err)
		}
		if n > 0 {
			return nil
		}
	}
}

// parentOf returns the parent pid of pid, from /proc/<pid>/stat.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// "pid (comm) state ppid …"; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// lockFile takes an exclusive, non-blocking lock on f; the kernel drops it
// when the process dies.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
