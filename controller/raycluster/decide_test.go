package raycluster

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// counts summarises a plan's pod creations.
func creations(p *plan) (heads int, workers map[string]int) {
	workers = map[string]int{}
	for _, pod := range p.CreatePods {
		if kit.IsHeadPod(pod) {
			heads++
		} else {
			workers[kit.PodGroup(pod)]++
		}
	}
	return heads, workers
}

func condOf(s rayv1.RayClusterStatus, t rayv1.RayClusterConditionType) *metav1.Condition {
	return meta.FindStatusCondition(s.Conditions, string(t))
}

func TestDecideSuspend(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 2))
	rc.Spec.Suspend = fixture.Ptr(true)
	h := headPod(rc, ready)
	ws := workerPods(rc, "small", ready, 2)

	// 1. Suspend requested: every pod goes in one request, Suspending.
	p := decide(obsOf(rc, headSvc(rc), one(h), ws))
	if !p.DeleteAll || len(p.DeletePods) != 3 || len(p.CreatePods) != 0 {
		t.Fatalf("plan: deleteAll=%v delete=%v create=%d", p.DeleteAll, deletedNames(p), len(p.CreatePods))
	}
	if c := condOf(p.Status, rayv1.RayClusterSuspending); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Suspending = %+v", c)
	}
	if p.Status.State != "" {
		t.Errorf("state = %q while suspending", p.Status.State)
	}
	if len(p.Events) != 1 || p.Events[0].Reason != ReasonSuspending {
		t.Errorf("events = %+v", p.Events)
	}

	// 2. Pods still terminating: still Suspending, nothing more to do.
	rc.Status = p.Status
	term := mkPod(rc, false, "small", "c-small-worker-w0", terminating)
	p = decide(obsOf(rc, headSvc(rc), one(term)))
	if len(p.DeletePods) != 0 || !rayv1.IsConditionTrue(p.Status.Conditions, string(rayv1.RayClusterSuspending)) {
		t.Fatalf("terminating: delete=%v conds=%+v", deletedNames(p), p.Status.Conditions)
	}

	// 3. All gone: Suspended, state suspended.
	rc.Status = p.Status
	p = decide(obsOf(rc, headSvc(rc)))
	if p.Status.State != rayv1.Suspended || !rayv1.IsConditionTrue(p.Status.Conditions, string(rayv1.RayClusterSuspended)) ||
		rayv1.IsConditionTrue(p.Status.Conditions, string(rayv1.RayClusterSuspending)) {
		t.Fatalf("suspended: state=%q conds=%+v", p.Status.State, p.Status.Conditions)
	}
	if errs := rayv1.ValidateRayClusterStatus(&p.Status); len(errs) > 0 {
		t.Fatal(errs)
	}
	if p.Status.StateTransitionTimes[rayv1.Suspended] == nil {
		t.Error("no transition time for suspended")
	}

	// 4. suspend removed (not set false): KubeRay keeps the cluster
	// suspended (v1.7.0 calculateStatus resumes only on suspend: false).
	rc.Status = p.Status
	rc.Spec.Suspend = nil
	p = decide(obsOf(rc, headSvc(rc)))
	if len(p.CreatePods) != 0 || !rayv1.IsConditionTrue(p.Status.Conditions, string(rayv1.RayClusterSuspended)) {
		t.Fatalf("suspend removed: created %d pods, conds=%+v", len(p.CreatePods), p.Status.Conditions)
	}

	// 5. Resume: first Suspended goes false, no pod yet (KubeRay's
	// reconcilePods returns while the status still says suspended) ...
	rc.Spec.Suspend = fixture.Ptr(false)
	p = decide(obsOf(rc, headSvc(rc)))
	if len(p.CreatePods) != 0 || p.RequeueAfter == 0 {
		t.Fatalf("resume created %d pods before recording it (requeue after %s)", len(p.CreatePods), p.RequeueAfter)
	}
	if c := condOf(p.Status, rayv1.RayClusterSuspended); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Suspended after resume = %+v", c)
	}
	if len(p.Events) != 1 || p.Events[0].Reason != ReasonResumed {
		t.Errorf("events = %+v", p.Events)
	}
	// ... then the pods are created again.
	rc.Status = p.Status
	p = decide(obsOf(rc, headSvc(rc)))
	if heads, w := creations(p); heads != 1 || w["small"] != 2 {
		t.Fatalf("resume created heads=%d workers=%v", heads, w)
	}
}

