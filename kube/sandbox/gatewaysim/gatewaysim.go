// Package gatewaysim plays a Gateway API implementation's part in the
// sandbox, for RayServices upgraded with NewClusterWithIncrementalUpgrade:
// a simulated Gateway controller, not a proxy. No traffic flows through
// its Gateways. It keeps a GatewayClass ClassName (controllerName
// ControllerName, its description says it is simulated) Accepted; gives
// every Gateway of that class the Accepted and Programmed conditions, one
// listener status per listener and an address (from 192.0.2.0/24,
// TEST-NET-1: documentation only, never routed); and gives every HTTPRoute
// whose parentRefs name such a Gateway a parent status with Accepted and
// ResolvedRefs (False, BackendNotFound, while a backend Service does not
// exist). Those are the conditions KubeRay v1.6.2 waits for before it
// moves target_capacity (controllers/ray/utils/util.go:792-833
// IsGatewayReady, IsHTTPRouteReady).
//
// It reads the Gateway API's standard CRDs, which `hack/build-tools.sh
// gateway-crds` (part of `make tools`) copies from the sigs.k8s.io/gateway-api
// module into the sandbox's tools directory (CRDs).
package gatewaysim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/simkit"
)

// ClassName is the GatewayClass it creates and serves; a RayService's
// clusterUpgradeOptions.gatewayClassName names it.
const ClassName = "raydar-sandbox"

// ControllerName is the GatewayClass's controllerName and the
// controllerName of the HTTPRoute parent statuses it writes.
const ControllerName gwv1.GatewayController = "raydar.io/sandbox-gateway-simulator"

// Description is the GatewayClass's description (at most 64 bytes, the
// CRD says).
const Description = "Simulated by raydar's sandbox: no traffic flows"

// CRDFile is the Gateway API's standard CRDs in the tools directory.
const CRDFile = "crds/gateway-api.yaml"

// CRDs reads and decodes the Gateway API's CRDs from toolsDir.
func CRDs(toolsDir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	b, err := os.ReadFile(filepath.Join(toolsDir, CRDFile))
	if err != nil {
		return nil, fmt.Errorf("gatewaysim: the Gateway API's CRDs (hack/build-tools.sh gateway-crds writes them): %w", err)
	}
	return sandbox.ParseCRDs(b)
}

// Options configure a Sim.
type Options struct {
	Config *rest.Config
	// Interval between two passes. Default 200 ms.
	Interval time.Duration
	Logf     func(format string, args ...any)
}

// Sim is a running simulated Gateway controller.
type Sim struct {
	loop  *simkit.Loop
	mu    sync.Mutex
	addrs map[types.UID]string
	next  int
}

// Start creates the GatewayClass and runs the simulated controller until
// ctx ends or Close. The Gateway API's CRDs must be installed.
func Start(ctx context.Context, opts Options) (*Sim, error) {
	clients, err := simkit.NewClients(opts.Config, "gatewaysim", nil)
	if err != nil {
		return nil, err
	}
	c := clients.Client
	if opts.Interval <= 0 {
		opts.Interval = 200 * time.Millisecond
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	gc := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: ClassName},
		Spec: gwv1.GatewayClassSpec{ControllerName: ControllerName, Description: ptr.To(Description)}}
	if err := c.Create(ctx, gc); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("gatewaysim: creating GatewayClass %s: %w", ClassName, err)
	}
	sim := &Sim{loop: simkit.NewLoop(ctx, "gatewaysim", opts.Logf), addrs: map[types.UID]string{}}
	sim.loop.Every(opts.Interval, func(ctx context.Context) error { return sim.pass(ctx, c) })
	return sim, nil
}

// Close stops it.
func (s *Sim) Close() {
	s.loop.Stop()
}

