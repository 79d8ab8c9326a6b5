package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Integration tests of the RayCronJob reconciler on the package's sandbox:
// real RayCronJobs, the RayJobs their ticks create, the RayJob reconciler
// running beside it. Ticks are made deterministic by a yearly schedule in
// UTC whose status.lastScheduleTime is set before the operator starts (the
// tick due is 1 January of this year, the next one a year away); only the
// per-minute test waits for a real minute boundary.

// cronLong bounds a wait that includes a real minute boundary: up to 60 s
// to the first tick, plus a loaded 2-core machine.
const cronLong = 150 * time.Second

// yearly fires at 00:00 UTC on 1 January.
const yearly = "0 0 1 1 *"

// newYear is 00:00 UTC on 1 January of the year of t, plus years.
func newYear(t time.Time, years int) time.Time {
	return time.Date(t.UTC().Year()+years, 1, 1, 0, 0, 0, 0, time.UTC)
}

// testCronJob is a RayCronJob whose RayJobs run on a head-only cluster;
// suspendJobs makes those RayJobs suspended (no cluster is brought up).
func testCronJob(ns, name, schedule string, tz *string, suspendJobs bool) *rayv1.RayCronJob {
	spec := testCluster(ns, "unused", 0).Spec
	return &rayv1.RayCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: rayv1.RayCronJobSpec{Schedule: schedule, TimeZone: tz, JobTemplate: rayv1.RayJobSpec{
			Entrypoint: "python report.py", SubmissionMode: rayv1.HTTPMode, RayClusterSpec: &spec,
			Suspend: suspendJobs, ShutdownAfterJobFinishes: suspendJobs, // KubeRay suspends only those
		}},
	}
}

// createCronJob creates cj and, when last is not zero, sets its
// status.lastScheduleTime (before any operator runs, so the first pass
// decides from it).
func createCronJob(t *testing.T, cj *rayv1.RayCronJob, last time.Time) {
	t.Helper()
	ctx := context.Background()
	if err := cl.Create(ctx, cj); err != nil {
		t.Fatal(err)
	}
	if last.IsZero() {
		return
	}
	cj.Status.LastScheduleTime = &metav1.Time{Time: last}
	if err := cl.Status().Update(ctx, cj); err != nil {
		t.Fatal(err)
	}
}

// dueYearly creates, in a new namespace and before any operator runs
// there, a yearly RayCronJob (suspended RayJobs, mutate applied) last
// scheduled yearsBack years before this year's tick, which is due: its
// RayJob is the one to create, yearsBack-1 ticks are missed.
func dueYearly(t *testing.T, name string, yearsBack int, mutate func(*rayv1.RayCronJob)) (ns string, cj *rayv1.RayCronJob, tick, last time.Time) {
	t.Helper()
	ns = newNamespace(t)
	now := time.Now()
	tick, last = newYear(now, 0), newYear(now, -yearsBack)
	cj = testCronJob(ns, name, yearly, ptr.To("UTC"), true)
	if mutate != nil {
		mutate(cj)
	}
	createCronJob(t, cj, last)
	return ns, cj, tick, last
}

func getCronJob(t *testing.T, ns, name string) *rayv1.RayCronJob {
	t.Helper()
	cj := &rayv1.RayCronJob{}
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cj); err != nil {
		t.Fatal(err)
	}
	return cj
}

