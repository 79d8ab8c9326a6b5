package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// kuberaySample is KubeRay's own sample RayCluster
// (ray-operator/config/samples/ray-cluster.complete.yaml of v1.6.2: a
// head with the gcs, dashboard and client ports, a ray-logs emptyDir,
// one worker group "small-group"), the cluster whose pods -capture-kuberay
// has KubeRay's operator make.
//
//go:embed testdata/ray-cluster.complete.yaml
var kuberaySample []byte

// The capture's names: every occurrence of them in the captured objects
// (names, labels, env values such as RAY_ADDRESS's service name, the
// start command) is replaced by the stamped cluster's (kuberayshape.go).
const (
	captureNS      = "kuberay-tmpl"
	captureCluster = "raycluster-complete"
)

// kuberayCapture is what KubeRay's operator made of kuberaySample: the
// RayCluster with the status it wrote, its head pod and one worker pod,
// as the API server returned them (server-set fields cleared).
type kuberayCapture struct {
	Operator string           `json:"operator"`
	Cluster  rayv1.RayCluster `json:"cluster"`
	Head     corev1.Pod       `json:"head"`
	Worker   corev1.Pod       `json:"worker"`
}

//go:embed testdata/kuberay-v1.6.2.json
var kuberayCaptured []byte

// captureKubeRay starts a sandbox (no kwok, no scheduler), runs KubeRay's
// operator binary against it (the flags test/bench's versus benchmark
// gives it), creates kuberaySample and writes what the operator made to
// out. It is run once by hand (`go run ./test/e2e/bench -capture-kuberay
// bin/k8s/kuberay-operator`); the bench stamps the result.
func captureKubeRay(ctx context.Context, operator, out string) error {
	dir, err := os.MkdirTemp("", "raydar-bench-capture-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sb, err := sandbox.Start(ctx, sandbox.Options{CRDs: [][]byte{crds.YAML()}, StateDir: filepath.Join(dir, "sandbox"), StartTimeout: 10 * time.Minute, Logf: logf})
	if err != nil {
		return err
	}
	defer sb.Stop()
	cl, err := client.New(sb.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: captureNS}}); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, operator, "--watch-namespace", captureNS, "--enable-leader-election=false", "--metrics-addr=0", "--health-probe-bind-address=0")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+sb.KubeconfigPath)
	logFile, err := os.Create(filepath.Join(dir, "operator.log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	rc := &rayv1.RayCluster{}
	if err := yaml.Unmarshal(kuberaySample, rc); err != nil {
		return err
	}
	rc.Namespace = captureNS
	if err := cl.Create(ctx, rc); err != nil {
		return err
	}
	var c kuberayCapture
	c.Operator = operator
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var pods corev1.PodList
		if err := cl.List(ctx, &pods, client.InNamespace(captureNS)); err != nil {
			return err
		}
		var head, worker *corev1.Pod
		for i := range pods.Items {
			p := &pods.Items[i]
			switch p.Labels["ray.io/node-type"] {
			case "head":
				head = p
			case "worker":
				worker = p
			}
		}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(rc), &c.Cluster); err != nil {
			return err
		}
		if head != nil && worker != nil {
			// The pods stay Pending (no kwok): the status KubeRay writes
			// for them settles after its next requeues.
			sleepCtx(ctx, 10*time.Second)
			if err := cl.Get(ctx, client.ObjectKeyFromObject(rc), &c.Cluster); err != nil {
				return err
			}
			c.Head, c.Worker = *head, *worker
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logFile.Name())
			return fmt.Errorf("KubeRay made no head and worker pod in 3 minutes; its log:\n%s", b)
		}
		sleepCtx(ctx, time.Second)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	for _, m := range []*metav1.ObjectMeta{&c.Cluster.ObjectMeta, &c.Head.ObjectMeta, &c.Worker.ObjectMeta} {
		m.UID, m.ResourceVersion, m.ManagedFields, m.CreationTimestamp, m.Generation = "", "", nil, metav1.Time{}, 0
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	logf("captured %s, %s and %s (RayCluster state %q)", c.Cluster.Name, c.Head.Name, c.Worker.Name, c.Cluster.Status.State)
	return os.WriteFile(out, append(b, '\n'), 0o644)
}
