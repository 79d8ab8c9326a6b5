package why

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func condition(t, status, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: msg}
}

// incrementalService is readyService mid NewClusterWithIncrementalUpgrade
// (class raydar-sandbox, 10% every 60s), its new cluster rc-new ready
// with its app RUNNING.
func incrementalService() *rayv1.RayService {
	s := readyService()
	inc := rayv1.NewClusterWithIncrementalUpgrade
	s.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: &inc, ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{
		StepSizePercent: ptr(int32(10)), IntervalSeconds: ptr(int32(60)), GatewayClassName: "raydar-sandbox"}}
	s.Status.Conditions = append(s.Status.Conditions, condition(string(rayv1.UpgradeInProgress), "True", string(rayv1.BothActivePendingClustersExist), ""))
	s.Status.PendingServiceStatus = rayv1.RayServiceStatus{RayClusterName: "rc-new", Applications: map[string]rayv1.AppStatus{
		"llm": {Status: rayv1.ApplicationStatusRunning}}}
	return s
}

// readyGateway is what a working Gateway API implementation shows for
// svc: its class accepted, the Gateway Accepted and Programmed, the
// HTTPRoute Accepted with its references resolved.
func readyGateway() *GatewayInput {
	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc-gateway"},
		Status: gwv1.GatewayStatus{Conditions: []metav1.Condition{
			condition("Accepted", "True", "Accepted", ""), condition("Programmed", "True", "Programmed", "")}}}
	rt := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc-httproute"},
		Status: gwv1.HTTPRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{{
			ParentRef:      gwv1.ParentReference{Name: "svc-gateway"},
			ControllerName: "raydar.io/sandbox-gateway",
			Conditions: []metav1.Condition{condition("Accepted", "True", "Accepted", ""),
				condition("ResolvedRefs", "True", "ResolvedRefs", "")}}}}}}
	return &GatewayInput{Class: &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "raydar-sandbox"}},
		Classes: []string{"raydar-sandbox"}, Gateway: gw, Route: rt}
}

func newCluster() *ClusterInput {
	rc := readyCluster()
	rc.Name = "rc-new"
	return &ClusterInput{Cluster: rc, Pods: healthyPods(), Reconciler: active(), Now: now}
}

