// Package kuberneteswas is Kubernetes' own gang scheduling, Workload-Aware
// Scheduling (KubeRay's KubernetesWAS feature gate), as KubeRay v1.7.0
// does it (ray-operator/controllers/ray/batchscheduler/kubernetes-was/
// v1alpha2/kubernetes_was_v1alpha2.go, cited as was.go:line): for a
// RayCluster labelled ray.io/gang-scheduling-enabled=true without
// autoscaling, a scheduling.k8s.io/v1alpha2 Workload named after it with
// one PodGroupTemplate "cluster", and a PodGroup <name>-cluster made from
// that template, both gang-scheduling the head and every desired worker
// (minCount); each pod is placed by the default scheduler and names the
// PodGroup in spec.schedulingGroup. Both objects are immutable: a stale
// one is deleted (the PodGroup first, its protection finalizer removed)
// and made again on a later pass. A cluster that stops asking (label
// removed, autoscaling turned on) has its objects deleted. RayJobs get
// nothing of their own.
//
// The API is served by Kubernetes 1.36 only (GenericWorkload,
// runtime-config scheduling.k8s.io/v1alpha2; removed in 1.37), so the
// module raydar builds with (k8s.io/api v0.37) has no types for it: the
// objects travel unstructured, built from the small structs below, which
// carry exactly the fields KubeRay sets and reads under their JSON names.
// Pure.
package kuberneteswas

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Name is KubeRay's plugin name (scheduler.go:16); the gate, not
// --batch-scheduler, selects it.
const Name = rayv1.KubernetesWASScheduler

// GroupVersion is the API the objects are of.
var GroupVersion = schema.GroupVersion{Group: "scheduling.k8s.io", Version: "v1alpha2"}

// The kinds of the gang objects, in the order they are made.
var (
	WorkloadKind = GroupVersion.WithKind("Workload")
	PodGroupKind = GroupVersion.WithKind("PodGroup")
)

// ProtectionFinalizer is what Kubernetes keeps on a PodGroup while pods
// name it; KubeRay removes it before deleting its own (was.go:30,
// :207-214).
const ProtectionFinalizer = "scheduling.k8s.io/podgroup-protection"

// templateName is the one PodGroupTemplate's name (was.go:31-33).
const templateName = "cluster"

// Skip reasons (was.go:36-39).
const (
	SkipNotLabelled = "gang scheduling not enabled on RayCluster"
	SkipAutoscaling = "autoscaling is not yet supported"
)

// Scheduler is Kubernetes WAS. It makes no single gang object
// (GroupKind is empty); its Workload and PodGroup go through
// batchscheduler.Replaced.
type Scheduler struct{}

// Name is "kubernetes-was-v1alpha2".
func (Scheduler) Name() string { return Name }

// AddToScheme registers nothing: the objects are unstructured.
func (Scheduler) AddToScheme(*runtime.Scheme) error { return nil }

// GroupKind is empty: no single gang object.
func (Scheduler) GroupKind() schema.GroupKind { return schema.GroupKind{} }

// NewGroup is nil (GroupKind is empty).
func (Scheduler) NewGroup() client.Object { return nil }

// ClusterGroup is nil: Steps makes the objects.
func (Scheduler) ClusterGroup(*rayv1.RayCluster) (client.Object, error) { return nil, nil }

// JobGroup is nil: a RayJob gets nothing (was.go:53-57 returns for
// anything but a RayCluster); its RayCluster, labelled, gets its own.
func (Scheduler) JobGroup(*rayv1.RayJob) (client.Object, error) { return nil, nil }

// FinishedJobGroup returns nothing: there is nothing to write (was.go:79-85).
func (Scheduler) FinishedJobGroup(*rayv1.RayJob, *rayv1.RayCluster) (client.Object, bool, error) {
	return nil, false, nil
}

// UpdateGroup is nil: nothing is updated in place.
func (Scheduler) UpdateGroup(client.Object, client.Object) client.Object { return nil }

// Decorate is AddMetadataToChildResource (was.go:67-77): a pod or pod
// template of a RayCluster that gang-schedules gets the default scheduler
// and its PodGroup as spec.schedulingGroup; anything else nothing.
func (Scheduler) Decorate(parent, child metav1.Object, _ string) {
	rc, ok := parent.(*rayv1.RayCluster)
	if !ok || SkipReason(rc) != "" {
		return
	}
	group := &corev1.PodSchedulingGroup{PodGroupName: ptr.To(PodGroupName(rc.Name))}
	switch c := child.(type) {
	case *corev1.Pod:
		c.Spec.SchedulerName = corev1.DefaultSchedulerName
		c.Spec.SchedulingGroup = group
	case *corev1.PodTemplateSpec:
		c.Spec.SchedulerName = corev1.DefaultSchedulerName
		c.Spec.SchedulingGroup = group
	}
}

