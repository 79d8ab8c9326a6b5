package actions_test

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Fixtures shared by the unit and the sandbox tests.

func podTemplate(name string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "rayproject/ray:2.52.0"}}}}
}

// group is a single-host worker group min/replicas/max.
func group(name string, min, replicas, max int32) rayv1.WorkerGroupSpec {
	return rayv1.WorkerGroupSpec{
		GroupName: name, MinReplicas: ptr.To(min), Replicas: ptr.To(replicas), MaxReplicas: ptr.To(max),
		NumOfHosts: 1, Template: podTemplate("ray-worker"),
	}
}

// cluster returns a valid RayCluster with the given worker groups.
func cluster(ns, name string, groups ...rayv1.WorkerGroupSpec) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: rayv1.KindRayCluster},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid")},
		Spec: rayv1.RayClusterSpec{
			RayVersion:       "2.52.0",
			HeadGroupSpec:    rayv1.HeadGroupSpec{Template: podTemplate("ray-head")},
			WorkerGroupSpecs: groups,
		},
	}
}

// rayPod returns a Ray pod of cluster c: a worker of group g, or the head when g is "".
func rayPod(ns, c, g, name string) corev1.Pod {
	typ, grp := rayv1.WorkerNode, g
	if g == "" {
		typ, grp = rayv1.HeadNode, rayv1.RayNodeHeadGroupLabelValue
	}
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid"), Labels: map[string]string{
			rayv1.RayClusterLabelKey:   c,
			rayv1.RayNodeTypeLabelKey:  string(typ),
			rayv1.RayNodeGroupLabelKey: grp,
			rayv1.RayNodeLabelKey:      rayv1.RayNodeLabelValue,
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray", Image: "rayproject/ray:2.52.0"}}},
	}
}

// multiHostPod is host h of replica r of a multi-host group.
func multiHostPod(ns, c, g, replica string, h int) corev1.Pod {
	p := rayPod(ns, c, g, replica+"-"+string(rune('0'+h)))
	p.Labels[rayv1.RayWorkerReplicaNameKey] = replica
	return p
}

// rayJob returns a valid RayJob with its own cluster spec.
func rayJob(ns, name string, shutdown bool) *rayv1.RayJob {
	return &rayv1.RayJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: rayv1.KindRayJob},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid")},
		Spec: rayv1.RayJobSpec{
			Entrypoint:               "python -c 'print(1)'",
			ShutdownAfterJobFinishes: shutdown,
			RayClusterSpec:           &cluster(ns, name, group("small", 0, 1, 2)).Spec,
		},
	}
}

// rayService returns a valid RayService.
func rayService(ns, name string) *rayv1.RayService {
	return &rayv1.RayService{
		TypeMeta:   metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: rayv1.KindRayService},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid")},
		Spec:       rayv1.RayServiceSpec{RayClusterSpec: cluster(ns, name, group("serve", 1, 1, 3)).Spec},
	}
}

// rayCronJob returns a valid RayCronJob running every minute.
func rayCronJob(ns, name string) *rayv1.RayCronJob {
	return &rayv1.RayCronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: rayv1.KindRayCronJob},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid")},
		Spec:       rayv1.RayCronJobSpec{Schedule: "* * * * *", JobTemplate: rayJob(ns, name, true).Spec},
	}
}

func ownedBy(obj metav1.Object, kind, name string, uid types.UID) {
	apiVersion := rayv1.GroupVersion.String()
	if kind == "Job" {
		apiVersion = "batch/v1"
	}
	obj.SetOwnerReferences(append(obj.GetOwnerReferences(), metav1.OwnerReference{
		APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true),
	}))
}
