package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// chunk is one read of the program's terminal output.
type chunk struct {
	at time.Time
	n  int
}

// recorder reads what the program writes to its terminal (tmux pipe-pane
// into a FIFO) and keeps every read with its time.
type recorder struct {
	mu     sync.Mutex
	chunks []chunk
	total  int64
	wake   chan struct{}
}

func (r *recorder) read(f io.Reader) {
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			r.mu.Lock()
			r.chunks = append(r.chunks, chunk{time.Now(), n})
			r.total += int64(n)
			w := r.wake
			r.wake = nil
			r.mu.Unlock()
			if w != nil {
				close(w)
			}
		}
		if err != nil {
			return
		}
	}
}

// bytes is the total written so far.
func (r *recorder) bytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// since sums the bytes of the reads after t (and before until, if not zero).
func (r *recorder) since(t, until time.Time) (n int, first, last time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.chunks {
		if c.at.After(t) && (until.IsZero() || !c.at.After(until)) {
			if first.IsZero() {
				first = c.at
			}
			last = c.at
			n += c.n
		}
	}
	return n, first, last
}

// waitOutput waits for output after t, at most d; it returns when the first
// read after t arrived (ok false on timeout).
func (r *recorder) waitOutput(t time.Time, d time.Duration) (time.Time, bool) {
	deadline := time.After(d)
	for {
		r.mu.Lock()
		if k := len(r.chunks); k > 0 && r.chunks[k-1].at.After(t) {
			// the first read after t
			i := k - 1
			for i > 0 && r.chunks[i-1].at.After(t) {
				i--
			}
			at := r.chunks[i].at
			r.mu.Unlock()
			return at, true
		}
		if r.wake == nil {
			r.wake = make(chan struct{})
		}
		w := r.wake
		r.mu.Unlock()
		select {
		case <-w:
		case <-deadline:
			return time.Time{}, false
		}
	}
}

// quiet waits until nothing has been written for q (at most d).
func (r *recorder) quiet(q, d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		r.mu.Lock()
		var last time.Time
		if k := len(r.chunks); k > 0 {
			last = r.chunks[k-1].at
		}
		r.mu.Unlock()
		if time.Since(last) >= q {
			return
		}
		time.Sleep(q / 4)
	}
}

// tmuxTerm is one tmux server with one session ("tui") running the
// program, its output piped to a recorder and a control-mode client that
// sends keys without starting a process per key.
type tmuxTerm struct {
	sock, dir string
	rec       *recorder
	ctl       *exec.Cmd
	ctlIn     io.WriteCloser
	pid       int
}

// startTmux starts argv (with env) in a w×h tmux pane. The program starts
// only once its output is piped (a shell waits for a file).
func startTmux(dir string, w, h int, env []string, argv []string) (*tmuxTerm, error) {
	t := &tmuxTerm{sock: filepath.Join(dir, "tmux.sock"), dir: dir, rec: &recorder{}}
	goFile, fifo := filepath.Join(dir, "go"), filepath.Join(dir, "out.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		return nil, err
	}
	var q []string
	for _, e := range env {
		q = append(q, shellQuote(e))
	}
	for _, a := range argv {
		q = append(q, shellQuote(a))
	}
	script := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.02; done; exec env %s", shellQuote(goFile), strings.Join(q, " "))
	if out, err := t.tmux("-f", "/dev/null", "new-session", "-d", "-s", "tui", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "sh", "-c", script); err != nil {
		return nil, fmt.Errorf("tmux new-session: %v: %s", err, out)
	}
	if out, err := t.tmux("set-option", "-g", "window-size", "manual"); err != nil {
		return nil, fmt.Errorf("tmux: %v: %s", err, out)
	}
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until cat opens it for writing
		if err != nil {
			close(opened)
			return
		}
		opened <- f
	}()
	if out, err := t.tmux("pipe-pane", "-o", "-t", "tui", "exec cat > "+shellQuote(fifo)); err != nil {
		return nil, fmt.Errorf("tmux pipe-pane: %v: %s", err, out)
	}
	select {
	case f, ok := <-opened:
		if !ok {
			return nil, fmt.Errorf("opening %s failed", fifo)
		}
		go t.rec.read(f)
	case <-time.After(10 * time.Second):
		return nil, fmt.Errorf("tmux pipe-pane never opened %s", fifo)
	}
	pid, err := t.tmux("display-message", "-p", "-t", "tui", "#{pane_pid}")
	if err != nil {
		return nil, fmt.Errorf("tmux display-message: %v: %s", err, pid)
	}
	if t.pid, err = strconv.Atoi(strings.TrimSpace(pid)); err != nil {
		return nil, err
	}
	t.ctl = exec.Command("tmux", "-S", t.sock, "-C", "attach-session", "-t", "tui")
	if t.ctlIn, err = t.ctl.StdinPipe(); err != nil {
		return nil, err
	}
	t.ctl.Stdout = io.Discard
	if err := t.ctl.Start(); err != nil {
		return nil, fmt.Errorf("tmux control client: %w", err)
	}
	return t, os.WriteFile(goFile, nil, 0o600)
}

func (t *tmuxTerm) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", t.sock}, args...)...).CombinedOutput()
	return string(out), err
}

// send types keys (tmux key names) through the control client and returns
// when the command was written.
func (t *tmuxTerm) send(keys ...string) error {
	for i, k := range keys {
		keys[i] = shellQuote(k)
	}
	_, err := fmt.Fprintf(t.ctlIn, "send-keys -t tui %s\n", strings.Join(keys, " "))
	return err
}

// screen is the pane's text.
func (t *tmuxTerm) screen() string {
	out, _ := t.tmux("capture-pane", "-p", "-t", "tui")
	return out
}

func (t *tmuxTerm) close() {
	if t.ctlIn != nil {
		_ = t.ctlIn.Close()
	}
	_, _ = t.tmux("kill-server")
	if t.ctl != nil {
		_ = t.ctl.Wait()
	}
	// The program got SIGHUP; the next measurement starts once it is gone.
	// (A zombie still answers kill 0: give up 5 s after the SIGKILL.)
	for i := 0; t.pid > 0 && i < 750 && syscall.Kill(t.pid, 0) == nil; i++ {
		if i == 500 {
			_ = syscall.Kill(t.pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// loadAvg is the 1-minute load average.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func hostname() (string, error) {
	h, err := os.Hostname()
	if err != nil {
		return "", err
	}
	b, _ := os.ReadFile("/proc/cpuinfo")
	model := ""
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
			break
		}
	}
	return fmt.Sprintf("%s (%d cores, %s)", h, runtime.NumCPU(), model), nil
}