// pass brings the class, its Gateways and their HTTPRoutes' statuses up to
// date once.
func (s *Sim) pass(ctx context.Context, c client.Client) error {
	gc := &gwv1.GatewayClass{}
	if err := c.Get(ctx, client.ObjectKey{Name: ClassName}, gc); err != nil {
		return fmt.Errorf("reading GatewayClass %s: %w", ClassName, err)
	}
	if gc.Spec.ControllerName != ControllerName {
		return nil // someone else's class of that name
	}
	if setCond(&gc.Status.Conditions, string(gwv1.GatewayClassConditionStatusAccepted), string(gwv1.GatewayClassReasonAccepted), "simulated: no traffic flows", gc.Generation) {
		if err := c.Status().Update(ctx, gc); err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("GatewayClass %s status: %w", ClassName, err)
		}
	}

	var gws gwv1.GatewayList
	if err := c.List(ctx, &gws); err != nil {
		return fmt.Errorf("listing Gateways: %w", err)
	}
	ours := map[types.NamespacedName]*gwv1.Gateway{}
	for i := range gws.Items {
		gw := &gws.Items[i]
		if string(gw.Spec.GatewayClassName) != ClassName || gw.DeletionTimestamp != nil {
			continue
		}
		ours[types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}] = gw
	}

	var routes gwv1.HTTPRouteList
	if err := c.List(ctx, &routes); err != nil {
		return fmt.Errorf("listing HTTPRoutes: %w", err)
	}
	attached := map[types.NamespacedName]int32{}
	for i := range routes.Items {
		rt := &routes.Items[i]
		changed := false
		for _, ref := range rt.Spec.ParentRefs {
			key, ok := parentKey(rt.Namespace, ref)
			gw := ours[key]
			if !ok || gw == nil {
				continue
			}
			attached[key]++
			reason, msg, resolved := s.resolve(ctx, c, rt)
			if routeParentStatus(rt, ref, reason, msg, resolved) {
				changed = true
			}
		}
		if changed {
			if err := c.Status().Update(ctx, rt); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
				return fmt.Errorf("HTTPRoute %s/%s status: %w", rt.Namespace, rt.Name, err)
			}
		}
	}

	for key, gw := range ours {
		if s.gatewayStatus(gw, attached[key]) {
			if err := c.Status().Update(ctx, gw); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
				return fmt.Errorf("Gateway %s status: %w", key, err)
			}
		}
	}
	return nil
}

// parentKey is the Gateway a parentRef names (false: not a Gateway).
func parentKey(routeNS string, ref gwv1.ParentReference) (types.NamespacedName, bool) {
	if ref.Group != nil && *ref.Group != gwv1.GroupName {
		return types.NamespacedName{}, false
	}
	if ref.Kind != nil && *ref.Kind != "Gateway" {
		return types.NamespacedName{}, false
	}
	ns := routeNS
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return types.NamespacedName{Namespace: ns, Name: string(ref.Name)}, true
}

// resolve checks that every backendRef of the route names a Service that
// exists.
func (s *Sim) resolve(ctx context.Context, c client.Client, rt *gwv1.HTTPRoute) (reason, msg string, ok bool) {
	for _, rule := range rt.Spec.Rules {
		for _, b := range rule.BackendRefs {
			if (b.Group != nil && *b.Group != "") || (b.Kind != nil && *b.Kind != "Service") {
				return string(gwv1.RouteReasonInvalidKind), fmt.Sprintf("backendRef %s is not a Service", b.Name), false
			}
			ns := rt.Namespace
			if b.Namespace != nil {
				ns = string(*b.Namespace)
			}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: string(b.Name)}, &corev1.Service{}); err != nil {
				return string(gwv1.RouteReasonBackendNotFound), fmt.Sprintf("Service %s/%s: %v", ns, b.Name, err), false
			}
		}
	}
	return string(gwv1.RouteReasonResolvedRefs), "simulated: every backend Service exists; no traffic flows", true
}

