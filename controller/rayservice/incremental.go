package rayservice

// decide, incremental upgrade (upgradeStrategy.type
// NewClusterWithIncrementalUpgrade, gate RayServiceIncrementalUpgrade), as
// KubeRay v1.6.2 does it (controllers/ray/rayservice_controller.go; the
// REP: ray-project/enhancements reps/2024-12-4-ray-service-incr-upgrade.md).
// Pure: the Gateway, HTTPRoute and per-cluster serve Services wanted, the
// next traffic split and target_capacity step, the end of the upgrade.
//
// The state lives where KubeRay keeps it: the HTTPRoute's weights and the
// RayService status (activeServiceStatus/pendingServiceStatus
// .targetCapacity, .trafficRoutedPercent, .lastTrafficMigratedTime). Each
// step is:
//
//  1. the pending cluster's Serve target_capacity goes up by
//     maxSurgePercent (while active + pending ≤ 100);
//  2. its traffic goes up by stepSizePercent every intervalSeconds, up to
//     its target_capacity (the active cluster gets the rest);
//  3. once its traffic reached its target_capacity, the active cluster's
//     target_capacity goes down by maxSurgePercent (while active +
//     pending > 100);
//
// until the active cluster is at target_capacity 0 and the pending one
// has 100% of the traffic: the pending cluster becomes the active one
// and the old one is deleted after rayClusterDeletionDelaySeconds.

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// KubeRay v1.6.2's Gateway listener (controllers/ray/utils/constant.go:118-120).
const (
	gatewayListenerName = "http"
	gatewayListenerPort = 80
)

// incremental reports whether the RayService is upgraded incrementally:
// type NewClusterWithIncrementalUpgrade with the gate on (KubeRay v1.6.2
// utils/util.go:835-841 IsIncrementalUpgradeEnabled).
func incremental(rs *rayv1.RayService, g features.Gates) bool {
	return rs.Spec.EffectiveUpgradeType() == rayv1.NewClusterWithIncrementalUpgrade && g.Enabled(features.RayServiceIncrementalUpgrade)
}

// clusterServeServiceName is the per-cluster serve Service of an
// incremental upgrade, "<cluster>-serve-svc" (utils/util.go:346-349
// GenerateServeServiceName).
func clusterServeServiceName(clusterName string) string { return clusterName + "-serve-svc" }

// buildGateway is the RayService's Gateway (rayservice_controller.go:668-694
// createGateway): one HTTP listener on port 80, the class of
// clusterUpgradeOptions.gatewayClassName, owned by the RayService
// (rayservice_controller.go:718).
func buildGateway(rs *rayv1.RayService) *gwv1.Gateway {
	return &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: rs.GatewayName(), Namespace: rs.Namespace, OwnerReferences: []metav1.OwnerReference{ownerRef(rs)}},
		Spec: gwv1.GatewaySpec{
			GatewayClassName: gwv1.ObjectName(rs.Spec.UpgradeStrategy.ClusterUpgradeOptions.GatewayClassName),
			Listeners:        []gwv1.Listener{{Name: gatewayListenerName, Protocol: gwv1.HTTPProtocolType, Port: gatewayListenerPort}},
		},
	}
}

// backend is one backendRef of the HTTPRoute.
type backend struct {
	Cluster *rayv1.RayCluster
	Weight  int32
}

// buildHTTPRoute is the RayService's HTTPRoute (rayservice_controller.go:823-918
// createHTTPRoute): parent the Gateway, one rule matching the path prefix
// "/", backendRefs the clusters' serve Services at their serve ports with
// their weights (active first), owned by the RayService
// (rayservice_controller.go:940).
func buildHTTPRoute(rs *rayv1.RayService, backends []backend) *gwv1.HTTPRoute {
	ns := gwv1.Namespace(rs.Namespace)
	refs := make([]gwv1.HTTPBackendRef, 0, len(backends))
	for _, b := range backends {
		refs = append(refs, gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{
			BackendObjectReference: gwv1.BackendObjectReference{
				Name: gwv1.ObjectName(clusterServeServiceName(b.Cluster.Name)), Namespace: ptr.To(ns),
				Port: ptr.To(gwv1.PortNumber(servePort(b.Cluster))),
			},
			Weight: ptr.To(b.Weight),
		}})
	}
	return &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: rs.HTTPRouteName(), Namespace: rs.Namespace, OwnerReferences: []metav1.OwnerReference{ownerRef(rs)}},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: gwv1.ObjectName(rs.GatewayName()), Namespace: ptr.To(ns)}}},
			Rules: []gwv1.HTTPRouteRule{{
				Matches:     []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: ptr.To(gwv1.PathMatchPathPrefix), Value: ptr.To("/")}}},
				BackendRefs: refs,
			}},
		},
	}
}

