package raycluster

import (
	"context"
	"reflect"
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestBuildClusterServeService(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ports   []corev1.ContainerPort
		svcType corev1.ServiceType
		want    []corev1.ServicePort
	}{
		{name: "no container ports: the default serve port", want: []corev1.ServicePort{{Name: "serve", Port: 8000}}},
		{name: "serve and serve-* ports only, by name", ports: []corev1.ContainerPort{
			{Name: "dashboard", ContainerPort: 8265}, {Name: "serve-grpc", ContainerPort: 9000}, {Name: "serve", ContainerPort: 8001},
			{Name: "server", ContainerPort: 7000}, {ContainerPort: 1234},
		}, want: []corev1.ServicePort{{Name: "serve", Port: 8001}, {Name: "serve-grpc", Port: 9000}}},
		{name: "serviceType of the head group", svcType: corev1.ServiceTypeNodePort, want: []corev1.ServicePort{{Name: "serve", Port: 8000}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := fixture.Cluster("c")
			rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = tc.ports
			rc.Spec.HeadGroupSpec.ServiceType = tc.svcType
			svc := buildClusterServeService(rc)
			if svc.Name != "c-serve-svc" || svc.Namespace != "ns" {
				t.Errorf("name %s/%s", svc.Namespace, svc.Name)
			}
			wantLabels := map[string]string{"ray.io/originated-from-cr-name": "c", "ray.io/originated-from-crd": "RayCluster", "ray.io/serve": "c-serve"}
			if !reflect.DeepEqual(svc.Labels, wantLabels) {
				t.Errorf("labels %v, want %v", svc.Labels, wantLabels)
			}
			if !reflect.DeepEqual(svc.Spec.Selector, map[string]string{"ray.io/cluster": "c"}) {
				t.Errorf("selector %v", svc.Spec.Selector)
			}
			if !reflect.DeepEqual(svc.Spec.Ports, tc.want) || svc.Spec.Type != tc.svcType {
				t.Errorf("ports %v type %q, want %v %q", svc.Spec.Ports, svc.Spec.Type, tc.want, tc.svcType)
			}
			if len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].UID != rc.UID {
				t.Errorf("owners %+v", svc.OwnerReferences)
			}
		})
	}
}

func TestDecideServeService(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ann    string
		exists bool
		want   bool
	}{
		{name: "not annotated"},
		{name: "annotated false", ann: "false"},
		{name: "annotated true, missing", ann: "true", want: true},
		{name: "annotated true, exists: never re-created", ann: "true", exists: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := fixture.Cluster("c", fixture.Group("g", 1))
			if tc.ann != "" {
				rc.Annotations = map[string]string{rayv1.EnableServeServiceKey: tc.ann}
			}
			o := obsOf(rc, headSvc(rc))
			o.ServeServiceReady = tc.exists
			p := decide(o)
			got := false
			for _, s := range p.CreateServices {
				if s.Name == "c-serve-svc" {
					got = true
				}
			}
			if got != tc.want {
				t.Fatalf("serve Service planned %v, want %v", got, tc.want)
			}
		})
	}
}

func TestReconcileCreatesTheServeServiceOnce(t *testing.T) {
	rc := freshCluster("c", 1)
	rc.Annotations = map[string]string{rayv1.EnableServeServiceKey: "true"}
	creates := 0
	r, c, _ := fakeReconciler(t, interceptor.Funcs{}, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "c-serve-svc"}, svc); err != nil {
		t.Fatalf("serve Service: %v", err)
	}
	// A fresh process finds it and does not try again.
	cur := &rayv1.RayCluster{}
	if err := c.Get(context.Background(), req.NamespacedName, cur); err != nil {
		t.Fatal(err)
	}
	svc.ResourceVersion, cur.ResourceVersion = "", ""
	r2, _, _ := fakeReconciler(t, interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if obj.GetName() == "c-serve-svc" {
				creates++
			}
			return cl.Create(ctx, obj, opts...)
		},
	}, cur, svc)
	if _, err := r2.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if creates != 0 {
		t.Fatalf("%d creates of an existing serve Service", creates)
	}
}
