package rayservice

import (
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestRayServiceStatusRules(t *testing.T) {
	cond := func(typ rayv1.RayServiceConditionType, s metav1.ConditionStatus, reason rayv1.RayServiceConditionReason, msg string) metav1.Condition {
		return metav1.Condition{Type: string(typ), Status: s, Reason: string(reason), Message: msg, LastTransitionTime: metav1.NewTime(fixture.T0)}
	}
	base := func() rayv1.RayServiceStatuses {
		return rayv1.RayServiceStatuses{
			ObservedGeneration: 1,
			Conditions: []metav1.Condition{
				cond(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializing, "waiting for the head pod of RayCluster svc-a"),
				cond(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.NoActiveCluster, ""),
			},
			PendingServiceStatus: rayv1.RayServiceStatus{RayClusterName: "svc-a"},
		}
	}
	for _, tc := range []struct {
		name            string
		change          func(*rayv1.RayServiceStatuses)
		equal, material bool
		urgent          bool
	}{
		{"nothing", func(*rayv1.RayServiceStatuses) {}, true, false, false},
		{"lastUpdateTime only", func(s *rayv1.RayServiceStatuses) { now := metav1.NewTime(fixture.T0); s.LastUpdateTime = &now }, true, false, false},
		{"cluster status copy only: carried, not material", func(s *rayv1.RayServiceStatuses) {
			s.PendingServiceStatus.RayClusterStatus.ReadyWorkerReplicas = 1
		}, false, false, false},
		{"new generation", func(s *rayv1.RayServiceStatuses) { s.ObservedGeneration = 2 }, false, true, true},
		{"message while initializing: coalesced", func(s *rayv1.RayServiceStatuses) {
			s.Conditions[0].Message = "deploying Serve applications on RayCluster svc-a"
		}, false, true, false},
		{"applications deploying: coalesced", func(s *rayv1.RayServiceStatuses) {
			s.PendingServiceStatus.Applications = map[string]rayv1.AppStatus{"a": {Status: "DEPLOYING"}}
		}, false, true, false},
		{"application failed: urgent", func(s *rayv1.RayServiceStatuses) {
			s.PendingServiceStatus.Applications = map[string]rayv1.AppStatus{"a": {Status: "DEPLOY_FAILED", Message: "boom"}}
		}, false, true, true},
		{"first promotion without endpoints: coalesced with Ready", func(s *rayv1.RayServiceStatuses) {
			s.ActiveServiceStatus, s.PendingServiceStatus = s.PendingServiceStatus, rayv1.RayServiceStatus{}
			s.Conditions[0] = cond(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.ZeroServeEndpoints, "no endpoints")
			s.Conditions[1] = cond(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.NoPendingCluster, "")
		}, false, true, false},
		{"Ready: urgent", func(s *rayv1.RayServiceStatuses) {
			s.Conditions[0] = cond(rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints, "")
		}, false, true, true},
		{"suspend condition appears: urgent", func(s *rayv1.RayServiceStatuses) {
			s.Conditions = append(s.Conditions, cond(rayv1.RayServiceSuspending, metav1.ConditionTrue, rayv1.SuspendInProgress, ""))
		}, false, true, true},
		{"invalid spec: urgent", func(s *rayv1.RayServiceStatuses) {
			s.Conditions[0] = cond(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed, "bad")
		}, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := base()
			cur := base()
			tc.change(&cur)
			if got := statusEqual(old, cur); got != tc.equal {
				t.Errorf("equal = %v, want %v", got, tc.equal)
			}
			if got := !statusMaterialEqual(old, cur); got != tc.material {
				t.Errorf("material change = %v, want %v", got, tc.material)
			}
			if got := statusUrgent(old, cur); got != tc.urgent {
				t.Errorf("urgent = %v, want %v", got, tc.urgent)
			}
		})
	}
}

