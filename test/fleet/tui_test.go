package fleet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/testobj"
)

// TestTUIFleet: `raydar --context A,B,down` in a terminal (tmux) watches
// both sandboxes in one view: rows of both with their CONTEXT, the
// unreachable third context's state in the header without delaying the
// others, no embedded reconcile loop anywhere (none was asked for), and,
// as no raydar operator runs on either sandbox (no leader Lease), the
// clusters saying so in their WHY instead of an empty cell; a cluster
// created in B appearing as B's, and a delete on B's row of a
// namespace/name both sandboxes have reaching B alone.
func TestTUIFleet(t *testing.T) {
	ctx := needFleet(t)
	ns := seedClusters(t, ctx)
	term := startTUI(t, ctx, fleetKubeconfig+string(filepath.ListSeparator)+downKubeconfig,
		"--context", contextA+","+contextB+","+contextDown, "-n", ns, "--no-color")

	term.wait(t, contextDown+" x connection refused")
	term.wait(t, contextA+" ok")
	screen := term.wait(t, contextB+" ok")
	for _, want := range []string{"CONTEXT", contextDown + " x connection refused", "role: "} {
		if !strings.Contains(screen, want) {
			t.Fatalf("screen lacks %q:\n%s", want, screen)
		}
	}
	for _, row := range [][2]string{{contextA, "only-a"}, {contextA, "shared"}, {contextB, "only-b"}, {contextB, "shared"}} {
		term.waitRow(t, row[0], row[1])
	}
	// Who reconciles, per context: A and B have no Lease, down cannot be
	// read (the header lists each member's role as they differ; 200
	// columns cut it after A's).
	term.wait(t, "role: "+contextA+": observer (reconcile loop off; no ra")
	for _, name := range []string{"only-a", "only-b"} {
		term.waitFor(t, name+"'s WHY", func(screen string) bool {
			for _, l := range strings.Split(screen, "\n") {
				if strings.Contains(l, " "+name+" ") && strings.Contains(l, "not reconciled: no raydar operator runs here") {
					return true
				}
			}
			return false
		})
	}

	// A cluster made in B shows as B's.
	if err := clientB.Create(ctx, testobj.Cluster(ns, "later-b", 1)); err != nil {
		t.Fatal(err)
	}
	term.waitRow(t, contextB, "later-b")

	// Delete B's shared: rows of one name sort in the contexts' order, so
	// with the filter on "shared" the last row is B's.
	term.keys(t, "/", "shared", "Enter")
	term.wait(t, "/shared")
	term.keys(t, "G", "C-d")
	screen = term.wait(t, "Delete RayCluster "+ns+"/shared")
	if !strings.Contains(screen, "context: "+contextB) {
		t.Fatalf("the confirmation does not name %s:\n%s", contextB, screen)
	}
	term.keys(t, "Tab", "Enter")
	term.wait(t, "deleted RayCluster "+ns+"/shared")
	key := client.ObjectKey{Namespace: ns, Name: "shared"}
	if err := clientB.Get(ctx, key, &rayv1.RayCluster{}); !apierrors.IsNotFound(err) {
		t.Fatalf("%s's shared still there: %v", contextB, err)
	}
	if err := clientA.Get(ctx, key, &rayv1.RayCluster{}); err != nil {
		t.Fatalf("%s's shared: %v", contextA, err)
	}
}

// term is raydar's TUI in a tmux pane of its own server (socket).
type term struct{ socket string }

// tuiServers numbers the tmux servers startTUI starts.
var tuiServers atomic.Int64

// startTUI runs raydar with args in a 200×40 tmux pane, KUBECONFIG
// kubeconfig; it is stopped when the test ends.
func startTUI(t *testing.T, ctx context.Context, kubeconfig string, args ...string) *term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	// A server of its own per TUI: a server the previous test's cleanup
	// killed may still be going away on a shared socket, and start-server
	// then fails with "server exited unexpectedly".
	tm := &term{socket: fmt.Sprintf("raydar-fleet-%d-%d", os.Getpid(), tuiServers.Add(1))}
	env := []string{"KUBECONFIG=" + kubeconfig, "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "TERM=xterm-256color"}
	// remain-on-exit: a raydar that exits leaves its last screen (its
	// error) to read.
	cmd := append([]string{"start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
		"new-session", "-d", "-s", "tui", "-x", "200", "-y", "40", "env"}, env...)
	cmd = append(cmd, append([]string{raydarBin}, args...)...)
	if out, err := tm.tmux(ctx, cmd...); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = tm.tmux(context.Background(), "kill-server") })
	return tm
}

func (tm *term) tmux(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "tmux", append([]string{"-L", tm.socket}, args...)...).CombinedOutput()
	return string(out), err
}

// screen is what the pane shows now.
func (tm *term) screen(t *testing.T) string {
	t.Helper()
	out, err := tm.tmux(context.Background(), "capture-pane", "-p", "-t", "tui")
	if err != nil {
		t.Fatalf("capture-pane: %v\n%s", err, out)
	}
	return out
}

