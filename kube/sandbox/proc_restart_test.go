package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A child that exits on its own is started again as often as asked, each
// time said in its log and to logf; then its exit is the sandbox's error.
func TestProcessRestartsThenExits(t *testing.T) {
	sp := newSpawner()
	defer sp.close()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "child.log")
	var (
		mu    sync.Mutex
		notes []string
	)
	logf := func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, f)
	}
	p, err := startProcess(sp, "child", "/bin/sh", logPath, dir, []string{"-c", "echo run; exit 3"}, nil, 2, logf)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatal("the child was never given up")
	}
	if err := p.exited(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("exited() = %v, want its exit status", err)
	}
	b, _ := os.ReadFile(logPath)
	if runs, again := strings.Count(string(b), "run\n"), strings.Count(string(b), "started it again"); runs != 3 || again != 2 {
		t.Fatalf("log: %d runs and %d restarts, want 3 and 2:\n%s", runs, again, b)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) != 2 {
		t.Fatalf("logf told %d restarts, want 2", len(notes))
	}
}

// stop ends a restartable child for good: it is not started again.
func TestProcessStopIsNotRestarted(t *testing.T) {
	sp := newSpawner()
	defer sp.close()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "child.log")
	p, err := startProcess(sp, "child", "/bin/sh", logPath, dir, []string{"-c", "echo run; exec sleep 60"}, nil, 3, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.stop(5 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	<-p.done
	b, _ := os.ReadFile(logPath)
	if strings.Contains(string(b), "started it again") {
		t.Fatalf("a stopped child was started again:\n%s", b)
	}
}
