package raycluster

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/raydar/raydar/controller/batchscheduler/volcano"
	"github.com/raydar/raydar/controller/internal/fixture"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func volcanoObs(rc *rayv1.RayCluster, pods ...[]*corev1.Pod) *observed {
	o := obsOf(rc, nil, pods...)
	o.Config.Scheduler = volcano.Scheduler{}
	return o
}

// With --batch-scheduler volcano a new cluster's first pass plans its
// PodGroup and pods that name it; the rest of the plan is as without.
func TestVolcanoPlansPodGroupAndPods(t *testing.T) {
	rc := freshCluster("c", 2)
	rc.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "q"}
	plain := decide(obsOf(rc.DeepCopy(), nil))
	p := decide(volcanoObs(rc))
	g, ok := p.CreateGroup.(*volcanov1beta1.PodGroup)
	if !ok || g.Name != "ray-c-pg" || g.Spec.MinMember != 3 || g.Spec.Queue != "q" || p.UpdateGroup != nil || p.GroupErr != nil {
		t.Fatalf("group %+v update %v err %v", p.CreateGroup, p.UpdateGroup, p.GroupErr)
	}
	if len(p.CreatePods) != 3 || len(plain.CreatePods) != 3 {
		t.Fatalf("pods %d, without the scheduler %d", len(p.CreatePods), len(plain.CreatePods))
	}
	for i, pod := range p.CreatePods {
		task := pod.Labels[rayv1.RayNodeGroupLabelKey]
		if pod.Spec.SchedulerName != "volcano" || pod.Annotations[volcano.GroupNameAnnotationKey] != "ray-c-pg" ||
			pod.Annotations[volcano.TaskSpecAnnotationKey] != task || pod.Labels[rayv1.VolcanoQueueNameLabelKey] != "q" {
			t.Errorf("pod %s: scheduler %q annotations %v labels %v", pod.Name, pod.Spec.SchedulerName, pod.Annotations, pod.Labels)
		}
		// Nothing else differs from the pod built without a scheduler.
		undecorated := pod.DeepCopy()
		undecorated.Spec.SchedulerName = ""
		delete(undecorated.Annotations, volcano.GroupNameAnnotationKey)
		delete(undecorated.Annotations, volcano.TaskSpecAnnotationKey)
		delete(undecorated.Labels, rayv1.VolcanoQueueNameLabelKey)
		if !reflect.DeepEqual(undecorated, plain.CreatePods[i]) {
			t.Errorf("pod %s differs beyond the scheduler's metadata", pod.Name)
		}
	}
	if p.BatchScheduler != nil {
		t.Errorf("volcano reads volcano.sh/queue-name, yet: %+v", p.BatchScheduler)
	}
}

// A label volcano does not read is still warned about, naming the
// scheduler that would.
func TestVolcanoWarnsAboutOtherSchedulersLabels(t *testing.T) {
	rc := freshCluster("c", 1)
	rc.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "q", rayv1.YuniKornQueueLabelKey: "root.a"}
	p := decide(volcanoObs(rc))
	want := "label yunikorn.apache.org/queue=root.a is ignored: raydar runs with --batch-scheduler=volcano, which does not read it; " +
		"KubeRay's operator run with --batch-scheduler=yunikorn would"
	if p.BatchScheduler == nil || p.BatchScheduler.Message != want || p.BatchScheduler.Reason != ReasonBatchSchedulerNotImplemented {
		t.Fatalf("Warning %+v, want %q", p.BatchScheduler, want)
	}
}

// The PodGroup is updated when the gang's size changes, not otherwise;
// a suspended cluster's is left alone, and a RayJob's cluster has none.
func TestVolcanoPodGroupUpdates(t *testing.T) {
	rc := freshCluster("c", 2)
	first := decide(volcanoObs(rc)).CreateGroup
	o := volcanoObs(rc, one(headPod(rc, ready)), workerPods(rc, "small", ready, 2))
	o.Group = first
	if p := decide(o); p.CreateGroup != nil || p.UpdateGroup != nil {
		t.Errorf("unchanged: create %v update %v", p.CreateGroup, p.UpdateGroup)
	}
	rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(4))
	o.Cluster = rc
	p := decide(o)
	if g, ok := p.UpdateGroup.(*volcanov1beta1.PodGroup); !ok || g.Spec.MinMember != 5 {
		t.Errorf("scaled to 4: update %+v", p.UpdateGroup)
	}
	suspended := rc.DeepCopy()
	suspended.Spec.Suspend = fixture.Ptr(true)
	o.Cluster = suspended
	if p := decide(o); p.CreateGroup != nil || p.UpdateGroup != nil {
		t.Errorf("suspended: create %v update %v", p.CreateGroup, p.UpdateGroup)
	}
	jobs := freshCluster("job-raycluster-x", 1)
	jobs.Labels = map[string]string{rayv1.RayOriginatedFromCRDLabelKey: "RayJob", rayv1.RayOriginatedFromCRNameLabelKey: "job"}
	p = decide(volcanoObs(jobs))
	if p.CreateGroup != nil || len(p.CreatePods) != 2 || p.CreatePods[0].Annotations[volcano.GroupNameAnnotationKey] != "ray-job-pg" {
		t.Errorf("RayJob's cluster: group %v pods %d", p.CreateGroup, len(p.CreatePods))
	}
}

// A PodGroup that cannot be built holds every pod back and says why.
func TestVolcanoBadLabelHoldsPods(t *testing.T) {
	rc := freshCluster("c", 1)
	rc.Labels = map[string]string{rayv1.VolcanoNetworkTopologyModeLabelKey: "hard", rayv1.VolcanoNetworkTopologyHighestTierAllowedLabelKey: "x"}
	p := decide(volcanoObs(rc))
	if p.GroupErr == nil || !strings.Contains(p.GroupErr.Error(), "network-topology-highest-tier-allowed") {
		t.Fatalf("err %v", p.GroupErr)
	}
	out := &outcome{}
	r := &Reconciler{cfg: BuildConfig{Scheduler: volcano.Scheduler{}}}
	if r.applyGroup(t.Context(), rc, p, out) || len(out.failures) != 1 || out.failures[0].Event != EventBatchSchedulingFailed ||
		!strings.Contains(out.failures[0].Message, "Failed to build the PodGroup of RayCluster ns/c for --batch-scheduler=volcano") {
		t.Errorf("failures %+v", out.failures)
	}
}
