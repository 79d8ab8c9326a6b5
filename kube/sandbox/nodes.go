package sandbox

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// stagesYAML is kwok's configuration: the lifecycle of fake nodes and pods.
//
//go:embed stages.yaml
var stagesYAML []byte

// Addresses handed out to fake nodes and their pods. Node i gets the pod CIDR
// 10.(128+i/256).(i%256).0/24 and the InternalIP 172.18.(i/250).(i%250+1);
// defaultPodCIDR and defaultNodeIP are kwok's fallbacks, unused for our nodes.
const (
	defaultPodCIDR = "10.127.0.0/16"
	defaultNodeIP  = "172.17.0.1"
	maxNodes       = 128 * 256
	podsPerNode    = 110
	maxPodsPerNode = 254
)

// normalize fills in a pool's defaults and checks its quantities.
func (p *NodePool) normalize(index int) error {
	if p.Count < 0 {
		return fmt.Errorf("sandbox: node pool %d: negative Count", index)
	}
	if p.NamePrefix == "" {
		p.NamePrefix = "kwok-node"
		if index > 0 {
			p.NamePrefix = fmt.Sprintf("kwok-pool%d", index)
		}
	}
	if p.CPU == "" {
		p.CPU = "16"
	}
	if p.Memory == "" {
		p.Memory = "64Gi"
	}
	if p.Pods == 0 {
		p.Pods = podsPerNode
	}
	if p.Pods < 0 || p.Pods > maxPodsPerNode {
		return fmt.Errorf("sandbox: node pool %q: Pods %d: want 1 to %d (a node's pod CIDR is a /24)", p.NamePrefix, p.Pods, maxPodsPerNode)
	}
	if p.GPU < 0 {
		return fmt.Errorf("sandbox: node pool %q: negative GPU", p.NamePrefix)
	}
	for what, q := range map[string]string{"CPU": p.CPU, "Memory": p.Memory} {
		if _, err := resource.ParseQuantity(q); err != nil {
			return fmt.Errorf("sandbox: node pool %q: %s %q: %w", p.NamePrefix, what, q, err)
		}
	}
	return nil
}

// capacity is what each node of the pool reports.
func (p *NodePool) capacity() corev1.ResourceList {
	rl := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse(p.CPU),
		corev1.ResourceMemory:           resource.MustParse(p.Memory),
		corev1.ResourcePods:             *resource.NewQuantity(int64(p.Pods), resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	if p.GPU > 0 {
		rl[corev1.ResourceName("nvidia.com/gpu")] = *resource.NewQuantity(int64(p.GPU), resource.DecimalSI)
	}
	return rl
}

// AddNodes creates the nodes of pool and waits until kwok reports them Ready.
// It returns their names.
func (s *Sandbox) AddNodes(ctx context.Context, pool NodePool) ([]string, error) {
	if !s.opts.Kwok {
		return nil, errors.New("sandbox: AddNodes needs Options.Kwok")
	}
	s.mu.Lock()
	n := s.pools
	s.pools++
	s.mu.Unlock()
	if err := pool.normalize(n); err != nil {
		return nil, err
	}
	return s.addNodes(ctx, pool)
}

func (s *Sandbox) addNodes(ctx context.Context, pool NodePool) ([]string, error) {
	s.mu.Lock()
	first := s.nodeIndex
	if first+pool.Count > maxNodes {
		s.mu.Unlock()
		return nil, fmt.Errorf("sandbox: at most %d nodes", maxNodes)
	}
	s.nodeIndex += pool.Count
	s.mu.Unlock()

	names := make([]string, 0, pool.Count)
	for i := range pool.Count {
		node := fakeNode(pool, i, first+i, s.kubeletPort)
		if _, err := s.clients.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return names, fmt.Errorf("sandbox: creating node %s: %w", node.Name, err)
		}
		names = append(names, node.Name)
	}
	s.mu.Lock()
	s.nodes = append(s.nodes, names...)
	s.mu.Unlock()
	for _, name := range names {
		err := s.poll(ctx, "node "+name+" Ready", func(ctx context.Context) (bool, error) {
			n, err := s.clients.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					return c.Status == corev1.ConditionTrue, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return names, err
		}
	}
	s.logf("%d node(s) %s-* Ready", len(names), pool.NamePrefix)
	return names, nil
}

// fakeNode is node i of pool; global is its index in the sandbox, which picks
// its addresses; kubeletPort is kwok's kubelet server (kwokserver.go).
func fakeNode(pool NodePool, i, global, kubeletPort int) *corev1.Node {
	name := fmt.Sprintf("%s-%d", pool.NamePrefix, i)
	labels := map[string]string{
		corev1.LabelHostname:           name,
		corev1.LabelOSStable:           "linux",
		corev1.LabelArchStable:         "amd64",
		corev1.LabelInstanceTypeStable: "kwok",
		NodePoolLabel:                  pool.NamePrefix,
		"type":                         "kwok",
	}
	for k, v := range pool.Labels {
		labels[k] = v
	}
	podCIDR := fmt.Sprintf("10.%d.%d.0/24", 128+global/256, global%256)
	ip := fmt.Sprintf("172.18.%d.%d", global/250, global%250+1)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{kwokNodeAnnotation: kwokNodeValue},
		},
		Spec: corev1.NodeSpec{PodCIDR: podCIDR, PodCIDRs: []string{podCIDR}},
		Status: corev1.NodeStatus{
			// Allocatable is left to kwok's node stage, which copies capacity.
			Capacity: pool.capacity(),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip},
				{Type: corev1.NodeHostName, Address: name},
				{Type: kubeletAddressType, Address: kubeletHost},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(kubeletPort)}},
		},
	}
}

// EndContainer makes kwok show one container of a Running pod on a fake
// node as terminated with exit code code, the others running and the pod
// not Ready (ExitedContainerAnnotation); it does not wait. A pod shows one
// such container: the sandbox plays a SidecarMode submitter's end.
func (s *Sandbox) EndContainer(ctx context.Context, namespace, pod, container string, code int) error {
	if container == "" || code < 0 || code > 255 {
		return fmt.Errorf("sandbox: EndContainer %s/%s: container %q, exit code %d: need a name and a code in 0..255", namespace, pod, container, code)
	}
	return s.annotatePod(ctx, "EndContainer", namespace, pod, map[string]string{
		ExitedContainerAnnotation: container,
		ExitCodeAnnotation:        strconv.Itoa(code),
	})
}

// SetPodPhase makes kwok end a pod on a fake node as Failed or Succeeded, by
// setting PhaseAnnotation; it does not wait.
func (s *Sandbox) SetPodPhase(ctx context.Context, namespace, name string, phase corev1.PodPhase) error {
	if phase != corev1.PodFailed && phase != corev1.PodSucceeded {
		return fmt.Errorf("sandbox: SetPodPhase: phase must be Failed or Succeeded, not %q", phase)
	}
	return s.annotatePod(ctx, "SetPodPhase", namespace, name, map[string]string{PhaseAnnotation: string(phase)})
}

// annotatePod sets annotations on a pod with one merge patch; op names the
// caller in the error.
func (s *Sandbox) annotatePod(ctx context.Context, op, namespace, name string, annotations map[string]string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err == nil {
		_, err = s.clients.CoreV1().Pods(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil {
		return fmt.Errorf("sandbox: %s %s/%s: %w", op, namespace, name, err)
	}
	return nil
}

// ignoreNotFound returns nil for NotFound errors.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
