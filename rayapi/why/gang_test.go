package why

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// A cluster with batch-scheduler labels says, last and even when healthy,
// that raydar makes no PodGroup for it; not when another operator has it.
func TestGangSchedulingIgnored(t *testing.T) {
	const volcano = "GangSchedulingIgnored: no gang scheduling: raydar ignores volcano.sh/queue-name (no PodGroup; pods are scheduled one by one)"
	t.Run("healthy, labelled", func(t *testing.T) {
		clusterCase(t, func(in *ClusterInput) {
			in.Cluster.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "team-a", "team": "x"}
		}, []string{volcano}, []string{"metadata.labels[volcano.sh/queue-name]=team-a"},
			"run raydar's operator (and every raydar TUI that may lead) with --batch-scheduler=volcano, or leave this cluster to KubeRay's operator run with --batch-scheduler=volcano (spec.managedBy: ray.io/kuberay-operator)")
	})
	t.Run("two schedulers' labels", func(t *testing.T) {
		clusterCase(t, func(in *ClusterInput) {
			in.Cluster.Labels = map[string]string{rayv1.RayGangSchedulingEnabled: "true", rayv1.YuniKornQueueLabelKey: "root.test"}
		}, []string{"GangSchedulingIgnored: no gang scheduling: raydar ignores ray.io/gang-scheduling-enabled, yunikorn.apache.org/queue (no PodGroup; pods are scheduled one by one)"},
			[]string{"metadata.labels[ray.io/gang-scheduling-enabled]=true", "metadata.labels[yunikorn.apache.org/queue]=root.test"},
			"--batch-scheduler=scheduler-plugins or --batch-scheduler=yunikorn")
	})
	t.Run("last behind a real cause", func(t *testing.T) {
		clusterCase(t, func(in *ClusterInput) {
			in.Cluster.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "team-a"}
			in.Pods[0] = waiting(in.Pods[0], corev1.PodRunning, "CrashLoopBackOff", "")
		}, []string{"CrashLoop: head crash-looping: restarted 0 times", volcano}, nil, "")
	})
	t.Run("pods of raydar's volcano: its labels are read", func(t *testing.T) {
		clusterCase(t, func(in *ClusterInput) {
			in.Cluster.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "team-a"}
			in.Pods[0].Annotations = map[string]string{rayv1.VolcanoPodGroupAnnotationKey: "ray-c-pg"}
		}, nil, nil, "")
	})
	t.Run("pods of raydar's volcano: another scheduler's label is not", func(t *testing.T) {
		clusterCase(t, func(in *ClusterInput) {
			in.Cluster.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "team-a", rayv1.KaiQueueLabelKey: "k"}
			in.Pods[0].Annotations = map[string]string{rayv1.VolcanoPodGroupAnnotationKey: "ray-c-pg"}
		}, []string{"GangSchedulingIgnored: raydar ignores kai.scheduler/queue (its pods are gang-scheduled by volcano, which does not read it)"},
			[]string{"metadata.labels[kai.scheduler/queue]=k"}, "--batch-scheduler=kai-scheduler")
	})
	t.Run("unlabelled says nothing", func(t *testing.T) {
		clusterCase(t, func(in *ClusterInput) { in.Cluster.Labels = map[string]string{"team": "x"} }, nil, nil, "")
	})
	t.Run("managed by KubeRay says nothing", func(t *testing.T) {
		clusterCase(t, func(in *ClusterInput) {
			in.Cluster.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "team-a"}
			in.Cluster.Spec.ManagedBy = ptr(rayv1.KubeRayController)
		}, nil, nil, "")
	})
}

// Pods of a Volcano PodGroup that wait unbound (no Volcano, or a gang
// that does not fit whole) name the PodGroup; not while they are new.
func TestPodGroupNotRunning(t *testing.T) {
	gang := func(age time.Duration) func(in *ClusterInput) {
		return func(in *ClusterInput) {
			in.Cluster.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "q"}
			for i, p := range in.Pods {
				p = p.DeepCopy()
				p.Annotations = map[string]string{rayv1.VolcanoPodGroupAnnotationKey: "ray-c-pg"}
				p.Spec.NodeName = ""
				p.Spec.SchedulerName = rayv1.VolcanoSchedulerName
				p.Status = podview.Status{Phase: corev1.PodPending}
				p.CreationTimestamp = metav1.NewTime(now.Add(-age))
				in.Pods[i] = p
			}
		}
	}
	in := ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}
	gang(time.Minute)(&in)
	got := Cluster(in)
	if len(got) == 0 || got[0].Code != CodePodGroupNotRunning ||
		got[0].Summary != fmt.Sprintf("%d pods of PodGroup ray-c-pg have waited unbound for over 30s: the volcano gang scheduler has not bound them", len(in.Pods)) ||
		!strings.Contains(got[0].Fix, "kubectl describe podgroup ray-c-pg -n "+in.Cluster.Namespace) {
		t.Fatalf("causes %+v", got)
	}
	hasEvidence(t, got, "pod "+in.Pods[0].Name+": Pending, bound to no node, in PodGroup ray-c-pg")
	// Pods that name the PodGroup but another scheduler: not Volcano's to bind.
	in = ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}
	gang(time.Minute)(&in)
	for _, p := range in.Pods {
		p.Spec.SchedulerName = "default-scheduler"
	}
	for _, c := range Cluster(in) {
		if c.Code == CodePodGroupNotRunning {
			t.Errorf("pods of the default scheduler: %+v", c)
		}
	}
	in = ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}
	gang(5 * time.Second)(&in)
	for _, c := range Cluster(in) {
		if c.Code == CodePodGroupNotRunning {
			t.Errorf("pods 5 s old: %+v", c)
		}
	}
}