// cronRayJobs lists, live, the RayJobs labelled as the RayCronJob's.
func cronRayJobs(t *testing.T, ns, name string) []rayv1.RayJob {
	t.Helper()
	list := &rayv1.RayJobList{}
	if err := cl.List(context.Background(), list, client.InNamespace(ns),
		client.MatchingLabelsSelector{Selector: rayv1.CronJobRayJobSelector(name)}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func jobNames(jobs []rayv1.RayJob) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	return out
}

// waitLastSchedule waits until the RayCronJob's lastScheduleTime is want.
func waitLastSchedule(t *testing.T, ns, name string, want time.Time) *rayv1.RayCronJob {
	t.Helper()
	var cj *rayv1.RayCronJob
	eventually(t, 60*time.Second, "lastScheduleTime "+want.Format(time.RFC3339), func() (bool, string) {
		cj = getCronJob(t, ns, name)
		last := cj.Status.LastScheduleTime
		return last != nil && last.Time.Equal(want), fmt.Sprintf("status %+v", cj.Status)
	})
	return cj
}

// waitCronEvent waits for an Event of the type and reason on the
// RayCronJob whose note contains substr.
func waitCronEvent(t *testing.T, ns, name, typ, reason, substr string) eventsv1.Event {
	t.Helper()
	return waitEventOf(t, 60*time.Second, ns, rayv1.KindRayCronJob, name, typ, reason, substr)
}

// cronEventCount counts the Events of a reason on the RayCronJob.
func cronEventCount(t *testing.T, ns, name, reason string) int {
	t.Helper()
	n := 0
	for _, e := range eventsOf(t, ns, rayv1.KindRayCronJob, name) {
		if e.Reason == reason {
			n++
		}
	}
	return n
}

// cronWire is a sandbox config that counts the operator's RayJob creates
// in a namespace and, while refuseStatus is set, fails its RayCronJob
// status writes before they leave: a process that stops right after a
// tick's RayJob was created, before its status was written.
type cronWire struct {
	ns string

	mu             sync.Mutex
	refuseStatus   bool
	creates        int // RayJob POSTs answered 201
	createAttempts int // RayJob POSTs sent
	refused        int // status writes refused
}

func (w *cronWire) config() *rest.Config {
	cfg := rest.CopyConfig(sb.Config)
	jobs := "/apis/ray.io/v1/namespaces/" + w.ns + "/rayjobs"
	cronJobs := "/apis/ray.io/v1/namespaces/" + w.ns + "/raycronjobs/"
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			isStatus := (r.Method == http.MethodPut || r.Method == http.MethodPatch) &&
				strings.HasPrefix(r.URL.Path, cronJobs) && strings.HasSuffix(r.URL.Path, "/status")
			isCreate := r.Method == http.MethodPost && r.URL.Path == jobs
			w.mu.Lock()
			refuse := isStatus && w.refuseStatus
			if refuse {
				w.refused++
			}
			if isCreate {
				w.createAttempts++
			}
			w.mu.Unlock()
			if refuse {
				return nil, errors.New("test: the operator stops before its status write")
			}
			resp, err := rt.RoundTrip(r)
			if isCreate && err == nil && resp.StatusCode == http.StatusCreated {
				w.mu.Lock()
				w.creates++
				w.mu.Unlock()
			}
			return resp, err
		})
	})
	return cfg
}

func (w *cronWire) counts() (creates, attempts, refused int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.creates, w.createAttempts, w.refused
}