// routeParentStatus sets the route's status for one parent; it reports a
// change.
func routeParentStatus(rt *gwv1.HTTPRoute, ref gwv1.ParentReference, reason, msg string, resolved bool) bool {
	i := -1
	for j := range rt.Status.Parents {
		p := rt.Status.Parents[j]
		if p.ControllerName == ControllerName && p.ParentRef.Name == ref.Name && ptr.Deref(p.ParentRef.Namespace, "") == ptr.Deref(ref.Namespace, "") {
			i = j
		}
	}
	if i < 0 {
		rt.Status.Parents = append(rt.Status.Parents, gwv1.RouteParentStatus{ParentRef: ref, ControllerName: ControllerName})
		i = len(rt.Status.Parents) - 1
	}
	p := &rt.Status.Parents[i]
	changed := false
	if setCond(&p.Conditions, string(gwv1.RouteConditionAccepted), string(gwv1.RouteReasonAccepted), "simulated: no traffic flows", rt.Generation) {
		changed = true
	}
	status := metav1.ConditionTrue
	if !resolved {
		status = metav1.ConditionFalse
	}
	c := metav1.Condition{Type: string(gwv1.RouteConditionResolvedRefs), Status: status, Reason: reason, Message: msg, ObservedGeneration: rt.Generation, LastTransitionTime: metav1.Now()}
	if old := meta.FindStatusCondition(p.Conditions, c.Type); old == nil || old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message || old.ObservedGeneration != c.ObservedGeneration {
		meta.SetStatusCondition(&p.Conditions, c)
		changed = true
	}
	return changed
}

// gatewayStatus sets a Gateway's conditions, listeners and address; it
// reports a change.
func (s *Sim) gatewayStatus(gw *gwv1.Gateway, routes int32) bool {
	changed := false
	for _, t := range []struct{ typ, reason string }{
		{string(gwv1.GatewayConditionAccepted), string(gwv1.GatewayReasonAccepted)},
		{string(gwv1.GatewayConditionProgrammed), string(gwv1.GatewayReasonProgrammed)},
	} {
		if setCond(&gw.Status.Conditions, t.typ, t.reason, "simulated by raydar's sandbox: no traffic flows", gw.Generation) {
			changed = true
		}
	}
	addr := s.address(gw.UID)
	if len(gw.Status.Addresses) != 1 || gw.Status.Addresses[0].Value != addr {
		gw.Status.Addresses = []gwv1.GatewayStatusAddress{{Type: ptr.To(gwv1.IPAddressType), Value: addr}}
		changed = true
	}
	var ls []gwv1.ListenerStatus
	for _, l := range gw.Spec.Listeners {
		st := gwv1.ListenerStatus{Name: l.Name, AttachedRoutes: routes,
			SupportedKinds: []gwv1.RouteGroupKind{{Group: ptr.To(gwv1.Group(gwv1.GroupName)), Kind: "HTTPRoute"}}}
		for _, old := range gw.Status.Listeners {
			if old.Name == l.Name {
				st.Conditions = old.Conditions
			}
		}
		for _, t := range []struct{ typ, reason string }{
			{string(gwv1.ListenerConditionAccepted), string(gwv1.ListenerReasonAccepted)},
			{string(gwv1.ListenerConditionProgrammed), string(gwv1.ListenerReasonProgrammed)},
			{string(gwv1.ListenerConditionResolvedRefs), string(gwv1.ListenerReasonResolvedRefs)},
		} {
			setCond(&st.Conditions, t.typ, t.reason, "simulated", gw.Generation)
		}
		ls = append(ls, st)
	}
	if !listenersEqual(gw.Status.Listeners, ls) {
		gw.Status.Listeners = ls
		changed = true
	}
	return changed
}

func listenersEqual(a, b []gwv1.ListenerStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].AttachedRoutes != b[i].AttachedRoutes || len(a[i].Conditions) != len(b[i].Conditions) {
			return false
		}
		for _, c := range b[i].Conditions {
			if o := meta.FindStatusCondition(a[i].Conditions, c.Type); o == nil || o.ObservedGeneration != c.ObservedGeneration || o.Status != c.Status {
				return false
			}
		}
	}
	return true
}

// address is the Gateway's address, one per Gateway for the Sim's life.
func (s *Sim) address(uid types.UID) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.addrs[uid]; ok {
		return a
	}
	s.next++
	a := fmt.Sprintf("192.0.2.%d", 1+(s.next-1)%254)
	s.addrs[uid] = a
	return a
}

// setCond sets a True condition; it reports a change.
func setCond(conds *[]metav1.Condition, typ, reason, msg string, gen int64) bool {
	if old := meta.FindStatusCondition(*conds, typ); old != nil && old.Status == metav1.ConditionTrue && old.Reason == reason && old.ObservedGeneration == gen {
		return false
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: msg, ObservedGeneration: gen, LastTransitionTime: metav1.Now()})
	return true
}
