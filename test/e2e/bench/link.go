package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// The slow link (-link-delay): raydar runs behind a pty proxy, this same
// program re-executed, that holds every byte for the delay in each
// direction, keys on their way in and the screen on its way out, as an SSH
// session to a bastion does. tmux sees the proxy; the proxy's pty is
// raydar's terminal. The figures then measure what a user at the far end
// of the link sees.
const (
	// linkProxyEnv carries the one-way delay to the re-executed proxy.
	linkProxyEnv = "RAYDAR_BENCH_LINK_DELAY"
	// linkPIDEnv names the file the proxy writes raydar's pid to, for the
	// CPU and memory figures (tmux's pane pid is the proxy's).
	linkPIDEnv = "RAYDAR_BENCH_LINK_PIDFILE"
)

// linkArgv wraps argv in the proxy, and returns where the proxy will
// write raydar's pid.
func linkArgv(dir string, delay time.Duration, argv []string) (wrapped, env []string, pidFile string, err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, "", err
	}
	pidFile = dir + "/raydar.pid"
	env = []string{linkProxyEnv + "=" + delay.String(), linkPIDEnv + "=" + pidFile}
	return append([]string{self, "--"}, argv...), env, pidFile, nil
}

// waitPID reads the pid the proxy writes once raydar has started.
func waitPID(file string, d time.Duration) (int, error) {
	deadline := time.Now().Add(d)
	for {
		b, err := os.ReadFile(file)
		if err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			return strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the link proxy wrote no pid to %s within %s", file, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runLinkProxy is the proxy: it starts argv on a new pty of this
// terminal's size, puts this terminal in raw mode, and copies each
// direction through a delay line until the program exits, whose status it
// exits with.
func runLinkProxy(delay time.Duration, argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	size, err := pty.GetsizeFull(os.Stdin)
	if err != nil {
		size = &pty.Winsize{Cols: 120, Rows: 40}
	}
	ptmx, err := pty.StartWithSize(cmd, size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "link proxy:", err)
		return 1
	}
	defer ptmx.Close()
	if f := os.Getenv(linkPIDEnv); f != "" {
		_ = os.WriteFile(f, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	}
	if old, err := term.MakeRaw(int(os.Stdin.Fd())); err == nil {
		defer func() { _ = term.Restore(int(os.Stdin.Fd()), old) }()
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	go func() {
		for range winch {
			_ = pty.InheritSize(os.Stdin, ptmx)
		}
	}()
	go delayLine(ptmx, os.Stdin, delay)
	go delayLine(os.Stdout, ptmx, delay)
	if err := cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 1
	}
	return 0
}

// delayLine copies src to dst, each chunk written delay after it was read,
// in order (a link's latency, not its bandwidth).
func delayLine(dst io.Writer, src io.Reader, delay time.Duration) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	q := make(chan chunk, 4096)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32*1024)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{buf[:n], time.Now().Add(delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			return
		}
	}
}
