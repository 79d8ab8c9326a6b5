// Package schedulerplugins is the Kubernetes scheduler-plugins
// coscheduling plugin (`--batch-scheduler scheduler-plugins`) as KubeRay
// v1.6.2 does it
// (ray-operator/controllers/ray/batchscheduler/scheduler-plugins/scheduler_plugins.go,
// cited as scheduler_plugins.go:line): for a RayCluster labelled
// ray.io/gang-scheduling-enabled, a scheduling.x-k8s.io/v1alpha1 PodGroup
// named after it (minMember and minResources of its desired pods), its
// pods labelled scheduling.x-k8s.io/pod-group with it; every pod gets
// schedulerName scheduler-plugins-scheduler (the name of the
// scheduler-plugins chart's second scheduler), labelled or not. A RayJob
// is refused (:160-163). The PodGroup type is the scheduler-plugins
// module's own (sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1,
// the version KubeRay v1.6.2 builds with). Pure.
package schedulerplugins

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	"github.com/raydar/raydar/controller/batchscheduler/gang"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Name is the --batch-scheduler value (scheduler_plugins.go:114, :127-129).
const Name = "scheduler-plugins"

// SchedulerName is the pods' schedulerName (scheduler_plugins.go:117,
// :131-133, :195): not Name.
const SchedulerName = "scheduler-plugins-scheduler"

// PodGroupLabelKey names a pod's PodGroup (scheduler_plugins.go:118;
// scheduler-plugins' PodGroupLabel).
const PodGroupLabelKey = spv1alpha1.PodGroupLabel

// GroupVersionKind of the PodGroup.
var GroupVersionKind = spv1alpha1.SchemeGroupVersion.WithKind("PodGroup")

// Scheduler is scheduler-plugins.
type Scheduler struct{}

// Name is "scheduler-plugins".
func (Scheduler) Name() string { return Name }

// AddToScheme registers the PodGroup (scheduler_plugins.go:217-219).
func (Scheduler) AddToScheme(s *runtime.Scheme) error { return spv1alpha1.AddToScheme(s) }

// GroupKind is what the API server must serve for it.
func (Scheduler) GroupKind() schema.GroupKind { return GroupVersionKind.GroupKind() }

// NewGroup is an empty PodGroup.
func (Scheduler) NewGroup() client.Object { return &spv1alpha1.PodGroup{} }

// gangEnabled: the label is present, whatever its value
// (scheduler_plugins.go:198-201).
func gangEnabled(obj metav1.Object) bool {
	_, ok := obj.GetLabels()[rayv1.RayGangSchedulingEnabled]
	return ok
}

// ClusterGroup is the PodGroup of a RayCluster labelled
// ray.io/gang-scheduling-enabled, nil without the label
// (DoBatchSchedulingOnSubmission, scheduler_plugins.go:159-181; createPodGroup
// :135-157): named and owned (not as controller) by the cluster, minMember
// its desired workers plus the head, minResources their resources, both
// counted as without autoscaling even with it (KubeRay's TODO at :136). A
// RayJob's cluster is a RayCluster like any other here: it gets its own.
func (Scheduler) ClusterGroup(rc *rayv1.RayCluster) (client.Object, error) {
	if !gangEnabled(rc) {
		return nil, nil
	}
	return &spv1alpha1.PodGroup{
		TypeMeta: metav1.TypeMeta{APIVersion: GroupVersionKind.GroupVersion().String(), Kind: GroupVersionKind.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: rc.Namespace, Name: rc.Name,
			OwnerReferences: []metav1.OwnerReference{{Name: rc.Name, UID: rc.UID,
				APIVersion: rayv1.GroupVersion.String(), Kind: rayv1.KindRayCluster}},
		},
		Spec: spv1alpha1.PodGroupSpec{MinMember: rc.Spec.DesiredWorkerPods() + 1, MinResources: gang.DesiredResources(&rc.Spec)},
	}, nil
}

// JobGroup refuses every RayJob, labelled or not, on every pass of its
// Initializing (scheduler_plugins.go:160-163: "currently only RayCluster is
// supported"; rayjob_controller.go:200-208 returns the error and the
// RayJob goes no further).
func (Scheduler) JobGroup(*rayv1.RayJob) (client.Object, error) {
	return nil, fmt.Errorf("currently only RayCluster is supported, got %T", &rayv1.RayJob{})
}

// FinishedJobGroup returns nothing: there is nothing to clean up (scheduler_plugins.go:203-206).
func (Scheduler) FinishedJobGroup(*rayv1.RayJob, *rayv1.RayCluster) (client.Object, bool, error) {
	return nil, false, nil
}

// UpdateGroup is nil: KubeRay creates the PodGroup when absent and never
// updates it (scheduler_plugins.go:167-179), so a cluster scaled later
// keeps the minMember it was created with.
func (Scheduler) UpdateGroup(client.Object, client.Object) client.Object { return nil }

// Decorate is AddMetadataToChildResource (scheduler_plugins.go:185-196):
// with parent labelled ray.io/gang-scheduling-enabled, the pod-group label
// naming parent (the RayCluster of a pod; the RayJob, for its cluster and
// submitter), and schedulerName scheduler-plugins-scheduler on a pod or
// pod template in any case. task is not read.
func (Scheduler) Decorate(parent, child metav1.Object, _ string) {
	if gangEnabled(parent) {
		labels := child.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[PodGroupLabelKey] = parent.GetName()
		child.SetLabels(labels)
	}
	switch c := child.(type) {
	case *corev1.Pod:
		c.Spec.SchedulerName = SchedulerName
	case *corev1.PodTemplateSpec:
		c.Spec.SchedulerName = SchedulerName
	}
}
