package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/testobj"

	"github.com/raydar/raydar/rayapi/status"
)

// dataSet is what the benchmark creates: clusters × (1 head + workers)
// Running Ray pods over namespaces, podsPerNode to a node.
type dataSet struct {
	clusters, workers, namespaces, podsPerNode int
	// workersMax > workers: cluster i has workers + i%(workersMax-workers+1)
	// workers (-workers 0-1: every other cluster has one).
	workersMax int
	// big, when > 0, is one more cluster, bigCluster in the first
	// namespace, with this many workers (its cluster page, -open-big).
	big int
	// kuberay, when set, makes the objects as KubeRay's operator does
	// (-shape kuberay: kuberayshape.go); else raydar's BuildPod.
	kuberay *kuberayShape
	// first[i] is the index of cluster i's head among all pods;
	// first[len] the pod count.
	first []int
}

// bigCluster names the -big-cluster cluster.
const bigCluster = "big-cluster"

// init fills d.first.
func (d *dataSet) init() {
	d.first = make([]int, d.allClusters()+1)
	for i := range d.allClusters() {
		d.first[i+1] = d.first[i] + 1 + d.workersOf(i)
	}
}

// allClusters counts the big cluster too.
func (d dataSet) allClusters() int {
	if d.big > 0 {
		return d.clusters + 1
	}
	return d.clusters
}

func (d dataSet) workersOf(i int) int {
	switch {
	case i == d.clusters:
		return d.big
	case d.workersMax > d.workers:
		return d.workers + i%(d.workersMax-d.workers+1)
	}
	return d.workers
}

func (d dataSet) pods() int  { return d.first[len(d.first)-1] }
func (d dataSet) nodes() int { return (d.pods() + d.podsPerNode - 1) / d.podsPerNode }

func nsName(i int) string { return fmt.Sprintf("bench-%02d", i) }

// clusterName is cluster i's name (the big one's past the others).
func (d dataSet) clusterName(i int) string {
	if i == d.clusters {
		return bigCluster
	}
	return fmt.Sprintf("c-%05d", i)
}

func (d dataSet) nsOf(i int) string {
	if i == d.clusters {
		return nsName(0)
	}
	return nsName(i % d.namespaces)
}

// podName is the name of pod j of cluster i (0 the head).
func (d dataSet) podName(i, j int) string {
	if d.kuberay != nil { // as kuberayShape.Pod names them
		if j == 0 {
			return d.clusterName(i) + "-head-" + kubeSuffix(0)
		}
		return d.clusterName(i) + "-" + d.kuberay.cluster.Spec.WorkerGroupSpecs[0].GroupName + "-worker-" + kubeSuffix(j)
	}
	if j == 0 {
		return d.clusterName(i) + "-head"
	}
	return fmt.Sprintf("%s-worker-%d", d.clusterName(i), j-1)
}

// create makes the namespaces, the RayClusters and their pods with
// `parallel` clients. Pods are built as raydar's operator builds them
// (controller/raycluster.BuildPod: KubeRay's env, probes, volumes, labels,
// owner reference), or with -shape kuberay stamped from what KubeRay's
// operator made (kuberayshape.go), bound to one of the data set's nodes
// and written Running and Ready at once (the status kwok's stage would
// write): kwok plays ~12 pods/s on a loaded 2-core machine, too slow for
// 100,000. Two writes per pod is the least the API allows (a create
// resets the status); the API server's CPU per pod is what bounds the
// rate. With -shape kuberay each RayCluster's status is also written as
// KubeRay writes it once its pods are ready (state ready, conditions).
func (d dataSet) create(ctx context.Context, cs kubernetes.Interface, c client.Client, nodes []string, parallel int, logf func(string, ...any)) error {
	for n := range d.namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName(n)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	start := time.Now()
	var next, done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, parallel)
	cfg := raycluster.DefaultBuildConfig()
	// The big cluster first: its 1,000 pods are one client's work.
	order := func(n int) int {
		if d.big > 0 {
			return (n + d.clusters) % (d.clusters + 1)
		}
		return n
	}
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := int(next.Add(1) - 1)
				if n >= d.allClusters() || ctx.Err() != nil {
					return
				}
				i := order(n)
				if err := d.createCluster(ctx, cs, c, nodes, cfg, i); err != nil {
					errs <- err
					return
				}
				if n := done.Add(1); n%500 == 0 {
					logf("%d/%d clusters created (%s)", n, d.allClusters(), time.Since(start).Round(time.Second))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	logf("%d RayClusters and %d pods created in %s", d.allClusters(), d.pods(), time.Since(start).Round(time.Millisecond))
	return nil
}

