package portforward

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: 250 * time.Millisecond, Max: 2 * time.Second}
	for failures, want := range map[int]time.Duration{
		-1: 0, 0: 0, 1: 250 * time.Millisecond, 2: 500 * time.Millisecond, 3: time.Second,
		4: 2 * time.Second, 5: 2 * time.Second, 100: 2 * time.Second,
	} {
		if got := b.Delay(failures); got != want {
			t.Errorf("Delay(%d) = %v, want %v", failures, got, want)
		}
	}
	if got := (Backoff{}).Delay(1); got != DefaultBackoff.Initial {
		t.Errorf("zero Backoff: Delay(1) = %v, want the default %v", got, DefaultBackoff.Initial)
	}
}

func TestNextFailures(t *testing.T) {
	for _, c := range []struct {
		failures int
		upFor    time.Duration
		want     int
	}{
		{0, 0, 1},           // first connect failed
		{3, 0, 4},           // failing in a row
		{3, time.Second, 4}, // broke soon after coming up: flapping
		{5, StableAfter, 1}, // was up long enough: start again
		{0, time.Hour, 1},   // a long-lived stream broke
	} {
		if got := nextFailures(c.failures, c.upFor); got != c.want {
			t.Errorf("nextFailures(%d, %v) = %d, want %d", c.failures, c.upFor, got, c.want)
		}
	}
}

func TestStateTransitions(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1, t2, t3 := t0.Add(time.Second), t0.Add(2*time.Second), t0.Add(3*time.Second)
	s := State{Phase: Connecting, Since: t0}

	// The first connect fails: Reconnecting, since listening began.
	s = s.broke(errors.New("no ready head"), t1)
	if s.Phase != Reconnecting || !s.Since.Equal(t0) || s.LastError != "no ready head" || !s.LastErrorAt.Equal(t1) {
		t.Fatalf("first connect failed: %+v", s)
	}
	s = s.connected("head-a", t1)
	if s.Phase != Up || s.Pod != "head-a" || !s.Since.Equal(t1) || s.Reconnects != 1 {
		t.Fatalf("up: %+v", s)
	}
	if s.LastError != "no ready head" {
		t.Errorf("the last error is kept once up: %+v", s)
	}
	s = s.broke(errors.New("pod head-a deleted"), t2)
	if s.Phase != Reconnecting || !s.Since.Equal(t2) {
		t.Fatalf("break: %+v", s)
	}
	// Failed retries do not move Since.
	s = s.broke(errors.New("no ready head"), t3)
	if !s.Since.Equal(t2) || s.LastError != "no ready head" {
		t.Fatalf("failed retry: %+v", s)
	}
	s = s.connected("head-b", t3)
	if s.Phase != Up || s.Pod != "head-b" || s.Reconnects != 2 {
		t.Fatalf("back up: %+v", s)
	}
	s = s.stopped(t3)
	if s.Phase != Stopped {
		t.Fatalf("stopped: %+v", s)
	}
	if s2 := s.broke(errors.New("late"), t3); s2.Phase != Stopped {
		t.Errorf("a break after stop must not revive: %+v", s2)
	}
	// The first connect coming up is not a reconnect.
	if s := (State{Phase: Connecting}).connected("p", t0); s.Reconnects != 0 {
		t.Errorf("first connect counted as reconnect: %+v", s)
	}
}

func TestParsePort(t *testing.T) {
	for in, want := range map[string]Port{
		"8265":       {Local: 8265, Remote: 8265, Name: "dashboard"},
		"18265:8265": {Local: 18265, Remote: 8265, Name: "dashboard"},
		":8000":      {Local: 0, Remote: 8000, Name: "serve"},
		"10001":      {Local: 10001, Remote: 10001, Name: "client"},
		"9000:6379":  {Local: 9000, Remote: 6379},
	} {
		got, err := ParsePort(in)
		if err != nil || got != want {
			t.Errorf("ParsePort(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "0", "8265:0", "70000", "-1:80", "1:2:3"} {
		if _, err := ParsePort(bad); err == nil {
			t.Errorf("ParsePort(%q): no error", bad)
		}
	}
}

func TestCheckPorts(t *testing.T) {
	if err := CheckPorts(nil); err == nil {
		t.Error("no ports accepted")
	}
	if err := CheckPorts([]Port{Dashboard, {Local: 8265, Remote: 9}}); err == nil {
		t.Error("a local port twice accepted")
	}
	if err := CheckPorts([]Port{{Remote: 1}, {Remote: 2}, Dashboard}); err != nil {
		t.Errorf("two free local ports refused: %v", err)
	}
}

func TestCheckAddress(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" accepted, else a part of the reason
	}{
		{"127.0.0.1", ""},
		{"0.0.0.0", ""},
		{"::", ""},
		{"::1", ""},
		{"10.1.2.3", ""},
		{"localhost", ""},
		{"", "no local address"},
		{"127.0.0.", "is not an IP address"},
		{"0.0.0.0:8265", "is not an IP address"},
		{"bastion", "is not an IP address"},
		{"224.0.0.1", "multicast"},
	} {
		err := CheckAddress(c.in)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckAddress(%q) = %v, want accepted", c.in, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckAddress(%q) = %v, want %q", c.in, err, c.want)
		}
	}
}

