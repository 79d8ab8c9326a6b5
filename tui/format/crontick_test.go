package format

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestCronTicksKeepTheTickUntilItChanges checks that the kept tick reads as
// CronNextRun at every second around a tick, that it is worked out again
// only when the tick is reached or the object changes.
func TestCronTicksKeepTheTickUntilItChanges(t *testing.T) {
	created := time.Date(2026, 1, 1, 10, 0, 30, 0, time.UTC)
	cj := &rayv1.RayCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "c", UID: "u", CreationTimestamp: metav1.NewTime(created)},
		Spec:       rayv1.RayCronJobSpec{Schedule: "* * * * *", TimeZone: ptr.To("UTC")},
	}
	x := CronTicks{}
	first := x.Get(cj, created)
	for s := 0; s < 150; s++ {
		now := created.Add(time.Duration(s) * time.Second)
		if got, want := x.Countdown(cj, now), CronNextRun(cj, now); got != want {
			t.Fatalf("at +%ds: countdown %q, cronNextRun %q", s, got, want)
		}
		if s < 30 && x.Get(cj, now) != first {
			t.Fatalf("at +%ds: the tick was worked out again before it was reached", s)
		}
	}
	before := x.Get(cj, created.Add(150*time.Second))
	cj.Status.LastScheduleTime = ptr.To(metav1.NewTime(created.Add(90 * time.Second)))
	if x.Get(cj, created.Add(150*time.Second)) == before {
		t.Fatal("a new last schedule kept the old tick")
	}
	cj.Spec.Suspend = ptr.To(true)
	if got := x.Countdown(cj, created.Add(150*time.Second)); got != None {
		t.Fatalf("suspended: countdown %q, want %q", got, None)
	}
}