// wait polls the screen until it shows s (a minute at most).
func (tm *term) wait(t *testing.T, s string) string {
	t.Helper()
	return tm.waitFor(t, s, func(screen string) bool { return strings.Contains(screen, s) })
}

// waitRow polls the screen until a row shows context (its CONTEXT cell,
// "NAME (stale)" too) and name.
func (tm *term) waitRow(t *testing.T, context, name string) {
	t.Helper()
	want := append(strings.Fields(context), name)
	tm.waitFor(t, context+" "+name, func(screen string) bool {
		for _, l := range strings.Split(screen, "\n") {
			if f := strings.Fields(strings.TrimLeft(l, ">* ")); len(f) >= len(want) && slices.Equal(f[:len(want)], want) {
				return true
			}
		}
		return false
	})
}

func (tm *term) waitFor(t *testing.T, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		screen := tm.screen(t)
		if ok(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(home, "state", "raydar", "raydar.log"))
			t.Fatalf("the screen never showed %q; last screen:\n%s\nraydar's log:\n%s", what, screen, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// keys sends tmux key names or literal text.
func (tm *term) keys(t *testing.T, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if out, err := tm.tmux(context.Background(), "send-keys", "-t", "tui", k); err != nil {
			t.Fatalf("send-keys %s: %v\n%s", k, err, out)
		}
	}
}

// TestTUIFleetLosesAndRecoversAContext: B's API server stops while the
// TUI watches A and B: the header says B is lost, B's rows stay marked
// stale, A's rows keep updating; once B's API server is back, B reads ✓
// again, its rows are no longer stale and follow B again.
func TestTUIFleetLosesAndRecoversAContext(t *testing.T) {
	ctx := needFleet(t)
	ns := seedClusters(t, ctx)
	term := startTUI(t, ctx, fleetKubeconfig, "--context", contextA+","+contextB, "-n", ns, "--no-color")
	term.wait(t, contextA+" ok")
	term.wait(t, contextB+" ok")
	term.waitRow(t, contextB, "only-b")

	if err := fleetB.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = fleetB.StartAPIServer(context.Background())
		}
	})
	term.wait(t, contextB+" x connection refused")
	term.waitRow(t, contextB+" (stale)", "only-b")
	// A's rows keep following A.
	if err := clientA.Create(ctx, testobj.Cluster(ns, "while-b-is-down", 1)); err != nil {
		t.Fatal(err)
	}
	term.waitRow(t, contextA, "while-b-is-down")

	if err := fleetB.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	term.wait(t, contextB+" ok")
	term.waitRow(t, contextB, "only-b")
	if err := clientB.Create(ctx, testobj.Cluster(ns, "after-b-is-back", 1)); err != nil {
		t.Fatal(err)
	}
	term.waitRow(t, contextB, "after-b-is-back")
	if screen := term.screen(t); strings.Contains(screen, "(stale)") {
		t.Fatalf("rows still stale once B is back:\n%s", screen)
	}
}

// TestTUIFleetGuardrails: the config file's guardrails hold per row in
// the fleet view over two real API servers: with B protected and A
// read-only, a delete on B's row asks for the object's name typed (and
// then reaches B alone), and a delete on A's row of the same name is
// refused before any dialog, A's object untouched.
func TestTUIFleetGuardrails(t *testing.T) {
	ctx := needFleet(t)
	ns := seedClusters(t, ctx)
	cfg := filepath.Join(home, "config", "raydar", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("protected: [%q]\nreadonly: [%q]\n", contextB, contextA)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(cfg) })
	term := startTUI(t, ctx, fleetKubeconfig, "--context", contextA+","+contextB, "-n", ns, "--no-color")
	term.wait(t, contextA+" ok")
	term.wait(t, contextB+" ok")
	term.waitRow(t, contextA, "shared")
	term.waitRow(t, contextB, "shared")

	// B's shared (the last of the two rows of that name): protected.
	term.keys(t, "/", "shared", "Enter")
	term.wait(t, "/shared")
	term.keys(t, "G", "C-d")
	screen := term.wait(t, "Delete RayCluster "+ns+"/shared")
	for _, want := range []string{"PROTECTED context " + contextB, "type shared to confirm:", "Confirm (disabled)"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the protected context's dialog lacks %q:\n%s", want, screen)
		}
	}
	term.keys(t, "shared", "Tab", "Enter")
	term.wait(t, "deleted RayCluster "+ns+"/shared")
	key := client.ObjectKey{Namespace: ns, Name: "shared"}
	if err := clientB.Get(ctx, key, &rayv1.RayCluster{}); !apierrors.IsNotFound(err) {
		t.Fatalf("%s's shared still there: %v", contextB, err)
	}

	// A's shared: read-only, refused at once.
	term.keys(t, "g", "C-d")
	screen = term.wait(t, "delete refused: context "+contextA+" is read-only in "+cfg)
	if strings.Contains(screen, "Confirm") {
		t.Fatalf("a dialog opened on the read-only context's row:\n%s", screen)
	}
	if err := clientA.Get(ctx, key, &rayv1.RayCluster{}); err != nil {
		t.Fatalf("%s's shared: %v", contextA, err)
	}
}
