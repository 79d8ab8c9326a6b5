package kit

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// injectedContainers are the containers and init containers raydar (as
// KubeRay) may add to a Ray pod itself: a configured sidecar of one of
// these names would make a pod the API server refuses (a pod's container
// and init container names are one set).
var injectedContainers = []string{rayv1.AutoscalerContainerName, rayv1.CollectorContainerName, InitContainerName, WaitTLSContainerName}

// Validate refuses pod defaults no pod could carry, at start, naming the
// item: a sidecar without a valid name or an image, two sidecars of one
// name, a sidecar named as a container raydar injects, a default env
// without a valid name, or a label or annotation Kubernetes refuses.
// KubeRay v1.7.0 checks none of these: its pods are refused one by one by
// the API server instead.
func (d PodDefaults) Validate() error {
	for _, side := range []struct {
		field string
		cs    []corev1.Container
	}{{"headSidecarContainers", d.HeadSidecarContainers}, {"workerSidecarContainers", d.WorkerSidecarContainers}} {
		seen := map[string]bool{}
		for i, c := range side.cs {
			at := fmt.Sprintf("%s[%d]", side.field, i)
			if errs := validation.IsDNS1123Label(c.Name); len(errs) > 0 {
				return fmt.Errorf("%s: name %q: %s", at, c.Name, strings.Join(errs, "; "))
			}
			if c.Image == "" {
				return fmt.Errorf("%s (%s): no image", at, c.Name)
			}
			if seen[c.Name] {
				return fmt.Errorf("%s: a second sidecar named %q", at, c.Name)
			}
			seen[c.Name] = true
			for _, n := range injectedContainers {
				if c.Name == n {
					return fmt.Errorf("%s: name %q is the container raydar adds itself", at, c.Name)
				}
			}
		}
	}
	for i, e := range d.DefaultContainerEnvs {
		if errs := validation.IsEnvVarName(e.Name); len(errs) > 0 {
			return fmt.Errorf("defaultContainerEnvs[%d]: name %q: %s", i, e.Name, strings.Join(errs, "; "))
		}
	}
	for k, v := range d.DefaultPodLabels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("defaultPodLabels: key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("defaultPodLabels[%s]: value %q: %s", k, v, strings.Join(errs, "; "))
		}
	}
	for k := range d.DefaultPodAnnotations {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("defaultPodAnnotations: key %q: %s", k, strings.Join(errs, "; "))
		}
	}
	return nil
}
