package raycluster

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func ingressCluster(name string) *rayv1.RayCluster {
	rc := fixture.Cluster(name)
	rc.Spec.HeadGroupSpec.EnableIngress = fixture.Ptr(true)
	return rc
}

func TestBuildHeadIngress(t *testing.T) {
	exact := rayv1.IngressPathTypeExact
	for _, tc := range []struct {
		name  string
		mod   func(*rayv1.RayCluster)
		check func(*testing.T, *networkingv1.Ingress)
	}{
		{name: "defaults", mod: func(*rayv1.RayCluster) {}, check: func(t *testing.T, ing *networkingv1.Ingress) {
			if ing.Name != "c-head-ingress" || ing.Namespace != "ns" {
				t.Errorf("name %s/%s", ing.Namespace, ing.Name)
			}
			want := map[string]string{"ray.io/cluster": "c", "ray.io/identifier": "c-head", "app.kubernetes.io/name": "kuberay",
				"app.kubernetes.io/created-by": "kuberay-operator"}
			if !reflect.DeepEqual(ing.Labels, want) {
				t.Errorf("labels %v", ing.Labels)
			}
			if len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].Host != "" || ing.Spec.IngressClassName != nil || ing.Spec.TLS != nil {
				t.Fatalf("spec %+v", ing.Spec)
			}
			path := ing.Spec.Rules[0].HTTP.Paths[0]
			if path.Path != "/" || *path.PathType != networkingv1.PathTypePrefix || path.Backend.Service.Name != "c-head-svc" ||
				path.Backend.Service.Port.Number != 8265 {
				t.Errorf("path %+v backend %+v", path, path.Backend.Service)
			}
			if len(ing.OwnerReferences) != 1 || ing.OwnerReferences[0].UID != "c-uid" {
				t.Errorf("owners %+v", ing.OwnerReferences)
			}
		}},
		{name: "options, class annotation, dashboard port, custom head Service", mod: func(rc *rayv1.RayCluster) {
			rc.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx", "nginx.ingress.kubernetes.io/rewrite-target": "/$1"}
			rc.Spec.HeadGroupSpec.IngressOptions = &rayv1.IngressOptions{Host: fixture.Ptr("ray.example.com"), Path: fixture.Ptr("/ray"), PathType: &exact,
				TLS: []networkingv1.IngressTLS{{Hosts: []string{"ray.example.com"}, SecretName: "tls"}}}
			rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 9265}}
			rc.Spec.HeadGroupSpec.HeadService = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "my-head"}}
		}, check: func(t *testing.T, ing *networkingv1.Ingress) {
			if !reflect.DeepEqual(ing.Annotations, map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/$1"}) {
				t.Errorf("annotations %v (the class annotation must become ingressClassName)", ing.Annotations)
			}
			if ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "nginx" {
				t.Errorf("class %v", ing.Spec.IngressClassName)
			}
			r := ing.Spec.Rules[0]
			path := r.HTTP.Paths[0]
			if r.Host != "ray.example.com" || path.Path != "/ray" || *path.PathType != networkingv1.PathTypeExact ||
				path.Backend.Service.Name != "my-head" || path.Backend.Service.Port.Number != 9265 {
				t.Errorf("rule %+v path %+v backend %+v", r, path, path.Backend.Service)
			}
			if len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].SecretName != "tls" {
				t.Errorf("tls %+v", ing.Spec.TLS)
			}
		}},
		{name: "a long cluster name keeps the last 50 characters", mod: func(rc *rayv1.RayCluster) {
			rc.Name = "a" + strings.Repeat("b", 52)
		}, check: func(t *testing.T, ing *networkingv1.Ingress) {
			full := "a" + strings.Repeat("b", 52) + "-head-ingress"
			if ing.Name != full[len(full)-50:] {
				t.Errorf("name %q", ing.Name)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := ingressCluster("c")
			tc.mod(rc)
			tc.check(t, buildHeadIngress(rc))
		})
	}
}

func TestDecideIngress(t *testing.T) {
	rc := ingressCluster("c")
	desired := buildHeadIngress(rc)
	other := desired.DeepCopy()
	other.OwnerReferences = nil
	drifted := desired.DeepCopy()
	drifted.Labels["extra"] = "x"
	drifted.Spec.Rules[0].Host = "elsewhere"
	defaulted := desired.DeepCopy()
	defaulted.Spec.IngressClassName = fixture.Ptr("cluster-default")
	for _, tc := range []struct {
		name     string
		enabled  bool
		existing *networkingv1.Ingress
		create   bool
		update   bool
		warning  bool
	}{
		{name: "disabled: nothing", existing: nil},
		{name: "missing: created", enabled: true, create: true},
		{name: "as wanted: nothing", enabled: true, existing: desired},
		{name: "class set by the API server: kept", enabled: true, existing: defaulted},
		{name: "drifted: updated", enabled: true, existing: drifted, update: true},
		{name: "someone else's: left alone, with a Warning", enabled: true, existing: other, warning: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := ingressCluster("c")
			rc.Spec.HeadGroupSpec.EnableIngress = fixture.Ptr(tc.enabled)
			o := obsOf(rc, headSvc(rc))
			o.Ingress = tc.existing
			p := decide(o)
			if (p.CreateIngress != nil) != tc.create || (p.UpdateIngress != nil) != tc.update {
				t.Fatalf("create %v update %v", p.CreateIngress != nil, p.UpdateIngress != nil)
			}
			if tc.update && (p.UpdateIngress.Labels["extra"] != "" || p.UpdateIngress.Spec.Rules[0].Host != "") {
				t.Errorf("update %+v", p.UpdateIngress)
			}
			warned := false
			for _, e := range p.Events {
				warned = warned || e.Type == corev1.EventTypeWarning && e.Reason == "FailedToCreateIngress"
			}
			if warned != tc.warning {
				t.Errorf("events %+v", p.Events)
			}
		})
	}
}

func TestReconcileCreatesTheIngress(t *testing.T) {
	rc := freshCluster("c", 1)
	rc.Spec.HeadGroupSpec.EnableIngress = fixture.Ptr(true)
	r, c, rec := fakeReconciler(t, interceptor.Funcs{}, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	for range 2 {
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	ing := &networkingv1.Ingress{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "c-head-ingress"}, ing); err != nil {
		t.Fatal(err)
	}
	evs := drainEvents(rec.Events)
	if strings.Count(evs, "Normal CreatedIngress") != 1 || strings.Contains(evs, "UpdatedIngress") {
		t.Fatalf("events:\n%s", evs)
	}
}