// TestIncrementalUpgradeCauses: what holds an incremental upgrade on the
// Gateway API side, each with its evidence and fix, the first that holds
// only (a later one follows from it); and nothing when all is ready, when
// the objects were not read, or when the service uses another strategy.
func TestIncrementalUpgradeCauses(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(in *ServiceInput)
		want     []string
		evidence []string
		fix      string
	}{
		{name: "all ready: nothing", edit: func(in *ServiceInput) {}},
		{name: "not read: nothing said", edit: func(in *ServiceInput) { in.Gateway = nil }},
		{name: "another strategy: nothing said of a missing Gateway API", edit: func(in *ServiceInput) {
			nc := rayv1.NewCluster
			in.Service.Spec.UpgradeStrategy.Type = &nc
			in.Gateway = &GatewayInput{NoAPI: true}
		}},
		{name: "no Gateway API", edit: func(in *ServiceInput) { in.Gateway = &GatewayInput{NoAPI: true} },
			want:     []string{"GatewayAPIMissing: no Gateway API in this cluster: the incremental upgrade has no Gateway to move traffic through"},
			evidence: []string{"the Gateway API CRDs are not installed"},
			fix:      "install the Gateway API CRDs and an implementation that provides GatewayClass raydar-sandbox"},
		{name: "no GatewayClass of that name, others there", edit: func(in *ServiceInput) {
			in.Gateway.Class, in.Gateway.Classes = nil, []string{"envoy", "istio"}
			in.Gateway.Gateway.Status.Conditions = nil // follows from the missing class: not said
		}, want: []string{"GatewayClassMissing: no GatewayClass raydar-sandbox: no Gateway API implementation serves the upgrade's Gateway"},
			evidence: []string{"gatewayClassName is raydar-sandbox", "GatewayClasses here: envoy, istio"},
			fix:      "or fix gatewayClassName to one of envoy, istio"},
		{name: "no GatewayClass at all", edit: func(in *ServiceInput) { in.Gateway.Class, in.Gateway.Classes = nil, []string{} },
			want:     []string{"GatewayClassMissing: no GatewayClass raydar-sandbox: no Gateway API implementation serves the upgrade's Gateway"},
			evidence: []string{"there is no GatewayClass at all"},
			fix:      "install a Gateway API implementation (e.g. Envoy Gateway, Istio) that provides GatewayClass raydar-sandbox"},
		{name: "Gateway not Programmed: its reason and message quoted", edit: func(in *ServiceInput) {
			in.Gateway.Gateway.Status.Conditions[1] = condition("Programmed", "False", "AddressNotAssigned", "No addresses have been assigned to the Gateway")
			in.Gateway.Route.Status.Parents = nil // follows from the Gateway: not said
		}, want: []string{"GatewayNotReady: Gateway svc-gateway not programmed: AddressNotAssigned (No addresses have been assigned to the Gateway)"},
			evidence: []string{"Gateway ns/svc-gateway: Programmed=False (AddressNotAssigned): No addresses have been assigned to the Gateway"},
			fix:      "look at the controller of GatewayClass raydar-sandbox (its logs, kubectl describe gateway svc-gateway -n ns)"},
		{name: "Gateway not Accepted", edit: func(in *ServiceInput) {
			in.Gateway.Gateway.Status.Conditions[0] = condition("Accepted", "False", "UnsupportedAddress", "address type not supported")
		}, want: []string{"GatewayNotReady: Gateway svc-gateway not accepted: UnsupportedAddress (address type not supported)"},
			evidence: []string{"Accepted=False (UnsupportedAddress): address type not supported"}},
		{name: "Gateway no controller has taken", edit: func(in *ServiceInput) { in.Gateway.Gateway.Status.Conditions = nil },
			want: []string{"GatewayNotReady: Gateway svc-gateway not accepted: no controller has taken it"}},
		{name: "Gateway not created", edit: func(in *ServiceInput) { in.Gateway.Gateway, in.Gateway.Route = nil, nil },
			want: []string{"GatewayNotReady: Gateway svc-gateway not created yet"}, evidence: []string{"there is no Gateway ns/svc-gateway"}},
		{name: "Gateway refused: the failed write says it, not again", edit: func(in *ServiceInput) {
			in.Gateway.Gateway, in.Gateway.Route = nil, nil
			in.Events = append(in.Events, warn("RayService", "svc", "FailedToCreateGateway",
				`Failed to create Gateway for RayService ns/svc-gateway: gateways.gateway.networking.k8s.io is forbidden: User "system:serviceaccount:raydar-system:raydar" cannot create resource "gateways"`))
		}, want: []string{"WriteFailed: raydar may not create gateways (RBAC)"}},
		{name: "target_capacity refused by the dashboard: a failed write of the upgrade", edit: func(in *ServiceInput) {
			in.Events = append(in.Events, warn("RayService", "svc", "FailedToUpdateTargetCapacity",
				"The Ray dashboard of RayCluster rc-new rejected target_capacity 50: connection refused"))
		}, want: []string{"WriteFailed: raydar failed to update the Serve target_capacity: The Ray dashboard of RayCluster rc-new rejected target_capacity 50: connectio..."}},
		{name: "HTTPRoute not Accepted", edit: func(in *ServiceInput) {
			in.Gateway.Route.Status.Parents[0].Conditions[0] = condition("Accepted", "False", "NotAllowedByListeners", "no listener allows routes from namespace ns")
		}, want: []string{"HTTPRouteNotAccepted: HTTPRoute svc-httproute not accepted: NotAllowedByListeners (no listener allows routes from namespace ns)"},
			evidence: []string{"HTTPRoute ns/svc-httproute on Gateway svc-gateway: Accepted=False (NotAllowedByListeners)"},
			fix:      "kubectl describe httproute svc-httproute -n ns"},
		{name: "HTTPRoute's backends not resolved", edit: func(in *ServiceInput) {
			in.Gateway.Route.Status.Parents[0].Conditions[1] = condition("ResolvedRefs", "False", "BackendNotFound", `service "rc-new-serve-svc" not found`)
		}, want: []string{`HTTPRouteNotAccepted: HTTPRoute svc-httproute references not resolved: BackendNotFound (service "rc-new-serve-svc" not found)`}},
		{name: "HTTPRoute the Gateway's controller has not taken", edit: func(in *ServiceInput) { in.Gateway.Route.Status.Parents = nil },
			want:     []string{"HTTPRouteNotAccepted: HTTPRoute svc-httproute not accepted: the Gateway's controller has not taken it"},
			evidence: []string{"no status for its parent Gateway svc-gateway"}},
		{name: "HTTPRoute status for another Gateway only", edit: func(in *ServiceInput) {
			in.Gateway.Route.Status.Parents[0].ParentRef.Name = "other"
		}, want: []string{"HTTPRouteNotAccepted: HTTPRoute svc-httproute not accepted: the Gateway's controller has not taken it"}},
		{name: "HTTPRoute not created", edit: func(in *ServiceInput) { in.Gateway.Route = nil },
			want: []string{"HTTPRouteNotAccepted: HTTPRoute svc-httproute not created yet"}},
		{name: "new cluster not ready: which part, beside the Gateway's cause", edit: func(in *ServiceInput) {
			in.Pending.Cluster.Status.State, in.Pending.Cluster.Status.ReadyWorkerReplicas = "", 1
			in.Pending.Pods[0].Status.Conditions[1].Status = corev1.ConditionFalse
			in.Service.Status.PendingServiceStatus.Applications["llm"] = rayv1.AppStatus{Status: rayv1.ApplicationStatusDeploying}
			in.Gateway.Gateway.Status.Conditions[1] = condition("Programmed", "False", "Pending", "Waiting for an address")
		}, want: []string{"GatewayNotReady: Gateway svc-gateway not programmed: Pending (Waiting for an address)",
			"PendingClusterNotReady: new cluster rc-new not ready (pending): head not ready, workers pending (1/3 ready), Serve apps not running (llm DEPLOYING)"},
			evidence: []string{"head pod rc-head: Running, not Ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ServiceInput{Service: incrementalService(), Reconciler: active(), Now: now, Gateway: readyGateway(),
				Active:  &ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now},
				Pending: newCluster()}
			tt.edit(&in)
			got := Service(in)
			sameLines(t, got, tt.want)
			for _, e := range tt.evidence {
				hasEvidence(t, got, e)
			}
			if tt.fix != "" && (len(got) == 0 || !strings.Contains(got[0].Fix, tt.fix)) {
				t.Errorf("fix of the first cause does not say %q: %+v", tt.fix, got)
			}
			if tt.want == nil && got != nil {
				t.Errorf("want nil, got %#v", got)
			}
		})
	}
}