func TestDecideSuspendIsAtomic(t *testing.T) {
	// suspend flipped back to false while pods are still going: finish first.
	rc := fixture.Cluster("c", fixture.Group("small", 1))
	rc.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayClusterSuspending), Status: metav1.ConditionTrue, Reason: "x"}}
	p := decide(obsOf(rc, headSvc(rc), one(headPod(rc, ready))))
	if len(p.CreatePods) != 0 || len(p.DeletePods) != 1 {
		t.Fatalf("create=%d delete=%v", len(p.CreatePods), deletedNames(p))
	}
}

func TestDecideRecreate(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 2))
	rc.Spec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: fixture.Ptr(rayv1.RayClusterRecreate)}
	h := headPod(rc, ready)
	ws := workerPods(rc, "small", ready, 2)

	// Same templates: nothing happens, scaling does not change the hash.
	rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(2))
	if p := decide(obsOf(rc, headSvc(rc), one(h), ws)); len(p.DeletePods) != 0 {
		t.Fatalf("unchanged templates deleted %v", deletedNames(p))
	}
	// New image: every pod goes, nothing is created in that pass.
	rc2 := rc.DeepCopy()
	rc2.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	p := decide(obsOf(rc2, headSvc(rc2), one(h), ws))
	if !p.DeleteAll || len(p.DeletePods) != 3 || len(p.CreatePods) != 0 {
		t.Fatalf("recreate: deleteAll=%v delete=%v create=%d", p.DeleteAll, deletedNames(p), len(p.CreatePods))
	}
	if len(p.Events) == 0 || p.Events[0].Reason != ReasonRecreate {
		t.Errorf("events = %+v", p.Events)
	}
	// Without Recreate the same change leaves running pods alone.
	rc3 := rc2.DeepCopy()
	rc3.Spec.UpgradeStrategy = nil
	if p := decide(obsOf(rc3, headSvc(rc3), one(h), ws)); len(p.DeletePods) != 0 {
		t.Errorf("strategy None deleted %v", deletedNames(p))
	}
}

// Taking over a Recreate cluster from KubeRay: its pods carry KubeRay's
// hash (computed differently) and KubeRay's version; none is deleted for
// it. raydar stamps its own hash onto the head pod, so that a real spec
// change afterwards still recreates every pod, KubeRay's included.
func TestDecideRecreateTakeover(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 2))
	rc.Spec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: fixture.Ptr(rayv1.RayClusterRecreate)}
	kuberay := func(p *corev1.Pod) *corev1.Pod {
		p.Annotations[rayv1.UpgradeStrategyRecreateHashKey] = "6K8TMPTHBMU9QFNJ0QS3NB1OFLS2S29B" // KubeRay's sha1/base32hex
		p.Annotations[rayv1.KubeRayVersion] = "v1.7.0"
		return p
	}
	h := kuberay(headPod(rc, ready))
	ws := workerPods(rc, "small", ready, 2)
	for _, w := range ws {
		kuberay(w)
	}

	p := decide(obsOf(rc, headSvc(rc), one(h), ws))
	if len(p.DeletePods) != 0 || p.DeleteAll {
		t.Fatalf("takeover deleted %v", deletedNames(p))
	}
	if len(p.StampPods) != 1 || p.StampPods[0].Pod.Name != h.Name ||
		p.StampPods[0].Annotations[rayv1.UpgradeStrategyRecreateHashKey] != specHash(rc) ||
		p.StampPods[0].Annotations[rayv1.KubeRayVersion] != kit.KuberayVersionValue {
		t.Fatalf("stamps %+v", p.StampPods)
	}

	// The head stamped (the workers still KubeRay's): stable, no deletion.
	stamped := h.DeepCopy()
	maps.Copy(stamped.Annotations, p.StampPods[0].Annotations)
	if p := decide(obsOf(rc, headSvc(rc), one(stamped), ws)); len(p.DeletePods) != 0 || len(p.StampPods) != 0 {
		t.Fatalf("after the stamp: delete %v, stamps %d", deletedNames(p), len(p.StampPods))
	}
	// A spec change after the takeover: every pod goes, KubeRay's workers too.
	rc2 := rc.DeepCopy()
	rc2.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	p = decide(obsOf(rc2, headSvc(rc2), one(stamped), ws))
	if !p.DeleteAll || len(p.DeletePods) != 3 || len(p.StampPods) != 0 {
		t.Fatalf("spec change after takeover: deleteAll=%v delete=%v stamps=%d", p.DeleteAll, deletedNames(p), len(p.StampPods))
	}
}

