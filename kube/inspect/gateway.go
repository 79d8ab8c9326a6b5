package inspect

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// The Gateway API objects of a RayService's incremental upgrade are read
// as unstructured objects (raydar's scheme has no Gateway API types, and a
// cluster may not serve the API at all) and converted to gateway-api's
// types for rayapi/why. `raydar why` reads them with its client
// (Gatherer), the TUI with its session's Get (tui/diagnose), both through
// ReadGateway.

// Getter reads one object whole into obj (its apiVersion, kind, namespace
// and name set): a controller-runtime client's Get.
type Getter func(ctx context.Context, obj client.Object) error

// Lister lists objects into list (its apiVersion and kind set).
type Lister func(ctx context.Context, list client.ObjectList) error

var gatewayGV = gwv1.SchemeGroupVersion

// ReadGateway reads the GatewayClass, Gateway and HTTPRoute of a RayService
// whose upgrade strategy is NewClusterWithIncrementalUpgrade, and the names
// of the GatewayClasses when list is given; nil for another strategy. A
// cluster that does not serve the Gateway API gives NoAPI; a read that
// fails otherwise leaves the whole input out (nil) with a note: the
// diagnosis then says nothing of the Gateway rather than guess.
func ReadGateway(ctx context.Context, get Getter, list Lister, svc *rayv1.RayService) (*why.GatewayInput, []string) {
	us := svc.Spec.UpgradeStrategy
	if us == nil || us.Type == nil || *us.Type != rayv1.NewClusterWithIncrementalUpgrade || us.ClusterUpgradeOptions == nil {
		return nil, nil
	}
	read := func(kind, ns, name string) ObjectRead {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gatewayGV.WithKind(kind))
		u.SetNamespace(ns)
		u.SetName(name)
		switch err := get(ctx, u); {
		case apierrors.IsNotFound(err):
			return ObjectRead{}
		case err != nil:
			return ObjectRead{Err: err}
		}
		return ObjectRead{Obj: u}
	}
	r := GatewayReads{
		Class:   read("GatewayClass", "", us.ClusterUpgradeOptions.GatewayClassName),
		Gateway: read("Gateway", svc.Namespace, svc.GatewayName()),
		Route:   read("HTTPRoute", svc.Namespace, svc.HTTPRouteName()),
	}
	if list != nil {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gatewayGV.WithKind("GatewayClassList"))
		r.Listed = true
		if r.ClassesErr = list(ctx, l); r.ClassesErr == nil {
			r.Classes = l.Items
		}
	}
	return GatewayInput(r)
}

// ObjectRead is one read of an object: it, or nil with Err nil when it
// does not exist, or the error.
type ObjectRead struct {
	Obj *unstructured.Unstructured
	Err error
}

// GatewayReads are the reads ReadGateway makes.
type GatewayReads struct {
	Class, Gateway, Route ObjectRead
	// Listed: the GatewayClasses were listed; Classes are they, unless
	// ClassesErr.
	Listed     bool
	Classes    []unstructured.Unstructured
	ClassesErr error
}

// GatewayInput turns the reads into rayapi/why's input: NoAPI when a read
// says the API server does not serve the Gateway API kinds; nil and a
// note when a read failed otherwise (no permission, a timeout) or an
// object does not convert. A failed list of the GatewayClasses only leaves
// their names out.
func GatewayInput(r GatewayReads) (*why.GatewayInput, []string) {
	reads := []ObjectRead{r.Class, r.Gateway, r.Route}
	if slices.ContainsFunc(reads, func(o ObjectRead) bool { return meta.IsNoMatchError(o.Err) }) || meta.IsNoMatchError(r.ClassesErr) {
		return &why.GatewayInput{NoAPI: true}, nil
	}
	for _, o := range reads {
		if o.Err != nil {
			return nil, []string{fmt.Sprintf("Gateway API objects: %v (left out)", o.Err)}
		}
	}
	in := &why.GatewayInput{}
	var notes []string
	var err error
	if in.Class, err = convert[gwv1.GatewayClass](r.Class.Obj); err == nil {
		if in.Gateway, err = convert[gwv1.Gateway](r.Gateway.Obj); err == nil {
			in.Route, err = convert[gwv1.HTTPRoute](r.Route.Obj)
		}
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("Gateway API objects: %v (left out)", err)}
	}
	switch {
	case !r.Listed:
	case r.ClassesErr != nil:
		notes = append(notes, fmt.Sprintf("GatewayClasses: %v (their names left out)", r.ClassesErr))
	default:
		in.Classes = []string{}
		for _, c := range r.Classes {
			in.Classes = append(in.Classes, c.GetName())
		}
		slices.Sort(in.Classes)
	}
	return in, notes
}

// convert turns an unstructured object into T; nil for nil.
func convert[T any](u *unstructured.Unstructured) (*T, error) {
	if u == nil {
		return nil, nil
	}
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return out, nil
}
