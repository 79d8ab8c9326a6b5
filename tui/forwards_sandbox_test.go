package tui

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/kube/sandbox/podforward"
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestSandboxPortForward: shift-f on a RayCluster row and enter start a
// forward to its head's dashboard through the API server and kwok; the
// forwards view shows it Up on the head pod, and the simulated head's
// dashboard answers through the local port.
func TestSandboxPortForward(t *testing.T) {
	s := sandboxFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, src := sandboxFeed(t, ctx, s)
	ns := sandboxNamespace(t, ctx, cl)
	sim, err := headsim.Start(context.Background(), headsim.Options{Config: s.Config, Namespace: ns, SetPodPhase: s.SetPodPhase})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	dyn, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	w, err := podforward.Start(ctx, podforward.Options{Clientset: s.Clientset(), Dynamic: dyn, Heads: sim, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	startOperator(t, s, ns, func(o *controller.Options) { o.AddressBook = sim })
	m, err := portforward.NewManager(portforward.Options{Config: s.Config, CheckInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)

	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fwd"}, Spec: testClusterSpec(0)}
	if err := cl.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	tm, _ := start(t, Options{Now: time.Now, Store: watch.NewStore(), Session: Session{Feed: src, Synced: src.Synced, Namespace: ns, Forwards: m},
		Actions: DefaultActions(ActionDeps{Context: "sandbox", Actions: sandboxActions(t, cl)})}, 160, 30)
	waitScreen(t, tm, "fwd ")
	typeKeys(tm, "F")
	waitScreen(t, tm, "Port-forward to the head of RayCluster "+ns+"/fwd")
	// A free local port rather than 8265, which may be taken on the machine.
	typeKeys(tm, "<space>", "<down>", "<down>", "<down>", ":8265", "<enter>")
	waitScreen(t, tm, "forwarding cluster "+ns+"/fwd (head)")
	typeKeys(tm, ":pf", "<enter>")
	eventually(t, ctx, "the forward Up on the head pod", func() (bool, string) {
		sc := screenNow(tm)
		return strings.Contains(sc, "↑ Up") && strings.Contains(sc, "fwd-head") && strings.Contains(sc, "pf: 1↑"), sc
	})
	mustContain(t, screenNow(tm), "ssh -L ")

	st := m.Snapshot()
	if len(st) != 1 {
		t.Fatalf("forwards: %+v", st)
	}
	url := st[0].LocalURL(st[0].Ports[0])
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	eventually(t, ctx, "the simulated dashboard through the forward", func() (bool, string) {
		resp, err := client.Get(url + "/api/version")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), "ray_version"), fmt.Sprintf("%d %s", resp.StatusCode, body)
	})
	finalScreen(t, tm)
}
