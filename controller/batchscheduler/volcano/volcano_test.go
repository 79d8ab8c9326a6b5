package volcano

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	volcanobatchv1alpha1 "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/raydar/raydar/controller/internal/fixture"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// res is "cpu=…,memory=…" of a ResourceList, for comparing by value.
func res(l corev1.ResourceList) string {
	var b strings.Builder
	for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, "nvidia.com/gpu"} {
		if q, ok := l[n]; ok {
			b.WriteString(string(n) + "=" + q.String() + ";")
		}
	}
	if len(l) > 3 {
		b.WriteString("…")
	}
	return b.String()
}

// pg(t)(obj, err) is obj as a PodGroup, failing t on an error.
func pg(t *testing.T) func(client.Object, error) *volcanov1beta1.PodGroup {
	return func(obj client.Object, err error) *volcanov1beta1.PodGroup {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		g, ok := obj.(*volcanov1beta1.PodGroup)
		if !ok || g == nil {
			t.Fatalf("got %T %v, want a PodGroup", obj, obj)
		}
		return g
	}
}

// Without autoscaling the PodGroup holds the head and every desired
// worker (replicas × numOfHosts, within min/max; suspended groups out),
// and their requests, limits standing in; with autoscaling the minimum.
func TestClusterPodGroup(t *testing.T) {
	gpu := fixture.Group("gpu", 2)
	gpu.NumOfHosts = 2
	gpu.Template.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"] = resource.MustParse("1")
	gpu.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	suspended := fixture.Group("off", 3)
	suspended.Suspend = fixture.Ptr(true)
	suspended.MinReplicas = fixture.Ptr(int32(1))
	rc := fixture.Cluster("c", fixture.Group("small", 3), gpu, suspended)
	rc.Annotations = map[string]string{"a": "b"}
	rc.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "q", rayv1.RayPriorityClassName: "high",
		rayv1.VolcanoNetworkTopologyModeLabelKey: "hard", rayv1.VolcanoNetworkTopologyHighestTierAllowedLabelKey: "2"}
	obj, err := Scheduler{}.ClusterGroup(rc)
	g := pg(t)(obj, err)
	// head 2 CPU 4Gi; small 3 × (1, 2Gi); gpu 2 replicas × 2 hosts × (500m requested, 2Gi, 1 GPU).
	if g.Name != "ray-c-pg" || g.Namespace != "ns" || g.Spec.MinMember != 1+3+4 ||
		res(*g.Spec.MinResources) != "cpu=7;memory=18Gi;nvidia.com/gpu=4;" {
		t.Errorf("PodGroup %s/%s minMember %d minResources %s", g.Namespace, g.Name, g.Spec.MinMember, res(*g.Spec.MinResources))
	}
	if g.Spec.Queue != "q" || g.Spec.PriorityClassName != "high" || g.Spec.NetworkTopology == nil ||
		g.Spec.NetworkTopology.Mode != "hard" || *g.Spec.NetworkTopology.HighestTierAllowed != 2 {
		t.Errorf("spec %+v", g.Spec)
	}
	if g.Status.Phase != volcanov1beta1.PodGroupPending || g.Annotations["a"] != "b" {
		t.Errorf("phase %q annotations %v", g.Status.Phase, g.Annotations)
	}
	ref := g.OwnerReferences[0]
	if ref.Kind != "RayCluster" || ref.APIVersion != "ray.io/v1" || ref.Name != "c" || ref.UID != rc.UID || !*ref.Controller || !*ref.BlockOwnerDeletion {
		t.Errorf("owner %+v", ref)
	}

	// Autoscaling: minReplicas (suspended groups out of minMember, but in
	// minResources: KubeRay v1.6.2's CalculateMinResources does not skip them).
	rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
	rc.Spec.WorkerGroupSpecs[0].MinReplicas = fixture.Ptr(int32(1))
	g = pg(t)(Scheduler{}.ClusterGroup(rc))
	// head 2/4Gi + small 1 × (1, 2Gi) + the suspended group 1 × (1, 2Gi).
	if g.Spec.MinMember != 1+1 || res(*g.Spec.MinResources) != "cpu=4;memory=8Gi;" {
		t.Errorf("autoscaling: minMember %d minResources %s", g.Spec.MinMember, res(*g.Spec.MinResources))
	}

	// replicas above maxReplicas: minMember bounded, minResources not (KubeRay's two functions differ).
	rc = fixture.Cluster("c", fixture.Group("small", 12))
	g = pg(t)(Scheduler{}.ClusterGroup(rc))
	if g.Spec.MinMember != 1+10 || res(*g.Spec.MinResources) != "cpu=14;memory=28Gi;" {
		t.Errorf("above max: minMember %d minResources %s", g.Spec.MinMember, res(*g.Spec.MinResources))
	}
}