// TestIntegrationCronJobCreatesTick: a per-minute RayCronJob creates, at
// the first minute boundary after its creation, the RayJob of that tick,
// named, labelled, annotated and owned as KubeRay's, which the RayJob
// reconciler then runs; lastScheduleTime is the tick. Waits for a real
// minute boundary (deadline cronLong).
func TestIntegrationCronJobCreatesTick(t *testing.T) {
	needSandbox(t)
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	cj := testCronJob(ns, "minutely", "* * * * *", nil, false)
	createCronJob(t, cj, time.Time{})

	var jobs []rayv1.RayJob
	eventually(t, cronLong, "the RayJob of the first tick", func() (bool, string) {
		jobs = cronRayJobs(t, ns, cj.Name)
		return len(jobs) > 0, "none yet"
	})
	j := jobs[0]
	for _, o := range jobs[1:] {
		if o.CreationTimestamp.Before(&j.CreationTimestamp) {
			j = o
		}
	}
	tick, err := time.Parse(time.RFC3339, j.Annotations[rayv1.RayCronJobTimestampAnnotationKey])
	if err != nil {
		t.Fatalf("annotation %s: %v", rayv1.RayCronJobTimestampAnnotationKey, err)
	}
	if tick.Second() != 0 || !tick.After(cj.CreationTimestamp.Time) || tick.After(time.Now()) {
		t.Errorf("tick %s: want the first minute boundary after the creation at %s", tick, cj.CreationTimestamp)
	}
	if want := rayv1.CronJobTickName(cj.Name, tick); j.Name != want {
		t.Errorf("RayJob %s, want %s (the tick's minutes since the epoch)", j.Name, want)
	}
	if j.Labels[rayv1.RayCronJobNameLabelKey] != cj.Name {
		t.Errorf("labels %v, want %s: %s", j.Labels, rayv1.RayCronJobNameLabelKey, cj.Name)
	}
	if ref := metav1.GetControllerOf(&j); ref == nil || ref.Kind != rayv1.KindRayCronJob || ref.UID != cj.UID {
		t.Errorf("controller %+v, want the RayCronJob %s", ref, cj.UID)
	}
	if j.Spec.Entrypoint != cj.Spec.JobTemplate.Entrypoint {
		t.Errorf("entrypoint %q, want the jobTemplate's %q", j.Spec.Entrypoint, cj.Spec.JobTemplate.Entrypoint)
	}
	waitLastSchedule(t, ns, cj.Name, tick)
	waitCronEvent(t, ns, cj.Name, corev1.EventTypeNormal, rayv1.EventCreatedRayJob, j.Name)
	eventually(t, 60*time.Second, "the RayJob reconciler runs "+j.Name, func() (bool, string) {
		got := &rayv1.RayJob{}
		if err := cl.Get(context.Background(), client.ObjectKeyFromObject(&j), got); err != nil {
			return false, err.Error()
		}
		return got.Status.JobDeploymentStatus != "", "no jobDeploymentStatus yet"
	})
}

// TestIntegrationCronJobRestart: a tick due while no operator ran is
// created by the first one, which stops before writing the status; the
// next operator finds the tick's RayJob and only writes lastScheduleTime:
// one RayJob for the tick, none lost, none doubled. The two earlier ticks
// missed make one RayJob, with an Event counting the one skipped.
func TestIntegrationCronJobRestart(t *testing.T) {
	needSandbox(t)
	t.Parallel()
	ns, cj, tick, before := dueYearly(t, "yearly", 2, nil)
	name := rayv1.CronJobTickName(cj.Name, tick)

	first := &cronWire{ns: ns, refuseStatus: true}
	op := startOperatorOn(t, first.config(), ns, nil)
	eventually(t, 60*time.Second, "the first operator creates "+name+" and tries to write the status", func() (bool, string) {
		_, _, refused := first.counts()
		jobs := cronRayJobs(t, ns, cj.Name)
		return len(jobs) == 1 && jobs[0].Name == name && refused > 0, fmt.Sprintf("RayJobs %v, status writes refused %d", jobNames(jobs), refused)
	})
	// Its Events are out before it stops.
	waitCronEvent(t, ns, cj.Name, corev1.EventTypeNormal, rayv1.EventSkippedMissedTicks, "skipped 1 missed tick")
	waitCronEvent(t, ns, cj.Name, corev1.EventTypeNormal, rayv1.EventCreatedRayJob, name)
	op.stop()
	if got := getCronJob(t, ns, cj.Name).Status.LastScheduleTime; got == nil || !got.Time.Equal(before) {
		t.Fatalf("lastScheduleTime %v after the first operator, want %s (its status write never left)", got, before)
	}
	if creates, attempts, _ := first.counts(); creates != 1 || attempts != 1 {
		t.Errorf("the first operator sent %d RayJob creates (%d created), want 1", attempts, creates)
	}

	second := &cronWire{ns: ns}
	startOperatorOn(t, second.config(), ns, nil)
	waitLastSchedule(t, ns, cj.Name, tick)
	if jobs := cronRayJobs(t, ns, cj.Name); len(jobs) != 1 || jobs[0].Name != name {
		t.Errorf("RayJobs %v, want only %s", jobNames(jobs), name)
	}
	if creates, attempts, _ := second.counts(); attempts != 0 {
		t.Errorf("the second operator sent %d RayJob creates (%d created), want none: the tick's RayJob exists", attempts, creates)
	}
	if n := cronEventCount(t, ns, cj.Name, rayv1.EventCreatedRayJob); n != 1 {
		t.Errorf("%d %s Events, want 1", n, rayv1.EventCreatedRayJob)
	}
}

