package v1

import (
	"slices"
	"strings"
)

// The labels KubeRay's batch schedulers read from a RayCluster (or from
// the RayJob / RayService whose labels its cluster inherits). Which
// scheduler is used is chosen by the operator's --batch-scheduler flag
// (schedulermanager.go:58-70), never by a label; the labels only configure
// the chosen one. raydar implements all four (controller/batchscheduler);
// without the flag it reconciles a cluster as KubeRay v1.6.2 does without
// it (the no-op DefaultBatchSchedulerFactory,
// batchscheduler/schedulermanager.go:71-75). Either way a label the
// configured scheduler (or none) does not read is said to be ignored.
const (
	// RayGangSchedulingEnabled: KubeRay v1.6.2 utils/constant.go:56; read
	// (present, any value) by yunikorn (yunikorn_scheduler.go:112) and
	// scheduler-plugins (scheduler_plugins.go:112), and (="true", any
	// case) by v1.7.0's Kubernetes WAS (kubernetes_was_v1alpha2.go:356).
	RayGangSchedulingEnabled = "ray.io/gang-scheduling-enabled"
	// RayPriorityClassName: utils/constant.go:55; volcano's PodGroup
	// priority (volcano_scheduler.go:256).
	RayPriorityClassName = "ray.io/priority-class-name"
	// VolcanoQueueNameLabelKey: volcano_scheduler.go:31, its PodGroup's
	// queue (:253).
	VolcanoQueueNameLabelKey = "volcano.sh/queue-name"
	// VolcanoNetworkTopologyModeLabelKey and its tier: volcano_scheduler.go:32-33 (:238-243).
	VolcanoNetworkTopologyModeLabelKey               = "volcano.sh/network-topology-mode"
	VolcanoNetworkTopologyHighestTierAllowedLabelKey = "volcano.sh/network-topology-highest-tier-allowed"
	// YuniKorn's application id and queue: yunikorn_scheduler.go:23-24.
	YuniKornApplicationIDLabelKey = "yunikorn.apache.org/app-id"
	YuniKornQueueLabelKey         = "yunikorn.apache.org/queue"
	// KaiQueueLabelKey: kai-scheduler/kai_scheduler.go:27 (read at :57-59).
	KaiQueueLabelKey = "kai.scheduler/queue"
	// VolcanoPodGroupAnnotationKey names a pod's Volcano PodGroup
	// (volcano_scheduler.go:136, volcano.sh/apis scheduling/v1beta1
	// KubeGroupNameAnnotationKey): a cluster whose pods carry it is gang
	// scheduled by volcano.
	VolcanoPodGroupAnnotationKey = "scheduling.k8s.io/group-name"
	// VolcanoSchedulerName is the schedulerName of a Volcano gang's pods:
	// only Volcano binds them.
	VolcanoSchedulerName = "volcano"
)

// KubernetesWASScheduler is KubeRay v1.7.0's Kubernetes WAS scheduler,
// which the KubernetesWAS feature gate selects, not --batch-scheduler
// (controller/batchscheduler/kuberneteswas).
const KubernetesWASScheduler = "kubernetes-was-v1alpha2"

// RaydarBatchSchedulers are the --batch-scheduler values raydar implements
// (controller/batchscheduler Names; its test holds them equal).
var RaydarBatchSchedulers = []string{"kai-scheduler", "scheduler-plugins", "volcano", "yunikorn"}

// BatchSchedulerSchedulerNames are the pods' schedulerName each batch
// scheduler gives them, by --batch-scheduler value (volcano_scheduler.go:267,
// yunikorn_scheduler.go:121, kai_scheduler.go:55, scheduler_plugins.go:195:
// scheduler-plugins' is the chart's second scheduler,
// scheduler-plugins-scheduler).
var BatchSchedulerSchedulerNames = map[string]string{
	"volcano":           VolcanoSchedulerName,
	"yunikorn":          "yunikorn",
	"kai-scheduler":     "kai-scheduler",
	"scheduler-plugins": "scheduler-plugins-scheduler",
}

