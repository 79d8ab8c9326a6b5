package tui

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Rows of the RayCronJobs list (by name): 0 bad-zone, 1 every-minute,
// 2 nightly-train, 3 weekly-report.
var (
	cronList    = []string{":rcj", "<enter>"}
	nightlyRow  = append(append([]string{}, cronList...), "j", "j")
	weeklyRow   = append(append([]string{}, cronList...), "G")
	nightlyPage = append(append([]string{}, nightlyRow...), "<enter>")
)

// confirmRun types keys, waits for the dialog titled title (the delete
// dialog opens from a command), confirms it and waits for want.
func confirmRun(t *testing.T, opts Options, title, want string, keys ...string) {
	t.Helper()
	tm, _ := start(t, opts, 100, 30)
	typeKeys(tm, keys...)
	waitScreen(t, tm, title)
	typeKeys(tm, "<tab>", "<enter>")
	waitScreen(t, tm, want)
	finalScreen(t, tm)
}

func seq(base []string, more ...string) []string { return append(append([]string{}, base...), more...) }

// cronRayJobs are the names of the RayJobs on the API server labelled with
// the RayCronJob.
func (w *world) cronRayJobs(t *testing.T, ns, name string) []rayv1.RayJob {
	t.Helper()
	var l rayv1.RayJobList
	if err := w.c.List(context.Background(), &l, client.InNamespace(ns),
		client.MatchingLabelsSelector{Selector: rayv1.CronJobRayJobSelector(name)}); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// Trigger now (t) opens a confirmation naming the RayJob it creates, with
// Cancel focused; Cancel creates nothing; Confirm creates that RayJob
// through kube/actions, owned by the RayCronJob and marked manual.
func TestTriggerDialog(t *testing.T) {
	manual := rayv1.CronJobManualName("nightly-train", fixedNow)
	t.Run("dialog", func(t *testing.T) {
		w := newWorld(t, worldOpts{cron: true})
		screen, _ := dialogRun(t, w.opts(), "Trigger RayCronJob ml/nightly-train now", seq(nightlyRow, "t")...)
		mustContain(t, screen, "create RayJob ml/"+manual+" from the", "▶[Cancel]")
		requireGolden(t, screen)
	})
	t.Run("cancel creates nothing", func(t *testing.T) {
		w := newWorld(t, worldOpts{cron: true})
		dialogRun(t, w.opts(), "cancelled", seq(nightlyRow, "t", "<enter>")...)
		if n := len(w.cronRayJobs(t, "ml", "nightly-train")); n != 3 {
			t.Fatalf("%d RayJobs after cancel, want 3", n)
		}
	})
	for name, keys := range map[string][]string{"from the list": nightlyRow, "from the detail": nightlyPage} {
		t.Run("confirm "+name, func(t *testing.T) {
			w := newWorld(t, worldOpts{cron: true})
			confirmRun(t, w.opts(), "Trigger RayCronJob", "triggered RayCronJob ml/nightly-train: created RayJob "+manual, seq(keys, "t")...)
			j := w.job(t, "ml", manual)
			cj := w.cronJob(t, "ml", "nightly-train")
			if !metav1.IsControlledBy(j, cj) || j.Annotations[rayv1.CronJobInstantiateAnnotationKey] != rayv1.CronJobInstantiateManual ||
				j.Spec.Entrypoint != "python nightly-train.py" {
				t.Fatalf("RayJob %s: owners %v annotations %v entrypoint %q", j.Name, j.OwnerReferences, j.Annotations, j.Spec.Entrypoint)
			}
			if n := len(w.cronRayJobs(t, "ml", "nightly-train")); n != 4 {
				t.Fatalf("%d RayJobs, want 4", n)
			}
		})
	}
	t.Run("a suspended one runs anyway, with a warning", func(t *testing.T) {
		w := newWorld(t, worldOpts{cron: true})
		screen, _ := dialogRun(t, w.opts(), "Trigger RayCronJob serve/weekly-report now", seq(weeklyRow, "t")...)
		mustContain(t, screen, "warning: the RayCronJob is suspended: this runs anyway")
	})
	t.Run("only RayCronJobs", func(t *testing.T) {
		w := newWorld(t, worldOpts{cron: true})
		opts := w.opts()
		// t is not bound in the RayJobs list: nothing happens.
		screen, _ := run(t, opts, ":rj", "<enter>", "t")
		if len(w.cronRayJobs(t, "ml", "nightly-train")) != 3 || strings.Contains(screen, "trigger") {
			t.Fatalf("t in the jobs list:\n%s", screen)
		}
	})
}

// Suspend/resume (z) and delete (ctrl+d) of a RayCronJob go through the
// same confirmations as the other kinds'.
func TestCronJobLifecycleDialogs(t *testing.T) {
	t.Run("suspend", func(t *testing.T) {
		w := newWorld(t, worldOpts{cron: true})
		screen, _ := dialogRun(t, w.opts(), "Suspend RayCronJob ml/nightly-train", seq(nightlyRow, "z")...)
		mustContain(t, screen, "▶[Cancel]")
		if w.cronJob(t, "ml", "nightly-train").Spec.IsSuspended() {
			t.Fatal("suspended before confirming")
		}
		confirmRun(t, w.opts(), "Suspend RayCronJob", "suspended RayCronJob ml/nightly-train", seq(nightlyRow, "z")...)
		if !w.cronJob(t, "ml", "nightly-train").Spec.IsSuspended() {
			t.Fatal("not suspended")
		}
	})
	t.Run("resume from the detail", func(t *testing.T) {
		w := newWorld(t, worldOpts{cron: true})
		confirmRun(t, w.opts(), "Resume RayCronJob", "resumed RayCronJob serve/weekly-report", seq(weeklyRow, "<enter>", "z")...)
		if w.cronJob(t, "serve", "weekly-report").Spec.IsSuspended() {
			t.Fatal("still suspended")
		}
	})
	t.Run("delete names its RayJobs", func(t *testing.T) {
		w := newWorld(t, worldOpts{cron: true})
		screen, _ := dialogRun(t, w.opts(), "Delete RayCronJob ml/nightly-train", seq(nightlyRow, "<ctrl+d>")...)
		mustContain(t, screen, "also deleted: 3 rayjobs", "RayJob nightly-train-29537340 (owned by RayCronJob", "▶[Cancel]")
		requireGolden(t, screen)
		confirmRun(t, w.opts(), "Delete RayCronJob", "deleted RayCronJob ml/nightly-train", seq(nightlyRow, "<ctrl+d>")...)
		err := w.c.Get(context.Background(), client.ObjectKey{Namespace: "ml", Name: "nightly-train"}, &rayv1.RayCronJob{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("RayCronJob still there: %v", err)
		}
	})
}