func TestClusterPodGroupRefusesABadTier(t *testing.T) {
	rc := fixture.Cluster("c")
	rc.Labels = map[string]string{rayv1.VolcanoNetworkTopologyModeLabelKey: "soft", rayv1.VolcanoNetworkTopologyHighestTierAllowedLabelKey: "two"}
	if _, err := (Scheduler{}).ClusterGroup(rc); err == nil || !strings.Contains(err.Error(), "volcano.sh/network-topology-highest-tier-allowed") {
		t.Fatalf("err %v", err)
	}
	// The tier alone, without a mode, is not read.
	rc.Labels = map[string]string{rayv1.VolcanoNetworkTopologyHighestTierAllowedLabelKey: "two"}
	if g := pg(t)(Scheduler{}.ClusterGroup(rc)); g.Spec.NetworkTopology != nil {
		t.Errorf("topology %+v", g.Spec.NetworkTopology)
	}
}

// A RayJob's cluster has no PodGroup of its own; its pods name the
// RayJob's.
func TestRayJobClusterUsesTheJobsPodGroup(t *testing.T) {
	rc := fixture.Cluster("job-raycluster-abc", fixture.Group("small", 1))
	rc.Labels = map[string]string{rayv1.RayOriginatedFromCRDLabelKey: "RayJob", rayv1.RayOriginatedFromCRNameLabelKey: "job"}
	if g, err := (Scheduler{}).ClusterGroup(rc); g != nil || err != nil {
		t.Fatalf("%v %v", g, err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"x": "y"}}}
	Scheduler{}.Decorate(rc, pod, "small")
	if pod.Annotations[GroupNameAnnotationKey] != "ray-job-pg" || pod.Annotations[TaskSpecAnnotationKey] != "small" ||
		pod.Annotations["x"] != "y" || pod.Spec.SchedulerName != "volcano" {
		t.Errorf("pod %+v %s", pod.Annotations, pod.Spec.SchedulerName)
	}
}

func job(mode rayv1.JobSubmissionMode) *rayv1.RayJob {
	rc := fixture.Cluster("x", fixture.Group("small", 2))
	return &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns", UID: "job-uid",
			Labels: map[string]string{rayv1.VolcanoQueueNameLabelKey: "q"}},
		Spec: rayv1.RayJobSpec{SubmissionMode: mode, RayClusterSpec: &rc.Spec},
	}
}

// A RayJob's PodGroup counts its cluster in minMember and adds the
// submitter's resources to minResources only, as KubeRay v1.6.2 counts
// them per submission mode.
func TestRayJobPodGroup(t *testing.T) {
	custom := job(rayv1.K8sJobMode)
	custom.Spec.SubmitterPodTemplate = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{fixture.RayContainer("3", "1Gi")}}}
	for _, tc := range []struct {
		name string
		job  *rayv1.RayJob
		want string // minResources: head 2/4Gi + 2 × 1/2Gi + the submitter
	}{
		{"K8sJobMode, default submitter: its requests", job(rayv1.K8sJobMode), "cpu=4500m;memory=8392Mi;"},
		{"K8sJobMode, submitterPodTemplate", custom, "cpu=7;memory=9Gi;"},
		{"SidecarMode: the default container's requests", job(rayv1.SidecarMode), "cpu=4500m;memory=8392Mi;"},
		{"HTTPMode: no submitter pod", job(rayv1.HTTPMode), "cpu=4;memory=8Gi;"},
		{"InteractiveMode", job(rayv1.InteractiveMode), "cpu=4;memory=8Gi;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := pg(t)(Scheduler{}.JobGroup(tc.job))
			if g.Name != "ray-job-pg" || g.Spec.MinMember != 3 || res(*g.Spec.MinResources) != tc.want || g.Spec.Queue != "q" {
				t.Errorf("%s minMember %d minResources %s queue %q", g.Name, g.Spec.MinMember, res(*g.Spec.MinResources), g.Spec.Queue)
			}
			if ref := g.OwnerReferences[0]; ref.Kind != "RayJob" || ref.Name != "job" || ref.UID != "job-uid" {
				t.Errorf("owner %+v", ref)
			}
		})
	}
	sel := job(rayv1.K8sJobMode)
	sel.Spec.RayClusterSpec = nil
	sel.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "c"}
	if _, err := (Scheduler{}).JobGroup(sel); err == nil || !strings.Contains(err.Error(), "referencing an existing RayCluster") {
		t.Errorf("clusterSelector: %v", err)
	}
}

