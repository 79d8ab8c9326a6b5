package fleet

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/scheme"
)

// The fleet every test of this package shares, set by TestMain unless
// -short (then fleetA is nil and the tests skip: needFleet):
//
//   - fleetA and fleetB are two sandboxes (etcd and kube-apiserver with
//     the ray.io CRDs; no scheduler, controller-manager or kwok: add them
//     to sandboxOptions when a test needs pods played out), whose contexts
//     are contextA and contextB; clientA and clientB are admin clients of
//     each, on the one scheme.
//   - fleetKubeconfig is one kubeconfig file holding both contexts, as
//     kubectl merges KUBECONFIG=A:B (fleetA.KubeconfigPath first, so its
//     context is the current one); fleetKUBECONFIG is that A:B value
//     itself, for a process that should do the merging.
//   - downKubeconfig holds one more context, contextDown, on a loopback
//     port nothing listens on: KUBECONFIG=fleetKubeconfig:downKubeconfig
//     is a fleet with an unreachable member.
//   - raydarBin is raydar built from this module; run it with raydarRun.
var (
	fleetA, fleetB   *sandbox.Sandbox
	clientA, clientB client.Client

	fleetKubeconfig string
	fleetKUBECONFIG string
	downKubeconfig  string

	raydarBin string
	// home is the HOME, XDG_STATE_HOME and XDG_CONFIG_HOME of raydarRun's
	// processes: no guardrails config, and audit records away from the
	// user's.
	home string
)

// The context names of the fleet: what `raydar sandbox --state-dir
// .../fleet-a` and `.../fleet-b` name theirs (sandbox.ContextNameFor).
var (
	contextA    = sandbox.ContextNameFor("fleet-a")
	contextB    = sandbox.ContextNameFor("fleet-b")
	contextDown = "raydar-sandbox-down"
)

// sandboxOptions are the options of each of the two sandboxes.
func sandboxOptions(contextName string) sandbox.Options {
	o := sandbox.Options{CRDs: [][]byte{crds.YAML()}, StartTimeout: 5 * time.Minute, ContextName: contextName}
	if os.Getenv("RAYDAR_TEST_LOG") != "" {
		o.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "sandbox "+contextName+": "+f+"\n", a...) }
	}
	return o
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	ctrllog.SetLogger(logr.Discard())
	os.Exit(run(m))
}

// run starts the fleet, runs the tests and stops it.
func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "raydar-fleet-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	home = filepath.Join(dir, "home")

	// Both sandboxes and the build at once: each takes a while.
	var (
		wg                sync.WaitGroup
		errA, errB, errGo error
	)
	wg.Go(func() { fleetA, errA = sandbox.Start(context.Background(), sandboxOptions(contextA)) })
	wg.Go(func() { fleetB, errB = sandbox.Start(context.Background(), sandboxOptions(contextB)) })
	wg.Go(func() { raydarBin, errGo = buildRaydar(dir) })
	wg.Wait()
	defer func() {
		for _, s := range []*sandbox.Sandbox{fleetA, fleetB} {
			if s != nil {
				if err := s.Stop(); err != nil {
					fmt.Fprintln(os.Stderr, "stopping a sandbox:", err)
				}
			}
		}
	}()
	if err := errors.Join(errA, errB, errGo); err != nil {
		fmt.Fprintln(os.Stderr, "test/fleet: starting the fleet:", err)
		return 1
	}
	if err := setUpFleet(dir); err != nil {
		fmt.Fprintln(os.Stderr, "test/fleet:", err)
		return 1
	}
	return m.Run()
}

// setUpFleet writes the kubeconfigs and makes the clients.
func setUpFleet(dir string) error {
	var err error
	if clientA, err = client.New(fleetA.Config, client.Options{Scheme: scheme.New()}); err != nil {
		return err
	}
	if clientB, err = client.New(fleetB.Config, client.Options{Scheme: scheme.New()}); err != nil {
		return err
	}
	fleetKUBECONFIG = fleetA.KubeconfigPath + string(filepath.ListSeparator) + fleetB.KubeconfigPath
	fleetKubeconfig = filepath.Join(dir, "fleet.kubeconfig")
	if err := kube.MergeKubeconfigs(fleetKubeconfig, filepath.SplitList(fleetKUBECONFIG)); err != nil {
		return err
	}
	if merged, err := clientcmd.LoadFromFile(fleetKubeconfig); err != nil || len(merged.Contexts) != 2 {
		return fmt.Errorf("merging the sandboxes' kubeconfigs gave %v (%v), want contexts %s and %s", merged, err, contextA, contextB)
	}

	// A port that was free a moment ago and that nothing listens on now.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := l.Addr().String()
	l.Close()
	down := clientcmdapi.NewConfig()
	down.Clusters[contextDown] = &clientcmdapi.Cluster{Server: "https://" + addr, InsecureSkipTLSVerify: true}
	down.AuthInfos[contextDown] = &clientcmdapi.AuthInfo{Token: "nobody"}
	down.Contexts[contextDown] = &clientcmdapi.Context{Cluster: contextDown, AuthInfo: contextDown}
	downKubeconfig = filepath.Join(dir, "down.kubeconfig")
	return clientcmd.WriteToFile(*down, downKubeconfig)
}

// buildRaydar builds ./cmd/raydar of this module into dir.
func buildRaydar(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return "", fmt.Errorf("go env GOMOD: %v %s", err, out)
	}
	bin := filepath.Join(dir, "raydar")
	build := exec.Command("go", "build", "-o", bin, "./cmd/raydar")
	build.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// needFleet skips without the fleet and returns a generous context.
func needFleet(t *testing.T) context.Context {
	t.Helper()
	if fleetA == nil {
		t.Skip("integration test: starts two sandboxes (skipped with -short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newNamespace creates a namespace of one name in both sandboxes.
func newNamespace(t *testing.T, ctx context.Context) string {
	t.Helper()
	name := "fleet-" + strings.ToLower(utilrand.String(6))
	for _, c := range []client.Client{clientA, clientB} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := c.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	}
	return name
}

// result is what one run of raydar printed and how it exited.
type result struct {
	stdout, stderr string
	exitCode       int
}

// raydarRun runs the raydar binary with KUBECONFIG=kubeconfig (a file or an
// A:B list) and args, within ctx.
func raydarRun(t *testing.T, ctx context.Context, kubeconfig string, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(ctx, raydarBin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+home,
		"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.exitCode = ee.ExitCode()
	case err != nil:
		t.Fatalf("raydar %s: %v", strings.Join(args, " "), err)
	}
	return r
}
