package execsim

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/raydar/raydar/kube/sandbox/simkit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// GVR is kwok's Exec resource (kube/sandbox.ExecGVR).
var GVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "execs"}

// Environment of an exec into a simulated Ray container.
const (
	// DashboardEnv is the URL of the cluster's simulated head's dashboard,
	// where Ray answers `ray status`; absent while no head answers.
	DashboardEnv = "RAYDAR_SANDBOX_DASHBOARD"
	// PodEnv is the pod, namespace/name.
	PodEnv = "RAYDAR_SANDBOX_POD"
	// ClusterNameEnv is the RayCluster's name, as KubeRay sets it in every
	// Ray container (ray-operator/controllers/ray/common/pod.go:1235 of v1.7.0).
	ClusterNameEnv = "RAY_CLUSTER_NAME"
	// ClusterNamespaceEnv is its namespace (pod.go:1246).
	ClusterNamespaceEnv = "RAY_CLUSTER_NAMESPACE"
)

// Heads says where each cluster's simulated head answers (headsim.Sim and
// addrbook.Book).
type Heads interface {
	DashboardURL(namespace, cluster string) (string, bool)
}

// Options configure a Writer.
type Options struct {
	Clientset kubernetes.Interface
	Dynamic   dynamic.Interface
	Heads     Heads
	// Home is the working directory and HOME of the execs
	// (kube/sandbox.Sandbox.ExecHome).
	Home string
	// Namespace restricts the Writer to one namespace; "" watches all.
	Namespace string
	// Interval between looks at every pod; default 250ms.
	Interval time.Duration
	// Logf receives one line per Exec written or failing.
	Logf func(format string, args ...any)
}

// Writer keeps the pods' Exec objects (simkit.PodObjects); Close it when
// done.
type Writer struct{ *simkit.PodObjects }

// Start watches the pods and returns once the watch has synced.
func Start(ctx context.Context, opts Options) (*Writer, error) {
	if opts.Clientset == nil || opts.Dynamic == nil || opts.Heads == nil || opts.Home == "" {
		return nil, errors.New("execsim: need a Clientset, a dynamic client, Heads and Home")
	}
	w, err := simkit.StartPodObjects(ctx, simkit.PodObjectsOptions{
		Name: "execsim", GVR: GVR, Kind: "Exec",
		Clientset: opts.Clientset, Dynamic: opts.Dynamic, Namespace: opts.Namespace, LabelSelector: rayv1.RayClusterLabelKey,
		Desired:  func(pod *corev1.Pod) (map[string]any, bool) { return Desired(pod, opts.Heads, opts.Home) },
		Written:  "exec runs here, in " + opts.Home,
		Interval: opts.Interval, Logf: opts.Logf,
	})
	if err != nil {
		return nil, err
	}
	return &Writer{w}, nil
}

// Desired is the Exec spec of a Ray pod, false when it should have none
// written now (not running, or being deleted).
func Desired(pod *corev1.Pod, heads Heads, home string) (map[string]any, bool) {
	cluster := pod.Labels[rayv1.RayClusterLabelKey]
	if cluster == "" || pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return nil, false
	}
	env := []any{
		envVar("HOME", home),
		envVar("HOSTNAME", pod.Name),
		envVar(ClusterNameEnv, cluster),
		envVar(ClusterNamespaceEnv, pod.Namespace),
		envVar(PodEnv, pod.Namespace+"/"+pod.Name),
	}
	if url, ok := heads.DashboardURL(pod.Namespace, cluster); ok {
		env = append(env, envVar(DashboardEnv, url))
	}
	return map[string]any{"execs": []any{map[string]any{
		"local": map[string]any{"workDir": home, "envs": env},
	}}}, true
}

func envVar(name, value string) map[string]any {
	return map[string]any{"name": name, "value": value}
}
