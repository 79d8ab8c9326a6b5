// Package kaischeduler is NVIDIA's KAI Scheduler (`--batch-scheduler
// kai-scheduler`) as KubeRay v1.6.2 does it
// (ray-operator/controllers/ray/batchscheduler/kai-scheduler/kai_scheduler.go,
// cited as kai_scheduler.go:line): no gang object of KubeRay's making
// (KAI's own PodGrouper makes its PodGroups from the pods, :3-8), only
// schedulerName kai-scheduler on every pod and the parent's
// kai.scheduler/queue label copied onto it. No CRD is needed: AddToScheme
// registers nothing (:82-83). Pure, as the other schedulers.
package kaischeduler

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Name is the --batch-scheduler value and the pods' schedulerName
// (kai_scheduler.go:34-36, :55).
const Name = "kai-scheduler"

// QueueLabelKey is the queue label read from the parent and written on
// the child (kai_scheduler.go:27, :57-70).
const QueueLabelKey = rayv1.KaiQueueLabelKey

// ErrK8sJobMode is the refusal of a K8sJobMode RayJob
// (kai_scheduler.go:38-50): its submitter pod is created once the cluster
// is ready, which KAI cannot gang with the cluster.
var ErrK8sJobMode = errors.New("KAI-Scheduler does not support RayJob with K8sJobMode: the submitter pod is created after RayCluster is ready, preventing proper gang scheduling")

// Scheduler is KAI.
type Scheduler struct{}

// Name is "kai-scheduler".
func (Scheduler) Name() string { return Name }

// AddToScheme registers nothing: KubeRay makes no KAI object.
func (Scheduler) AddToScheme(*runtime.Scheme) error { return nil }

// GroupKind is empty: no gang object.
func (Scheduler) GroupKind() schema.GroupKind { return schema.GroupKind{} }

// NewGroup is nil: no gang object.
func (Scheduler) NewGroup() client.Object { return nil }

// ClusterGroup is nil: a RayCluster passes (kai_scheduler.go:38-51).
func (Scheduler) ClusterGroup(*rayv1.RayCluster) (client.Object, error) { return nil, nil }

// JobGroup refuses a K8sJobMode RayJob, on every pass of its
// Initializing (kai_scheduler.go:44-48; rayjob_controller.go:200-208
// returns the error and the RayJob goes no further); other modes pass.
// KubeRay reads spec.submissionMode as written, which the CRD defaults
// to K8sJobMode: EffectiveSubmissionMode is the same.
func (Scheduler) JobGroup(rj *rayv1.RayJob) (client.Object, error) {
	if rj.Spec.EffectiveSubmissionMode() == rayv1.K8sJobMode {
		return nil, ErrK8sJobMode
	}
	return nil, nil
}

// FinishedJobGroup returns nothing: there is nothing to clean up (kai_scheduler.go:73-76).
func (Scheduler) FinishedJobGroup(*rayv1.RayJob, *rayv1.RayCluster) (client.Object, bool, error) {
	return nil, false, nil
}

// UpdateGroup returns nil: there is no gang object.
func (Scheduler) UpdateGroup(client.Object, client.Object) client.Object { return nil }

// Decorate is AddMetadataToChildResource (kai_scheduler.go:53-71):
// schedulerName kai-scheduler on a pod or pod template, and parent's
// queue label when it has a non-empty one (without it KAI leaves the pod
// Pending; KubeRay only logs that, raydar warns: rayapi/why). task is
// not read.
func (Scheduler) Decorate(parent, child metav1.Object, _ string) {
	switch c := child.(type) {
	case *corev1.Pod:
		c.Spec.SchedulerName = Name
	case *corev1.PodTemplateSpec:
		c.Spec.SchedulerName = Name
	}
	q := parent.GetLabels()[QueueLabelKey]
	if q == "" {
		return
	}
	labels := child.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[QueueLabelKey] = q
	child.SetLabels(labels)
}