func TestRayServiceSetConditionKeepsTransitionTime(t *testing.T) {
	rs := testService()
	var conds []metav1.Condition
	meta.SetStatusCondition(&conds, newCondition(rs, rayv1.RayServiceReady, false, rayv1.RayServiceInitializing, "a", fixture.T0))
	meta.SetStatusCondition(&conds, newCondition(rs, rayv1.RayServiceReady, false, rayv1.ZeroServeEndpoints, "b", fixture.T0.Add(time.Minute)))
	if c := conds[0]; !c.LastTransitionTime.Time.Equal(fixture.T0) || c.Reason != string(rayv1.ZeroServeEndpoints) {
		t.Errorf("same status: %+v", c)
	}
	meta.SetStatusCondition(&conds, newCondition(rs, rayv1.RayServiceReady, true, rayv1.NonZeroServeEndpoints, "c", fixture.T0.Add(2*time.Minute)))
	if c := conds[0]; !c.LastTransitionTime.Time.Equal(fixture.T0.Add(2 * time.Minute)) {
		t.Errorf("status changed: %+v", c)
	}
}

func TestRayServiceHashes(t *testing.T) {
	rs := testService()
	spec := &rs.Spec.RayClusterSpec
	h := clusterHash(spec, -1)
	same := spec.DeepCopy()
	same.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(9))
	same.WorkerGroupSpecs[0].MinReplicas = fixture.Ptr(int32(2))
	same.WorkerGroupSpecs[0].MaxReplicas = fixture.Ptr(int32(99))
	same.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{"p"}
	same.Suspend = fixture.Ptr(true)
	same.HeadGroupSpec.Template.Labels = map[string]string{rayv1.RayClusterServingServiceLabelKey: "false"}
	if clusterHash(same, -1) != h {
		t.Error("ignored fields change the hash")
	}
	diff := spec.DeepCopy()
	diff.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
	if clusterHash(diff, -1) == h {
		t.Error("rayStartParams do not change the hash")
	}
	appended := spec.DeepCopy()
	appended.WorkerGroupSpecs = append(appended.WorkerGroupSpecs, fixture.Group("more", 1))
	if clusterHash(appended, 1) != h || clusterHash(appended, -1) == h {
		t.Error("hash over the first n groups")
	}

	a, err := parseServeConfig("applications:\n  - name: x\n    import_path: m.app\n  - import_path: n.app\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Apps) != 2 || a.Apps[0] != "default" || a.Apps[1] != "x" {
		t.Errorf("apps = %v", a.Apps)
	}
	b, _ := parseServeConfig("applications: [{import_path: m.app, name: x}, {import_path: n.app}]")
	if a.Hash != b.Hash {
		t.Error("the same config in another YAML form hashes differently")
	}
	if e, _ := parseServeConfig("  "); e.Hash != "" {
		t.Error("empty config has a hash")
	}
}