func TestSSHLine(t *testing.T) {
	for _, c := range []struct {
		addr       string
		ports      []Port
		user, host string
		want       string
	}{
		{"127.0.0.1", []Port{Dashboard}, "ana", "bastion", "ssh -L 8265:127.0.0.1:8265 ana@bastion"},
		{"0.0.0.0", []Port{Dashboard, Serve}, "ana", "bastion", "ssh -L 8265:127.0.0.1:8265 -L 8000:127.0.0.1:8000 ana@bastion"},
		{"10.0.0.5", []Port{{Local: 9000, Remote: 6379}}, "", "b1", "ssh -L 9000:10.0.0.5:9000 b1"},
		{"::1", []Port{Client}, "ana", "", "ssh -L 10001:[::1]:10001 ana@BASTION"},
	} {
		if got := SSHLine(c.addr, c.ports, c.user, c.host); got != c.want {
			t.Errorf("SSHLine(%q, %v, %q, %q) =\n %q, want\n %q", c.addr, c.ports, c.user, c.host, got, c.want)
		}
	}
}

func pod(name, uid string, created int, phase corev1.PodPhase, ready, terminating bool) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid),
		CreationTimestamp: metav1.NewTime(time.Unix(int64(created), 0))}}
	p.Status.Phase = phase
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	if terminating {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	}
	return p
}

func TestPickHead(t *testing.T) {
	old := pod("h-old", "1", 1, corev1.PodRunning, true, true)
	cur := pod("h-cur", "2", 2, corev1.PodRunning, true, false)
	pending := pod("h-new", "3", 3, corev1.PodPending, false, false)
	got, err := pickHead("ns/c", []corev1.Pod{old, cur, pending})
	if err != nil || got.Name != "h-cur" {
		t.Fatalf("pickHead = %v, %v; want h-cur", got, err)
	}
	a, b := pod("a", "a", 1, corev1.PodRunning, true, false), pod("b", "b", 5, corev1.PodRunning, true, false)
	if got, _ := pickHead("ns/c", []corev1.Pod{a, b}); got.Name != "b" {
		t.Errorf("two ready heads: got %s, want the newest b", got.Name)
	}
	if _, err := pickHead("ns/c", nil); err == nil || err.Error() != "cluster ns/c has no head pod" {
		t.Errorf("no pods: %v", err)
	}
	if _, err := pickHead("ns/c", []corev1.Pod{old, pending}); err == nil ||
		err.Error() != "cluster ns/c has no ready head pod (h-old terminating, h-new Pending)" {
		t.Errorf("none ready: %v", err)
	}
}

func TestStillGood(t *testing.T) {
	want := pod("h", "1", 1, corev1.PodRunning, true, false)
	for _, c := range []struct {
		name string
		got  *corev1.Pod
		head bool
		why  string
	}{
		{"same", ptr(pod("h", "1", 1, corev1.PodRunning, true, false)), true, ""},
		{"gone", nil, true, "pod h deleted"},
		{"replaced", ptr(pod("h", "2", 2, corev1.PodRunning, true, false)), true, "pod h replaced"},
		{"terminating", ptr(pod("h", "1", 1, corev1.PodRunning, true, true)), true, "pod h terminating"},
		{"failed", ptr(pod("h", "1", 1, corev1.PodFailed, false, false)), false, "pod h Failed"},
		{"head not ready", ptr(pod("h", "1", 1, corev1.PodRunning, false, false)), true, "head pod h not ready"},
		{"named pod not ready is fine", ptr(pod("h", "1", 1, corev1.PodRunning, false, false)), false, ""},
	} {
		if got := stillGood(&want, c.got, c.head); got != c.why {
			t.Errorf("%s: %q, want %q", c.name, got, c.why)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestWhere(t *testing.T) {
	for _, c := range []struct{ user, host, want string }{
		{"ana", "bastion", "ana@bastion"},
		{"", "bastion", "bastion"}, // no "@bastion" when the user is unknown
	} {
		if got := Where(c.user, c.host); got != c.want {
			t.Errorf("Where(%q, %q) = %q, want %q", c.user, c.host, got, c.want)
		}
	}
}
