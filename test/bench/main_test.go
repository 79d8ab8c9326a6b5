package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/scheme"
)

// One sandbox (kube-apiserver with the audit log, scheduler,
// controller-manager, kwok with 20 large fake nodes) for the package; none
// with -short.
var (
	sb *sandbox.Sandbox
	kc kubernetes.Interface
	cl client.WithWatch
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	// controller-runtime's clients log through it; set before the first
	// one, or it prints a stack trace when the lock was waited for 30 s.
	ctrllog.SetLogger(logr.Discard())
	opts := sandbox.Full()
	opts.Nodes = nil // added below, untainted
	opts.CRDs = [][]byte{crds.YAML()}
	opts.Audit = true
	s, err := sandbox.Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test/bench: starting the sandbox:", err)
		os.Exit(1)
	}
	sb, kc = s, s.Clientset()
	code := 1
	if err := addNodes(context.Background(), 20); err != nil {
		fmt.Fprintln(os.Stderr, "test/bench: adding nodes:", err)
	} else if cl, err = client.NewWithWatch(s.Config, client.Options{Scheme: scheme.New()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
	}
	os.Exit(code)
}

// podsPerNode is the pod capacity of a kwok node.
const podsPerNode = 110

// nodes is how many nodes addNodes has added.
var nodes int

// ensureNodes adds nodes until there are at least n.
func ensureNodes(b *testing.B, n int) {
	if n > nodes {
		if err := addNodes(context.Background(), n-nodes); err != nil {
			b.Fatal(err)
		}
	}
}

// addNodes adds n large fake nodes without the taints TaintNodesByCondition
// gives new nodes (the sandbox runs no node-lifecycle controller).
func addNodes(ctx context.Context, n int) error {
	names, err := sb.AddNodes(ctx, sandbox.NodePool{Count: n, NamePrefix: fmt.Sprintf("kwok-node-%d", nodes), CPU: "64", Memory: "256Gi"})
	nodes += n
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, err := kc.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"taints":null}}`), metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}
