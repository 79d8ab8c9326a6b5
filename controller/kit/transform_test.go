package kit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The cache keeps of a pod what the reconcilers read: what decides
// readiness, replacement and the Serve port survives, the rest of the
// spec does not, and other kinds pass untouched.
func TestReconcilerPod(t *testing.T) {
	now := metav1.Now()
	full := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "rc-head-x", Namespace: "ns", UID: "u1", ResourceVersion: "7",
			Labels:            map[string]string{rayv1.RayNodeTypeLabelKey: "head", rayv1.RayClusterLabelKey: "rc"},
			Annotations:       map[string]string{rayv1.UpgradeStrategyRecreateHashKey: "h1"},
			OwnerReferences:   []metav1.OwnerReference{{Kind: "RayCluster", Name: "rc", UID: "rcu", Controller: new(true)}},
			DeletionTimestamp: &now,
			ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: "raydar"}}},
		Spec: corev1.PodSpec{
			NodeName: "node-1", RestartPolicy: corev1.RestartPolicyNever, ServiceAccountName: "sa",
			Tolerations:    []corev1.Toleration{{Key: "k"}},
			InitContainers: []corev1.Container{{Name: "wait-gcs-ready", Image: "ray"}},
			Containers: []corev1.Container{{
				Name: "ray-head", Image: "rayproject/ray", Args: []string{"ray start --head"},
				Env:       []corev1.EnvVar{{Name: "RAY_ADDRESS", Value: "x"}},
				Ports:     []corev1.ContainerPort{{Name: rayv1.ServingPortName, ContainerPort: 9000}},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			}, {Name: rayv1.RayJobSubmitterContainerName, Image: "ray"}},
			Volumes: []corev1.Volume{{Name: "log"}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", Reason: "r",
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "ray-head", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}},
	}
	got, err := ReconcilerPod(full.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	want := full.DeepCopy()
	want.ManagedFields = nil
	want.Spec = corev1.PodSpec{NodeName: "node-1", RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
		{Name: "ray-head", Ports: []corev1.ContainerPort{{Name: rayv1.ServingPortName, ContainerPort: 9000}}},
		{Name: rayv1.RayJobSubmitterContainerName}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("kept (-want +got):\n%s", diff)
	}
	lean := got.(*corev1.Pod)
	if IsRunningAndReady(lean) != IsRunningAndReady(full) || podDigest(lean) != podDigest(full) {
		t.Errorf("what readiness and the change filter read differs: %+v vs %+v", podDigest(lean), podDigest(full))
	}
	if p, ok := ContainerPort(lean.Spec, rayv1.ServingPortName); !ok || p != 9000 {
		t.Errorf("Serve port %d, %v; want 9000", p, ok)
	}
	svc := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.2"}}
	if got, _ := ReconcilerPod(svc); got != svc {
		t.Errorf("a Service was transformed: %v", got)
	}
}
