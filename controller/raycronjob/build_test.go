package raycronjob

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestTickJob(t *testing.T) {
	tick := utc(2024, 1, 1, 0, 5, 0)
	cj := cronJob("*/5 * * * *", nil, tick, time.Time{})
	j := TickJob(cj, tick)
	if want := "report-28401125"; j.Name != want || TickName("report", tick) != want {
		t.Errorf("name %s, want %s (minutes since the epoch)", j.Name, want)
	}
	if j.Namespace != "ml" || j.Labels[rayv1.RayCronJobNameLabelKey] != "report" || len(j.Labels) != 1 {
		t.Errorf("namespace %s labels %v, want ml and only ray.io/cronjob-name: report", j.Namespace, j.Labels)
	}
	if got := j.Annotations; len(got) != 1 || got[rayv1.RayCronJobTimestampAnnotationKey] != "2024-01-01T00:05:00Z" {
		t.Errorf("annotations %v, want only the scheduled timestamp", got)
	}
	if len(j.OwnerReferences) != 1 {
		t.Fatalf("owner references %v, want one", j.OwnerReferences)
	}
	o := j.OwnerReferences[0]
	if o.Kind != rayv1.KindRayCronJob || o.APIVersion != "ray.io/v1" || o.Name != "report" || o.UID != cj.UID ||
		o.Controller == nil || !*o.Controller || o.BlockOwnerDeletion == nil || !*o.BlockOwnerDeletion {
		t.Errorf("owner reference %+v, want the RayCronJob as controller", o)
	}
	if !equality.Semantic.DeepEqual(j.Spec, cj.Spec.JobTemplate) {
		t.Errorf("spec %+v, want the jobTemplate", j.Spec)
	}
	j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "changed"
	if cj.Spec.JobTemplate.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image == "changed" {
		t.Error("the RayJob shares its spec with the template")
	}
	if !JobSelector("report").Matches(labels.Set(j.Labels)) || JobSelector("other").Matches(labels.Set(j.Labels)) {
		t.Errorf("JobSelector does not pick out the RayJob by its labels %v", j.Labels)
	}
	if TickName("report", tick.Add(5*time.Minute)) == j.Name {
		t.Error("two ticks share a name")
	}
	if TickName("report", tick.Add(30*time.Second)) != j.Name {
		t.Error("the name depends on more than the minute")
	}
}

func TestTriggerNow(t *testing.T) {
	now := utc(2024, 1, 1, 10, 17, 42)
	cj := cronJob("*/5 * * * *", nil, now.Add(-time.Hour), now.Add(-2*time.Minute))
	j, err := TriggerNow(cj, now)
	if err != nil {
		t.Fatal(err)
	}
	if j.Name != "report-manual-28401737" {
		t.Errorf("name %s", j.Name)
	}
	if j.Name == TickName(cj.Name, now) {
		t.Error("a manual run takes a tick's name")
	}
	if j.Labels[rayv1.RayCronJobNameLabelKey] != "report" || j.Annotations[rayv1.CronJobInstantiateAnnotationKey] != rayv1.CronJobInstantiateManual ||
		j.Annotations[rayv1.RayCronJobTimestampAnnotationKey] != "2024-01-01T10:17:42Z" {
		t.Errorf("labels %v annotations %v", j.Labels, j.Annotations)
	}
	if len(j.OwnerReferences) != 1 || j.OwnerReferences[0].UID != cj.UID {
		t.Errorf("owner references %v", j.OwnerReferences)
	}
	if !equality.Semantic.DeepEqual(j.Spec, cj.Spec.JobTemplate) {
		t.Errorf("spec %+v, want the jobTemplate", j.Spec)
	}

	// The longest RayCronJob name still makes a valid RayJob name.
	cj.Name = strings.Repeat("a", rayv1.MaxRayCronJobNameLength-6) + "-bcdef" // cut just after the dash
	j, err = TriggerNow(cj, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Name) > rayv1.MaxRayJobNameLength || !strings.HasSuffix(j.Name, "-manual-28401737") || strings.Contains(j.Name, "--") {
		t.Errorf("name %s (%d characters), want at most %d ending -manual-28401737", j.Name, len(j.Name), rayv1.MaxRayJobNameLength)
	}
	if j.Labels[rayv1.RayCronJobNameLabelKey] != cj.Name {
		t.Errorf("label %q, want the whole RayCronJob name", j.Labels[rayv1.RayCronJobNameLabelKey])
	}

	// An invalid template: refused, naming the field.
	cj.Spec.JobTemplate.RayClusterSpec = nil
	if _, err := TriggerNow(cj, now); err == nil || !strings.Contains(err.Error(), "spec.rayClusterSpec") {
		t.Errorf("error %v, want one naming spec.rayClusterSpec", err)
	}
}
