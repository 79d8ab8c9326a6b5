package why

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

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