// createCluster creates cluster i, its pods Running, and (KubeRay's
// shape) its ready status.
func (d dataSet) createCluster(ctx context.Context, cs kubernetes.Interface, c client.Client, nodes []string, cfg raycluster.BuildConfig, i int) error {
	w := d.workersOf(i)
	var rc *rayv1.RayCluster
	if d.kuberay != nil {
		rc = d.kuberay.RayCluster(d.nsOf(i), d.clusterName(i), w)
	} else {
		rc = testobj.Cluster(d.nsOf(i), d.clusterName(i), int32(w))
	}
	if err := c.Create(ctx, rc); err != nil {
		return fmt.Errorf("creating RayCluster %s: %w", rc.Name, err)
	}
	var headName, headIP string
	for j := range 1 + w {
		var p *corev1.Pod
		if d.kuberay != nil {
			var err error
			if p, err = d.kuberay.Pod(rc, j); err != nil {
				return err
			}
		} else {
			b := raycluster.PodBuild{Name: d.podName(i, j), Head: j == 0}
			if j > 0 {
				b.Group = &rc.Spec.WorkerGroupSpecs[0]
			}
			p = raycluster.BuildPod(rc, b, "bench", cfg)
		}
		k := d.first[i] + j
		p.Spec.NodeName = nodes[k/d.podsPerNode]
		created, err := cs.CoreV1().Pods(rc.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating pod %s: %w", p.Name, err)
		}
		// A PUT of the status, not a patch: the API server applies a
		// patch on the JSON of the whole (large) pod; the PUT is one
		// protobuf decode. Nothing else writes these pods.
		created.Status = runningStatus(created, k)
		if _, err := cs.CoreV1().Pods(rc.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("pod %s Running: %w", p.Name, err)
		}
		if j == 0 {
			headName, headIP = created.Name, created.Status.PodIP
		}
	}
	if d.kuberay != nil {
		rc.Status = d.kuberay.ReadyStatus(rc, headName, headIP)
		if err := c.Status().Update(ctx, rc); err != nil {
			return fmt.Errorf("RayCluster %s ready: %w", rc.Name, err)
		}
	}
	return nil
}

// waitRunning polls (paged lists) until every Ray pod is Running and Ready.
func (d dataSet) waitRunning(ctx context.Context, cs kubernetes.Interface, logf func(string, ...any)) error {
	start := time.Now()
	sel := rayv1.RayPodSelector().String()
	for {
		ready, cont := 0, ""
		for {
			l, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: sel, Limit: 5000, Continue: cont})
			if err != nil {
				return err
			}
			for i := range l.Items {
				if podReady(&l.Items[i]) {
					ready++
				}
			}
			if cont = l.Continue; cont == "" {
				break
			}
		}
		if ready >= d.pods() {
			logf("%d pods Running and Ready after %s", ready, time.Since(start).Round(time.Second))
			return nil
		}
		logf("%d/%d pods Running and Ready", ready, d.pods())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(3 * time.Second):
		}
	}
}

// podReady: Running with the Ready condition true.
func podReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && status.PodIsReady(podview.Of(p))
}

// runningStatus is the status of a Running, Ready pod (kwok's
// raydar-pod-running stage): pod k gets the IP 10.(k/65536).(k/256%256).(k%256)+.
func runningStatus(p *corev1.Pod, k int) corev1.PodStatus {
	now := metav1.Now()
	st := corev1.PodStatus{
		Phase: corev1.PodRunning, StartTime: &now,
		PodIP:  fmt.Sprintf("10.%d.%d.%d", 128+k/65536, k/256%256, k%256),
		HostIP: "172.18.0.1",
	}
	st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	for _, t := range []corev1.PodConditionType{"PodReadyToStartContainers", corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, c := range p.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "docker-pullable://" + c.Image, ContainerID: "containerd://" + string(p.UID)[:8] + c.Name,
			Ready: true, Started: ptr(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return st
}

func ptr[T any](v T) *T { return &v }

// createNodes makes the nodes that hold the pods: fake nodes as kwok's
// (kube/sandbox fakeNode: 64 CPU, 256Gi, 110 pods, Ready), written by this
// program and managed by nothing, so that nothing but the benchmark's
// patches changes while raydar is measured (no controller-manager marks
// them NotReady; kwok is not started).
func (d dataSet) createNodes(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	names := make([]string, d.nodes())
	for i := range names {
		names[i] = fmt.Sprintf("bench-node-%d", i)
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: names[i], Labels: map[string]string{
			corev1.LabelHostname: names[i], corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64", "type": "kwok",
		}}}
		created, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return nil, err
		}
		capacity := corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
			corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		}
		now := metav1.Now()
		created.Status = corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity, Phase: corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("172.18.%d.%d", i/250, i%250+1)}},
		}
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return nil, err
		}
	}
	return names, nil
}