// routeEqual compares what raydar writes of an HTTPRoute: its backends'
// names, weights and ports (KubeRay v1.6.2 utils/util.go:1057-1080
// IsHTTPRouteEqual), and its parents.
func routeEqual(have, want *gwv1.HTTPRoute) bool {
	if len(have.Spec.Rules) != len(want.Spec.Rules) || !equality.Semantic.DeepEqual(have.Spec.ParentRefs, want.Spec.ParentRefs) {
		return false
	}
	for i := range want.Spec.Rules {
		h, w := have.Spec.Rules[i].BackendRefs, want.Spec.Rules[i].BackendRefs
		if len(h) != len(w) {
			return false
		}
		for j := range w {
			if h[j].Name != w[j].Name || ptr.Deref(h[j].Weight, 1) != ptr.Deref(w[j].Weight, 1) || ptr.Deref(h[j].Port, 0) != ptr.Deref(w[j].Port, 0) {
				return false
			}
		}
	}
	return true
}

// buildClusterServeService is a cluster's own serve Service during an
// incremental upgrade (common/service.go:181-292 BuildServeService with
// the incremental gate: named and labelled after the cluster, selecting
// its serving pods), owned by the cluster (rayservice_controller.go:2019-2047
// reconcilePerClusterServeService).
func buildClusterServeService(rs *rayv1.RayService, rc *rayv1.RayCluster) *corev1.Service {
	ports := raycluster.ServePorts(&rc.Spec)
	if len(ports) == 0 {
		p := servePort(rc)
		ports = []corev1.ServicePort{{Name: rayv1.ServingPortName, Port: p, TargetPort: intstr.FromInt32(p), Protocol: corev1.ProtocolTCP}}
	}
	typ := rs.Spec.RayClusterSpec.HeadGroupSpec.ServiceType
	if typ == "" {
		typ = corev1.ServiceTypeClusterIP
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: clusterServeServiceName(rc.Name), Namespace: rs.Namespace,
			Labels: map[string]string{
				rayv1.RayOriginatedFromCRNameLabelKey:  rc.Name,
				rayv1.RayOriginatedFromCRDLabelKey:     rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayService),
				rayv1.RayClusterServingServiceLabelKey: rc.Name + "-serve",
			},
			OwnerReferences: []metav1.OwnerReference{kit.ControllerRef(rayv1.KindRayCluster, rc.Name, rc.UID)},
		},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{rayv1.RayClusterLabelKey: rc.Name, rayv1.RayClusterServingServiceLabelKey: "true"},
			Ports:    ports,
			Type:     typ,
		},
	}
}

// gatewayReady: Accepted and Programmed (utils/util.go:781-801 IsGatewayReady).
func gatewayReady(gw *gwv1.Gateway) bool {
	return gw != nil && meta.IsStatusConditionTrue(gw.Status.Conditions, string(gwv1.GatewayConditionAccepted)) &&
		meta.IsStatusConditionTrue(gw.Status.Conditions, string(gwv1.GatewayConditionProgrammed))
}

// routeReady: the route's status for the Gateway is Accepted with its
// references resolved (utils/util.go:803-833 IsHTTPRouteReady).
func routeReady(rs *rayv1.RayService, rt *gwv1.HTTPRoute) bool {
	if rt == nil {
		return false
	}
	for _, p := range rt.Status.Parents {
		if string(p.ParentRef.Name) != rs.GatewayName() || (p.ParentRef.Namespace != nil && string(*p.ParentRef.Namespace) != rs.Namespace) {
			continue
		}
		if meta.IsStatusConditionTrue(p.Conditions, string(gwv1.RouteConditionAccepted)) && meta.IsStatusConditionTrue(p.Conditions, string(gwv1.RouteConditionResolvedRefs)) {
			return true
		}
	}
	return false
}

