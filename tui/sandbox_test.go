package tui

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/crds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// One sandbox (etcd, kube-apiserver with the ray.io CRDs, scheduler,
// controller-manager and kwok, so that pods run on fake nodes) serves the
// package; the first test that needs it starts it and TestMain stops it.
// With -short no sandbox is started and those tests skip.
var (
	sbOnce sync.Once
	sb     *sandbox.Sandbox
	sbErr  error
)

func TestMain(m *testing.M) {
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	if sb != nil {
		if err := sb.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func sandboxFor(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts a control plane")
	}
	sbOnce.Do(func() {
		if sbErr = sandboxtest.Exclusive(); sbErr != nil {
			return
		}
		opts := sandbox.Full()
		opts.CRDs = [][]byte{crds.YAML()}
		opts.StartTimeout = 5 * time.Minute
		sb, sbErr = sandbox.Start(context.Background(), opts)
	})
	if sbErr != nil {
		t.Fatalf("starting the sandbox: %v", sbErr)
	}
	return sb
}

// sandboxFeed returns a client of the sandbox and the TUI's live feed
// from its own informer cache (synced), both ending with ctx.
func sandboxFeed(t *testing.T, ctx context.Context, s *sandbox.Sandbox) (client.Client, *watch.Source) {
	t.Helper()
	sch := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rayv1.AddToScheme} {
		if err := add(sch); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := client.New(s.Config, client.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.New(s.Config, cache.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}
	src := watch.NewSource(watch.DefaultWindow)
	src.SetNodeAccess(watch.NodeAccessFor(s.Config)) // the admin may: the diagnosis knows the nodes
	if err := src.Watch(ctx, c); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if err := src.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	return cl, src
}

// TestSandboxObjectAppearsChangesAndDisappears runs the TUI on the real
// data path: API server → controller-runtime cache → kube/watch bridge →
// batches → store → table. A RayCluster created through the API appears,
// its status change shows, and its deletion removes it.
func TestSandboxObjectAppearsChangesAndDisappears(t *testing.T) {
	s := sandboxFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl, src := sandboxFeed(t, ctx, s)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tui-it-"}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	tm, _ := start(t, Options{Store: watch.NewStore(), Session: Session{Feed: src, Synced: src.Synced}}, 100, 30)

	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "it-cluster"}}
	rc.Spec.RayVersion = "2.41.0"
	rc.Spec.HeadGroupSpec.Template.Spec.Containers = []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.41.0"}}
	rc.Spec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{{GroupName: "cpu", Replicas: ptr.To[int32](3), MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](5),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.41.0"}}}}}}
	if err := cl.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, tm, "it-cluster")

	rc.Status.State = rayv1.Suspended
	rc.Status.DesiredWorkerReplicas = 3
	if err := cl.Status().Update(ctx, rc); err != nil {
		t.Fatal(err)
	}
	screen := waitScreen(t, tm, "suspended")
	if !strings.Contains(screen, "0/3") {
		t.Fatalf("status change not shown:\n%s", screen)
	}

	if err := cl.Delete(ctx, rc); err != nil {
		t.Fatal(err)
	}
	screen = waitScreen(t, tm, "RayClusters(all)[0]")
	if strings.Contains(screen, "it-cluster") {
		t.Fatalf("deleted cluster still shown:\n%s", screen)
	}
}
