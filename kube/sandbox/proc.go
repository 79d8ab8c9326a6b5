package sandbox

import (
	"bytes"
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

// spawner starts every child of a sandbox from one OS thread that stays alive
// until the sandbox is stopped. The kernel's parent-death signal fires when
// the thread that forked a child exits, not the process; an ordinary goroutine
// may be moved to, or leave behind, a thread that later exits (for example when
// some other goroutine locks it and returns), which would kill our children
// early. A locked thread that never runs anything else cannot be taken away.
type spawner struct {
	reqs chan func()
	done chan struct{}
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan func()), done: make(chan struct{})}
	started := make(chan struct{})
	go func() {
		// Never unlocked: when this goroutine returns the runtime ends the
		// thread, and any child still alive receives its SIGKILL.
		runtime.LockOSThread()
		close(started)
		for f := range s.reqs {
			f()
		}
		close(s.done)
	}()
	<-started
	return s
}

// do runs f on the spawner's thread and waits for it.
func (s *spawner) do(f func() error) error {
	errc := make(chan error, 1)
	s.reqs <- func() { errc <- f() }
	return <-errc
}

// close ends the spawner's thread; call it only after every child is gone.
func (s *spawner) close() {
	close(s.reqs)
	<-s.done
}

// process is a child started by the sandbox itself (not by envtest).
type process struct {
	name    string
	logPath string
	done    chan struct{} // closed when the process has exited for good
	exitErr error         // valid after done

	mu       sync.Mutex
	cmd      *exec.Cmd // the running child (another one after a restart)
	stopping bool      // stop was called: an exit is not restarted
	restarts int       // how many more times an exit of its own is restarted
}

// startProcess starts name from path with its output going to logPath.
// An exit of its own ends it (exited then says so), unless restarts is
// above zero: it is then started again, as often, each time logged with
// logf and in its log.
func startProcess(sp *spawner, name, path, logPath, dir string, args, env []string, restarts int, logf func(string, ...any)) (*process, error) {
	spawn := func() (*exec.Cmd, error) {
		out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %s log: %w", name, err)
		}
		defer out.Close() // the child has its own descriptor
		cmd := exec.Command(path, args...)
		cmd.Dir = dir
		cmd.Stdout = out
		cmd.Stderr = out
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = childAttr()
		if err := sp.do(cmd.Start); err != nil {
			return nil, fmt.Errorf("sandbox: starting %s: %w", name, err)
		}
		return cmd, nil
	}
	cmd, err := spawn()
	if err != nil {
		return nil, err
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{}), restarts: restarts}
	go func() {
		for {
			err := cmd.Wait()
			p.mu.Lock()
			if p.stopping || p.restarts == 0 {
				p.exitErr = err
				p.mu.Unlock()
				close(p.done)
				return
			}
			p.restarts--
			next, serr := spawn()
			if serr != nil {
				p.exitErr = fmt.Errorf("%v, and starting it again: %w", err, serr)
				p.mu.Unlock()
				close(p.done)
				return
			}
			p.cmd, cmd = next, next
			p.mu.Unlock()
			note := fmt.Sprintf("%s exited on its own (%v); started it again (pid %d)", name, err, next.Process.Pid)
			appendLine(logPath, "raydar sandbox: "+note)
			logf("%s", note)
		}
	}()
	return p, nil
}

// pid is the running child's process id.
func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// appendLine adds a line to a log file, best effort.
func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintln(f, line)
}

// exited returns a non-nil error when the process has already exited.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", p.name, p.exitErr, p.logPath, tailFile(p.logPath, 15))
	default:
		return nil
	}
}

// stop sends SIGTERM to the process group, and SIGKILL after grace. It
// reports a process that had died on its own before, or that had to be killed.
func (p *process) stop(grace time.Duration) error {
	if err := p.exited(); err != nil {
		return err
	}
	p.mu.Lock()
	p.stopping = true
	pid := p.cmd.Process.Pid
	p.mu.Unlock()
	_ = signalGroup(pid, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = signalGroup(pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) survived SIGKILL for 10s", p.name, pid)
	}
	return fmt.Errorf("%s did not stop within %s of SIGTERM and was killed", p.name, grace)
}

// pidPath is where the wrapper script of a binary in dir writes the pid of
// the process it becomes (wrapBinary).
func pidPath(dir, name string) string { return filepath.Join(dir, name+".pid") }

// APIServerPID is the process id of the running kube-apiserver, which the
// sandbox's wrapper writes on each start (so a restart changes it); ok is
// false before the first start.
func (s *Sandbox) APIServerPID() (pid int, ok bool) {
	return readPid(pidPath(filepath.Join(s.StateDir, "bin"), binAPIServer))
}

// readPid reads a pid file; ok is false when there is none (the process was
// never started) or it holds no pid.
func readPid(path string) (pid int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil && pid > 0
}

// tailFile returns the last n lines of a file, for error messages.
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	defer f.Close()
	const max = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		_, _ = f.Seek(fi.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.ReplaceAll(string(bytes.Join(lines, []byte("\n"))), "\n", "\n  ")
}
