package portforward

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"
)

// unreachable is an API server nobody answers at: forwards listen, then
// retry their connects.
func unreachableManager(t *testing.T) *Manager {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	m, err := NewManager(Options{Config: &rest.Config{Host: "http://" + addr},
		Backoff: Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// verifyNoLeak: with no sandbox in the process, goleak's exact check; with
// one (its watches come and go), no goroutine of this package's code.
func verifyNoLeak(t *testing.T) {
	t.Helper()
	if sb == nil {
		goleak.VerifyNone(t)
		return
	}
	noForwardGoroutines(t, 30*time.Second)
}

func TestPortInUseIsOneClearError(t *testing.T) {
	defer verifyNoLeak(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	m := unreachableManager(t)
	defer m.Close()
	_, err = m.Start(Spec{Namespace: "ns", Cluster: "c", Ports: []Port{{Remote: 9000}, {Local: port, Remote: 8265}}})
	if !errors.Is(err, ErrPortInUse) {
		t.Fatalf("Start on a taken port: %v, want ErrPortInUse", err)
	}
	if !strings.Contains(err.Error(), "already in use") || !strings.Contains(err.Error(), net.JoinHostPort("127.0.0.1", itoa(port))) {
		t.Errorf("message does not name the port: %q", err)
	}
	if n := len(m.Snapshot()); n != 0 {
		t.Errorf("a refused forward is listed: %d forwards", n)
	}
}

func TestCloseLeavesNoGoroutine(t *testing.T) {
	defer verifyNoLeak(t)
	m := unreachableManager(t)
	f, err := m.Start(Spec{Namespace: "ns", Cluster: "c", Ports: []Port{{Remote: 8265}, {Remote: 8000}}})
	if err != nil {
		t.Fatal(err)
	}
	// A local connection waits for a stream that never comes.
	st := f.State()
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", itoa(st.Ports[0].Local)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for f.State().LastError == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no connect failure reported: %+v", f.State())
		}
		<-f.Changed()
	}
	if s := f.State(); s.Phase != Reconnecting {
		t.Errorf("unreachable API server: phase %s, want Reconnecting", s.Phase)
	}
	m.Close()
	if s := f.State(); s.Phase != Stopped {
		t.Errorf("after Close: %s", s.Phase)
	}
	if _, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", itoa(st.Ports[0].Local))); err == nil {
		t.Error("local port still listening after Close")
	}
	if _, err := m.Start(Spec{Namespace: "ns", Cluster: "c", Ports: []Port{{Remote: 1}}}); err == nil {
		t.Error("Start after Close accepted")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
