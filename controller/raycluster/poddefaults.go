package raycluster

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The operator's pod defaults (KubeRay's Configuration: kit.PodDefaults),
// applied as KubeRay v1.7.0 applies them:
//   - sidecars are appended to the head's or a worker's containers after
//     every container KubeRay's pod template has added (the autoscaler, the
//     history collector), before BuildPod (raycluster_controller.go:1726-1728
//     and :1774-1776);
//   - default labels and annotations are set where the pod does not have
//     the key yet, so the template's, the group's and raydar's own win
//     (:1729-1748, :1777-1796);
//   - default envs are appended to the Ray container's env where it has no
//     variable of that name, before the env KubeRay generates
//     (common/pod.go:1214-1219, setContainerEnvVars).

// addPodDefaults adds d's sidecars, labels and annotations to pod.
func addPodDefaults(pod *corev1.Pod, head bool, d kit.PodDefaults) {
	sidecars := d.WorkerSidecarContainers
	if head {
		sidecars = d.HeadSidecarContainers
	}
	for _, c := range sidecars {
		pod.Spec.Containers = append(pod.Spec.Containers, *c.DeepCopy())
	}
	for k, v := range d.DefaultPodLabels {
		if _, ok := pod.Labels[k]; !ok {
			pod.Labels[k] = v
		}
	}
	for k, v := range d.DefaultPodAnnotations {
		if _, ok := pod.Annotations[k]; !ok {
			pod.Annotations[k] = v
		}
	}
}

// addDefaultEnvs appends d's default envs the Ray container does not set.
func addDefaultEnvs(ray *corev1.Container, d kit.PodDefaults) {
	for _, e := range d.DefaultContainerEnvs {
		if !envExists(ray.Env, e.Name) {
			ray.Env = append(ray.Env, *e.DeepCopy())
		}
	}
}

// SidecarConflicts refuses a cluster spec at p whose pod templates name a
// container as one of the operator's sidecars: the pod would hold two
// containers of one name, which the API server refuses pod by pod (KubeRay
// v1.7.0 builds it and fails each create). raydar refuses the object
// instead, naming the container, and builds no pod.
func SidecarConflicts(spec *rayv1.RayClusterSpec, p *field.Path, d kit.PodDefaults) field.ErrorList {
	var errs field.ErrorList
	check := func(tmpl *corev1.PodTemplateSpec, at *field.Path, sidecars []corev1.Container, which string) {
		// A pod's containers and init containers share one set of names.
		for _, l := range []struct {
			field string
			cs    []corev1.Container
		}{{"containers", tmpl.Spec.Containers}, {"initContainers", tmpl.Spec.InitContainers}} {
			for i, c := range l.cs {
				for _, s := range sidecars {
					if c.Name == s.Name {
						errs = append(errs, field.Invalid(at.Child("template", "spec", l.field).Index(i).Child("name"), c.Name,
							fmt.Sprintf("the operator's configuration adds a %s sidecar of this name (%s); rename this container", which, which+"SidecarContainers")))
					}
				}
			}
		}
	}
	check(&spec.HeadGroupSpec.Template, p.Child("headGroupSpec"), d.HeadSidecarContainers, "head")
	for i := range spec.WorkerGroupSpecs {
		check(&spec.WorkerGroupSpecs[i].Template, p.Child("workerGroupSpecs").Index(i), d.WorkerSidecarContainers, "worker")
	}
	return errs
}