// TestIntegrationCronJobSuspended: a suspended RayCronJob whose tick is due
// creates nothing and says so in an Event; resumed, it creates the RayJob
// of the tick it missed.
func TestIntegrationCronJobSuspended(t *testing.T) {
	needSandbox(t)
	t.Parallel()
	ns, cj, tick, before := dueYearly(t, "paused", 1, func(cj *rayv1.RayCronJob) { cj.Spec.Suspend = ptr.To(true) })
	startOperator(t, ns, nil)

	waitCronEvent(t, ns, cj.Name, corev1.EventTypeNormal, rayv1.EventSuspendedRayCronJob, "no new RayJobs will be created")
	// The pass that said it had decided: had it created, the RayJob
	// would be there before the Event.
	if jobs := cronRayJobs(t, ns, cj.Name); len(jobs) != 0 {
		t.Fatalf("suspended, it created %v", jobNames(jobs))
	}
	if got := getCronJob(t, ns, cj.Name).Status.LastScheduleTime; got == nil || !got.Time.Equal(before) {
		t.Errorf("suspended, lastScheduleTime moved to %v", got)
	}

	patchCronJob(t, ns, cj.Name, func(cj *rayv1.RayCronJob) { cj.Spec.Suspend = ptr.To(false) })
	waitLastSchedule(t, ns, cj.Name, tick)
	if jobs := cronRayJobs(t, ns, cj.Name); len(jobs) != 1 || jobs[0].Name != rayv1.CronJobTickName(cj.Name, tick) {
		t.Errorf("resumed: RayJobs %v, want the one of %s", jobNames(jobs), tick)
	}
}

// TestIntegrationCronJobInvalidSchedule: a schedule the API server admits
// but cron cannot parse gives a Warning Event and the ScheduleValid=False
// condition, both naming spec.schedule, and no RayJob; fixed, the
// condition turns True.
func TestIntegrationCronJobInvalidSchedule(t *testing.T) {
	needSandbox(t)
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	cj := testCronJob(ns, "broken", "61 * * * *", ptr.To("UTC"), true)
	createCronJob(t, cj, time.Time{})

	waitCronEvent(t, ns, cj.Name, corev1.EventTypeWarning, rayv1.EventInvalidRayCronJobSpec, "spec.schedule")
	var cond *metav1.Condition
	eventually(t, 60*time.Second, "ScheduleValid False naming spec.schedule", func() (bool, string) {
		cond = meta.FindStatusCondition(getCronJob(t, ns, cj.Name).Status.Conditions, rayv1.RayCronJobScheduleValid)
		return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == rayv1.RayCronJobReasonInvalidSchedule &&
			strings.Contains(cond.Message, "spec.schedule"), fmt.Sprintf("%+v", cond)
	})
	if jobs := cronRayJobs(t, ns, cj.Name); len(jobs) != 0 {
		t.Errorf("invalid, it created %v", jobNames(jobs))
	}

	patchCronJob(t, ns, cj.Name, func(cj *rayv1.RayCronJob) { cj.Spec.Schedule = yearly })
	eventually(t, 60*time.Second, "ScheduleValid True after the fix", func() (bool, string) {
		cond = meta.FindStatusCondition(getCronJob(t, ns, cj.Name).Status.Conditions, rayv1.RayCronJobScheduleValid)
		return cond != nil && cond.Status == metav1.ConditionTrue, fmt.Sprintf("%+v", cond)
	})
}

