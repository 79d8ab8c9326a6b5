package scale

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/raydash/addrbook"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/scheme"
	"github.com/raydar/raydar/test/conformance"
)

// podsPerNode is each fake node's pod capacity (kube/sandbox's most: a
// node's pod CIDR is a /24).
const podsPerNode = 250

// plane is one fresh control plane for one contender: kube-apiserver,
// etcd, scheduler, controller-manager (the garbage collector, Jobs) and
// kwok, with nodes enough for the pods; for RayJobs also the simulated Ray
// heads (kube/sandbox/headsim) and the proxy through which KubeRay reaches
// them (test/conformance.HeadProxy), as the conformance suite runs them.
type plane struct {
	sb    *sandbox.Sandbox
	kc    kubernetes.Interface
	cl    client.WithWatch
	heads *headsim.Sim
	proxy *conformance.HeadProxy
	once  sync.Once
}

// newPlane starts a plane with room for pods pods (nodes of podsPerNode,
// untainted) and, with heads, simulated Ray heads. It is stopped with b.
func newPlane(b *testing.B, pods int, heads bool) *plane {
	b.Helper()
	ctx := context.Background()
	opts := sandbox.Full()
	opts.Nodes = nil
	opts.CRDs = [][]byte{crds.YAML()}
	sb, err := sandbox.Start(ctx, opts)
	if err != nil {
		b.Fatalf("starting the plane: %v", err)
	}
	p := &plane{sb: sb, kc: sb.Clientset()}
	b.Cleanup(p.stop)
	n := (pods*11/10)/podsPerNode + 1
	names, err := sb.AddNodes(ctx, sandbox.NodePool{Count: n, NamePrefix: "scale", CPU: "4000", Memory: "16Ti", Pods: podsPerNode})
	if err != nil {
		b.Fatalf("adding %d nodes: %v", n, err)
	}
	// The sandbox runs no node-lifecycle controller to lift the taints
	// TaintNodesByCondition gives new nodes.
	for _, name := range names {
		if _, err := p.kc.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"taints":null}}`), metav1.PatchOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	if p.cl, err = client.NewWithWatch(sb.Config, client.Options{Scheme: scheme.New()}); err != nil {
		b.Fatal(err)
	}
	if heads {
		book := filepath.Join(sb.StateDir, addrbook.FileName)
		if p.heads, err = headsim.Start(ctx, headsim.Options{Config: sb.Config, SetPodPhase: sb.SetPodPhase, EndContainer: sb.EndContainer, AddressBook: book}); err != nil {
			b.Fatalf("simulated heads: %v", err)
		}
		// raydar-operator finds the heads through the kubeconfig, as
		// `raydar sandbox` advertises them.
		if err := addrbook.Advertise(sb.KubeconfigPath, book); err != nil {
			b.Fatal(err)
		}
		p.proxy = &conformance.HeadProxy{Clientset: p.kc, Heads: p.heads}
		if err := p.proxy.Start(); err != nil {
			b.Fatal(err)
		}
	}
	return p
}

// stop stops the plane (once; newPlane also registers it with b).
func (p *plane) stop() {
	p.once.Do(func() {
		if p.proxy != nil {
			_ = p.proxy.Close()
		}
		if p.heads != nil {
			_ = p.heads.Close()
		}
		_ = p.sb.Stop()
	})
}

// namespaces creates n namespaces scale-1 … scale-n (clusterloader2's
// test namespaces) and returns their names.
func (p *plane) namespaces(b *testing.B, n int) []string {
	b.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("scale-%d", i+1)
		if _, err := p.kc.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: out[i]}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	return out
}
