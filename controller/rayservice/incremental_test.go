package rayservice

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// incrService is testService upgraded with NewClusterWithIncrementalUpgrade.
func incrService(step, interval, surge int32) *rayv1.RayService {
	rs := testService()
	inc := rayv1.NewClusterWithIncrementalUpgrade
	rs.Spec.RayClusterSpec.EnableInTreeAutoscaling = fixture.Ptr(true)
	rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: &inc, ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{
		StepSizePercent: ptr.To(step), IntervalSeconds: ptr.To(interval), MaxSurgePercent: ptr.To(surge), GatewayClassName: "raydar-sandbox"}}
	return rs
}

func TestIncrementalTrafficStep(t *testing.T) {
	t0 := fixture.T0
	at := func(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(t0.Add(-d))) }
	s := split{ActiveCapacity: 100, PendingCapacity: 30, ActiveTraffic: 90, PendingTraffic: 10}
	for _, tc := range []struct {
		name  string
		s     split
		last  *metav1.Time
		ready bool
		want  int32 // pending traffic after
		moved bool
	}{
		{"interval not over: holds", s, at(29 * time.Second), true, 10, false},
		{"interval over: one step", s, at(30 * time.Second), true, 35 - 5, true}, // 10+25 capped by capacity 30
		{"never moved: moves at once", split{100, 50, 100, 0}, nil, true, 25, true},
		{"pending not ready: holds", s, nil, false, 10, false},
		{"at its capacity: holds", split{100, 30, 70, 30}, nil, true, 30, false},
		{"never above 100", split{0, 100, 10, 90}, nil, true, 100, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, moved := trafficStep(tc.s, 25, 30*time.Second, tc.last, tc.ready, t0)
			if moved != tc.moved || got.PendingTraffic != tc.want || got.ActiveTraffic != 100-tc.want {
				t.Errorf("got %+v moved=%v, want pending %d moved=%v", got, moved, tc.want, tc.moved)
			}
		})
	}
}

// The whole state machine of pure steps: capacity goes up by the surge,
// traffic follows by the step, the old cluster's capacity goes down; the
// invariants hold at every step, and it ends with the old cluster at 0 and
// all traffic on the new one.
func TestIncrementalStepsToTheEnd(t *testing.T) {
	for _, c := range []struct{ step, surge int32 }{{10, 10}, {25, 50}, {7, 30}, {100, 100}, {10, 0}} {
		t.Run(fmt.Sprintf("step %d surge %d", c.step, c.surge), func(t *testing.T) {
			s := split{ActiveCapacity: 100, PendingCapacity: 0, ActiveTraffic: 100, PendingTraffic: 0}
			var trail []string
			for i := 0; ; i++ {
				if i > 200 {
					if c.surge == 0 {
						return // maxSurgePercent 0 never moves: KubeRay's validation allows it
					}
					t.Fatalf("no end after 200 steps: %v", trail)
				}
				if upgradeComplete(s) {
					break
				}
				if w, goal := capacityStep(s, c.surge); w == toPending {
					s.PendingCapacity = goal
				} else if w == toActive {
					s.ActiveCapacity = goal
				}
				s, _ = trafficStep(s, c.step, 0, nil, true, fixture.T0)
				trail = append(trail, fmt.Sprintf("%d/%d %d/%d", s.ActiveCapacity, s.PendingCapacity, s.ActiveTraffic, s.PendingTraffic))
				if s.PendingTraffic > s.PendingCapacity || s.ActiveTraffic+s.PendingTraffic != 100 {
					t.Fatalf("traffic above capacity or not 100 in all: %v", trail)
				}
				if sum := s.ActiveCapacity + s.PendingCapacity; sum < 100 || sum > 100+c.surge {
					t.Fatalf("capacities add up to %d: %v", sum, trail)
				}
			}
			if c.surge == 0 {
				t.Fatal("maxSurgePercent 0 ended")
			}
			if s.ActiveCapacity != 0 || s.PendingTraffic != 100 {
				t.Fatalf("end %+v", s)
			}
		})
	}
}

func TestIncrementalCapacityStep(t *testing.T) {
	for _, tc := range []struct {
		s    split
		w    which
		goal int32
	}{
		{split{100, 0, 100, 0}, toPending, 30},
		{split{100, 30, 80, 20}, noCluster, 0}, // traffic has not caught up
		{split{100, 30, 70, 30}, toActive, 70},
		{split{70, 30, 70, 30}, toPending, 60},
		{split{10, 100, 0, 100}, toActive, 0},
		{split{0, 100, 0, 100}, noCluster, 0}, // done
	} {
		if w, goal := capacityStep(tc.s, 30); w != tc.w || goal != tc.goal {
			t.Errorf("%+v: %v %d, want %v %d", tc.s, w, goal, tc.w, tc.goal)
		}
	}
}