// BatchSchedulerOfSchedulerName is the --batch-scheduler value whose pods
// carry schedulerName, "" for another.
func BatchSchedulerOfSchedulerName(schedulerName string) string {
	for s, n := range BatchSchedulerSchedulerNames {
		if n == schedulerName {
			return s
		}
	}
	return ""
}

// batchSchedulerLabels maps each label to the --batch-scheduler values of
// KubeRay that read it.
var batchSchedulerLabels = []struct {
	Key        string
	Schedulers []string
}{
	{RayGangSchedulingEnabled, []string{"yunikorn", "scheduler-plugins", KubernetesWASScheduler}},
	{VolcanoQueueNameLabelKey, []string{"volcano"}},
	{RayPriorityClassName, []string{"volcano"}},
	{VolcanoNetworkTopologyModeLabelKey, []string{"volcano"}},
	{VolcanoNetworkTopologyHighestTierAllowedLabelKey, []string{"volcano"}},
	{YuniKornQueueLabelKey, []string{"yunikorn"}},
	{YuniKornApplicationIDLabelKey, []string{"yunikorn"}},
	{KaiQueueLabelKey, []string{"kai-scheduler"}},
}

// BatchSchedulerLabels are the keys of the batch-scheduler labels among
// labels that the scheduler configured (raydar's --batch-scheduler value,
// "" for none) does not read, in a fixed order, and the --batch-scheduler
// values of KubeRay that would read them (sorted, each once); both empty
// when there is none.
func BatchSchedulerLabels(labels map[string]string, configured string) (keys, schedulers []string) {
	for _, l := range batchSchedulerLabels {
		if _, ok := labels[l.Key]; !ok || slices.Contains(l.Schedulers, configured) {
			continue
		}
		keys = append(keys, l.Key)
		for _, s := range l.Schedulers {
			if !slices.Contains(schedulers, s) {
				schedulers = append(schedulers, s)
			}
		}
	}
	slices.Sort(schedulers)
	return keys, schedulers
}

// BatchSchedulerFlags is how KubeRay's operator would be started for
// schedulers: "--batch-scheduler=volcano or --batch-scheduler=yunikorn".
func BatchSchedulerFlags(schedulers []string) string {
	flags := make([]string, len(schedulers))
	for i, s := range schedulers {
		flags[i] = BatchSchedulerFlag(s)
	}
	return strings.Join(flags, " or ")
}

// BatchSchedulerFlag is the flag that selects scheduler:
// --batch-scheduler=NAME, or the KubernetesWAS feature gate.
func BatchSchedulerFlag(scheduler string) string {
	if scheduler == KubernetesWASScheduler {
		return "--feature-gates=KubernetesWAS=true"
	}
	return "--batch-scheduler=" + scheduler
}

// BatchSchedulerIgnored is the sentence that says which batch-scheduler
// labels of an object raydar ignores, run with configured as its
// --batch-scheduler ("" for none), "" when it ignores none.
func BatchSchedulerIgnored(labels map[string]string, configured string) string {
	keys, schedulers := BatchSchedulerLabels(labels, configured)
	if len(keys) == 0 {
		return ""
	}
	found := make([]string, len(keys))
	for i, k := range keys {
		found[i] = k + "=" + labels[k]
	}
	subject := "label " + found[0] + " is"
	if len(found) > 1 {
		subject = "labels " + strings.Join(found, ", ") + " are"
	}
	if configured != "" {
		return subject + " ignored: raydar runs with " + BatchSchedulerFlag(configured) + ", which does not read it; " +
			"KubeRay's operator run with " + BatchSchedulerFlags(schedulers) + " would"
	}
	who := "KubeRay's operator"
	if slices.ContainsFunc(schedulers, func(s string) bool { return slices.Contains(RaydarBatchSchedulers, s) || s == KubernetesWASScheduler }) {
		who = "raydar or KubeRay's operator"
	}
	return subject + " ignored: raydar runs without --batch-scheduler (no PodGroup is made, pods are scheduled one by one); " +
		"run " + who + " with " + BatchSchedulerFlags(schedulers) + " for gang scheduling"
}
