package raycluster

// The serve Service of a RayCluster annotated ray.io/enable-serve-service:
// "true", as KubeRay v1.7.0 makes it (raycluster_controller.go
// reconcileServeService, common/service.go BuildServeServiceForRayCluster):
// "<cluster>-serve-svc", labelled ray.io/originated-from-cr-name=<cluster>,
// ray.io/originated-from-crd=RayCluster and ray.io/serve=<cluster>-serve,
// selecting every pod of the cluster (ray.io/cluster), of the head group's
// serviceType, with the head container's ports named "serve" or "serve-*"
// (the defaults, serve 8000, when the container declares no port), and a
// controller reference. Created when missing, never updated. A head that
// declares ports but none for Serve cannot have it: KubeRay then fails every
// pass before creating pods; raydar refuses the spec (unsupported.go) with
// the same effect, said in the status.

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// wantsServeService: the cluster is annotated ray.io/enable-serve-service: "true".
func wantsServeService(annotations map[string]string) bool {
	return annotations[rayv1.EnableServeServiceKey] == rayv1.EnableServeServiceTrue
}

// ServePorts are the head container's Serve ports ("serve", "serve-*"),
// sorted by name; the default serve port when the container declares none.
func ServePorts(spec *rayv1.RayClusterSpec) []corev1.ServicePort {
	ports := headContainerPorts(spec)
	if len(ports) == 0 {
		ports[rayv1.ServingPortName] = rayv1.DefaultServingPort
	}
	var out []corev1.ServicePort
	for _, n := range slices.Sorted(maps.Keys(ports)) {
		if n == rayv1.ServingPortName || strings.HasPrefix(n, rayv1.ServingPortName+"-") {
			out = append(out, corev1.ServicePort{Name: n, Port: ports[n]})
		}
	}
	return out
}

// buildClusterServeService is the serve Service of rc.
func buildClusterServeService(rc *rayv1.RayCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      kit.RayClusterServeServiceName(rc.Name),
			Namespace: rc.Namespace,
			Labels: map[string]string{
				rayv1.RayOriginatedFromCRNameLabelKey:  rc.Name,
				rayv1.RayOriginatedFromCRDLabelKey:     rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayCluster),
				rayv1.RayClusterServingServiceLabelKey: rc.Name + "-serve",
			},
			OwnerReferences: []metav1.OwnerReference{kit.OwnerRef(rc)},
		},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{rayv1.RayClusterLabelKey: rc.Name},
			Ports:    ServePorts(&rc.Spec),
			Type:     rc.Spec.HeadGroupSpec.ServiceType,
		},
	}
}

// decideServeService plans the serve Service when it is wanted and was
// not observed.
func decideServeService(o *observed, p *plan) {
	if wantsServeService(o.Cluster.Annotations) && !o.ServeServiceReady {
		p.CreateServices = append(p.CreateServices, buildClusterServeService(o.Cluster))
	}
}

// serveServiceExists reads the serve Service live, once per cluster per
// process: it carries no ray.io/cluster label, so the cache does not hold it.
func (r *Reconciler) serveServiceExists(ctx context.Context, rc *rayv1.RayCluster) (bool, error) {
	if !wantsServeService(rc.Annotations) || rc.DeletionTimestamp != nil {
		return false, nil
	}
	return r.existsOnce(ctx, rc, "Service", kit.RayClusterServeServiceName(rc.Name))
}
