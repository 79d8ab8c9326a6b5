package actions_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestPlanTrigger(t *testing.T) {
	now := time.Date(2024, 1, 1, 10, 17, 42, 0, time.UTC)
	suspended := rayCronJob("ns", "nightly")
	suspended.Spec.Suspend = ptr.To(true)
	deleting := rayCronJob("ns", "nightly")
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	noCluster := rayCronJob("ns", "nightly")
	noCluster.Spec.JobTemplate.RayClusterSpec = nil

	for _, tc := range []struct {
		name  string
		cj    *rayv1.RayCronJob
		err   []string
		lines []string
	}{
		{name: "runs now", cj: rayCronJob("ns", "nightly"), lines: []string{
			`create RayJob ns/nightly-manual-28401737 from the jobTemplate of RayCronJob nightly, now, outside its schedule "* * * * *"`,
			"effect: the RayJob is owned by the RayCronJob and runs as a tick's would; status.lastScheduleTime does not move",
		}},
		{name: "suspended runs anyway, with a warning", cj: suspended, lines: []string{
			`create RayJob ns/nightly-manual-28401737 from the jobTemplate of RayCronJob nightly, now, outside its schedule "* * * * *"`,
			"effect: the RayJob is owned by the RayCronJob and runs as a tick's would; status.lastScheduleTime does not move",
			"warning: the RayCronJob is suspended: this runs anyway; its schedule stays suspended",
		}},
		{name: "being deleted", cj: deleting, err: []string{"RayCronJob ns/nightly is being deleted"}},
		{name: "invalid template names the field", cj: noCluster, err: []string{"RayCronJob ns/nightly: its jobTemplate makes an invalid RayJob", "spec.rayClusterSpec"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.cj.DeepCopy()
			p, err := actions.PlanTrigger(tc.cj, now)
			wantErr(t, err, tc.err...)
			if !equalJSON(t, before, tc.cj) {
				t.Fatal("PlanTrigger modified its input")
			}
			if err != nil {
				return
			}
			if p.Job != rayv1.CronJobManualName("nightly", now) || p.CronJob != "nightly" || p.AlreadyExists {
				t.Errorf("plan %+v", *p)
			}
			if got := p.Lines(); !slices.Equal(got, tc.lines) {
				t.Errorf("lines\n%q\nwant\n%q", got, tc.lines)
			}
		})
	}
	// Within a minute the same RayJob; the next minute another.
	a, _ := actions.PlanTrigger(rayCronJob("ns", "nightly"), now)
	b, _ := actions.PlanTrigger(rayCronJob("ns", "nightly"), now.Add(17*time.Second))
	c, _ := actions.PlanTrigger(rayCronJob("ns", "nightly"), now.Add(time.Minute))
	if a.Job != b.Job || a.Job == c.Job {
		t.Errorf("names %s, %s, %s: want the first two equal, the third not", a.Job, b.Job, c.Job)
	}
}

func TestPlanSuspendRayCronJob(t *testing.T) {
	suspended := rayCronJob("ns", "nightly")
	suspended.Spec.Suspend = ptr.To(true)
	for _, tc := range []struct {
		name      string
		cj        *rayv1.RayCronJob
		suspend   bool
		unchanged bool
		effect    string
	}{
		{"suspend", rayCronJob("ns", "nightly"), true, false, "no new RayJobs are created on its schedule"},
		{"resume", suspended, false, false, "of the ticks missed while suspended, raydar's reconciler runs only the latest"},
		{"suspend when suspended", suspended, true, true, ""},
		{"resume when running (suspend unset)", rayCronJob("ns", "nightly"), false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := actions.PlanSuspend(tc.cj, tc.suspend)
			wantErr(t, err)
			if p.Kind != kinds.RayCronJob || p.Suspend != tc.suspend || p.Unchanged != tc.unchanged || !strings.Contains(p.Effect, tc.effect) {
				t.Fatalf("plan %+v", *p)
			}
		})
	}
}

func TestPlanDeleteRayCronJob(t *testing.T) {
	const ns = "ns"
	cj := rayCronJob(ns, "nightly")
	tick := rayJob(ns, "nightly-28401737", true)
	ownedBy(tick, rayv1.KindRayCronJob, cj.Name, cj.UID)
	manual := rayJob(ns, "nightly-manual-28401740", true)
	ownedBy(manual, rayv1.KindRayCronJob, cj.Name, cj.UID)
	foreign := rayJob(ns, "other", true) // labelled alike, but not owned: stays
	foreign.Labels = map[string]string{rayv1.RayCronJobNameLabelKey: cj.Name}
	tickCluster := cluster(ns, "nightly-28401737-raycluster-x", group("small", 0, 1, 2))
	ownedBy(tickCluster, rayv1.KindRayJob, tick.Name, tick.UID)
	submitter := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tick.Name, UID: "submitter-uid"}}
	ownedBy(&submitter, rayv1.KindRayJob, tick.Name, tick.UID)
	head := rayPod(ns, tickCluster.Name, "", tickCluster.Name+"-head")
	ownedBy(&head, rayv1.KindRayCluster, tickCluster.Name, tickCluster.UID)
	related := actions.Related{
		RayJobs:     []rayv1.RayJob{*tick, *manual, *foreign},
		RayClusters: []rayv1.RayCluster{*tickCluster},
		Jobs:        []batchv1.Job{submitter},
		Pods:        []corev1.Pod{head},
	}

	p, err := actions.PlanDelete(cj, related)
	wantErr(t, err)
	want := []actions.Dependent{
		{Kind: "RayJob", Name: "nightly-28401737", Owner: "RayCronJob nightly"},
		{Kind: "RayJob", Name: "nightly-manual-28401740", Owner: "RayCronJob nightly"},
		{Kind: "RayCluster", Name: tickCluster.Name, Owner: "RayJob nightly-28401737"},
		{Kind: "Job", Name: "nightly-28401737", Owner: "RayJob nightly-28401737"},
		{Kind: "Pod", Name: tickCluster.Name + "-head", Owner: "RayCluster " + tickCluster.Name},
	}
	if !slices.Equal(p.Dependents, want) {
		t.Fatalf("dependents\n%+v\nwant\n%+v", p.Dependents, want)
	}
	if l := p.Lines(); l[0] != "delete RayCronJob ns/nightly" || l[1] != "also deleted: 2 rayjobs, 1 raycluster, 1 job, 1 pod" {
		t.Fatalf("lines %q", l)
	}

	// Deleting one of its RayJobs says the schedule goes on.
	p, err = actions.PlanDelete(tick, related)
	wantErr(t, err)
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "created by RayCronJob nightly, whose schedule goes on") {
		t.Fatalf("warnings %q", p.Warnings)
	}
}
