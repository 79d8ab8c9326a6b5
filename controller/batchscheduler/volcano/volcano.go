// Package volcano is the Volcano batch scheduler (`--batch-scheduler
// volcano`) as KubeRay v1.6.2 does it
// (ray-operator/controllers/ray/batchscheduler/volcano/volcano_scheduler.go,
// cited as volcano_scheduler.go:line): one scheduling.volcano.sh/v1beta1
// PodGroup per RayCluster, or per RayJob for the cluster it makes, and
// pods that name it. Pure: it says what the PodGroup and the pods are;
// the reconcilers (controller/raycluster, controller/rayjob) read, decide
// and write.
package volcano

import (
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	volcanobatchv1alpha1 "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/raydar/raydar/controller/batchscheduler/gang"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Name is the --batch-scheduler value and the pods' schedulerName
// (volcano_scheduler.go:30, :267).
const Name = "volcano"

// The pods' annotations (volcano_scheduler.go:131-139): the PodGroup they
// belong to and their task (the Ray group: headgroup, a worker group,
// submittergroup).
const (
	GroupNameAnnotationKey = volcanov1beta1.KubeGroupNameAnnotationKey // scheduling.k8s.io/group-name
	TaskSpecAnnotationKey  = volcanobatchv1alpha1.TaskSpecKey          // volcano.sh/task-spec
)

// GroupVersionKind of the PodGroup.
var GroupVersionKind = volcanov1beta1.SchemeGroupVersion.WithKind("PodGroup")

// Scheduler is Volcano.
type Scheduler struct{}

// Name is "volcano".
func (Scheduler) Name() string { return Name }

// AddToScheme registers the PodGroup (volcano_scheduler.go:337-339).
func (Scheduler) AddToScheme(s *runtime.Scheme) error { return volcanov1beta1.AddToScheme(s) }

// GroupKind is what the API server must serve for it.
func (Scheduler) GroupKind() schema.GroupKind { return GroupVersionKind.GroupKind() }

// NewGroup is an empty PodGroup.
func (Scheduler) NewGroup() client.Object { return &volcanov1beta1.PodGroup{} }

// GroupName is the PodGroup of obj (a RayCluster, a RayJob, or the
// RayCluster of a RayJob, whose PodGroup is the RayJob's):
// "ray-<name>-pg" (getAppPodGroupName, volcano_scheduler.go:110-120).
func GroupName(obj metav1.Object) string {
	name := obj.GetName()
	if job := obj.GetLabels()[rayv1.RayOriginatedFromCRNameLabelKey]; fromJob(obj) && job != "" {
		name = job
	}
	return fmt.Sprintf("ray-%s-pg", name)
}

// fromJob: obj is the RayCluster of a RayJob, whose
// PodGroup holds its pods.
func fromJob(obj metav1.Object) bool {
	return obj.GetLabels()[rayv1.RayOriginatedFromCRDLabelKey] == rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob)
}

// ClusterGroup is the PodGroup of a RayCluster, nil for a RayJob's
// cluster (volcano_scheduler.go:60-70: its RayJob's PodGroup holds its
// pods). The error is a volcano.sh/network-topology-highest-tier-allowed
// label that is not a number.
func (Scheduler) ClusterGroup(rc *rayv1.RayCluster) (client.Object, error) {
	if fromJob(rc) {
		return nil, nil
	}
	n, res := gang.Size(&rc.Spec)
	return build(rc, rayv1.KindRayCluster, n, res)
}

// JobGroup is the PodGroup of a RayJob that makes its cluster
// (volcano_scheduler.go:73-89): the cluster's gang, and the submitter's
// resources in minResources but not in minMember (the submitter waits for
// the cluster; a gang waiting for the submitter would never start). A
// RayJob with spec.clusterSelector has none and is an error: KubeRay
// v1.6.2 refuses it (:74-76) on every pass, and the RayJob goes no
// further.
func (Scheduler) JobGroup(rj *rayv1.RayJob) (client.Object, error) {
	if rj.Spec.RayClusterSpec == nil {
		return nil, fmt.Errorf("gang scheduling does not support RayJob %s/%s referencing an existing RayCluster", rj.Namespace, rj.Name)
	}
	n, res := gang.Size(rj.Spec.RayClusterSpec)
	return build(rj, rayv1.KindRayJob, n, gang.Sum(res, SubmitterResources(rj)))
}

// FinishedJobGroup is the PodGroup of a RayJob that has finished
// (Complete or Failed; CleanupOnCompletion, volcano_scheduler.go:281-326):
// the gang of its cluster as it stands now (rc; the submitter no longer
// counted), or empty once the cluster is gone or going (rc nil or
// deleted), so that the queue's resources are released. ok is false when
// there is nothing to do: a clusterSelector RayJob, or no cluster named
// yet.
func (Scheduler) FinishedJobGroup(rj *rayv1.RayJob, rc *rayv1.RayCluster) (group client.Object, ok bool, err error) {
	if rj.Spec.UsesClusterSelector() || rj.Status.RayClusterName == "" {
		return nil, false, nil
	}
	var n int32
	res := corev1.ResourceList{}
	if rc != nil && rc.DeletionTimestamp == nil {
		n, res = gang.Size(&rc.Spec)
	}
	g, err := build(rj, rayv1.KindRayJob, n, res)
	return g, err == nil, err
}