// Ready and UpgradeInProgress in every phase, as KubeRay v1.7.0's
// calculateConditions (rayservice_controller.go) sets them: reasons and
// statuses (raydar's messages differ).
func TestRayServiceConditionsAsKubeRay(t *testing.T) {
	type c = struct {
		s metav1.ConditionStatus
		r rayv1.RayServiceConditionReason
	}
	F, T, U := metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionUnknown
	prior := func(ready, upgrade *c) []metav1.Condition {
		var out []metav1.Condition
		if ready != nil {
			out = append(out, metav1.Condition{Type: string(rayv1.RayServiceReady), Status: ready.s, Reason: string(ready.r), LastTransitionTime: metav1.NewTime(fixture.T0)})
		}
		if upgrade != nil {
			out = append(out, metav1.Condition{Type: string(rayv1.UpgradeInProgress), Status: upgrade.s, Reason: string(upgrade.r), LastTransitionTime: metav1.NewTime(fixture.T0)})
		}
		return out
	}
	a, b := fixture.Cluster("svc-aaaaa"), fixture.Cluster("svc-bbbbb")
	for _, tc := range []struct {
		name            string
		prior           []metav1.Condition
		active, pending *rayv1.RayCluster
		endpoints       int32
		ready, upgrade  c
	}{
		{name: "new RayService, no cluster yet", ready: c{F, rayv1.RayServiceInitializing}, upgrade: c{F, rayv1.RayServiceInitializing}},
		{name: "new RayService, its pending cluster's pods cannot be created", pending: a,
			ready: c{F, rayv1.RayServiceInitializing}, upgrade: c{F, rayv1.RayServiceInitializing}},
		{name: "initializing, pending cluster coming up", prior: prior(&c{F, rayv1.RayServiceInitializing}, &c{F, rayv1.RayServiceInitializing}), pending: a,
			ready: c{F, rayv1.RayServiceInitializing}, upgrade: c{F, rayv1.RayServiceInitializing}},
		{name: "first cluster active, no endpoints yet: still Initializing", prior: prior(&c{F, rayv1.RayServiceInitializing}, &c{F, rayv1.RayServiceInitializing}), active: a,
			ready: c{F, rayv1.RayServiceInitializing}, upgrade: c{F, rayv1.NoPendingCluster}},
		{name: "serving", prior: prior(&c{F, rayv1.RayServiceInitializing}, &c{F, rayv1.NoPendingCluster}), active: a, endpoints: 2,
			ready: c{T, rayv1.NonZeroServeEndpoints}, upgrade: c{F, rayv1.NoPendingCluster}},
		{name: "endpoints dropped to 0", prior: prior(&c{T, rayv1.NonZeroServeEndpoints}, &c{F, rayv1.NoPendingCluster}), active: a,
			ready: c{F, rayv1.ZeroServeEndpoints}, upgrade: c{F, rayv1.NoPendingCluster}},
		{name: "still no endpoints: ZeroServeEndpoints stays", prior: prior(&c{F, rayv1.ZeroServeEndpoints}, &c{F, rayv1.NoPendingCluster}), active: a,
			ready: c{F, rayv1.ZeroServeEndpoints}, upgrade: c{F, rayv1.NoPendingCluster}},
		{name: "upgrade: both clusters", prior: prior(&c{T, rayv1.NonZeroServeEndpoints}, &c{F, rayv1.NoPendingCluster}), active: a, pending: b, endpoints: 1,
			ready: c{T, rayv1.NonZeroServeEndpoints}, upgrade: c{T, rayv1.BothActivePendingClustersExist}},
		{name: "upgrade done", prior: prior(&c{T, rayv1.NonZeroServeEndpoints}, &c{T, rayv1.BothActivePendingClustersExist}), active: b, endpoints: 1,
			ready: c{T, rayv1.NonZeroServeEndpoints}, upgrade: c{F, rayv1.NoPendingCluster}},
		{name: "no active cluster once one was: Unknown NoActiveCluster", prior: prior(&c{F, rayv1.ZeroServeEndpoints}, &c{F, rayv1.NoPendingCluster}), pending: b,
			ready: c{F, rayv1.ZeroServeEndpoints}, upgrade: c{U, rayv1.NoActiveCluster}},
		{name: "timed out while initializing: kept", prior: prior(&c{F, rayv1.RayServiceInitializingTimeout}, &c{F, rayv1.RayServiceInitializingTimeout}),
			ready: c{F, rayv1.RayServiceInitializingTimeout}, upgrade: c{F, rayv1.RayServiceInitializingTimeout}},
		{name: "spec fixed after ValidationFailed: Ready keeps it until endpoints, as in KubeRay", prior: prior(&c{F, rayv1.RayServiceValidationFailed}, nil), pending: a,
			ready: c{F, rayv1.RayServiceValidationFailed}, upgrade: c{U, rayv1.NoActiveCluster}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := testService()
			rs.Generation = 1
			rs.Status.Conditions = tc.prior
			o := &observed{Service: rs, Now: fixture.T0.Add(time.Minute), ServeEndpoints: tc.endpoints}
			st := computeStatus(o, statusBase(rs), tc.active, tc.pending, nil)
			for _, want := range []struct {
				typ rayv1.RayServiceConditionType
				c   c
			}{{rayv1.RayServiceReady, tc.ready}, {rayv1.UpgradeInProgress, tc.upgrade}} {
				got := meta.FindStatusCondition(st.Conditions, string(want.typ))
				if got == nil || got.Status != want.c.s || got.Reason != string(want.c.r) {
					t.Errorf("%s = %+v, want %s %s", want.typ, got, want.c.s, want.c.r)
				}
			}
		})
	}
}

