package tui

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"k8s.io/client-go/rest"

	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/tui/styles"
)

// unreachableForwards is a real Manager whose API server does not answer:
// its forwards listen and keep reconnecting.
func unreachableForwards(t *testing.T) *portforward.Manager {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	m, err := portforward.NewManager(portforward.Options{Config: &rest.Config{Host: "http://" + addr},
		Backoff: portforward.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func ctrlK() tea.KeyPressMsg { return tea.KeyPressMsg{Code: 'k', Mod: tea.ModCtrl} }

// TestForwardDialogViewAndStop: shift-f on a RayCluster row opens the
// dialog; a custom port starts a forward; :pf lists it with its state, its
// last error and the ssh line; the header counts it; ctrl+k and Confirm
// stop it.
func TestForwardDialogViewAndStop(t *testing.T) {
	m := unreachableForwards(t)
	opts := Options{Now: time.Now, Actions: DefaultActions(ActionDeps{})}
	opts.Session.Forwards = m
	t.Setenv("USER", "ana")
	tm, _ := start(t, opts, 160, 30)
	waitScreen(t, tm, "train-a")
	typeKeys(tm, "/", "train-a", "<enter>", "F")
	screen := waitScreen(t, tm, "Port-forward to the head of RayCluster ml/train-a")
	mustContain(t, screen, "[x] dashboard", "[ ] serve", "custom")
	// Dashboard off, a free local port for the dashboard instead.
	typeKeys(tm, "<space>", "<down>", "<down>", "<down>", ":8265", "<enter>")
	waitScreen(t, tm, "forwarding cluster ml/train-a (head) at http://127.0.0.1:")
	waitScreen(t, tm, "pf: 1")

	typeKeys(tm, ":pf", "<enter>")
	waitScreen(t, tm, "connection refused") // the unreachable API server, as the last error
	screen = waitScreen(t, tm, "ssh -L ")
	mustContain(t, screen, "Port-forwards", "Reconnecting", "cluster ml/train-a (head)", "ana@")
	st := m.Snapshot()
	if len(st) != 1 || st[0].Ports[0].Remote != 8265 || st[0].Ports[0].Local == 0 {
		t.Fatalf("forwards: %+v", st)
	}

	tm.Send(ctrlK())
	waitScreen(t, tm, "Stop the port-forward to cluster ml/train-a (head)?")
	typeKeys(tm, "<tab>", "<enter>")
	waitScreen(t, tm, "stopped the port-forward to cluster ml/train-a")
	waitScreen(t, tm, "no port-forwards")
	finalScreen(t, tm)
	if n := len(m.Snapshot()); n != 0 {
		t.Fatalf("%d forwards after stop", n)
	}
}

// TestForwardsSummary is the header's count.
func TestForwardsSummary(t *testing.T) {
	g := styles.Default().Glyphs
	st := func(p ...portforward.Phase) []portforward.State {
		var out []portforward.State
		for _, ph := range p {
			out = append(out, portforward.State{Phase: ph})
		}
		return out
	}
	for _, c := range []struct {
		in   []portforward.State
		want string
	}{
		{nil, ""},
		{st(portforward.Up, portforward.Up, portforward.Reconnecting), "2↑ 1⟳"},
		{st(portforward.Connecting), "1⟳"},
		{st(portforward.Failed, portforward.Up), "1↑ 1✗"},
	} {
		if got := forwardsSummary(g, c.in); got != c.want {
			t.Errorf("forwardsSummary(%v) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := forwardsSummary(styles.Plain().Glyphs, st(portforward.Up, portforward.Reconnecting)); strings.ContainsAny(got, "↑⟳") {
		t.Errorf("plain glyphs: %q", got)
	}
}

// TestForwardDialogAddress: the dialog's address field starts at
// 127.0.0.1; a bad address is refused as it is typed, with the reason, and
// enter does not start it; 0.0.0.0 starts a forward on every interface,
// which :pf shows with the ssh line to 127.0.0.1 on the bastion.
func TestForwardDialogAddress(t *testing.T) {
	m := unreachableForwards(t)
	opts := Options{Now: time.Now, Actions: DefaultActions(ActionDeps{})}
	opts.Session.Forwards = m
	t.Setenv("USER", "ana")
	tm, _ := start(t, opts, 160, 30)
	waitScreen(t, tm, "train-a")
	typeKeys(tm, "/", "train-a", "<enter>", "F")
	screen := waitScreen(t, tm, "address   127.0.0.1")
	mustContain(t, screen, "[x] dashboard 127.0.0.1:8265 -> 8265")
	// A free local port for the dashboard, then the address field.
	typeKeys(tm, "<space>", "<down>", "<down>", "<down>", ":8265", "<down>")
	for range len("127.0.0.1") {
		typeKeys(tm, "<backspace>")
	}
	typeKeys(tm, "0.0.0.0.")
	waitScreen(t, tm, `error: local address "0.0.0.0." is not an IP address`)
	typeKeys(tm, "<enter>") // refused: the dialog stays, nothing starts
	waitScreen(t, tm, `error: local address "0.0.0.0." is not an IP address`)
	if n := len(m.Snapshot()); n != 0 {
		t.Fatalf("%d forwards started on a bad address", n)
	}
	typeKeys(tm, "<backspace>")
	screen = waitScreen(t, tm, "[ ] dashboard 0.0.0.0:8265 -> 8265")
	mustContain(t, screen, "address   0.0.0.0_")
	if strings.Contains(screen, "error:") {
		t.Fatalf("0.0.0.0 refused:\n%s", screen)
	}
	typeKeys(tm, "<enter>")
	waitScreen(t, tm, "pf: 1")
	st := m.Snapshot()
	if len(st) != 1 || st[0].Address != "0.0.0.0" || st[0].Ports[0].Local == 0 {
		t.Fatalf("forwards: %+v", st)
	}
	local := st[0].Ports[0].Local

	typeKeys(tm, ":pf", "<enter>")
	screen = waitScreen(t, tm, "ssh -L ")
	mustContain(t, screen, fmt.Sprintf("0.0.0.0:%d->8265", local), fmt.Sprintf("ssh -L %d:127.0.0.1:%d ana@", local, local))
	finalScreen(t, tm)
}
