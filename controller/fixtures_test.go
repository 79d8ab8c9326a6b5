package controller

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func rayContainer(cpu, mem string) corev1.Container {
	c := corev1.Container{Name: "ray", Image: "rayproject/ray:2.52.0"}
	if cpu != "" || mem != "" {
		c.Resources.Limits = corev1.ResourceList{}
		if cpu != "" {
			c.Resources.Limits[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse(mem)
		}
	}
	return c
}

// group is a worker group of n replicas (min 0, max 10).
func group(name string, n int32) rayv1.WorkerGroupSpec {
	return rayv1.WorkerGroupSpec{
		GroupName: name, Replicas: ptr(n), MinReplicas: ptr(int32(0)), MaxReplicas: ptr(int32(10)), NumOfHosts: 1,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{rayContainer("1", "2Gi")}}},
	}
}

func cluster(name string, groups ...rayv1.WorkerGroupSpec) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name + "-uid"), Generation: 1, ResourceVersion: "1"},
		Spec: rayv1.RayClusterSpec{
			RayVersion: "2.52.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{rayContainer("2", "4Gi")}}},
			},
			WorkerGroupSpecs: groups,
		},
	}
}

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
		p = buildPod(rc, podBuild{name: name, head: true}, specHash(rc), defaultBuildConfig())
	} else {
		g, ok := rc.Spec.WorkerGroup(groupName)
		if !ok {
			g = &rayv1.WorkerGroupSpec{GroupName: groupName, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{rayContainer("1", "1Gi")}}}}
		}
		p = buildPod(rc, podBuild{name: name, group: g}, specHash(rc), defaultBuildConfig())
	}
	p.UID = types.UID(name + "-uid")
	p.CreationTimestamp = metav1.NewTime(t0)
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
			ts := metav1.NewTime(t0)
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
	return buildHeadService(rc, defaultBuildConfig())
}

// seqSuffix returns deterministic suffixes s0, s1, ….
func seqSuffix() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("s%04d", n-1) }
}

func obsOf(rc *rayv1.RayCluster, svc *corev1.Service, pods ...[]*corev1.Pod) *observed {
	o := &observed{Cluster: rc, HeadService: svc, Now: t0, Config: defaultBuildConfig(), NewSuffix: seqSuffix(), RBACReady: true}
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