// The conditions of each step of a suspension and a resume, as KubeRay
// v1.7.0's handleSuspend sets them (reasons and statuses; "" = absent).
func TestRayServiceSuspendConditionsAsKubeRay(t *testing.T) {
	type want = map[rayv1.RayServiceConditionType]string // "Status/Reason"
	rs := testService()
	rs.Generation = 1
	e := newEnv(t, rs)
	e.cluster("aaaaa", time.Minute)
	e.o.Service.Spec.Suspend = true
	steps := []struct {
		name  string
		setup func()
		want  want
	}{
		{"suspend first seen, the cluster still there", func() {}, want{
			rayv1.RayServiceSuspending: "True/SuspendRequested", rayv1.RayServiceSuspended: "",
			rayv1.RayServiceReady: "False/SuspendInProgress", rayv1.UpgradeInProgress: "False/SuspendInProgress", rayv1.RollbackInProgress: "False/SuspendInProgress"}},
		{"still deleting", func() {}, want{
			rayv1.RayServiceSuspending: "True/SuspendInProgress", rayv1.RayServiceSuspended: "",
			rayv1.RayServiceReady: "False/SuspendInProgress", rayv1.UpgradeInProgress: "False/SuspendInProgress"}},
		{"everything gone", func() { e.o.Clusters = nil }, want{
			rayv1.RayServiceSuspending: "False/SuspendComplete", rayv1.RayServiceSuspended: "True/SuspendComplete",
			rayv1.RayServiceReady: "False/SuspendComplete", rayv1.UpgradeInProgress: "False/SuspendComplete", rayv1.RollbackInProgress: "False/SuspendComplete"}},
		{"resumed", func() { e.o.Service.Spec.Suspend = false }, want{
			rayv1.RayServiceSuspending: "False/SuspendComplete", rayv1.RayServiceSuspended: "False/RayServiceResumed",
			rayv1.RayServiceReady: "False/Initializing", rayv1.UpgradeInProgress: "False/Initializing"}},
	}
	for _, s := range steps {
		s.setup()
		p := decide(e.o)
		for typ, w := range s.want {
			got := ""
			if c := meta.FindStatusCondition(p.Status.Conditions, string(typ)); c != nil {
				got = string(c.Status) + "/" + c.Reason
			}
			if got != w {
				t.Errorf("%s: %s = %q, want %q", s.name, typ, got, w)
			}
		}
		e.o.Service.Status = p.Status
	}
}

// TestRayServiceStatusChange: how a status change is written through the
// kit's StatusWriter: nothing when equal but for lastUpdateTime, the
// clusters' status copies after the carried refresh, other changes after
// the coalesce window unless urgent.
func TestRayServiceStatusChange(t *testing.T) {
	const coalesce, carried = 2 * time.Second, 30 * time.Second
	base := func() rayv1.RayServiceStatuses {
		return rayv1.RayServiceStatuses{ObservedGeneration: 1, NumServeEndpoints: 1,
			ActiveServiceStatus: rayv1.RayServiceStatus{RayClusterName: "svc-a"}}
	}
	stamp := metav1.NewTime(fixture.T0)
	for _, tc := range []struct {
		name   string
		change func(*rayv1.RayServiceStatuses)
		urgent bool
		want   kit.StatusChange
	}{
		{"unchanged", func(*rayv1.RayServiceStatuses) {}, false, kit.StatusChange{Unchanged: true}},
		{"only lastUpdateTime", func(s *rayv1.RayServiceStatuses) { s.LastUpdateTime = &stamp }, true, kit.StatusChange{Unchanged: true}},
		{"only a cluster's lastUpdateTime", func(s *rayv1.RayServiceStatuses) { s.ActiveServiceStatus.RayClusterStatus.LastUpdateTime = &stamp },
			false, kit.StatusChange{Unchanged: true}},
		{"only a cluster's status copy", func(s *rayv1.RayServiceStatuses) { s.ActiveServiceStatus.RayClusterStatus.ReadyWorkerReplicas = 2 },
			true, kit.StatusChange{Hold: carried, Class: carriedClass}},
		{"material, not urgent", func(s *rayv1.RayServiceStatuses) { s.NumServeEndpoints = 2 }, false, kit.StatusChange{Hold: coalesce}},
		{"material, urgent", func(s *rayv1.RayServiceStatuses) { s.NumServeEndpoints = 2 }, true, kit.StatusChange{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := base()
			tc.change(&cur)
			if got := statusChange(base(), cur, tc.urgent, coalesce, carried); got != tc.want {
				t.Errorf("statusChange = %+v, want %+v", got, tc.want)
			}
		})
	}
}
