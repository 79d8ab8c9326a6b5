package raycluster

import (
	"fmt"

	"github.com/raydar/raydar/controller/internal/fixture"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// pod states used by the fixtures.
type podState int

const (
	pending podState = iota
	ready
	runningNotReady
	failed
	terminating
)

func mkPod(rc *rayv1.RayCluster, head bool, groupName, name string, st podState) *corev1.Pod {
	var p *corev1.Pod
	if head {
		p = BuildPod(rc, PodBuild{Name: name, Head: true}, specHash(rc), DefaultBuildConfig())
	} else {
		g, ok := rc.Spec.WorkerGroup(groupName)
		if !ok {
			g = &rayv1.WorkerGroupSpec{GroupName: groupName, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{fixture.RayContainer("1", "1Gi")}}}}
		}
		p = BuildPod(rc, PodBuild{Name: name, Group: g}, specHash(rc), DefaultBuildConfig())
	}
	p.UID = types.UID(name + "-uid")
	p.CreationTimestamp = metav1.NewTime(fixture.T0)
	p.Spec.NodeName = "node-1"
	switch st {
	case pending:
		p.Spec.NodeName = ""
		p.Status.Phase = corev1.PodPending
	case ready, terminating:
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP = "10.0.0.1"
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if st == terminating {
			ts := metav1.NewTime(fixture.T0)
			p.DeletionTimestamp = &ts
		}
	case runningNotReady:
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP = "10.0.0.1"
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [ray]"}}
	case failed:
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason = "Evicted"
	}
	return p
}

func headPod(rc *rayv1.RayCluster, st podState) *corev1.Pod {
	return mkPod(rc, true, "", rc.Name+"-head-hhhhh", st)
}

func workerPods(rc *rayv1.RayCluster, group string, st podState, n int) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, mkPod(rc, false, group, fmt.Sprintf("%s-%s-worker-w%d", rc.Name, group, i), st))
	}
	return out
}

func headSvc(rc *rayv1.RayCluster) *corev1.Service {
	return BuildHeadService(rc, DefaultBuildConfig())
}

// seqSuffix returns deterministic suffixes s0, s1, ….
func seqSuffix() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("s%04d", n-1) }
}

func obsOf(rc *rayv1.RayCluster, svc *corev1.Service, pods ...[]*corev1.Pod) *observed {
	o := &observed{Cluster: rc, HeadService: svc, Now: fixture.T0, Config: DefaultBuildConfig(), NewSuffix: seqSuffix(), RBACReady: true}
	for _, ps := range pods {
		o.Pods = append(o.Pods, ps...)
	}
	return o
}

func one(p *corev1.Pod) []*corev1.Pod { return []*corev1.Pod{p} }

func podNames(ps []*corev1.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func deletedNames(p *plan) []string {
	var out []string
	for _, d := range p.DeletePods {
		out = append(out, d.Pod.Name)
	}
	return out
}
