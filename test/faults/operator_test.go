package faults

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/raydash"
)

// opProc is `raydar operator` running as a child process, so that SIGKILL
// is real: nothing of it survives but what it wrote to the API server.
type opProc struct {
	identity string
	logPath  string
	cmd      *exec.Cmd
	done     chan struct{}
	once     sync.Once
}

// procArgs say how to run one operator process.
type procArgs struct {
	kubeconfig string
	namespace  string // watched; also the leader election Lease's namespace
	identity   string
	elect      bool
	// leaseNamespace, when set, holds the leader election Lease instead of
	// namespace (where TUIs meet operators: raydar-system, else default).
	leaseNamespace string
}

// startOpProc starts `raydar operator` restricted to the namespace. Its
// log goes to a file in the test's temp dir, printed when the test fails.
func startOpProc(t testing.TB, a procArgs) *opProc {
	t.Helper()
	p, err := startOpProcErr(t, a)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startOpProcErr is startOpProc for goroutines other than the test's.
func startOpProcErr(t testing.TB, a procArgs) (*opProc, error) {
	args := []string{"operator", "--kubeconfig", a.kubeconfig, "--watch-namespaces", a.namespace,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--ignore-other-operator",
		"--identity", a.identity, "--status-coalesce", "500ms"}
	if a.elect {
		leaseNS := a.namespace
		if a.leaseNamespace != "" {
			leaseNS = a.leaseNamespace
		}
		args = append(args, "--leader-election-namespace", leaseNS)
	} else {
		args = append(args, "--no-leader-election")
	}
	logPath := filepath.Join(t.TempDir(), a.identity+".log")
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	cmd := exec.Command(raydarBin, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Env = withoutKubeconfig(os.Environ())
	// Its own process group, and killed with the thread that started it:
	// a test binary that dies leaves no operator behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := spawn(cmd.Start); err != nil {
		return nil, err
	}
	p := &opProc{identity: a.identity, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("log of operator %s (last 3000 bytes):\n%s", a.identity, tail(b, 3000))
		}
	})
	return p, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func withoutKubeconfig(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "KUBECONFIG=") {
			out = append(out, e)
		}
	}
	return out
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *opProc) kill() {
	p.once.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
}

// exited reports whether the process has ended on its own.
func (p *opProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// spawnReqs are served by one goroutine locked to its OS thread for the
// life of the test binary: the parent-death signal fires when the thread
// that forked the child exits, and this thread never does.
var spawnReqs = func() chan func() {
	c := make(chan func())
	go func() {
		runtime.LockOSThread()
		for f := range c {
			f()
		}
	}()
	return c
}()

func spawn(f func() error) error {
	errc := make(chan error, 1)
	spawnReqs <- func() { errc <- f() }
	return <-errc
}

// childProcesses lists the raydar processes whose parent is this test
// binary, "pid cmd".
func childProcesses() []string {
	me := strconv.Itoa(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[1] != me {
			continue
		}
		comm := s[strings.IndexByte(s, '(')+1 : i]
		if comm == "raydar" {
			out = append(out, e.Name()+" "+comm)
		}
	}
	return out
}

// inProc is an operator in this process (controller.New), for the
// scenarios whose faults are elsewhere.
type inProc struct {
	*controller.Operator
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

func (r *inProc) stop() {
	r.once.Do(func() {
		r.cancel()
		<-r.done
	})
}

// startInProc starts an operator restricted to ns on cfg without leader
// election; dash, when set, reaches the simulated heads.
func startInProc(t testing.TB, cfg *rest.Config, ns string, dash raydash.Resolver) *inProc {
	t.Helper()
	opts := controller.Options{
		DisableLeaderElection:        true,
		Namespaces:                   []string{ns},
		IgnoreOtherOperators:         true,
		SkipControllerNameValidation: true,
		StatusCoalesceWindow:         500 * time.Millisecond,
		Logger:                       testLogger(),
		Dashboards:                   dash,
	}
	opts.RayJob.MaxPollInterval = 2 * time.Second
	op, err := controller.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &inProc{Operator: op, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- op.Start(ctx) }()
	t.Cleanup(r.stop)
	return r
}
