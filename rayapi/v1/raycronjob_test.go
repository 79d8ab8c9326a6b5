package v1

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// kubeRayDocuments returns the ray.io documents of one of KubeRay's
// multi-document samples in testdata/kuberay (the ConfigMaps beside them
// are Kubernetes' own kinds).
func kubeRayDocuments(t *testing.T, file string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if tm.APIVersion == SchemeGroupVersion.String() {
			out = append(out, doc)
		}
	}
	return out
}

// TestKubeRayCronJobSamples: KubeRay v1.7.0's two RayCronJob samples decode
// strictly, validate, and survive a round trip unchanged.
func TestKubeRayCronJobSamples(t *testing.T) {
	files, err := filepath.Glob("testdata/kuberay/ray-cronjob*.yaml")
	if err != nil || len(files) != 2 {
		t.Fatalf("want KubeRay's two RayCronJob samples in testdata/kuberay, got %v (%v)", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			docs := kubeRayDocuments(t, file)
			if len(docs) != 1 {
				t.Fatalf("%d ray.io documents, want 1", len(docs))
			}
			checkManifest(t, docs[0])
		})
	}
}

func validCronJob() *RayCronJob {
	return &RayCronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly"}, Spec: RayCronJobSpec{
		Schedule:    "0 2 * * *",
		TimeZone:    ptr("Europe/Berlin"),
		JobTemplate: validJob().Spec,
	}}
}

func TestValidateRayCronJob(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *RayCronJob)
		want   []want
	}{
		{"valid", func(*RayCronJob) {}, nil},
		{"valid: defaulted", func(c *RayCronJob) { c.Default() }, nil},
		{"valid: no time zone", func(c *RayCronJob) { c.Spec.TimeZone = nil }, nil},
		{"valid: descriptor", func(c *RayCronJob) { c.Spec.Schedule = "@hourly" }, nil},
		{"valid: every", func(c *RayCronJob) { c.Spec.Schedule = "@every 90m" }, nil},
		{"valid: name of 36", func(c *RayCronJob) { c.Name = strings.Repeat("c", 36) }, nil},
		{"name too long for its RayJobs", func(c *RayCronJob) { c.Name = strings.Repeat("c", 37) },
			[]want{{field.ErrorTypeTooLong, "metadata.name"}}},
		{"empty schedule", func(c *RayCronJob) { c.Spec.Schedule = " " },
			[]want{{field.ErrorTypeRequired, "spec.schedule"}}},
		{"three fields", func(c *RayCronJob) { c.Spec.Schedule = "invalid cron string" },
			[]want{{field.ErrorTypeInvalid, "spec.schedule"}}},
		{"minute out of range", func(c *RayCronJob) { c.Spec.Schedule = "61 * * * *" },
			[]want{{field.ErrorTypeInvalid, "spec.schedule"}}},
		{"time zone in the schedule", func(c *RayCronJob) { c.Spec.Schedule = "CRON_TZ=Asia/Taipei 0 9 * * *" },
			[]want{{field.ErrorTypeInvalid, "spec.schedule"}}},
		{"empty time zone", func(c *RayCronJob) { c.Spec.TimeZone = ptr("") },
			[]want{{field.ErrorTypeInvalid, "spec.timeZone"}}},
		{"unknown time zone", func(c *RayCronJob) { c.Spec.TimeZone = ptr("Mars/Olympus_Mons") },
			[]want{{field.ErrorTypeInvalid, "spec.timeZone"}}},
		{"bad time zone and bad schedule", func(c *RayCronJob) { c.Spec.TimeZone = ptr("Nowhere"); c.Spec.Schedule = "x" },
			[]want{{field.ErrorTypeInvalid, "spec.timeZone"}, {field.ErrorTypeInvalid, "spec.schedule"}}},
		{"job template without a cluster", func(c *RayCronJob) { c.Spec.JobTemplate.RayClusterSpec = nil },
			[]want{{field.ErrorTypeRequired, "spec.jobTemplate.rayClusterSpec"}}},
		{"job template's cluster", func(c *RayCronJob) { c.Spec.JobTemplate.RayClusterSpec.WorkerGroupSpecs[0].Replicas = i32(-1) },
			[]want{{field.ErrorTypeInvalid, "spec.jobTemplate.rayClusterSpec.workerGroupSpecs[0].replicas"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validCronJob()
			tt.mutate(c)
			checkErrors(t, ValidateRayCronJob(c), tt.want)
		})
	}
}

// TestParseCronSchedule: the schedule runs in spec.timeZone, else in the
// location given for "the operator's local time zone".
func TestParseCronSchedule(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name     string
		schedule string
		tz       *string
		local    *time.Location
		want     time.Time
	}{
		{"time zone", "0 2 * * *", ptr("Europe/Berlin"), tokyo, time.Date(2026, 6, 2, 2, 0, 0, 0, berlin)},
		{"local when unset", "0 2 * * *", nil, tokyo, time.Date(2026, 6, 2, 2, 0, 0, 0, tokyo)},
		{"descriptor in the time zone", "@daily", ptr("Europe/Berlin"), time.UTC, time.Date(2026, 6, 2, 0, 0, 0, 0, berlin)},
		{"every counts from the last tick", "@every 90m", ptr("Europe/Berlin"), time.UTC, from.Add(90 * time.Minute)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, errs := ParseCronSchedule(&RayCronJobSpec{Schedule: tt.schedule, TimeZone: tt.tz}, tt.local)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if got := s.Next(from); !got.Equal(tt.want) {
				t.Errorf("Next(%s) = %s, want %s", from, got, tt.want)
			}
		})
	}
}