// A finished RayJob's PodGroup holds what its cluster still holds: the
// cluster (workers suspended by DeleteWorkers out), or nothing once the
// cluster is gone.
func TestFinishedRayJobPodGroup(t *testing.T) {
	j := job(rayv1.K8sJobMode)
	if _, ok, _ := (Scheduler{}).FinishedJobGroup(j, nil); ok {
		t.Error("no cluster named yet: nothing to do")
	}
	j.Status.RayClusterName = "job-raycluster-abc"
	obj, ok, err := Scheduler{}.FinishedJobGroup(j, nil)
	if g := pg(t)(obj, err); !ok || g.Spec.MinMember != 0 || len(*g.Spec.MinResources) != 0 {
		t.Errorf("cluster gone: %v %+v", ok, g.Spec)
	}
	rc := fixture.Cluster("job-raycluster-abc", fixture.Group("small", 2))
	rc.Spec.WorkerGroupSpecs[0].Suspend = fixture.Ptr(true)
	obj, ok, err = Scheduler{}.FinishedJobGroup(j, rc)
	if g := pg(t)(obj, err); !ok || g.Spec.MinMember != 1 || res(*g.Spec.MinResources) != "cpu=2;memory=4Gi;" {
		t.Errorf("workers suspended: %v %d %s", ok, g.Spec.MinMember, res(*g.Spec.MinResources))
	}
}

// The pods and the submitter's template get the queue and priority labels
// of their parent, the PodGroup and task annotations and schedulerName;
// a RayCluster gets the labels and annotations only.
func TestDecorate(t *testing.T) {
	j := job(rayv1.K8sJobMode)
	j.Labels[rayv1.RayPriorityClassName] = "high"
	tmpl := &corev1.PodTemplateSpec{}
	Scheduler{}.Decorate(j, tmpl, rayv1.RayNodeSubmitterGroupLabelValue)
	if tmpl.Labels[rayv1.VolcanoQueueNameLabelKey] != "q" || tmpl.Labels[rayv1.RayPriorityClassName] != "high" ||
		tmpl.Annotations[GroupNameAnnotationKey] != "ray-job-pg" || tmpl.Annotations[TaskSpecAnnotationKey] != "submittergroup" ||
		tmpl.Spec.SchedulerName != "volcano" {
		t.Errorf("template %v %v %q", tmpl.Labels, tmpl.Annotations, tmpl.Spec.SchedulerName)
	}
	rc := &rayv1.RayCluster{}
	Scheduler{}.Decorate(j, rc, "")
	if rc.Annotations[GroupNameAnnotationKey] != "ray-job-pg" || rc.Annotations[TaskSpecAnnotationKey] != "" || rc.Labels[rayv1.VolcanoQueueNameLabelKey] != "q" {
		t.Errorf("cluster %v %v", rc.Labels, rc.Annotations)
	}
	if GroupNameAnnotationKey != rayv1.VolcanoPodGroupAnnotationKey || TaskSpecAnnotationKey != volcanobatchv1alpha1.TaskSpecKey {
		t.Error("the annotation keys differ from rayapi/v1's and Volcano's")
	}
}

// Only minMember and minResources are updated; equal quantities written
// differently are equal.
func TestUpdateGroup(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 1))
	cur := pg(t)(Scheduler{}.ClusterGroup(rc))
	cur.Spec.Queue = "kept"
	cur.Spec.MinResources = &corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3000m"), corev1.ResourceMemory: resource.MustParse("6144Mi")}
	want := pg(t)(Scheduler{}.ClusterGroup(rc))
	if up := (Scheduler{}).UpdateGroup(cur, want); up != nil {
		t.Errorf("equal by value: update %+v", up)
	}
	rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(2))
	up := Scheduler{}.UpdateGroup(cur, pg(t)(Scheduler{}.ClusterGroup(rc))).(*volcanov1beta1.PodGroup)
	if up.Spec.MinMember != 3 || res(*up.Spec.MinResources) != "cpu=4;memory=8Gi;" || up.Spec.Queue != "kept" {
		t.Errorf("update %+v", up.Spec)
	}
}