// routeWeight is the weight of a cluster's backend in the route, -1 when
// it has none (utils/util.go:857-888 GetWeightsFromHTTPRoute).
func routeWeight(rt *gwv1.HTTPRoute, clusterName string) int32 {
	if rt == nil || clusterName == "" || len(rt.Spec.Rules) == 0 {
		return -1
	}
	for _, b := range rt.Spec.Rules[0].BackendRefs {
		if string(b.Name) == clusterServeServiceName(clusterName) {
			return ptr.Deref(b.Weight, 0)
		}
	}
	return -1
}

// split is the state of an upgrade: the clusters' Serve target_capacity
// and their share of the traffic, in percent.
type split struct {
	ActiveCapacity, PendingCapacity int32
	ActiveTraffic, PendingTraffic   int32
}

// trafficStep moves stepSize of the traffic to the pending cluster when
// interval has passed since it last moved (lastMoved nil: never), the
// pending cluster is ready and its traffic is below its target_capacity;
// never above it (rayservice_controller.go:754-812
// calculateTrafficRoutedPercent, without its rollback half).
func trafficStep(s split, stepSize int32, interval time.Duration, lastMoved *metav1.Time, pendingReady bool, now time.Time) (split, bool) {
	if s.PendingTraffic == s.PendingCapacity || !pendingReady {
		return s, false
	}
	if lastMoved != nil && now.Sub(lastMoved.Time) < interval {
		return s, false
	}
	pt := min(100, s.PendingTraffic+stepSize, s.PendingCapacity)
	if pt == s.PendingTraffic {
		return s, false
	}
	s.PendingTraffic, s.ActiveTraffic = pt, 100-pt
	return s, true
}

// which names a cluster of the upgrade.
type which int

const (
	noCluster which = iota
	toPending
	toActive
)

// capacityStep is the next target_capacity change, if any
// (rayservice_controller.go:1401-1444 checkIfNeedTargetCapacityUpdate and
// 1498-1585 reconcileServeTargetCapacity, without the rollback half):
// nothing once the active cluster is at 0 and the pending one at 100;
// nothing while the pending cluster's traffic has not caught up with its
// target_capacity; else the pending cluster goes up by maxSurge while the
// two add up to at most 100, the active one down by maxSurge when they add
// up to more. KubeRay visits the pending cluster before the active one in
// a pass; the active one's step waits for the next pass (its traffic must
// catch up first), so one step a pass is the same.
func capacityStep(s split, maxSurge int32) (which, int32) {
	if s.ActiveCapacity == 0 && s.PendingCapacity == 100 {
		return noCluster, 0
	}
	if s.PendingCapacity != s.PendingTraffic {
		return noCluster, 0
	}
	if s.ActiveCapacity+s.PendingCapacity <= 100 {
		if goal := min(100, s.PendingCapacity+maxSurge); goal != s.PendingCapacity {
			return toPending, goal
		}
		return noCluster, 0
	}
	if goal := max(0, s.ActiveCapacity-maxSurge); goal != s.ActiveCapacity {
		return toActive, goal
	}
	return noCluster, 0
}

// upgradeComplete: the active cluster is at target_capacity 0 and the
// pending one has all the traffic (utils/util.go:850-855
// IsIncrementalUpgradeComplete).
func upgradeComplete(s split) bool { return s.ActiveCapacity == 0 && s.PendingTraffic == 100 }

// withTargetCapacity is a serve config (JSON) with target_capacity set,
// as KubeRay submits it (rayservice_controller.go:1338-1354 and
// 1446-1495): Serve's ServeDeploySchema.target_capacity, a percentage
// (python/ray/serve/schema.py).
func withTargetCapacity(cfgJSON []byte, tc int32) ([]byte, error) {
	doc := map[string]any{}
	if len(cfgJSON) > 0 {
		if err := json.Unmarshal(cfgJSON, &doc); err != nil {
			return nil, fmt.Errorf("serve config: %w", err)
		}
	}
	doc["target_capacity"] = tc
	return json.Marshal(doc)
}

// incrementalObserved is what observe read for an incremental upgrade.
type incrementalObserved struct {
	// GatewayAPIMissing: the API server does not serve
	// gateway.networking.k8s.io/v1 Gateways or HTTPRoutes.
	GatewayAPIMissing bool
	Gateway           *gwv1.Gateway
	HTTPRoute         *gwv1.HTTPRoute
	// ClusterServices are the per-cluster serve Services, by cluster name
	// (absent: none), and ClusterEndpoints their ready endpoints.
	ClusterServices  map[string]*corev1.Service
	ClusterEndpoints map[string]int32
}

