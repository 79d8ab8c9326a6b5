// Package yunikorn is Apache YuniKorn (`--batch-scheduler yunikorn`) as
// KubeRay v1.6.2 does it
// (ray-operator/controllers/ray/batchscheduler/yunikorn/yunikorn_scheduler.go
// and yunikorn_task_groups.go, cited as yunikorn_scheduler.go:line and
// yunikorn_task_groups.go:line): no gang object (:41-45), only metadata on
// the children: schedulerName yunikorn, YuniKorn's legacy applicationId
// and queue labels from the parent's yunikorn.apache.org/app-id and
// yunikorn.apache.org/queue, and, when the parent carries
// ray.io/gang-scheduling-enabled, the task-groups annotation (YuniKorn's
// gang: one task group per Ray group with its minMember and one member's
// resources) and the task-group-name annotation. No CRD is needed:
// AddToScheme registers nothing (:148-150). Pure.
package yunikorn

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/batchscheduler/gang"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Name is the --batch-scheduler value and the pods' schedulerName
// (yunikorn_scheduler.go:20, :121).
const Name = "yunikorn"

// The labels and annotations (yunikorn_scheduler.go:19-27).
const (
	// PodApplicationIDLabelKey and PodQueueLabelKey are the child's,
	// copied from the parent's AppIDLabelKey and QueueLabelKey.
	PodApplicationIDLabelKey = "applicationId"
	PodQueueLabelKey         = "queue"
	AppIDLabelKey            = rayv1.YuniKornApplicationIDLabelKey
	QueueLabelKey            = rayv1.YuniKornQueueLabelKey
	// TaskGroupsAnnotationKey holds the gang (TaskGroups, JSON);
	// TaskGroupNameAnnotationKey the pod's task group (its Ray group).
	TaskGroupsAnnotationKey    = "yunikorn.apache.org/task-groups"
	TaskGroupNameAnnotationKey = "yunikorn.apache.org/task-group-name"
)

// TaskGroup is one gang member kind as YuniKorn reads it
// (yunikorn_task_groups.go:18-28, after yunikorn-k8shim's
// pkg/cache/amprotocol.go); the JSON field order is KubeRay's, so the
// annotation is byte for byte the same.
type TaskGroup struct {
	MinResource               map[string]resource.Quantity      `json:"minResource"`
	NodeSelector              map[string]string                 `json:"nodeSelector,omitempty"`
	Affinity                  *corev1.Affinity                  `json:"affinity,omitempty"`
	Name                      string                            `json:"name"`
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	Tolerations               []corev1.Toleration               `json:"tolerations,omitempty"`
	MinMember                 int32                             `json:"minMember"`
}

// Scheduler is YuniKorn.
type Scheduler struct{}

// Name is "yunikorn".
func (Scheduler) Name() string { return Name }

// AddToScheme registers nothing: KubeRay makes no YuniKorn object.
func (Scheduler) AddToScheme(*runtime.Scheme) error { return nil }

// GroupKind is empty: no gang object.
func (Scheduler) GroupKind() schema.GroupKind { return schema.GroupKind{} }

// NewGroup is nil: no gang object.
func (Scheduler) NewGroup() client.Object { return nil }

// ClusterGroup is nil (yunikorn_scheduler.go:41-45).
func (Scheduler) ClusterGroup(*rayv1.RayCluster) (client.Object, error) { return nil, nil }

// JobGroup is nil (yunikorn_scheduler.go:41-45).
func (Scheduler) JobGroup(*rayv1.RayJob) (client.Object, error) { return nil, nil }

// FinishedJobGroup returns nothing: there is nothing to clean up (yunikorn_scheduler.go:139-142).
func (Scheduler) FinishedJobGroup(*rayv1.RayJob, *rayv1.RayCluster) (client.Object, bool, error) {
	return nil, false, nil
}

// UpdateGroup returns nil: there is no gang object.
func (Scheduler) UpdateGroup(client.Object, client.Object) client.Object { return nil }

