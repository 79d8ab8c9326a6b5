package raycluster

// The head Service and the headless worker Service of a RayCluster, as
// KubeRay v1.7.0 builds them
// (ray-operator/controllers/ray/common/service.go: BuildServiceForHeadPod,
// getServicePorts).

import (
	"maps"
	"slices"
	"strconv"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// serviceAppProtocol is the appProtocol KubeRay gives every port it puts on
// the head Service.
const serviceAppProtocol = "tcp"

// headContainerPorts are the head Ray container's ports by name, an
// unnamed one named "<port>-port" (as KubeRay names them).
func headContainerPorts(spec *rayv1.RayClusterSpec) map[string]int32 {
	ports := map[string]int32{}
	if cs := spec.HeadGroupSpec.Template.Spec.Containers; len(cs) > rayv1.RayContainerIndex {
		for _, p := range cs[rayv1.RayContainerIndex].Ports {
			name := p.Name
			if name == "" {
				name = strconv.Itoa(int(p.ContainerPort)) + "-port"
			}
			ports[name] = p.ContainerPort
		}
	}
	return ports
}

// headServicePorts returns Ray's ports on the head Service: every port of
// the head's Ray container (an unnamed one is "<port>-port"), else the
// defaults (client, dashboard, gcs-server, metrics, serve); metrics is
// always there. Sorted by name; appProtocol tcp; the API server fills
// targetPort and protocol.
func headServicePorts(rc *rayv1.RayCluster) []corev1.ServicePort {
	ports := headContainerPorts(&rc.Spec)
	if len(ports) == 0 {
		for _, n := range []string{rayv1.ClientPortName, rayv1.GcsServerPortName, rayv1.DashboardPortName, rayv1.MetricsPortName, rayv1.ServingPortName} {
			ports[n] = rayv1.DefaultPorts()[n]
		}
	}
	if _, ok := ports[rayv1.MetricsPortName]; !ok {
		ports[rayv1.MetricsPortName] = defaultMetricsPort
	}
	out := make([]corev1.ServicePort, 0, len(ports))
	for _, n := range slices.Sorted(maps.Keys(ports)) {
		proto := serviceAppProtocol
		out = append(out, corev1.ServicePort{Name: n, Port: ports[n], AppProtocol: &proto})
	}
	return out
}

// headServiceSelector is KubeRay's head Service selector: the head
// Service's five default labels, app.kubernetes.io/name taken from the head
// template when it sets one. The Service carries the same labels.
func headServiceSelector(rc *rayv1.RayCluster) map[string]string {
	sel := kit.ServiceLabels(rc.Name, rayv1.HeadNode)
	if v, ok := rc.Spec.HeadGroupSpec.Template.Labels[rayv1.KubernetesApplicationNameLabelKey]; ok {
		sel[rayv1.KubernetesApplicationNameLabelKey] = v
	}
	return sel
}

// BuildHeadService returns the head Service. With headGroupSpec.headService
// it is that Service (its metadata and spec kept) with KubeRay's selector
// and labels, headServiceAnnotations over its annotations, Ray's ports
// after the user's, and serviceType when it names no type; FQ_RAY_IP points
// at it. Without, a Service of serviceType with Ray's ports, headless for
// ClusterIP unless configured otherwise.
func BuildHeadService(rc *rayv1.RayCluster, cfg BuildConfig) *corev1.Service {
	sel := headServiceSelector(rc)
	ports := headServicePorts(rc)
	svcType := rc.Spec.HeadGroupSpec.ServiceType
	if hs := rc.Spec.HeadGroupSpec.HeadService; hs != nil {
		svc := hs.DeepCopy()
		svc.Spec.Selector = sel
		if svc.Annotations == nil {
			svc.Annotations = map[string]string{}
		}
		maps.Copy(svc.Annotations, rc.Spec.HeadServiceAnnotations)
		// KubeRay appends all of Ray's ports; one whose name or number the
		// user's ports already use is left out here, since the API server
		// refuses a Service with the same port twice.
		for _, p := range ports {
			if !slices.ContainsFunc(svc.Spec.Ports, func(u corev1.ServicePort) bool { return u.Name == p.Name || u.Port == p.Port }) {
				svc.Spec.Ports = append(svc.Spec.Ports, p)
			}
		}
		if svc.Labels == nil {
			svc.Labels = map[string]string{}
		}
		maps.Copy(svc.Labels, sel)
		if svc.Name == "" {
			svc.Name = kit.HeadServiceName(rc)
		}
		svc.Namespace = rc.Namespace
		if svc.Spec.Type == "" {
			svc.Spec.Type = svcType
		}
		if svc.Spec.Type == "" {
			svc.Spec.Type = corev1.ServiceTypeClusterIP // the API server's default, written out
		}
		svc.ResourceVersion, svc.UID = "", ""
		svc.OwnerReferences = []metav1.OwnerReference{kit.OwnerRef(rc)}
		return svc
	}
	if svcType == "" {
		svcType = corev1.ServiceTypeClusterIP
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            kit.HeadServiceName(rc),
			Namespace:       rc.Namespace,
			Labels:          maps.Clone(sel),
			Annotations:     maps.Clone(rc.Spec.HeadServiceAnnotations),
			OwnerReferences: []metav1.OwnerReference{kit.OwnerRef(rc)},
		},
		Spec: corev1.ServiceSpec{Selector: sel, Ports: ports, Type: svcType},
	}
	if svcType == corev1.ServiceTypeClusterIP && cfg.HeadlessHeadService {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		svc.Spec.PublishNotReadyAddresses = true
	}
	return svc
}

// buildHeadlessWorkerService returns the headless Service multi-host groups
// use for pod-to-pod discovery, as KubeRay v1.7.0 builds it
// (common/service.go BuildHeadlessServiceForRayCluster): labelled only
// ray.io/headless-worker-svc=<cluster>. It has no ray.io/cluster label, so
// the shared cache does not hold it: the reconciler reads it live
// (headlessServiceExists), which also finds one KubeRay made.
func buildHeadlessWorkerService(rc *rayv1.RayCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: childMeta(rc, kit.HeadlessWorkerServiceName(rc.Name), map[string]string{rayv1.RayClusterHeadlessServiceLabelKey: rc.Name}),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 kit.WorkerSelector(rc.Name),
			Type:                     corev1.ServiceTypeClusterIP,
			PublishNotReadyAddresses: true,
		},
	}
}

// needsHeadlessWorkerService reports whether any group is multi-host.
func needsHeadlessWorkerService(rc *rayv1.RayCluster) bool {
	for _, g := range rc.Spec.WorkerGroupSpecs {
		if g.NumOfHosts > 1 {
			return true
		}
	}
	return false
}
