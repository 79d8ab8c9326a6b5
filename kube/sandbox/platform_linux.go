//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
// so envtest's own stop (SIGTERM to the pid) still works.
func wrapBinary(dir, name, real string) (string, error) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return "", err
	}
	guard := fmt.Sprintf(`[ "$PPID" = %d ] || exit 125; exec "$0" "$@"`, os.Getpid())
	script := strings.Join([]string{
		"#!/bin/sh",
		"# Written by raydar's kube/sandbox: runs " + name + " so that it dies with its parent.",
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

// lockFile takes an exclusive, non-blocking lock on f; the kernel drops it
// when the process dies.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
