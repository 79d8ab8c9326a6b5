// Package gangsim plays a batch scheduler's part in the sandbox for
// `raydar sandbox --batch-scheduler volcano|yunikorn|kai-scheduler|scheduler-plugins`:
// a simulated gang scheduler, not the real one (Options.Scheduler picks
// which; others.go has the three besides Volcano). The sandbox's
// kube-scheduler leaves pods whose schedulerName is not its own alone, so
// without it they stay Pending forever.
//
// Volcano: for each scheduling.volcano.sh/v1beta1 PodGroup it binds the pods that
// name it (annotation scheduling.k8s.io/group-name, schedulerName volcano)
// only when at least minMember of them exist and all of its unbound pods
// fit on the nodes at once (CPU, memory, nvidia.com/gpu requests, limits
// standing in; each node's allocatable minus what its pods already ask
// for), first fit; and sets the PodGroup's status.phase: Running once
// minMember of its pods are bound, else Pending. It ignores queues,
// priorities, minResources, network topology, preemption and reclaim.
//
// It also reads Volcano's CRDs and scheduler-plugins' PodGroup CRD, which
// `hack/build-tools.sh volcano-crds` (part of `make tools`) generates from
// the volcano.sh/apis and sigs.k8s.io/scheduler-plugins modules into the
// sandbox's tools directory (CRDs, CRDsFor).
package gangsim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/simkit"
)

// SchedulerName is the pods' schedulerName it serves for Volcano.
const SchedulerName = "volcano"

// Schedulers are the --batch-scheduler values it simulates.
var Schedulers = []string{"kai-scheduler", "scheduler-plugins", "volcano", "yunikorn"}

// groupAnnotation names a pod's PodGroup (volcano.sh/apis scheduling/v1beta1
// KubeGroupNameAnnotationKey).
const groupAnnotation = volcanov1beta1.KubeGroupNameAnnotationKey

// CRDFile is Volcano's CRDs in the tools directory, SchedulerPluginsCRDFile
// scheduler-plugins' PodGroup CRD.
const (
	CRDFile                 = "crds/volcano.yaml"
	SchedulerPluginsCRDFile = "crds/scheduler-plugins.yaml"
)

// CRDs reads and decodes Volcano's CRDs from toolsDir.
func CRDs(toolsDir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return CRDsFor(toolsDir, SchedulerName)
}

// CRDsFor reads and decodes the CRDs a --batch-scheduler's gang objects
// need from toolsDir: Volcano's, scheduler-plugins' PodGroup, none for
// yunikorn and kai-scheduler (KubeRay makes none of theirs).
func CRDsFor(toolsDir, scheduler string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	file := map[string]string{SchedulerName: CRDFile, "scheduler-plugins": SchedulerPluginsCRDFile}[scheduler]
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(toolsDir, file))
	if err != nil {
		return nil, fmt.Errorf("gangsim: %s's CRDs (hack/build-tools.sh volcano-crds writes them): %w", scheduler, err)
	}
	return sandbox.ParseCRDs(b)
}

// Options configure a Sim.
type Options struct {
	Config *rest.Config
	// Scheduler is the --batch-scheduler value played (Schedulers).
	// Default volcano.
	Scheduler string
	// Interval between two passes. Default 200 ms.
	Interval time.Duration
	Logf     func(format string, args ...any)
}

// Sim is a running gang scheduler.
type Sim struct {
	loop  *simkit.Loop
	mu    sync.Mutex
	bound int
	// scheduler is the --batch-scheduler value played.
	scheduler string
	// admitted are YuniKorn applications whose gang was reserved
	// (others.go), by namespace/applicationId.
	admitted map[string]bool
}

// Start runs the simulated gang scheduler until ctx ends or Close.
func Start(ctx context.Context, opts Options) (*Sim, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := volcanov1beta1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := spv1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	if opts.Scheduler == "" {
		opts.Scheduler = SchedulerName
	}
	if !slices.Contains(Schedulers, opts.Scheduler) {
		return nil, fmt.Errorf("gangsim: --batch-scheduler %s: it simulates only %v", opts.Scheduler, Schedulers)
	}
	clients, err := simkit.NewClients(opts.Config, "gangsim", s)
	if err != nil {
		return nil, err
	}
	if opts.Interval <= 0 {
		opts.Interval = 200 * time.Millisecond
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	sim := &Sim{loop: simkit.NewLoop(ctx, "gangsim", opts.Logf), scheduler: opts.Scheduler, admitted: map[string]bool{}}
	sim.loop.Every(opts.Interval, func(ctx context.Context) error {
		return sim.pass(ctx, clients.Client, clients.Kube, opts.Logf)
	})
	return sim, nil
}

// Close stops it.
func (s *Sim) Close() {
	s.loop.Stop()
}

// Bound is how many pods it has bound.
func (s *Sim) Bound() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bound
}