// incrementalPlan is what an incremental upgrade writes beyond the
// common plan.
type incrementalPlan struct {
	// Gateway and HTTPRoute to create (no resourceVersion) or update;
	// nil: as they are.
	Gateway   *gwv1.Gateway
	HTTPRoute *gwv1.HTTPRoute
	// Capacity are target_capacity submissions; if one fails, act puts the
	// status field back to Was.
	Capacity []capacitySubmit
}

// capacitySubmit is one target_capacity submission.
type capacitySubmit struct {
	Step    submitStep
	Pending bool
	Goal    int32
	Was     *int32
}

// stepIncremental is the incremental half of decide: the per-cluster
// serve Services and the Gateway; once a cluster serves, the next
// target_capacity step, the next traffic step, the HTTPRoute with the
// split, the clusters' traffic status fields, and the end of the upgrade,
// when the pending cluster has all the traffic and becomes the active one.
func (d *deciding) stepIncremental() {
	if !d.incr {
		return
	}
	d.planClusterServeServices()
	d.planGateway()
	active, pending := d.newActive, d.pending
	if active == nil {
		return
	}
	s := d.splitBefore()
	upgrading := pending != nil && !d.views[pending.Name].New
	if upgrading {
		s = d.stepCapacity(s)
		s = d.stepTraffic(s)
	}
	d.planHTTPRoute(s, upgrading)
	d.setTraffic(&d.fields.Active, s.ActiveTraffic)
	if !upgrading {
		return
	}
	d.setTraffic(&d.fields.Pending, s.PendingTraffic)
	d.p.requeue(d.o.Config.DeployPoll)

	// The end (rayservice_controller.go:374-383, 1434-1436): the pending
	// cluster becomes the active one, with its statuses.
	if upgradeComplete(s) {
		d.p.eventf(corev1.EventTypeNormal, reasonTrafficSwitched, "Switch",
			"Incremental upgrade complete: RayCluster %s serves all the traffic; %s is deleted after %s",
			pending.Name, active.Name, deletionDelay(d.rs))
		d.switchTo(pending)
	}
}

// planClusterServeServices plans the active and pending clusters' own
// serve Services (rayservice_controller.go:245-252), once the cluster
// exists.
func (d *deciding) planClusterServeServices() {
	for _, c := range []*rayv1.RayCluster{d.newActive, d.pending} {
		if c == nil || c.UID == "" {
			continue
		}
		planService(d.p, d.o.Incremental.ClusterServices[c.Name], buildClusterServeService(d.rs, c), c.UID, "RayCluster "+c.Name)
	}
}

// planGateway creates or updates the Gateway
// (rayservice_controller.go:696-744 reconcileGateway); one of that name
// not owned by the RayService is left alone, said in a Warning.
func (d *deciding) planGateway() {
	gw := buildGateway(d.rs)
	switch have := d.o.Incremental.Gateway; {
	case have == nil:
		d.p.Incr.Gateway = gw
	case !ownedBy(have, d.rs):
		d.p.eventf(corev1.EventTypeWarning, rayv1.EventUpdatedGateway, "Update",
			"Gateway %s exists and is not owned by this RayService; raydar leaves it alone", have.Name)
	case !equality.Semantic.DeepEqual(have.Spec, gw.Spec):
		upd := have.DeepCopy()
		upd.Spec = gw.Spec
		d.p.Incr.Gateway = upd
	}
}

// splitBefore is the split when the pass began: the route's weights, else
// the status's, else all on the active cluster
// (rayservice_controller.go:760-771).
func (d *deciding) splitBefore() split {
	f := d.fields
	return split{
		ActiveCapacity: ptr.Deref(f.Active.TargetCapacity, 100), PendingCapacity: ptr.Deref(f.Pending.TargetCapacity, 0),
		ActiveTraffic: ptr.Deref(f.Active.TrafficRoutedPercent, 100), PendingTraffic: ptr.Deref(f.Pending.TrafficRoutedPercent, 0),
	}
}

