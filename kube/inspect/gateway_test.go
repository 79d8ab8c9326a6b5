package inspect

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// fakeGatewayAPI answers ReadGateway's reads from objects by kind/name,
// NotFound for the others, or err for every read when set.
type fakeGatewayAPI struct {
	objs    map[string]any // "Kind/name" -> typed object
	err     error          // every Get fails so
	listErr error
	asked   []string
}

func (f *fakeGatewayAPI) get(_ context.Context, obj client.Object) error {
	u := obj.(*unstructured.Unstructured)
	key := u.GetKind() + "/" + u.GetName()
	f.asked = append(f.asked, u.GetAPIVersion()+" "+u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName())
	if f.err != nil {
		return f.err
	}
	o, ok := f.objs[key]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: strings.ToLower(u.GetKind()) + "s"}, u.GetName())
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return err
	}
	u.Object = m
	return nil
}

func (f *fakeGatewayAPI) list(_ context.Context, l client.ObjectList) error {
	if f.listErr != nil {
		return f.listErr
	}
	ul := l.(*unstructured.UnstructuredList)
	for k := range f.objs {
		if name, ok := strings.CutPrefix(k, "GatewayClass/"); ok {
			u := unstructured.Unstructured{}
			u.SetName(name)
			ul.Items = append(ul.Items, u)
		}
	}
	return nil
}

func incrementalSvc() *rayv1.RayService {
	return &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc"},
		Spec: rayv1.RayServiceSpec{UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.NewClusterWithIncrementalUpgrade),
			ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{GatewayClassName: "raydar-sandbox"}}}}
}

func TestReadGateway(t *testing.T) {
	programmed := metav1.Condition{Type: "Programmed", Status: metav1.ConditionFalse, Reason: "AddressNotAssigned", Message: "no address"}
	all := func() *fakeGatewayAPI {
		return &fakeGatewayAPI{objs: map[string]any{
			"GatewayClass/raydar-sandbox": &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "raydar-sandbox"}},
			"GatewayClass/envoy":          &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "envoy"}},
			"Gateway/svc-gateway": &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc-gateway"},
				Status: gwv1.GatewayStatus{Conditions: []metav1.Condition{programmed}}},
			"HTTPRoute/svc-httproute": &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc-httproute"}},
		}}
	}
	t.Run("all read, typed", func(t *testing.T) {
		f := all()
		in, notes := ReadGateway(context.Background(), f.get, f.list, incrementalSvc())
		if in == nil || in.NoAPI || in.Class == nil || in.Class.Name != "raydar-sandbox" || in.Gateway == nil || in.Route == nil || len(notes) != 0 {
			t.Fatalf("input %+v, notes %q", in, notes)
		}
		if c := meta.FindStatusCondition(in.Gateway.Status.Conditions, "Programmed"); c == nil || c.Reason != "AddressNotAssigned" || c.Message != "no address" {
			t.Errorf("the Gateway's conditions: %+v", in.Gateway.Status.Conditions)
		}
		if strings.Join(in.Classes, ",") != "envoy,raydar-sandbox" {
			t.Errorf("classes %q", in.Classes)
		}
		want := "gateway.networking.k8s.io/v1 GatewayClass /raydar-sandbox|gateway.networking.k8s.io/v1 Gateway ns/svc-gateway|gateway.networking.k8s.io/v1 HTTPRoute ns/svc-httproute"
		if got := strings.Join(f.asked, "|"); got != want {
			t.Errorf("asked %q, want %q", got, want)
		}
	})
	t.Run("not there yet: nil, no note", func(t *testing.T) {
		f := all()
		delete(f.objs, "Gateway/svc-gateway")
		delete(f.objs, "HTTPRoute/svc-httproute")
		in, notes := ReadGateway(context.Background(), f.get, nil, incrementalSvc())
		if in == nil || in.Gateway != nil || in.Route != nil || in.Class == nil || in.Classes != nil || len(notes) != 0 {
			t.Fatalf("input %+v, notes %q", in, notes)
		}
	})
	t.Run("no Gateway API: NoAPI, not a failure", func(t *testing.T) {
		f := &fakeGatewayAPI{err: &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "gateway.networking.k8s.io", Kind: "GatewayClass"}, SearchedVersions: []string{"v1"}}}
		in, notes := ReadGateway(context.Background(), f.get, f.list, incrementalSvc())
		if in == nil || !in.NoAPI || len(notes) != 0 {
			t.Fatalf("input %+v, notes %q", in, notes)
		}
	})
	t.Run("a read refused: left out with a note", func(t *testing.T) {
		f := &fakeGatewayAPI{err: apierrors.NewForbidden(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "gatewayclasses"}, "raydar-sandbox", nil)}
		in, notes := ReadGateway(context.Background(), f.get, f.list, incrementalSvc())
		if in != nil || len(notes) != 1 || !strings.Contains(notes[0], "forbidden") {
			t.Fatalf("input %+v, notes %q", in, notes)
		}
	})
	t.Run("the classes' list refused: their names left out", func(t *testing.T) {
		f := all()
		f.listErr = apierrors.NewForbidden(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "gatewayclasses"}, "", nil)
		in, notes := ReadGateway(context.Background(), f.get, f.list, incrementalSvc())
		if in == nil || in.Classes != nil || in.Class == nil || len(notes) != 1 || !strings.Contains(notes[0], "GatewayClasses") {
			t.Fatalf("input %+v, notes %q", in, notes)
		}
	})
	t.Run("another strategy: nothing read", func(t *testing.T) {
		f := all()
		svc := incrementalSvc()
		svc.Spec.UpgradeStrategy.Type = ptr.To(rayv1.NewCluster)
		if in, _ := ReadGateway(context.Background(), f.get, f.list, svc); in != nil || len(f.asked) != 0 {
			t.Fatalf("input %+v, asked %q", in, f.asked)
		}
	})
}
