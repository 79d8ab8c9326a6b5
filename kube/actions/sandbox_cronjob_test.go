package actions_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestSandboxRayCronJob: trigger now creates the RayJob on a real API
// server (its CRD's validation included), owned by the RayCronJob; a retry
// within the minute creates nothing; suspend/resume write spec.suspend;
// delete takes the RayCronJob and names its RayJobs as what the garbage
// collector deletes. No reconciler runs.
func TestSandboxRayCronJob(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, rayCronJob(ns, "nightly"))
	cj := &rayv1.RayCronJob{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nightly"}, cj); err != nil {
		t.Fatal(err)
	}
	// A fixed clock: both triggers fall in the same minute.
	now := time.Now().Truncate(time.Minute).Add(10 * time.Second)
	a, audit := sandboxActions(t, nil, actions.Options{Clock: clocktesting.NewFakePassiveClock(now)})

	r, err := a.Trigger(ctx, ns, "nightly")
	if err != nil || r.Outcome != actions.OutcomeApplied {
		t.Fatalf("trigger: %+v, %v", r, err)
	}
	name := rayv1.CronJobManualName("nightly", now)
	j := &rayv1.RayJob{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		t.Fatalf("the RayJob of the trigger: %v", err)
	}
	if !metav1.IsControlledBy(j, cj) || j.Labels[rayv1.RayCronJobNameLabelKey] != "nightly" ||
		j.Annotations[rayv1.CronJobInstantiateAnnotationKey] != rayv1.CronJobInstantiateManual {
		t.Fatalf("RayJob %s: owners %+v labels %v annotations %v", name, j.OwnerReferences, j.Labels, j.Annotations)
	}
	again, err := a.Trigger(ctx, ns, "nightly")
	if err != nil || again.Outcome != actions.OutcomeUnchanged || !again.Plan.(*actions.TriggerPlan).AlreadyExists {
		t.Fatalf("trigger again within the minute: %+v, %v", again, err)
	}
	var jobs rayv1.RayJobList
	if err := cl.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: rayv1.CronJobRayJobSelector("nightly")}); err != nil || len(jobs.Items) != 1 {
		t.Fatalf("%d RayJobs of the RayCronJob (%v), want 1", len(jobs.Items), err)
	}

	for _, suspend := range []bool{true, false} {
		run := a.Resume
		if suspend {
			run = a.Suspend
		}
		if _, err := run(ctx, kinds.RayCronJob, ns, "nightly"); err != nil {
			t.Fatalf("suspend %t: %v", suspend, err)
		}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nightly"}, cj); err != nil || cj.Spec.IsSuspended() != suspend {
			t.Fatalf("spec.suspend %v after suspend %t (%v)", cj.Spec.Suspend, suspend, err)
		}
	}

	p, err := a.PreviewDelete(ctx, kinds.RayCronJob, ns, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if want := []actions.Dependent{{Kind: "RayJob", Name: name, Owner: "RayCronJob nightly"}}; !slices.Equal(p.Dependents, want) || len(p.Warnings) != 0 {
		t.Fatalf("delete preview %+v", *p)
	}
	if _, err := a.Delete(ctx, kinds.RayCronJob, ns, "nightly"); err != nil {
		t.Fatal(err)
	}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nightly"}, &rayv1.RayCronJob{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the RayCronJob is still there: %v", err)
	}

	var got []string
	for _, e := range auditEvents(t, ctx, ns) {
		got = append(got, e.Regarding.Kind+"/"+e.Reason)
		if e.Reason == actions.ReasonTriggered && !strings.HasPrefix(e.Note, "Triggered RayJob "+name+" now, outside the schedule, by alice") {
			t.Errorf("trigger note %q", e.Note)
		}
		if e.Reason == actions.ReasonDeleted && !strings.HasPrefix(e.Note, "Deleted; the garbage collector deletes 1 rayjob, by alice") {
			t.Errorf("delete note %q", e.Note)
		}
	}
	slices.Sort(got)
	want := []string{"RayCronJob/Deleted", "RayCronJob/Resumed", "RayCronJob/Suspended", "RayCronJob/Triggered"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if l := readAudit(t, audit); len(l) != 5 || l[1].Outcome != actions.OutcomeUnchanged || l[1].Action != actions.ActionTrigger {
		t.Fatalf("audit %+v", l)
	}
}