// stepCapacity takes the next target_capacity step, if any, from the
// split s the status held when the pass began, and returns the split
// after it. KubeRay steps it in reconcileServe, which runs before
// reconcileHTTPRoute moves the traffic (rayservice_controller.go:218-240
// and 261; 1787-1797), so a capacity step and the traffic step it allows
// land in two passes, and the status shows the split between them. Not
// before the capacities are known (1426-1431: missing ones are set to 100
// and 0, 1505-1510), and only once the Gateway and the route are ready
// (1408-1424), and the cluster's dashboard answers with the config the
// step changes.
func (d *deciding) stepCapacity(s split) split {
	rs, io := d.rs, d.o.Incremental
	if d.fields.Active.TargetCapacity == nil || d.fields.Pending.TargetCapacity == nil {
		d.fields.Active.TargetCapacity = ptr.To(s.ActiveCapacity)
		d.fields.Pending.TargetCapacity = ptr.To(s.PendingCapacity)
	}
	if !gatewayReady(io.Gateway) || !routeReady(rs, io.HTTPRoute) {
		d.p.eventf(corev1.EventTypeNormal, reasonWaitingForGateway, "Upgrade",
			"Waiting for Gateway %s and HTTPRoute %s to be ready (Accepted and Programmed; Accepted and ResolvedRefs) before changing target_capacity",
			rs.GatewayName(), rs.HTTPRouteName())
		return s
	}
	w, goal := capacityStep(s, ptr.Deref(rs.Spec.UpgradeStrategy.ClusterUpgradeOptions.MaxSurgePercent, rayv1.DefaultMaxSurgePercent))
	if w == noCluster {
		return s
	}
	c, f, src := d.pending, &d.fields.Pending, d.cfg
	if w == toActive {
		c, f, src = d.newActive, &d.fields.Active, activeServeConfig(d.o, d.newActive, d.cfg)
	}
	v := d.views[c.Name]
	reachable := v != nil && v.Probe != nil && v.Probe.OK && c.Annotations[ServeConfigHashKey] == src.Hash
	data, err := withTargetCapacity(src.JSON, goal)
	if err != nil || src.Hash == "" || !reachable {
		return s
	}
	d.p.Incr.Capacity = append(d.p.Incr.Capacity, capacitySubmit{
		Step:    submitStep{Cluster: c, Config: serveConfig{JSON: data, Hash: src.Hash, Apps: src.Apps}, Why: fmt.Sprintf("target_capacity %d", goal), TargetCapacity: ptr.To(goal)},
		Pending: w == toPending, Goal: goal, Was: f.TargetCapacity,
	})
	f.TargetCapacity = ptr.To(goal)
	if w == toPending {
		s.PendingCapacity = goal
	} else {
		s.ActiveCapacity = goal
	}
	return s
}

// stepTraffic moves the traffic, up to the pending cluster's capacity as
// it now is (calculateTrafficRoutedPercent), and returns the split after;
// a step not yet due is come back for.
func (d *deciding) stepTraffic(s split) split {
	vp := d.views[d.pending.Name]
	last := d.fields.Pending.LastTrafficMigratedTime
	interval := time.Duration(ptr.Deref(d.rs.Spec.UpgradeStrategy.ClusterUpgradeOptions.IntervalSeconds, 0)) * time.Second
	stepSize := ptr.Deref(d.rs.Spec.UpgradeStrategy.ClusterUpgradeOptions.StepSizePercent, 0)
	if next, moved := trafficStep(s, stepSize, interval, last, vp.Ready, d.o.Now); moved {
		return next
	}
	if vp.Ready && s.PendingTraffic < s.PendingCapacity && last != nil {
		d.p.requeue(last.Add(interval).Sub(d.o.Now))
	}
	return s
}

// planHTTPRoute creates or updates the HTTPRoute with the split s
// (rayservice_controller.go:920-965): all on the active cluster, or
// shared with the pending one while upgrading. One of that name not owned
// by the RayService is left alone, said in a Warning.
func (d *deciding) planHTTPRoute(s split, upgrading bool) {
	backends := []backend{{d.newActive, s.ActiveTraffic}}
	if upgrading {
		backends = append(backends, backend{d.pending, s.PendingTraffic})
	}
	rt := buildHTTPRoute(d.rs, backends)
	switch have := d.o.Incremental.HTTPRoute; {
	case have == nil:
		d.p.Incr.HTTPRoute = rt
	case !ownedBy(have, d.rs):
		d.p.eventf(corev1.EventTypeWarning, rayv1.EventUpdatedHTTPRoute, "Update",
			"HTTPRoute %s exists and is not owned by this RayService; raydar leaves it alone", have.Name)
	case !routeEqual(have, rt):
		upd := have.DeepCopy()
		upd.Spec = rt.Spec
		d.p.Incr.HTTPRoute = upd
	}
}

