package v1

import (
	"slices"
	"strings"
)

// The labels KubeRay's batch schedulers read from a RayCluster (or from
// the RayJob / RayService whose labels its cluster inherits). raydar
// implements no batch scheduler: it reconciles such a cluster as KubeRay
// v1.6.2 does when its operator runs without --batch-scheduler (the
// no-op DefaultBatchSchedulerFactory, batchscheduler/schedulermanager.go:71-75),
// and says that the label is ignored. Which scheduler is used is chosen
// by the operator's --batch-scheduler flag (schedulermanager.go:58-70),
// never by a label; the labels only configure the chosen one.
const (
	// RayGangSchedulingEnabled: KubeRay v1.6.2 utils/constant.go:56; read
	// (present, any value) by yunikorn (yunikorn_scheduler.go:112) and
	// scheduler-plugins (scheduler_plugins.go:112).
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
)

// batchSchedulerLabels maps each label to the --batch-scheduler values of
// KubeRay that read it.
var batchSchedulerLabels = []struct {
	Key        string
	Schedulers []string
}{
	{RayGangSchedulingEnabled, []string{"yunikorn", "scheduler-plugins"}},
	{VolcanoQueueNameLabelKey, []string{"volcano"}},
	{RayPriorityClassName, []string{"volcano"}},
	{VolcanoNetworkTopologyModeLabelKey, []string{"volcano"}},
	{VolcanoNetworkTopologyHighestTierAllowedLabelKey, []string{"volcano"}},
	{YuniKornQueueLabelKey, []string{"yunikorn"}},
	{YuniKornApplicationIDLabelKey, []string{"yunikorn"}},
	{KaiQueueLabelKey, []string{"kai-scheduler"}},
}

// BatchSchedulerLabels are the keys of the batch-scheduler labels among
// labels, in a fixed order, and the --batch-scheduler values of KubeRay
// that would read them (sorted, each once); both empty when there is none.
func BatchSchedulerLabels(labels map[string]string) (keys, schedulers []string) {
	for _, l := range batchSchedulerLabels {
		if _, ok := labels[l.Key]; !ok {
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
		flags[i] = "--batch-scheduler=" + s
	}
	return strings.Join(flags, " or ")
}

// BatchSchedulerIgnored is the sentence that says raydar ignores the
// batch-scheduler labels of an object, "" when it has none.
func BatchSchedulerIgnored(labels map[string]string) string {
	keys, schedulers := BatchSchedulerLabels(labels)
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
	return subject + " ignored: raydar does not implement batch schedulers (gang scheduling: no PodGroup is made, " +
		"pods are scheduled one by one); run KubeRay's operator with " + BatchSchedulerFlags(schedulers) + " for gang scheduling"
}
