// Package testobj holds objects shared by the test harnesses under test/
// (test/faults, test/privilege).
package testobj

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Cluster is 1 head and one group "small" of n workers, small pods.
func Cluster(ns, name string, n int32) *rayv1.RayCluster {
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	ctr := func(name string) []corev1.Container {
		return []corev1.Container{{Name: name, Image: "rayproject/ray:2.52.0", Resources: res}}
	}
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: rayv1.RayClusterSpec{
			RayVersion: "2.52.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: ctr("ray-head")}},
			},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName: "small", Replicas: ptr.To(n), MinReplicas: ptr.To(int32(0)), MaxReplicas: ptr.To(int32(100)),
				RayStartParams: map[string]string{},
				Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: ctr("ray-worker")}},
			}},
		},
	}
}
