package raycluster

import (
	"maps"
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestBuildHeadService(t *testing.T) {
	tcp := "tcp"
	sp := func(name string, port int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: port, AppProtocol: &tcp}
	}
	sel := map[string]string{
		rayv1.RayClusterLabelKey: "demo", rayv1.RayNodeTypeLabelKey: "head", rayv1.RayIDLabelKey: "demo-head",
		rayv1.KubernetesApplicationNameLabelKey: "kuberay", rayv1.KubernetesCreatedByLabelKey: "kuberay-operator",
	}
	owner := []metav1.OwnerReference{kit.OwnerRef(fixture.Cluster("demo"))}
	tests := []struct {
		name   string
		change func(rc *rayv1.RayCluster)
		want   *corev1.Service
	}{
		{"default: headless, Ray's default ports", func(rc *rayv1.RayCluster) {
			rc.Spec.HeadServiceAnnotations = map[string]string{"a": "b"}
		}, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "demo-head-svc", Namespace: "ns", Labels: sel, Annotations: map[string]string{"a": "b"}, OwnerReferences: owner},
			Spec: corev1.ServiceSpec{Selector: sel, Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", PublishNotReadyAddresses: true,
				Ports: []corev1.ServicePort{sp("client", 10001), sp("dashboard", 8265), sp("gcs-server", 6379), sp("metrics", 8080), sp("serve", 8000)}},
		}},
		{"container ports, metrics added, app name from the template", func(rc *rayv1.RayCluster) {
			rc.Spec.HeadGroupSpec.Template.Labels = map[string]string{rayv1.KubernetesApplicationNameLabelKey: "mine"}
			rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 8266}, {ContainerPort: 9999}}
			rc.Spec.HeadGroupSpec.ServiceType = corev1.ServiceTypeNodePort
		}, func() *corev1.Service {
			l := maps.Clone(sel)
			l[rayv1.KubernetesApplicationNameLabelKey] = "mine"
			return &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "demo-head-svc", Namespace: "ns", Labels: l, OwnerReferences: owner},
				Spec: corev1.ServiceSpec{Selector: l, Type: corev1.ServiceTypeNodePort,
					Ports: []corev1.ServicePort{sp("9999-port", 9999), sp("dashboard", 8266), sp("metrics", 8080)}},
			}
		}()},
		{"custom headService: Ray's ports after the user's, KubeRay's selector and labels", func(rc *rayv1.RayCluster) {
			rc.Spec.HeadServiceAnnotations = map[string]string{"a": "b"}
			rc.Spec.HeadGroupSpec.HeadService = &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "custom", Labels: map[string]string{"x": "y", rayv1.RayClusterLabelKey: "evil"}, Annotations: map[string]string{"a": "mine", "c": "d"}},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"any": "thing"},
					Ports: []corev1.ServicePort{{Name: "custom-port", Port: 12345, TargetPort: intstr.FromInt32(12345)}, {Name: "dash", Port: 8265}}},
			}
		}, func() *corev1.Service {
			l := maps.Clone(sel)
			l["x"] = "y"
			return &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "custom", Namespace: "ns", Labels: l, Annotations: map[string]string{"a": "b", "c": "d"}, OwnerReferences: owner},
				Spec: corev1.ServiceSpec{Selector: sel, Type: corev1.ServiceTypeLoadBalancer,
					Ports: []corev1.ServicePort{{Name: "custom-port", Port: 12345, TargetPort: intstr.FromInt32(12345)}, {Name: "dash", Port: 8265},
						sp("client", 10001), sp("gcs-server", 6379), sp("metrics", 8080), sp("serve", 8000)}},
			}
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := fixture.Cluster("demo")
			tt.change(rc)
			if d := cmp.Diff(tt.want, BuildHeadService(rc, DefaultBuildConfig())); d != "" {
				t.Errorf("Service (-want +got):\n%s", d)
			}
		})
	}
	// FQ_RAY_IP points at the custom Service.
	rc := fixture.Cluster("demo", fixture.Group("w", 1))
	rc.Spec.HeadGroupSpec.HeadService = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "custom"}}
	if e, _ := envValue(workerOf(rc, 0).Spec.Containers[0], envFQRayIP); e.Value != "custom.ns.svc.cluster.local" {
		t.Errorf("FQ_RAY_IP %q", e.Value)
	}
}