// patchCronJob applies f to a fresh copy and merge-patches the change.
func patchCronJob(t *testing.T, ns, name string, f func(*rayv1.RayCronJob)) {
	t.Helper()
	cj := getCronJob(t, ns, name)
	orig := cj.DeepCopy()
	f(cj)
	if err := cl.Patch(context.Background(), cj, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationCronJobKubeRaySamples applies KubeRay v1.7.0's two
// RayCronJob samples unchanged (rayapi/v1/testdata/kuberay, with the
// ConfigMaps they mount): the per-minute one makes the RayJob of its first
// tick, named and labelled as KubeRay names it; neither is refused (no
// Warning, no ScheduleValid=False), and the Asia/Taipei one, whose first
// tick is hours away, creates nothing yet.
func TestIntegrationCronJobKubeRaySamples(t *testing.T) {
	needSandbox(t)
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	ctx := context.Background()
	for _, f := range []string{"ray-cronjob.sample.yaml", "ray-cronjob-timezone.sample.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "rayapi", "v1", "testdata", "kuberay", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			u.SetNamespace(ns)
			// Both samples carry the same code ConfigMap.
			if err := cl.Create(ctx, u); err != nil && !(u.GetKind() == "ConfigMap" && apierrors.IsAlreadyExists(err)) {
				t.Fatalf("%s: creating %s %s: %v", f, u.GetKind(), u.GetName(), err)
			}
		}
	}

	var jobs []rayv1.RayJob
	eventually(t, cronLong, "the RayJob of raycronjob-sample's first tick", func() (bool, string) {
		jobs = cronRayJobs(t, ns, "raycronjob-sample")
		return len(jobs) > 0, "none yet"
	})
	tick, err := time.Parse(time.RFC3339, jobs[0].Annotations[rayv1.RayCronJobTimestampAnnotationKey])
	if err != nil {
		t.Fatalf("annotation %s: %v", rayv1.RayCronJobTimestampAnnotationKey, err)
	}
	if want := rayv1.CronJobTickName("raycronjob-sample", tick); jobs[0].Name != want {
		t.Errorf("RayJob %s, want %s", jobs[0].Name, want)
	}
	waitLastSchedule(t, ns, "raycronjob-sample", tick)

	for _, name := range []string{"raycronjob-sample", "raycronjob-timezone-sample"} {
		cj := &rayv1.RayCronJob{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cj); err != nil {
			t.Fatal(err)
		}
		if c := meta.FindStatusCondition(cj.Status.Conditions, rayv1.RayCronJobScheduleValid); c != nil && c.Status != metav1.ConditionTrue {
			t.Errorf("%s: %s=%s: %s (KubeRay's sample must be accepted)", name, c.Type, c.Status, c.Message)
		}
		for _, e := range eventsOf(t, ns, rayv1.KindRayCronJob, name) {
			if e.Type == corev1.EventTypeWarning {
				t.Errorf("%s: Warning %s: %s", name, e.Reason, e.Note)
			}
		}
	}
	// 45 21 * * * in Asia/Taipei: any RayJob it made (the test may run
	// across 21:45 there) is of a 21:45 Taipei tick after its creation.
	taipei, err := time.LoadLocation("Asia/Taipei")
	if err != nil {
		t.Fatal(err)
	}
	tz := &rayv1.RayCronJob{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "raycronjob-timezone-sample"}, tz); err != nil {
		t.Fatal(err)
	}
	for _, j := range cronRayJobs(t, ns, tz.Name) {
		at, err := time.Parse(time.RFC3339, j.Annotations[rayv1.RayCronJobTimestampAnnotationKey])
		if err != nil {
			t.Fatalf("%s: annotation %s: %v", j.Name, rayv1.RayCronJobTimestampAnnotationKey, err)
		}
		if l := at.In(taipei); l.Hour() != 21 || l.Minute() != 45 || !at.After(tz.CreationTimestamp.Time) {
			t.Errorf("%s: tick %s (%s in Taipei), want a 21:45 Asia/Taipei tick after the creation at %s", j.Name, at, l, tz.CreationTimestamp)
		}
	}
}