func TestDecideInvalidSpec(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 1), fixture.Group("small", 2))
	p := decide(obsOf(rc, nil))
	if len(p.CreatePods)+len(p.CreateServices)+len(p.DeletePods) != 0 {
		t.Fatalf("invalid spec planned writes: %d pods, %d services", len(p.CreatePods), len(p.CreateServices))
	}
	c := condOf(p.Status, rayv1.RayClusterReplicaFailure)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonValidationFailed ||
		!strings.Contains(c.Message, "spec.workerGroupSpecs[1].groupName") {
		t.Fatalf("ReplicaFailure = %+v", c)
	}
	if len(p.Events) != 1 || p.Events[0].Type != corev1.EventTypeWarning || !strings.Contains(p.Events[0].Message, "spec.workerGroupSpecs[1].groupName") {
		t.Fatalf("events = %+v", p.Events)
	}
	// Same invalid spec again: the condition is already there, no new Event.
	rc.Status = p.Status
	if p2 := decide(obsOf(rc, nil)); len(p2.Events) != 0 || !statusEqual(rc.Status, p2.Status) {
		t.Errorf("second pass: events=%+v statusEqual=%v", p2.Events, statusEqual(rc.Status, p2.Status))
	}
	// Fixed: the condition goes away and pods are created.
	rc.Spec.WorkerGroupSpecs[1].GroupName = "big"
	p3 := decide(obsOf(rc, nil))
	if condOf(p3.Status, rayv1.RayClusterReplicaFailure) != nil || len(p3.CreatePods) != 4 {
		t.Errorf("after fix: conds=%+v creates=%d", p3.Status.Conditions, len(p3.CreatePods))
	}
}

func TestDecideDisableProvisionedHeadRestart(t *testing.T) {
	rc := fixture.Cluster("c")
	rc.Annotations = map[string]string{rayv1.DisableProvisionedHeadRestartAnnotationKey: "true"}
	if p := decide(obsOf(rc, headSvc(rc))); len(p.CreatePods) != 1 {
		t.Fatal("head not created before provisioning")
	}
	rc.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayClusterProvisioned), Status: metav1.ConditionTrue, Reason: rayv1.AllPodRunningAndReadyFirstTime}}
	if p := decide(obsOf(rc, headSvc(rc))); len(p.CreatePods) != 0 {
		t.Fatal("head re-created after provisioning despite the annotation")
	}

	// KubeRay's pass ends there, before its worker loop
	// (raycluster_controller.go:1014-1032): a group scaled up, a failed
	// worker and a surplus one are all left as they are.
	withWorkers := fixture.Cluster("c", fixture.Group("small", 1), fixture.Group("big", 3))
	withWorkers.Annotations, withWorkers.Status = rc.Annotations, rc.Status
	ws := append(workerPods(withWorkers, "small", ready, 2), workerPods(withWorkers, "big", failed, 1)...)
	if p := decide(obsOf(withWorkers, headSvc(withWorkers), ws)); len(p.CreatePods) != 0 || len(p.DeletePods) != 0 {
		t.Errorf("head gone for good: created %v, deleted %v; want the workers left alone", podNames(p.CreatePods), deletedNames(p))
	}
	// A failed head is still deleted (KubeRay: :1021-1035), not replaced.
	p := decide(obsOf(withWorkers, headSvc(withWorkers), one(headPod(withWorkers, failed)), ws))
	if len(p.CreatePods) != 0 || !slices.Equal(deletedNames(p), []string{"c-head-hhhhh"}) {
		t.Errorf("failed head: created %v, deleted %v; want only the head deleted", podNames(p.CreatePods), deletedNames(p))
	}
	// "True" is not "true" for KubeRay.
	withWorkers.Annotations = map[string]string{rayv1.DisableProvisionedHeadRestartAnnotationKey: "True"}
	if p := decide(obsOf(withWorkers, headSvc(withWorkers), ws)); len(p.CreatePods) == 0 {
		t.Error("annotation \"True\": head not re-created")
	}
}