// SkipReason is why rc is not gang-scheduled, "" when it is
// (was.go:354-365): the label must say true (any case), and autoscaling
// must be off.
func SkipReason(rc *rayv1.RayCluster) string {
	if !strings.EqualFold(rc.Labels[rayv1.RayGangSchedulingEnabled], "true") {
		return SkipNotLabelled
	}
	if rc.Spec.IsAutoscalingEnabled() {
		return SkipAutoscaling
	}
	return ""
}

// PodGroupName is the PodGroup of the cluster named name (was.go:380).
func PodGroupName(name string) string { return name + "-" + templateName }

// Kinds are the gang objects' kinds, Workload first.
func (Scheduler) Kinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{WorkloadKind, PodGroupKind}
}

// Names are rc's Workload and PodGroup names.
func (Scheduler) Names(rc *rayv1.RayCluster) []string {
	return []string{rc.Name, PodGroupName(rc.Name)}
}

// minCount is the gang: the head and every desired worker
// (was.go:237-242, CalculateDesiredReplicas: multi-host groups count
// replicas × hosts, suspended groups nothing).
func minCount(rc *rayv1.RayCluster) int32 { return 1 + rc.Spec.DesiredWorkerPods() }

// The fields KubeRay sets and reads, under their JSON names
// (k8s.io/api v0.36 scheduling/v1alpha2 types.go).
type (
	workloadSpec struct {
		ControllerRef     *typedLocalObjectReference `json:"controllerRef,omitempty"`
		PodGroupTemplates []podGroupTemplate         `json:"podGroupTemplates"`
	}
	typedLocalObjectReference struct {
		APIGroup string `json:"apiGroup,omitempty"`
		Kind     string `json:"kind"`
		Name     string `json:"name"`
	}
	podGroupTemplate struct {
		Name             string         `json:"name"`
		SchedulingPolicy schedulingRule `json:"schedulingPolicy"`
	}
	schedulingRule struct {
		Gang *gangPolicy `json:"gang,omitempty"`
	}
	gangPolicy struct {
		MinCount int32 `json:"minCount"`
	}
	podGroupSpec struct {
		PodGroupTemplateRef *podGroupTemplateRef `json:"podGroupTemplateRef,omitempty"`
		SchedulingPolicy    schedulingRule       `json:"schedulingPolicy"`
	}
	podGroupTemplateRef struct {
		Workload *workloadTemplateRef `json:"workload,omitempty"`
	}
	workloadTemplateRef struct {
		WorkloadName         string `json:"workloadName"`
		PodGroupTemplateName string `json:"podGroupTemplateName"`
	}
)

// Desired are rc's Workload and PodGroup (was.go:244-296): labelled with
// the cluster's name, controlled by it, the Workload's controllerRef
// naming it too.
func Desired(rc *rayv1.RayCluster) (workload, podGroup *unstructured.Unstructured, err error) {
	gang := schedulingRule{Gang: &gangPolicy{MinCount: minCount(rc)}}
	workload, err = object(rc, WorkloadKind, rc.Name, workloadSpec{
		ControllerRef:     &typedLocalObjectReference{APIGroup: rayv1.GroupVersion.Group, Kind: rayv1.KindRayCluster, Name: rc.Name},
		PodGroupTemplates: []podGroupTemplate{{Name: templateName, SchedulingPolicy: gang}},
	})
	if err != nil {
		return nil, nil, err
	}
	podGroup, err = object(rc, PodGroupKind, PodGroupName(rc.Name), podGroupSpec{
		PodGroupTemplateRef: &podGroupTemplateRef{Workload: &workloadTemplateRef{WorkloadName: rc.Name, PodGroupTemplateName: templateName}},
		SchedulingPolicy:    gang,
	})
	return workload, podGroup, err
}

// object is an unstructured gang object of rc.
func object(rc *rayv1.RayCluster, gvk schema.GroupVersionKind, name string, spec any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&struct {
		Spec any `json:"spec"`
	}{spec})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", gvk.Kind, name, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(rc.Namespace)
	u.SetName(name)
	u.SetLabels(map[string]string{rayv1.RayClusterLabelKey: rc.Name})
	u.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(rc, rayv1.GroupVersion.WithKind(rayv1.KindRayCluster))})
	return u, nil
}

// Steps are one pass's writes to a cluster's gang objects, done in this
// order: Unprotect (an update without ProtectionFinalizer), Delete (with
// the object's UID as precondition), Create. Hold says why the cluster's
// pods wait for a later pass ("" when they need not); Err is a name
// collision (a same-named object the cluster does not control), which
// also holds them.
type Steps struct {
	Unprotect, Delete, Create []*unstructured.Unstructured
	Hold                      string
	Err                       error
}

// Held reports whether the pods wait.
func (s Steps) Held() bool { return s.Hold != "" || s.Err != nil }

