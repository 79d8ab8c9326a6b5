package v1

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// reportCronJob is a valid RayCronJob ml/report.
func reportCronJob() *RayCronJob {
	return &RayCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: "ml", UID: types.UID("uid-1"), Generation: 1},
		Spec: RayCronJobSpec{Schedule: "*/5 * * * *", JobTemplate: RayJobSpec{
			Entrypoint: "python report.py",
			RayClusterSpec: &RayClusterSpec{HeadGroupSpec: HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.52.0"}}}}}},
		}},
	}
}

func TestCronJobTickJob(t *testing.T) {
	tick := time.Date(2024, 1, 1, 0, 5, 0, 0, time.UTC)
	cj := reportCronJob()
	j := CronJobTickJob(cj, tick)
	if want := "report-28401125"; j.Name != want || CronJobTickName("report", tick) != want {
		t.Errorf("name %s, want %s (minutes since the epoch)", j.Name, want)
	}
	if j.Namespace != "ml" || j.Labels[RayCronJobNameLabelKey] != "report" || len(j.Labels) != 1 {
		t.Errorf("namespace %s labels %v, want ml and only ray.io/cronjob-name: report", j.Namespace, j.Labels)
	}
	if got := j.Annotations; len(got) != 1 || got[RayCronJobTimestampAnnotationKey] != "2024-01-01T00:05:00Z" {
		t.Errorf("annotations %v, want only the scheduled timestamp", got)
	}
	if len(j.OwnerReferences) != 1 {
		t.Fatalf("owner references %v, want one", j.OwnerReferences)
	}
	o := j.OwnerReferences[0]
	if o.Kind != KindRayCronJob || o.APIVersion != "ray.io/v1" || o.Name != "report" || o.UID != cj.UID ||
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
	if !CronJobRayJobSelector("report").Matches(labels.Set(j.Labels)) || CronJobRayJobSelector("other").Matches(labels.Set(j.Labels)) {
		t.Errorf("CronJobRayJobSelector does not pick out the RayJob by its labels %v", j.Labels)
	}
	if CronJobTickName("report", tick.Add(5*time.Minute)) == j.Name {
		t.Error("two ticks share a name")
	}
	if CronJobTickName("report", tick.Add(30*time.Second)) != j.Name {
		t.Error("the name depends on more than the minute")
	}
}

func TestCronJobTriggerNow(t *testing.T) {
	now := time.Date(2024, 1, 1, 10, 17, 42, 0, time.UTC)
	cj := reportCronJob()
	j, err := CronJobTriggerNow(cj, now)
	if err != nil {
		t.Fatal(err)
	}
	if j.Name != "report-manual-28401737" {
		t.Errorf("name %s", j.Name)
	}
	if j.Name == CronJobTickName(cj.Name, now) {
		t.Error("a manual run takes a tick's name")
	}
	if j.Labels[RayCronJobNameLabelKey] != "report" || j.Annotations[CronJobInstantiateAnnotationKey] != CronJobInstantiateManual ||
		j.Annotations[RayCronJobTimestampAnnotationKey] != "2024-01-01T10:17:42Z" {
		t.Errorf("labels %v annotations %v", j.Labels, j.Annotations)
	}
	if len(j.OwnerReferences) != 1 || j.OwnerReferences[0].UID != cj.UID {
		t.Errorf("owner references %v", j.OwnerReferences)
	}
	if !equality.Semantic.DeepEqual(j.Spec, cj.Spec.JobTemplate) {
		t.Errorf("spec %+v, want the jobTemplate", j.Spec)
	}

	// The longest RayCronJob name still makes a valid RayJob name.
	cj.Name = strings.Repeat("a", MaxRayCronJobNameLength-6) + "-bcdef" // cut just after the dash
	j, err = CronJobTriggerNow(cj, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Name) > MaxRayJobNameLength || !strings.HasSuffix(j.Name, "-manual-28401737") || strings.Contains(j.Name, "--") {
		t.Errorf("name %s (%d characters), want at most %d ending -manual-28401737", j.Name, len(j.Name), MaxRayJobNameLength)
	}
	if j.Labels[RayCronJobNameLabelKey] != cj.Name {
		t.Errorf("label %q, want the whole RayCronJob name", j.Labels[RayCronJobNameLabelKey])
	}

	// An invalid template: refused, naming the field.
	cj.Spec.JobTemplate.RayClusterSpec = nil
	if _, err := CronJobTriggerNow(cj, now); err == nil || !strings.Contains(err.Error(), "spec.rayClusterSpec") {
		t.Errorf("error %v, want one naming spec.rayClusterSpec", err)
	}
}