// pass looks at every gang once.
func (s *Sim) pass(ctx context.Context, c client.Client, kc kubernetes.Interface, logf func(string, ...any)) error {
	if s.scheduler != SchedulerName {
		return s.passOther(ctx, c, kc, logf)
	}
	var groups volcanov1beta1.PodGroupList
	if err := c.List(ctx, &groups); err != nil {
		return fmt.Errorf("listing PodGroups: %w", err)
	}
	if len(groups.Items) == 0 {
		return nil
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	free := freeCapacity(nodes.Items, pods.Items)
	names := make([]string, 0, len(free))
	for n := range free {
		names = append(names, n)
	}
	sort.Strings(names)
	for i := range groups.Items {
		pg := &groups.Items[i]
		var bound, unbound []*corev1.Pod
		for j := range pods.Items {
			p := &pods.Items[j]
			if p.Namespace != pg.Namespace || p.Spec.SchedulerName != SchedulerName || p.Annotations[groupAnnotation] != pg.Name ||
				p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			if p.Spec.NodeName != "" {
				bound = append(bound, p)
			} else {
				unbound = append(unbound, p)
			}
		}
		if len(unbound) > 0 && int32(len(bound)+len(unbound)) >= pg.Spec.MinMember {
			if placed, ok := fit(unbound, free, names); ok {
				for _, p := range unbound {
					if s.bind(ctx, kc, p, placed[p.Name], logf) {
						bound = append(bound, p)
					}
				}
				logf("gangsim: PodGroup %s/%s: bound %d pods together (minMember %d)", pg.Namespace, pg.Name, len(unbound), pg.Spec.MinMember)
			}
		}
		phase := volcanov1beta1.PodGroupPending
		if int32(len(bound)) >= pg.Spec.MinMember && len(bound) > 0 {
			phase = volcanov1beta1.PodGroupRunning
		}
		if pg.Status.Phase != phase || pg.Status.Running != int32(len(bound)) {
			pg.Status.Phase = phase
			pg.Status.Running = int32(len(bound))
			if err := c.Update(ctx, pg); err != nil && ctx.Err() == nil {
				logf("gangsim: PodGroup %s/%s status: %v", pg.Namespace, pg.Name, err)
			}
		}
	}
	return nil
}

// bind binds p to node; false when that failed (logged).
func (s *Sim) bind(ctx context.Context, kc kubernetes.Interface, p *corev1.Pod, node string, logf func(string, ...any)) bool {
	err := kc.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}, metav1.CreateOptions{})
	if err != nil {
		logf("gangsim: binding %s/%s: %v", p.Namespace, p.Name, err)
		return false
	}
	s.mu.Lock()
	s.bound++
	s.mu.Unlock()
	return true
}

// resources that count.
var counted = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, "nvidia.com/gpu"}

// requests of a pod: each container's request, its limit standing in.
func requests(p *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		for _, n := range counted {
			q, ok := c.Resources.Requests[n]
			if !ok {
				q, ok = c.Resources.Limits[n]
			}
			if ok {
				sum := out[n]
				sum.Add(q)
				out[n] = sum
			}
		}
	}
	return out
}

// freeCapacity is each Ready, schedulable node's allocatable minus the
// requests of the pods bound to it.
func freeCapacity(nodes []corev1.Node, pods []corev1.Pod) map[string]corev1.ResourceList {
	free := map[string]corev1.ResourceList{}
	for _, n := range nodes {
		if n.Spec.Unschedulable || !ready(&n) {
			continue
		}
		free[n.Name] = n.Status.Allocatable.DeepCopy()
	}
	for i := range pods {
		p := &pods[i]
		f, ok := free[p.Spec.NodeName]
		if !ok || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		take(f, requests(p))
	}
	return free
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// fit places every pod, first fit over nodes in name order, on a copy of
// free; when all fit it commits the copy into free and returns where each
// goes.
func fit(pods []*corev1.Pod, free map[string]corev1.ResourceList, nodes []string) (map[string]string, bool) {
	return fitWhere(pods, free, nodes, nil)
}

// fitWhere is fit on the nodes allowed says a pod may go to (nil: all).
func fitWhere(pods []*corev1.Pod, free map[string]corev1.ResourceList, nodes []string, allowed func(*corev1.Pod, string) bool) (map[string]string, bool) {
	trial := map[string]corev1.ResourceList{}
	for n, r := range free {
		trial[n] = r.DeepCopy()
	}
	placed := map[string]string{}
	for _, p := range pods {
		req := requests(p)
		ok := false
		for _, n := range nodes {
			if (allowed == nil || allowed(p, n)) && fits(trial[n], req) {
				take(trial[n], req)
				placed[p.Name] = n
				ok = true
				break
			}
		}
		if !ok {
			return nil, false
		}
	}
	for n, r := range trial {
		free[n] = r
	}
	return placed, true
}

func fits(free, req corev1.ResourceList) bool {
	for n, q := range req {
		have, ok := free[n]
		if !ok {
			have = resource.Quantity{}
		}
		if have.Cmp(q) < 0 {
			return false
		}
	}
	return true
}

func take(free, req corev1.ResourceList) {
	for n, q := range req {
		have := free[n]
		have.Sub(q)
		free[n] = have
	}
}
