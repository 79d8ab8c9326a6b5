package kit

import (
	"sort"
	"strings"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Truncate shortens s to n bytes, "..." marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// IsRunningAndReady reports whether p is Running, not being deleted, and
// Ready.
func IsRunningAndReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// SortedKeys returns m's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// InvalidMessage is errs as one message.
func InvalidMessage(errs field.ErrorList) string {
	return errs.ToAggregate().Error()
}

// KuberayVersionValue is what raydar writes into ray.io/kuberay-version on
// the pods it creates. KubeRay writes its own version there; a value that is
// not a KubeRay version makes a KubeRay operator that takes over re-stamp the
// pods' Recreate hash instead of recreating every pod for a hash it computes
// differently.
const KuberayVersionValue = "raydar"

// ContainerPort is the port named name of spec's Ray container, and
// whether it declares one.
func ContainerPort(spec corev1.PodSpec, name string) (int32, bool) {
	if len(spec.Containers) == 0 {
		return 0, false
	}
	return ContainerPortOf(&spec.Containers[rayv1.RayContainerIndex], name)
}

// ContainerPortOf is the port named name of c, and whether c declares one.
func ContainerPortOf(c *corev1.Container, name string) (int32, bool) {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort, true
		}
	}
	return 0, false
}

// DashboardContainerPort is the head container's "dashboard" port, 8265
// when not declared.
func DashboardContainerPort(spec *rayv1.RayClusterSpec) int32 {
	if cs := spec.HeadGroupSpec.Template.Spec.Containers; len(cs) > rayv1.RayContainerIndex {
		for _, p := range cs[rayv1.RayContainerIndex].Ports {
			if p.Name == rayv1.DashboardPortName && p.ContainerPort > 0 {
				return p.ContainerPort
			}
		}
	}
	return rayv1.DefaultDashboardPort
}

// FinalizersChanged passes the updates that change an object's finalizers.
func FinalizersChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e crevent.UpdateEvent) bool {
		return strings.Join(e.ObjectOld.GetFinalizers(), ",") != strings.Join(e.ObjectNew.GetFinalizers(), ",")
	}}
}

// SpecOrMetaChanged passes the updates of a RayJob or RayService that its
// pass reads: its generation, annotations, labels or finalizers changed, or
// its deletion began.
func SpecOrMetaChanged() predicate.Predicate {
	return predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{},
		predicate.LabelChangedPredicate{}, FinalizersChanged(), predicate.Funcs{UpdateFunc: func(e crevent.UpdateEvent) bool {
			return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
		}})
}
