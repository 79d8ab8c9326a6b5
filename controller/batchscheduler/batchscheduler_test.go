package batchscheduler

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// --batch-scheduler: none, one of KubeRay's four, or refused when parsed
// as KubeRay refuses an unknown one.
func TestNew(t *testing.T) {
	if s, err := New(""); s != nil || err != nil {
		t.Errorf(`"": %v %v`, s, err)
	}
	for _, name := range []string{"volcano", "yunikorn", "kai-scheduler", "scheduler-plugins"} {
		if s, err := New(name); err != nil || s.Name() != name {
			t.Errorf("%s: %v %v", name, s, err)
		}
	}
	if s, err := New("slurm"); s != nil || err == nil || !strings.Contains(err.Error(), "--batch-scheduler slurm: the scheduler is not supported") {
		t.Errorf("slurm: %v %v", s, err)
	}
	if !slices.Equal(Names(), rayv1.RaydarBatchSchedulers) || !slices.Equal(Names(), kuberay) {
		t.Errorf("Names %v, rayapi/v1 says %v, KubeRay %v", Names(), rayv1.RaydarBatchSchedulers, kuberay)
	}
	// Each one's pods carry the schedulerName rayapi/v1 knows it by.
	for _, name := range Names() {
		s, _ := New(name)
		pod := &corev1.Pod{}
		s.Decorate(&rayv1.RayCluster{}, pod, "headgroup")
		if rayv1.BatchSchedulerOfSchedulerName(pod.Spec.SchedulerName) != name {
			t.Errorf("%s: schedulerName %q", name, pod.Spec.SchedulerName)
		}
	}
	if HasGroup(nil) || HasGroup(implemented["yunikorn"]) || !HasGroup(implemented["scheduler-plugins"]) {
		t.Error("HasGroup")
	}
}