// setTraffic records a cluster's share of the traffic as the route now
// says it (rayservice_controller.go:435-459): the time changes with the
// value.
func (d *deciding) setTraffic(f *statusFields, w int32) {
	if ptr.Deref(f.TrafficRoutedPercent, -1) != w {
		f.LastTrafficMigratedTime = ptr.To(metav1.NewTime(d.o.Now))
	}
	f.TrafficRoutedPercent = ptr.To(w)
}

// initIncrementalFields reads the active and pending clusters'
// incremental status fields (only with an incremental upgrade). A pending
// cluster without a target_capacity starts at 100 when it is the first
// cluster (rayservice_controller.go:497-503) and at 0 when it replaces one
// (504-509), so that Serve does not scale it up at once.
func (d *deciding) initIncrementalFields() {
	if !d.incr {
		return
	}
	d.fields = incrementalFields{Active: statusFieldsOf(d.rs.Status, d.active), Pending: statusFieldsOf(d.rs.Status, d.pending)}
	if d.pending != nil && d.fields.Pending.TargetCapacity == nil {
		tc := initialCapacity
		if d.active != nil {
			tc = 0
		}
		d.fields.Pending.TargetCapacity = &tc
	}
}

// serveConfigFor is the config a cluster with incremental status fields f
// gets: with an incremental upgrade, with its target_capacity
// (rayservice_controller.go:1338-1354).
func (d *deciding) serveConfigFor(f statusFields) serveConfig {
	if !d.incr || f.TargetCapacity == nil || d.cfg.Hash == "" {
		return d.cfg
	}
	c := d.cfg
	if data, err := withTargetCapacity(d.cfg.JSON, *f.TargetCapacity); err == nil {
		c.JSON = data
	}
	return c
}

// activeServeConfig is the config to resubmit to the active cluster with
// a new target_capacity: the one this process last submitted to it, else
// the spec's (KubeRay v1.6.2 rayservice_controller.go:1450-1453 does the
// same with its cache of submitted configs).
func activeServeConfig(o *observed, active *rayv1.RayCluster, cfg serveConfig) serveConfig {
	if s := o.Submissions[active.Name]; s != nil && s.Err == "" && len(s.JSON) > 0 && s.Hash == active.Annotations[ServeConfigHashKey] {
		return serveConfig{JSON: s.JSON, Hash: s.Hash, Apps: s.Apps}
	}
	return cfg
}

// statusFields are a cluster's incremental status fields.
type statusFields struct {
	TargetCapacity          *int32
	TrafficRoutedPercent    *int32
	LastTrafficMigratedTime *metav1.Time
}

// incrementalFields are the active and pending clusters' fields after the
// plan.
type incrementalFields struct{ Active, Pending statusFields }

// statusFieldsOf are the fields the status holds for a cluster.
func statusFieldsOf(st rayv1.RayServiceStatuses, c *rayv1.RayCluster) statusFields {
	if c == nil {
		return statusFields{}
	}
	for _, s := range []rayv1.RayServiceStatus{st.ActiveServiceStatus, st.PendingServiceStatus} {
		if s.RayClusterName == c.Name {
			return statusFields{TargetCapacity: s.TargetCapacity, TrafficRoutedPercent: s.TrafficRoutedPercent, LastTrafficMigratedTime: s.LastTrafficMigratedTime}
		}
	}
	return statusFields{}
}

// apply writes the fields into a cluster's status.
func (f statusFields) apply(s *rayv1.RayServiceStatus) {
	if s.RayClusterName == "" {
		return
	}
	s.TargetCapacity, s.TrafficRoutedPercent, s.LastTrafficMigratedTime = f.TargetCapacity, f.TrafficRoutedPercent, f.LastTrafficMigratedTime
}

// initialCapacity is the target_capacity of a RayService's first cluster
// (rayservice_controller.go:497-503): 100.
const initialCapacity int32 = 100
