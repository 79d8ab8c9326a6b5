package batchscheduler

import (
	"slices"
	"strings"
	"testing"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// --batch-scheduler: none, volcano, or refused when parsed: a scheduler
// KubeRay has and raydar does not says so, an unknown one as KubeRay does.
func TestNew(t *testing.T) {
	if s, err := New(""); s != nil || err != nil {
		t.Errorf(`"": %v %v`, s, err)
	}
	if s, err := New("volcano"); err != nil || s.Name() != "volcano" {
		t.Errorf("volcano: %v %v", s, err)
	}
	for name, want := range map[string]string{
		"yunikorn":          "--batch-scheduler yunikorn: KubeRay's yunikorn batch scheduler is not implemented by raydar (it implements volcano)",
		"kai-scheduler":     "not implemented by raydar",
		"scheduler-plugins": "not implemented by raydar",
		"slurm":             "--batch-scheduler slurm: the scheduler is not supported",
	} {
		if s, err := New(name); s != nil || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v %v, want %q", name, s, err, want)
		}
	}
	if !slices.Equal(Names(), rayv1.RaydarBatchSchedulers) {
		t.Errorf("Names %v, rayapi/v1 says %v", Names(), rayv1.RaydarBatchSchedulers)
	}
}