// incrEnv is a RayService upgraded incrementally, observed as the sandbox
// would show it after each plan: the Gateway and HTTPRoute written and
// accepted, the Serve submissions taken.
type incrEnv struct {
	*testEnv
}

func newIncrEnv(t *testing.T, rs *rayv1.RayService) *incrEnv {
	e := &incrEnv{newEnv(t, rs)}
	e.o.Incremental = incrementalObserved{ClusterServices: map[string]*corev1.Service{}, ClusterEndpoints: map[string]int32{}}
	return e
}

// apply lays the plan over the observation, as act and the Gateway
// controller would.
func (e *incrEnv) apply(p *plan) {
	io := &e.o.Incremental
	if gw := p.Incr.Gateway; gw != nil {
		gw = gw.DeepCopy()
		gw.ResourceVersion = "1"
		gw.Status.Conditions = []metav1.Condition{
			{Type: string(gwv1.GatewayConditionAccepted), Status: metav1.ConditionTrue, Reason: "Accepted"},
			{Type: string(gwv1.GatewayConditionProgrammed), Status: metav1.ConditionTrue, Reason: "Programmed"}}
		io.Gateway = gw
	}
	if rt := p.Incr.HTTPRoute; rt != nil {
		rt = rt.DeepCopy()
		rt.ResourceVersion = "1"
		rt.Status.Parents = []gwv1.RouteParentStatus{{ParentRef: rt.Spec.ParentRefs[0], ControllerName: "sim", Conditions: []metav1.Condition{
			{Type: string(gwv1.RouteConditionAccepted), Status: metav1.ConditionTrue, Reason: "Accepted"},
			{Type: string(gwv1.RouteConditionResolvedRefs), Status: metav1.ConditionTrue, Reason: "ResolvedRefs"}}}}
		io.HTTPRoute = rt
	}
	for _, s := range p.CreateServices {
		if strings.HasSuffix(s.Name, "-serve-svc") && s.Labels[rayv1.RayOriginatedFromCRNameLabelKey] != e.o.Service.Name {
			io.ClusterServices[s.Labels[rayv1.RayOriginatedFromCRNameLabelKey]] = s
			io.ClusterEndpoints[s.Labels[rayv1.RayOriginatedFromCRNameLabelKey]] = 1
		}
	}
	for _, c := range p.Incr.Capacity {
		c.Step.Cluster.Annotations[ServeConfigHashKey] = c.Step.Config.Hash
	}
	for _, a := range p.Annotate {
		for k, v := range a.Set {
			if v == nil {
				delete(a.Cluster.Annotations, k)
			} else {
				a.Cluster.Annotations[k] = *v
			}
		}
	}
	for _, s := range p.UpdateServices {
		if s.Name == e.o.HeadService.Name {
			e.o.HeadService = s
		}
	}
	e.o.Service.Status = p.Status
}

func weights(rt *gwv1.HTTPRoute) string {
	var out []string
	for _, b := range rt.Spec.Rules[0].BackendRefs {
		out = append(out, fmt.Sprintf("%s=%d", b.Name, ptr.Deref(b.Weight, -1)))
	}
	return strings.Join(out, ",")
}

