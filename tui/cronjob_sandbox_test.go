package tui

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestSandboxTriggerCronJob: trigger now, end to end on a real API server:
// t in a RayCronJob's detail → confirmation → kube/actions creates the
// RayJob → informer cache → feed → the RayJob shows in the detail, and
// the list counts it. The schedule never fires during the test (no
// reconciler runs), so the RayJob is the trigger's.
func TestSandboxTriggerCronJob(t *testing.T) {
	s := sandboxFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, src := sandboxFeed(t, ctx, s)
	ns := sandboxNamespace(t, ctx, cl)
	cj := &rayv1.RayCronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
		Spec: rayv1.RayCronJobSpec{Schedule: "0 2 29 2 *", TimeZone: ptr.To("Europe/Berlin"), JobTemplate: rayv1.RayJobSpec{
			Entrypoint: "python nightly.py", RayClusterSpec: ptr.To(testClusterSpec(0)), ShutdownAfterJobFinishes: true}}}
	if err := cl.Create(ctx, cj); err != nil {
		t.Fatal(err)
	}
	tm, _ := start(t, Options{Now: time.Now, Store: watch.NewStore(), StartView: CronJobsView, Session: Session{Feed: src, Synced: src.Synced, Namespace: ns},
		Actions: DefaultActions(ActionDeps{Context: "sandbox", Actions: sandboxActions(t, cl)})}, 100, 30)
	waitScreen(t, tm, "▶ nightly ")
	typeKeys(tm, "<enter>")
	waitScreen(t, tm, "RayCronJob "+ns+"/nightly")
	typeKeys(tm, "t")
	screen := waitScreen(t, tm, "Trigger RayCronJob "+ns+"/nightly now")
	mustContain(t, screen, "create RayJob "+ns+"/nightly-manual-", "▶[Cancel]")
	typeKeys(tm, "<tab>", "<enter>")
	waitScreen(t, tm, "triggered RayCronJob "+ns+"/nightly: created RayJob nightly-manual-")
	var jobs rayv1.RayJobList
	if err := cl.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: rayv1.CronJobRayJobSelector("nightly")}); err != nil || len(jobs.Items) != 1 {
		t.Fatalf("%d RayJobs of the RayCronJob (%v), want 1", len(jobs.Items), err)
	}
	name := jobs.Items[0].Name
	waitScreen(t, tm, "▶ "+name+" ")
	typeKeys(tm, "<esc>")
	waitScreen(t, tm, "RayCronJobs("+ns+")[1]")
	waitScreen(t, tm, "    1  scheduled") // JOBS, STATUS
	finalScreen(t, tm)
}
