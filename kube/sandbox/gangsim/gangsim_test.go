package gangsim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name, cpu string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		}}
}

func pod(name, cpu, nodeName string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: nodeName,
		Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

// A gang is placed whole or not at all, on what the nodes have left.
func TestFitAllOrNothing(t *testing.T) {
	nodes := []corev1.Node{node("a", "4"), node("b", "4")}
	running := *pod("old", "3", "a")
	free := freeCapacity(nodes, []corev1.Pod{running})
	names := []string{"a", "b"}
	// 1 CPU left on a, 4 on b: three 2-CPU pods do not fit; 1 + 2 + 2 does.
	if _, ok := fit([]*corev1.Pod{pod("x", "2", ""), pod("y", "2", ""), pod("z", "2", "")}, free, names); ok {
		t.Fatal("three 2-CPU pods placed on 1 + 4 free CPUs")
	}
	if c := free["b"][corev1.ResourceCPU]; c.String() != "4" {
		t.Fatalf("a gang that did not fit took capacity: b has %s", c.String())
	}
	placed, ok := fit([]*corev1.Pod{pod("x", "1", ""), pod("y", "2", ""), pod("z", "2", "")}, free, names)
	if !ok || placed["x"] != "a" || placed["y"] != "b" || placed["z"] != "b" {
		t.Fatalf("placed %v %v", placed, ok)
	}
	if c := free["b"][corev1.ResourceCPU]; c.String() != "0" {
		t.Fatalf("b has %s left", c.String())
	}
}

// KAI's gpu-fraction pods go only where allowed says (nodes with GPUs),
// the gang still whole or not at all.
func TestFitWhereAllowed(t *testing.T) {
	nodes := []corev1.Node{node("cpu", "8"), node("gpu", "2")}
	free := freeCapacity(nodes, nil)
	names := []string{"cpu", "gpu"}
	half := pod("half", "1", "")
	half.Annotations = map[string]string{kaiGPUFraction: "0.5"}
	onGPU := func(p *corev1.Pod, n string) bool { return p.Annotations[kaiGPUFraction] == "" || n == "gpu" }
	placed, ok := fitWhere([]*corev1.Pod{pod("head", "1", ""), half}, free, names, onGPU)
	if !ok || placed["head"] != "cpu" || placed["half"] != "gpu" {
		t.Fatalf("placed %v %v", placed, ok)
	}
	big := pod("big", "2", "")
	big.Annotations = half.Annotations
	if _, ok := fitWhere([]*corev1.Pod{pod("head2", "1", ""), big}, free, names, onGPU); ok {
		t.Fatal("a 2-CPU gpu-fraction pod placed where 1 CPU is left on the GPU node")
	}
	if c := free["cpu"][corev1.ResourceCPU]; c.String() != "7" {
		t.Fatalf("a gang that did not fit took capacity: cpu has %s", c.String())
	}
}