// A whole upgrade through decide: traffic moves by the step every
// interval, never before; capacities go by the surge; at the end the new
// cluster is active with 100% and the old one retires.
func TestIncrementalDecideWholeUpgrade(t *testing.T) {
	e := newIncrEnv(t, incrService(25, 30, 50))
	old := e.cluster("aaaaa", time.Hour)
	e.pods(old, "true", "true", true)
	e.submitted(old)
	e.services(old)
	e.probe(old, dashboard.AppRunning, true).Active = true

	// Steady: Gateway and HTTPRoute to the one cluster, 100%.
	p := decide(e.o)
	if p.Incr.Gateway == nil || p.Incr.Gateway.Spec.GatewayClassName != "raydar-sandbox" || p.Incr.Gateway.Name != "svc-gateway" ||
		p.Incr.Gateway.Spec.Listeners[0].Port != 80 || p.Incr.Gateway.OwnerReferences[0].UID != "rs-uid" {
		t.Fatalf("Gateway %+v", p.Incr.Gateway)
	}
	if p.Incr.HTTPRoute == nil || weights(p.Incr.HTTPRoute) != "svc-aaaaa-serve-svc=100" {
		t.Fatalf("HTTPRoute %+v", p.Incr.HTTPRoute)
	}
	for _, s := range p.CreateServices {
		if s.Name == "svc-serve-svc" {
			t.Errorf("a RayService serve Service with an incremental upgrade: %+v", s)
		}
	}
	e.apply(p)
	if st := e.o.Service.Status.ActiveServiceStatus; ptr.Deref(st.TrafficRoutedPercent, -1) != 100 {
		t.Fatalf("active status %+v", st)
	}

	// The spec changes: a pending cluster, at target_capacity 0.
	e.o.Service.Generation = 2
	e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	p = decide(e.o)
	if p.CreateCluster == nil {
		t.Fatal("no pending cluster")
	}
	if r := p.CreateCluster.Spec.WorkerGroupSpecs[0].Replicas; r != nil {
		t.Errorf("the new cluster of an incremental upgrade starts with replicas %d, want none (KubeRay)", *r)
	}
	e.apply(p)
	if tc := e.o.Service.Status.PendingServiceStatus.TargetCapacity; ptr.Deref(tc, -1) != 0 {
		t.Fatalf("pending target_capacity %v", tc)
	}
	pending := e.cluster("abcde", 0)
	e.pods(pending, "true", "true", true)
	e.probe(pending, dashboard.AppRunning, true)
	p = decide(e.o)
	if len(p.Submit) != 1 || !strings.Contains(string(p.Submit[0].Config.JSON), `"target_capacity":0`) {
		t.Fatalf("first submission to the pending cluster %+v", p.Submit)
	}
	e.submitted(pending)
	e.apply(p)

	// Step by step, one second at a time.
	var trail []string
	last := ""
	moves := map[string]time.Time{}
	for i := 0; i < 600; i++ {
		e.o.Now = e.o.Now.Add(time.Second)
		p = decide(e.o)
		e.apply(p)
		if rt := e.o.Incremental.HTTPRoute; rt != nil && weights(rt) != last {
			last = weights(rt)
			moves[last] = e.o.Now
			a, pd := e.o.Service.Status.ActiveServiceStatus, e.o.Service.Status.PendingServiceStatus
			trail = append(trail, fmt.Sprintf("t+%s %s tc %d/%d", e.o.Now.Sub(fixture.T0), last, ptr.Deref(a.TargetCapacity, -1), ptr.Deref(pd.TargetCapacity, -1)))
			// The pass that moves the last traffic does not switch: the
			// status shows the old cluster still active at 0% (its
			// capacity steps to 0 in the next pass, which switches), as
			// KubeRay v1.6.2's does (test/conformance compares the steps).
			if last == "svc-aaaaa-serve-svc=0,svc-abcde-serve-svc=100" &&
				(a.RayClusterName != old.Name || ptr.Deref(a.TrafficRoutedPercent, -1) != 0 || ptr.Deref(a.TargetCapacity, -1) == 0 || pd.RayClusterName != pending.Name) {
				t.Errorf("status when the last traffic moved: active %s %d%% tc %d, pending %s", a.RayClusterName,
					ptr.Deref(a.TrafficRoutedPercent, -1), ptr.Deref(a.TargetCapacity, -1), pd.RayClusterName)
			}
		}
		if last == "svc-abcde-serve-svc=100" {
			break
		}
	}
	want := []string{
		"svc-aaaaa-serve-svc=100,svc-abcde-serve-svc=0",
		"svc-aaaaa-serve-svc=75,svc-abcde-serve-svc=25",
		"svc-aaaaa-serve-svc=50,svc-abcde-serve-svc=50",
		"svc-aaaaa-serve-svc=25,svc-abcde-serve-svc=75",
		"svc-aaaaa-serve-svc=0,svc-abcde-serve-svc=100",
		"svc-abcde-serve-svc=100",
	}
	if len(trail) != len(want) {
		t.Fatalf("weights over time:\n%s", strings.Join(trail, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(trail[i], " "+w+" ") {
			t.Errorf("step %d: %s, want %s\n%s", i, trail[i], w, strings.Join(trail, "\n"))
		}
	}
	// The traffic moved every intervalSeconds, not sooner.
	for i := 2; i < 5; i++ {
		if d := moves[want[i]].Sub(moves[want[i-1]]); d < 30*time.Second {
			t.Errorf("step %d came %s after the previous one", i, d)
		}
	}
	st := e.o.Service.Status
	if st.PendingServiceStatus.RayClusterName != "" || ptr.Deref(st.ActiveServiceStatus.TargetCapacity, -1) != 100 ||
		ptr.Deref(st.ActiveServiceStatus.TrafficRoutedPercent, -1) != 100 || st.ActiveServiceStatus.LastTrafficMigratedTime == nil {
		t.Errorf("status at the end %+v", st)
	}
	if e.o.HeadService.Spec.Selector[rayv1.RayClusterLabelKey] != pending.Name {
		t.Errorf("head Service selects %v", e.o.HeadService.Spec.Selector)
	}
	if _, ok := deleteAfter(old); !ok {
		t.Errorf("old cluster not retiring: %v", old.Annotations)
	}
	if c := condOf(st, rayv1.UpgradeInProgress); c.Status != metav1.ConditionFalse {
		t.Errorf("UpgradeInProgress %+v", c)
	}
	// The old cluster goes after rayClusterDeletionDelaySeconds.
	e.o.Now = e.o.Now.Add(61 * time.Second)
	if got := deletedNames(decide(e.o)); len(got) != 1 || got[0] != old.Name {
		t.Errorf("deleted %v", got)
	}
}

// Until the Gateway is Programmed and the route accepted, target_capacity
// does not move (KubeRay's checkIfNeedTargetCapacityUpdate).
func TestIncrementalWaitsForTheGateway(t *testing.T) {
	e := newIncrEnv(t, incrService(25, 30, 50))
	old := e.cluster("aaaaa", time.Hour)
	e.pods(old, "true", "true", true)
	e.submitted(old)
	e.services(old)
	e.probe(old, dashboard.AppRunning, true).Active = true
	e.apply(decide(e.o))
	e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	e.apply(decide(e.o))
	pending := e.cluster("abcde", 0)
	e.pods(pending, "true", "true", true)
	e.probe(pending, dashboard.AppRunning, true)
	e.submitted(pending)
	e.o.Incremental.Gateway.Status.Conditions = nil // not Programmed
	p := decide(e.o)
	if len(p.Incr.Capacity) != 0 {
		t.Fatalf("target_capacity moved before the Gateway was ready: %+v", p.Incr.Capacity)
	}
	if got := eventReasons(p); !strings.Contains(strings.Join(got, ","), reasonWaitingForGateway) {
		t.Errorf("events %v", got)
	}
}

func TestIncrementalRefusals(t *testing.T) {
	t.Run("no Gateway API: refused by name", func(t *testing.T) {
		e := newIncrEnv(t, incrService(25, 30, 50))
		e.o.Incremental.GatewayAPIMissing = true
		p := decide(e.o)
		if p.CreateCluster != nil || p.Incr.Gateway != nil {
			t.Fatalf("created something: %+v", p)
		}
		c := meta.FindStatusCondition(p.Status.Conditions, string(rayv1.RayServiceReady))
		if c == nil || c.Reason != string(rayv1.RayServiceValidationFailed) || !strings.Contains(c.Message, "Gateway API") {
			t.Errorf("Ready %+v", c)
		}
		if got := eventReasons(p); len(got) != 1 || got[0] != rayv1.EventInvalidRayServiceSpec || p.Events[0].Type != corev1.EventTypeWarning {
			t.Errorf("events %+v", p.Events)
		}
	})
	for name, mut := range map[string]func(*rayv1.RayService){
		"no autoscaler":           func(rs *rayv1.RayService) { rs.Spec.RayClusterSpec.EnableInTreeAutoscaling = nil },
		"no options":              func(rs *rayv1.RayService) { rs.Spec.UpgradeStrategy.ClusterUpgradeOptions = nil },
		"stepSizePercent missing": func(rs *rayv1.RayService) { rs.Spec.UpgradeStrategy.ClusterUpgradeOptions.StepSizePercent = nil },
		"stepSizePercent 101": func(rs *rayv1.RayService) {
			rs.Spec.UpgradeStrategy.ClusterUpgradeOptions.StepSizePercent = ptr.To(int32(101))
		},
		"maxSurgePercent -1": func(rs *rayv1.RayService) {
			rs.Spec.UpgradeStrategy.ClusterUpgradeOptions.MaxSurgePercent = ptr.To(int32(-1))
		},
		"intervalSeconds 0": func(rs *rayv1.RayService) {
			rs.Spec.UpgradeStrategy.ClusterUpgradeOptions.IntervalSeconds = ptr.To(int32(0))
		},
		"no gatewayClassName": func(rs *rayv1.RayService) { rs.Spec.UpgradeStrategy.ClusterUpgradeOptions.GatewayClassName = "" },
	} {
		t.Run(name, func(t *testing.T) {
			rs := incrService(25, 30, 50)
			mut(rs)
			e := newIncrEnv(t, rs)
			p := decide(e.o)
			if p.CreateCluster != nil || p.Incr.Gateway != nil {
				t.Fatalf("created something: %+v", p)
			}
			if c := condOf(p.Status, rayv1.RayServiceReady); c.Reason != string(rayv1.RayServiceValidationFailed) {
				t.Errorf("Ready %+v", c)
			}
		})
	}
}