// SubmitterResources is what a RayJob's submitter asks for, as
// getSubmitterResource counts it (volcano_scheduler.go:91-108): in
// K8sJobMode the submitter pod template's (spec.submitterPodTemplate, or
// KubeRay's default container: common/job.go:201-231), in SidecarMode the
// default submitter container's requests (limits standing in), none in
// the other modes.
func SubmitterResources(rj *rayv1.RayJob) corev1.ResourceList {
	def := corev1.Container{Resources: rayv1.DefaultSubmitterResources()}
	switch rj.Spec.EffectiveSubmissionMode() {
	case rayv1.K8sJobMode:
		if t := rj.Spec.SubmitterPodTemplate; t != nil {
			return gang.PodResources(&t.Spec)
		}
		return gang.PodResources(&corev1.PodSpec{Containers: []corev1.Container{def}})
	case rayv1.SidecarMode:
		return gang.ContainerResources(&def)
	}
	return corev1.ResourceList{}
}

// build is the PodGroup of owner (createPodGroup,
// volcano_scheduler.go:209-261): owned by it, its annotations copied,
// minMember and minResources, phase Pending, the network topology, queue
// and priority class of its labels.
func build(owner client.Object, kind string, minMember int32, minResources corev1.ResourceList) (*volcanov1beta1.PodGroup, error) {
	name := GroupName(owner)
	annotations := make(map[string]string, len(owner.GetAnnotations()))
	maps.Copy(annotations, owner.GetAnnotations())
	pg := &volcanov1beta1.PodGroup{
		TypeMeta: metav1.TypeMeta{APIVersion: GroupVersionKind.GroupVersion().String(), Kind: GroupVersionKind.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: owner.GetNamespace(), Name: name,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, rayv1.GroupVersion.WithKind(kind))},
			Annotations:     annotations,
		},
		Spec:   volcanov1beta1.PodGroupSpec{MinMember: minMember, MinResources: &minResources},
		Status: volcanov1beta1.PodGroupStatus{Phase: volcanov1beta1.PodGroupPending},
	}
	labels := owner.GetLabels()
	if mode, ok := labels[rayv1.VolcanoNetworkTopologyModeLabelKey]; ok {
		pg.Spec.NetworkTopology = &volcanov1beta1.NetworkTopologySpec{Mode: volcanov1beta1.NetworkTopologyMode(mode)}
		if tier, ok := labels[rayv1.VolcanoNetworkTopologyHighestTierAllowedLabelKey]; ok {
			n, err := strconv.Atoi(tier)
			if err != nil {
				return pg, fmt.Errorf("failed to convert %s label to int: %w for podgroup %s in namespace %s",
					rayv1.VolcanoNetworkTopologyHighestTierAllowedLabelKey, err, name, owner.GetNamespace())
			}
			pg.Spec.NetworkTopology.HighestTierAllowed = &n
		}
	}
	if q, ok := labels[rayv1.VolcanoQueueNameLabelKey]; ok {
		pg.Spec.Queue = q
	}
	if pc, ok := labels[rayv1.RayPriorityClassName]; ok {
		pg.Spec.PriorityClassName = pc
	}
	return pg, nil
}

// UpdateGroup is existing brought to want, nil when it already matches:
// KubeRay updates minMember and minResources only, the rest stays as
// created (syncPodGroup, volcano_scheduler.go:186-195).
func (Scheduler) UpdateGroup(existing, want client.Object) client.Object {
	cur, w := existing.(*volcanov1beta1.PodGroup), want.(*volcanov1beta1.PodGroup)
	if cur.Spec.MinMember == w.Spec.MinMember && cur.Spec.MinResources != nil && sameResources(*cur.Spec.MinResources, *w.Spec.MinResources) {
		return nil
	}
	up := cur.DeepCopy()
	up.Spec.MinMember = w.Spec.MinMember
	res := w.Spec.MinResources.DeepCopy()
	up.Spec.MinResources = &res
	return up
}

// sameResources is quotav1.Equals (k8s.io/apiserver/pkg/quota/v1): the
// same names, each quantity equal by value.
func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for n, q := range a {
		if v, ok := b[n]; !ok || q.Cmp(v) != 0 {
			return false
		}
	}
	return true
}

// Decorate is what Volcano adds to a child of parent
// (AddMetadataToChildResource, volcano_scheduler.go:263-268): parent's
// queue and priority-class labels, the PodGroup and task annotations, and
// on a pod or pod template schedulerName volcano. child is a pod, a pod
// template, or the RayCluster of a RayJob (task ""); parent the RayCluster
// of the pod, or the RayJob.
func (Scheduler) Decorate(parent, child metav1.Object, task string) {
	labels := child.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for _, k := range []string{rayv1.VolcanoQueueNameLabelKey, rayv1.RayPriorityClassName} {
		if v := parent.GetLabels()[k]; v != "" {
			labels[k] = v
		}
	}
	child.SetLabels(labels)
	annotations := child.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[GroupNameAnnotationKey] = GroupName(parent)
	annotations[TaskSpecAnnotationKey] = task
	child.SetAnnotations(annotations)
	switch c := child.(type) {
	case *corev1.Pod:
		c.Spec.SchedulerName = Name
	case *corev1.PodTemplateSpec:
		c.Spec.SchedulerName = Name
	}
}
