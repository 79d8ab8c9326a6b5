package why

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Pods of a scheduler that does not run (a batch scheduler's name given by
// --batch-scheduler, or any other) are named with that scheduler; not
// while they are new, not once a scheduler has examined them, not for the
// default scheduler.
func TestSchedulerNotBinding(t *testing.T) {
	unbound := func(name string, age time.Duration, labels map[string]string) func(in *ClusterInput) {
		return func(in *ClusterInput) {
			for i, p := range in.Pods {
				p = p.DeepCopy()
				p.Spec.NodeName, p.Spec.SchedulerName = "", name
				p.Labels = labels
				p.Status = podview.Status{Phase: corev1.PodPending}
				p.CreationTimestamp = metav1.NewTime(now.Add(-age))
				in.Pods[i] = p
			}
		}
	}
	causes := func(change func(in *ClusterInput)) []Cause {
		in := ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}
		change(&in)
		var out []Cause
		for _, c := range Cluster(in) {
			if c.Code == CodeSchedulerNotBinding {
				out = append(out, c)
			}
		}
		return out
	}
	n := len(healthyPods())
	for name, fix := range map[string]string{
		"yunikorn":                    "only yunikorn binds these pods (schedulerName yunikorn, given by an operator run with --batch-scheduler=yunikorn)",
		"scheduler-plugins-scheduler": "in a raydar sandbox start it with --batch-scheduler scheduler-plugins",
		"kai-scheduler":               "KAI leaves pods without a kai.scheduler/queue label Pending",
		"my-scheduler":                "only a scheduler named my-scheduler binds these pods",
	} {
		got := causes(unbound(name, time.Minute, nil))
		if len(got) != 1 ||
			got[0].Summary != strings.Join([]string{itoa(int64(n)), "pods with schedulerName", name, "have waited unbound for over 30s: no scheduler of that name has looked at them"}, " ") ||
			!strings.Contains(got[0].Fix, fix) {
			t.Errorf("%s: %+v", name, got)
		}
	}
	if got := causes(unbound("kai-scheduler", time.Minute, map[string]string{rayv1.KaiQueueLabelKey: "team-a"})); len(got) != 1 || strings.Contains(got[0].Fix, "KAI leaves") {
		t.Errorf("kai with a queue: %+v", got)
	}
	if got := causes(unbound("yunikorn", 5*time.Second, nil)); got != nil {
		t.Errorf("new pods: %+v", got)
	}
	if got := causes(unbound(corev1.DefaultSchedulerName, time.Minute, nil)); got != nil {
		t.Errorf("default scheduler: %+v", got)
	}
	examined := func(in *ClusterInput) {
		unbound("yunikorn", time.Minute, nil)(in)
		for _, p := range in.Pods {
			p.Status.Conditions = []podview.Condition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}
		}
	}
	if got := causes(examined); got != nil {
		t.Errorf("examined: %+v", got)
	}
}

// Pods made for yunikorn (their schedulerName) read its labels: only
// another scheduler's label is said to be ignored.
func TestGangSchedulingIgnoredByPodsScheduler(t *testing.T) {
	clusterCase(t, func(in *ClusterInput) {
		in.Cluster.Labels = map[string]string{rayv1.RayGangSchedulingEnabled: "true", rayv1.YuniKornQueueLabelKey: "root.test"}
		for _, p := range in.Pods {
			p.Spec.SchedulerName = "yunikorn"
		}
	}, nil, nil, "")
	clusterCase(t, func(in *ClusterInput) {
		in.Cluster.Labels = map[string]string{rayv1.YuniKornQueueLabelKey: "root.test", rayv1.KaiQueueLabelKey: "k"}
		for _, p := range in.Pods {
			p.Spec.SchedulerName = "yunikorn"
		}
	}, []string{"GangSchedulingIgnored: raydar ignores kai.scheduler/queue (its pods are gang-scheduled by yunikorn, which does not read it)"},
		[]string{"metadata.labels[kai.scheduler/queue]=k"}, "run raydar's operator (and every raydar TUI that may lead) with --batch-scheduler=kai-scheduler")
}