// Plan is what brings rc's Workload and PodGroup (nil: absent) to what rc
// needs, as DoBatchSchedulingOnSubmission does on each pass before the
// pods (was.go:53-65): made when absent, Workload first; a stale one
// replaced (deleted now, made on a later pass), the PodGroup before the
// Workload it refers to; both deleted when rc no longer gang-schedules.
// Where KubeRay's pass returns an error, the pods are held.
func Plan(rc *rayv1.RayCluster, workload, podGroup *unstructured.Unstructured) (s Steps) {
	if reason := SkipReason(rc); reason != "" {
		return cleanup(rc, workload, podGroup)
	}
	wantWL, wantPG, err := Desired(rc)
	if err != nil {
		s.Err = err
		return s
	}
	// syncWorkload (was.go:117-163).
	switch {
	case workload == nil:
		s.Create = append(s.Create, wantWL)
	case !metav1.IsControlledBy(workload, rc):
		s.Err = collision(workload)
		return s
	case workload.GetDeletionTimestamp() != nil:
		s.Hold = fmt.Sprintf("Workload %s is being deleted", workload.GetName())
		return s
	case workloadStale(workload, wantWL):
		if podGroup != nil && metav1.IsControlledBy(podGroup, rc) {
			s.remove(podGroup)
			s.Hold = fmt.Sprintf("PodGroup %s deleted before replacing the stale Workload %s", podGroup.GetName(), workload.GetName())
			return s
		}
		s.Delete = append(s.Delete, workload)
		s.Hold = fmt.Sprintf("stale Workload %s deleted, to be made again", workload.GetName())
		return s
	}
	// syncPodGroup (was.go:165-199).
	switch {
	case podGroup == nil:
		s.Create = append(s.Create, wantPG)
	case !metav1.IsControlledBy(podGroup, rc):
		s.Err = collision(podGroup)
	case podGroup.GetDeletionTimestamp() != nil:
		s.remove(podGroup)
		s.Hold = fmt.Sprintf("PodGroup %s is being deleted", podGroup.GetName())
	case gangMinCount(podGroup, "spec", "schedulingPolicy") != int64(minCount(rc)):
		s.remove(podGroup)
		s.Hold = fmt.Sprintf("stale PodGroup %s deleted (minCount now %d), to be made again", podGroup.GetName(), minCount(rc))
	}
	return s
}

// cleanup deletes rc's own objects, the PodGroup first, holding the pods
// until it is gone (deleteSchedulingResources, was.go:298-339).
func cleanup(rc *rayv1.RayCluster, workload, podGroup *unstructured.Unstructured) (s Steps) {
	if podGroup != nil && metav1.IsControlledBy(podGroup, rc) {
		s.remove(podGroup)
		s.Hold = fmt.Sprintf("waiting for PodGroup %s to finish deleting (%s)", podGroup.GetName(), SkipReason(rc))
		return s
	}
	if workload == nil || !metav1.IsControlledBy(workload, rc) {
		return s
	}
	if workload.GetDeletionTimestamp() != nil {
		s.Hold = fmt.Sprintf("Workload %s is being deleted", workload.GetName())
		return s
	}
	s.Delete = append(s.Delete, workload)
	return s
}

// remove deletes a PodGroup, its protection finalizer removed first
// (deletePodGroup, was.go:201-229); one already being deleted only loses
// the finalizer.
func (s *Steps) remove(podGroup *unstructured.Unstructured) {
	fins := podGroup.GetFinalizers()
	if i := slices.Index(fins, ProtectionFinalizer); i >= 0 {
		u := podGroup.DeepCopy()
		u.SetFinalizers(slices.Delete(slices.Clone(fins), i, i+1))
		s.Unprotect = append(s.Unprotect, u)
	}
	if podGroup.GetDeletionTimestamp() == nil {
		s.Delete = append(s.Delete, podGroup)
	}
}

// collision is the error of a same-named object rc does not control
// (was.go:133-138, :177-182).
func collision(u *unstructured.Unstructured) error {
	return fmt.Errorf("%s %s/%s already exists and is not owned by this RayCluster; rename it or use a different RayCluster name to avoid the collision",
		u.GetKind(), u.GetNamespace(), u.GetName())
}

// workloadStale: not exactly one template, or another name or gang size
// (isWorkloadStale, was.go:367-377).
func workloadStale(existing, desired *unstructured.Unstructured) bool {
	got, _, _ := unstructured.NestedSlice(existing.Object, "spec", "podGroupTemplates")
	want, _, _ := unstructured.NestedSlice(desired.Object, "spec", "podGroupTemplates")
	if len(got) != 1 {
		return true
	}
	g, _ := got[0].(map[string]any)
	w, _ := want[0].(map[string]any)
	return g["name"] != w["name"] || gangMinCount(g, "schedulingPolicy") != gangMinCount(w, "schedulingPolicy")
}

// gangMinCount is the gang minCount under path in obj (an unstructured
// object or one of its maps), -1 without a gang policy.
func gangMinCount(obj any, path ...string) int64 {
	var m map[string]any
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		m = o.Object
	case map[string]any:
		m = o
	}
	v, found, err := unstructured.NestedFieldNoCopy(m, append(path, "gang", "minCount")...)
	if !found || err != nil {
		return -1
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return -1
}
