package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestRayServiceStatusRules(t *testing.T) {
	cond := func(typ rayv1.RayServiceConditionType, s metav1.ConditionStatus, reason rayv1.RayServiceConditionReason, msg string) metav1.Condition {
		return metav1.Condition{Type: string(typ), Status: s, Reason: string(reason), Message: msg, LastTransitionTime: metav1.NewTime(t0)}
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
		{"lastUpdateTime only", func(s *rayv1.RayServiceStatuses) { now := metav1.NewTime(t0); s.LastUpdateTime = &now }, true, false, false},
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
			if got := rsStatusEqual(old, cur); got != tc.equal {
				t.Errorf("equal = %v, want %v", got, tc.equal)
			}
			if got := !rsStatusMaterialEqual(old, cur); got != tc.material {
				t.Errorf("material change = %v, want %v", got, tc.material)
			}
			if got := rsStatusUrgent(old, cur); got != tc.urgent {
				t.Errorf("urgent = %v, want %v", got, tc.urgent)
			}
		})
	}
}

func TestRayServiceSetConditionKeepsTransitionTime(t *testing.T) {
	rs := rsTestService()
	var conds []metav1.Condition
	rsSetCondition(&conds, rsCond(rs, rayv1.RayServiceReady, false, rayv1.RayServiceInitializing, "a"), t0)
	rsSetCondition(&conds, rsCond(rs, rayv1.RayServiceReady, false, rayv1.ZeroServeEndpoints, "b"), t0.Add(time.Minute))
	if c := conds[0]; !c.LastTransitionTime.Time.Equal(t0) || c.Reason != string(rayv1.ZeroServeEndpoints) {
		t.Errorf("same status: %+v", c)
	}
	rsSetCondition(&conds, rsCond(rs, rayv1.RayServiceReady, true, rayv1.NonZeroServeEndpoints, "c"), t0.Add(2*time.Minute))
	if c := conds[0]; !c.LastTransitionTime.Time.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("status changed: %+v", c)
	}
}

func TestRayServiceHashes(t *testing.T) {
	rs := rsTestService()
	spec := &rs.Spec.RayClusterSpec
	h := rsClusterHash(spec, -1)
	same := spec.DeepCopy()
	same.WorkerGroupSpecs[0].Replicas = ptr(int32(9))
	same.WorkerGroupSpecs[0].MinReplicas = ptr(int32(2))
	same.WorkerGroupSpecs[0].MaxReplicas = ptr(int32(99))
	same.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{"p"}
	same.Suspend = ptr(true)
	same.HeadGroupSpec.Template.Labels = map[string]string{rayv1.RayClusterServingServiceLabelKey: "false"}
	if rsClusterHash(same, -1) != h {
		t.Error("ignored fields change the hash")
	}
	diff := spec.DeepCopy()
	diff.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
	if rsClusterHash(diff, -1) == h {
		t.Error("rayStartParams do not change the hash")
	}
	appended := spec.DeepCopy()
	appended.WorkerGroupSpecs = append(appended.WorkerGroupSpecs, group("more", 1))
	if rsClusterHash(appended, 1) != h || rsClusterHash(appended, -1) == h {
		t.Error("hash over the first n groups")
	}

	a, err := rsParseServeConfig("applications:\n  - name: x\n    import_path: m.app\n  - import_path: n.app\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Apps) != 2 || a.Apps[0] != "default" || a.Apps[1] != "x" {
		t.Errorf("apps = %v", a.Apps)
	}
	b, _ := rsParseServeConfig("applications: [{import_path: m.app, name: x}, {import_path: n.app}]")
	if a.Hash != b.Hash {
		t.Error("the same config in another YAML form hashes differently")
	}
	if e, _ := rsParseServeConfig("  "); e.Hash != "" {
		t.Error("empty config has a hash")
	}
}
