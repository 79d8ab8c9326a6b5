package rayjob

// Metadata of a RayJob's children as KubeRay v1.7.0 writes it
// (rayjob_controller.go constructRayClusterForRayJob, getSubmitterTemplate,
// createNewK8sJob; common/job.go BuildHeadServiceForRayJob), and the
// RayJob's own head Service. Pure functions.

import (
	"maps"
	"strings"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// clusterLabels are the labels of the RayCluster a RayJob creates:
// every label of the RayJob, then the originated-from labels and the
// submission mode, which cannot be overridden.
func clusterLabels(rj *rayv1.RayJob) map[string]string {
	l := make(map[string]string, len(rj.Labels)+3)
	maps.Copy(l, rj.Labels)
	l[rayv1.RayOriginatedFromCRNameLabelKey] = rj.Name
	l[rayv1.RayOriginatedFromCRDLabelKey] = rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob)
	l[rayv1.RayJobSubmissionModeLabelKey] = string(rj.Spec.EffectiveSubmissionMode())
	return l
}

// protocolAnnotation reports whether an annotation key is part of
// raydar's RayJob protocol (a stop request and its record): it concerns
// the RayJob alone and is not handed on to the cluster.
func protocolAnnotation(k string) bool {
	return k == rayv1.StopRequestedAnnotationKey || k == rayv1.JobStopRecordAnnotationKey
}

// clusterAnnotations are the annotations of the RayCluster a RayJob
// creates: every annotation of the RayJob (kubectl's last-applied
// configuration included, as KubeRay copies it) except raydar's stop
// protocol, and in SidecarMode the one that keeps a provisioned head from
// being re-created (a new head would run the job again). nil when empty.
func clusterAnnotations(rj *rayv1.RayJob) map[string]string {
	var a map[string]string
	set := func(k, v string) {
		if a == nil {
			a = make(map[string]string, len(rj.Annotations)+1)
		}
		a[k] = v
	}
	for k, v := range rj.Annotations {
		if !protocolAnnotation(k) {
			set(k, v)
		}
	}
	if rj.Spec.EffectiveSubmissionMode() == rayv1.SidecarMode {
		set(rayv1.DisableProvisionedHeadRestartAnnotationKey, "true")
	}
	return a
}

// submitterLabels are the labels of the K8sJobMode submitter Job and
// the ones its pod template gets (overriding the template's own): the
// originated-from labels and created-by, nothing of the RayJob's labels.
func submitterLabels(rj *rayv1.RayJob) map[string]string {
	return map[string]string{
		rayv1.RayOriginatedFromCRNameLabelKey: rj.Name,
		rayv1.RayOriginatedFromCRDLabelKey:    rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob),
		rayv1.KubernetesCreatedByLabelKey:     rayv1.ComponentName,
	}
}

// HeadServiceName is the name of a RayJob's own head Service,
// "<rayjob>-head-svc", which follows the head of the RayJob's cluster.
func HeadServiceName(rj *rayv1.RayJob) string {
	return rj.Name + "-" + string(rayv1.HeadNode) + "-svc"
}

// buildHeadService is the RayJob's head Service: the cluster's head
// Service (spec, selector, ports, the custom headService's annotations)
// under the name "<rayjob>-head-svc", with the RayJob's labels only and a
// controller reference to the RayJob. KubeRay builds it from the cluster
// without spec.headServiceAnnotations, so those are left out.
func buildHeadService(rj *rayv1.RayJob, rc *rayv1.RayCluster, cfg raycluster.BuildConfig) *corev1.Service {
	svc := raycluster.BuildHeadService(rc, cfg)
	svc.Name = HeadServiceName(rj)
	svc.Namespace = rj.Namespace
	svc.Labels = map[string]string{
		rayv1.RayOriginatedFromCRNameLabelKey: rj.Name,
		rayv1.RayOriginatedFromCRDLabelKey:    rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob),
		rayv1.RayNodeTypeLabelKey:             string(rayv1.HeadNode),
		rayv1.RayIDLabelKey:                   kit.KubeRayCheckLabel(rj.Name + "-" + strings.ToLower(string(rayv1.HeadNode))),
	}
	svc.Annotations = nil
	if hs := rc.Spec.HeadGroupSpec.HeadService; hs != nil && len(hs.Annotations) > 0 {
		svc.Annotations = maps.Clone(hs.Annotations)
	}
	svc.OwnerReferences = []metav1.OwnerReference{kit.RayJobOwnerRef(rj)}
	return svc
}