// TestPendingClusterNotReadyParts: the new cluster says which part it
// waits for; the fix of an incremental upgrade says traffic moves in
// steps; a new cluster that is ready with its apps RUNNING says nothing.
func TestPendingClusterNotReadyParts(t *testing.T) {
	tests := []struct {
		name        string
		incremental bool
		edit        func(in *ServiceInput)
		want        []string
		fix         string
	}{
		{name: "ready, apps running: nothing", incremental: true, edit: func(in *ServiceInput) {}},
		{name: "apps deploying on a ready cluster", incremental: true, edit: func(in *ServiceInput) {
			in.Service.Status.PendingServiceStatus.Applications["llm"] = rayv1.AppStatus{Status: rayv1.ApplicationStatusDeploying}
		}, want: []string{"PendingClusterNotReady: new cluster rc-new not serving yet: Serve apps not running (llm DEPLOYING)"},
			fix: "traffic moves to it in steps of 10% once its head is ready and its Serve apps run"},
		{name: "workers pending (NewCluster)", edit: func(in *ServiceInput) {
			in.Pending.Cluster.Status.State, in.Pending.Cluster.Status.ReadyWorkerReplicas = "", 2
		}, want: []string{"PendingClusterNotReady: new cluster rc-new not ready (pending): workers pending (2/3 ready)"},
			fix: "the upgrade switches traffic once it is ready and its apps run"},
		{name: "no head pod", edit: func(in *ServiceInput) {
			in.Pending.Cluster.Status.State = ""
			in.Pending.Pods = in.Pending.Pods[1:]
		}, want: []string{"PendingClusterNotReady: new cluster rc-new not ready (pending): no head pod"}},
		{name: "a DEPLOY_FAILED app is its own cause, not a part", incremental: true, edit: func(in *ServiceInput) {
			in.Service.Status.PendingServiceStatus.Applications["llm"] = rayv1.AppStatus{Status: rayv1.ApplicationStatusDeployFailed, Message: "ImportError"}
		}, want: []string{"AppDeployFailed: new cluster: app llm DEPLOY_FAILED: ImportError"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := incrementalService()
			var g *GatewayInput
			if tt.incremental {
				g = readyGateway()
			} else {
				nc := rayv1.NewCluster
				s.Spec.UpgradeStrategy.Type = &nc
			}
			in := ServiceInput{Service: s, Reconciler: active(), Now: now, Gateway: g,
				Active:  &ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now},
				Pending: newCluster()}
			tt.edit(&in)
			got := Service(in)
			sameLines(t, got, tt.want)
			if tt.fix != "" && (len(got) == 0 || !strings.Contains(got[0].Fix, tt.fix)) {
				t.Errorf("fix of the first cause does not say %q: %+v", tt.fix, got)
			}
		})
	}
}
