package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// DefaultSubmitterResources are the requests and limits of the submitter
// container KubeRay makes when the RayJob gives none (the K8sJobMode
// Job's default container, the SidecarMode sidecar): KubeRay v1.6.2
// common/job.go:215-232, the Default*Submitter* values of labels.go. The RayJob
// reconciler builds the container with them and the batch schedulers
// count them in a gang.
func DefaultSubmitterResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(DefaultSubmitterCPURequest),
			corev1.ResourceMemory: resource.MustParse(DefaultSubmitterMemoryRequest),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(DefaultSubmitterCPULimit),
			corev1.ResourceMemory: resource.MustParse(DefaultSubmitterMemoryLimit),
		},
	}
}