// Decorate is AddMetadataToChildResource (yunikorn_scheduler.go:116-137):
// the parent's non-empty app-id and queue labels as the child's
// applicationId and queue, schedulerName yunikorn on a pod or pod
// template; with the parent's ray.io/gang-scheduling-enabled label (any
// value), the task groups (the parent's own annotation when it has a
// non-empty one, as a RayJob's cluster has, else made from the parent's
// spec) and, for a pod or template of a Ray group (task not ""), its task
// group's name.
func (Scheduler) Decorate(parent, child metav1.Object, task string) {
	labels := child.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for from, to := range map[string]string{AppIDLabelKey: PodApplicationIDLabelKey, QueueLabelKey: PodQueueLabelKey} {
		if v := parent.GetLabels()[from]; v != "" {
			labels[to] = v
		}
	}
	child.SetLabels(labels)
	switch c := child.(type) {
	case *corev1.Pod:
		c.Spec.SchedulerName = Name
	case *corev1.PodTemplateSpec:
		c.Spec.SchedulerName = Name
	}
	if _, ok := parent.GetLabels()[rayv1.RayGangSchedulingEnabled]; !ok {
		return
	}
	groups := parent.GetAnnotations()[TaskGroupsAnnotationKey]
	if groups == "" {
		groups = TaskGroupsAnnotation(parent)
	}
	annotations := child.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[TaskGroupsAnnotationKey] = groups
	if task != "" {
		annotations[TaskGroupNameAnnotationKey] = task
	}
	child.SetAnnotations(annotations)
}

// TaskGroupsAnnotation is the task groups of a RayCluster or RayJob as
// the annotation's JSON (getTaskGroupsAnnotationValue,
// yunikorn_scheduler.go:87-100): "[]" for another kind.
func TaskGroupsAnnotation(obj metav1.Object) string {
	groups := []TaskGroup{}
	switch o := obj.(type) {
	case *rayv1.RayCluster:
		groups = ClusterTaskGroups(&o.Spec)
	case *rayv1.RayJob:
		groups = JobTaskGroups(&o.Spec)
	}
	b, err := json.Marshal(groups)
	if err != nil { // maps of strings and quantities: cannot fail
		panic(err)
	}
	return string(b)
}

// ClusterTaskGroups are a cluster's task groups
// (newTaskGroupsFromRayClusterSpec, yunikorn_task_groups.go:37-69): the
// head, one member; then each worker group in order, minReplicas ×
// numOfHosts members (suspended groups too, and whatever replicas say),
// each with one pod's resources (requests, limits standing in) and its
// node selector, tolerations and affinity.
func ClusterTaskGroups(spec *rayv1.RayClusterSpec) []TaskGroup {
	head := &spec.HeadGroupSpec.Template.Spec
	groups := []TaskGroup{member(rayv1.RayNodeHeadGroupLabelValue, 1, head)}
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		groups = append(groups, member(g.GroupName, ptr.Deref(g.MinReplicas, 0)*g.NumOfHosts, &g.Template.Spec))
	}
	return groups
}

// JobTaskGroups are a RayJob's (newTaskGroupsFromRayJobSpec,
// yunikorn_task_groups.go:71-88): its cluster's, and the submitter, one
// member with the submitter template's resources: spec.submitterPodTemplate
// or KubeRay's default submitter (common/job.go:201-231), in every
// submission mode (KubeRay counts it even where no submitter pod is made).
func JobTaskGroups(spec *rayv1.RayJobSpec) []TaskGroup {
	if spec.RayClusterSpec == nil {
		// KubeRay dereferences the nil spec (a clusterSelector RayJob's
		// cluster is not its to decorate): no groups.
		return []TaskGroup{}
	}
	groups := ClusterTaskGroups(spec.RayClusterSpec)
	sub := &corev1.PodSpec{Containers: []corev1.Container{{Resources: rayv1.DefaultSubmitterResources()}}}
	if spec.SubmitterPodTemplate != nil {
		sub = &spec.SubmitterPodTemplate.Spec
	}
	return append(groups, member(rayv1.RayNodeSubmitterGroupLabelValue, 1, sub))
}

// member is one task group of pods like spec.
func member(name string, n int32, spec *corev1.PodSpec) TaskGroup {
	res := map[string]resource.Quantity{}
	for k, q := range gang.PodResources(spec) {
		res[string(k)] = q
	}
	return TaskGroup{Name: name, MinMember: n, MinResource: res,
		NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations, Affinity: spec.Affinity}
}
