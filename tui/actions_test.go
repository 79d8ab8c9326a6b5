package tui

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Cursor rows of train-a's cluster detail: 0 head, 1 head pod, 2 group
// cpu, 3-5 cpu workers (4hq9d, 8mz2n, c2v7t), 6 group gpu, 7-8 gpu workers.
func trainA(moves int, then ...string) []string {
	seq := []string{"G", "<enter>"}
	for range moves {
		seq = append(seq, "j")
	}
	return append(seq, then...)
}

// dialogTest runs keys, waits for want on screen, and returns the screen
// once the program ends.
func dialogRun(t *testing.T, opts Options, want string, seq ...string) (string, *App) {
	t.Helper()
	tm, _ := start(t, opts, 100, 30)
	typeKeys(tm, seq...)
	waitScreen(t, tm, want)
	return finalScreen(t, tm)
}

func mustContain(t *testing.T, screen string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(screen, s) {
			t.Fatalf("screen lacks %q:\n%s", s, screen)
		}
	}
}

func replicas(t *testing.T, w *world, group string) int32 {
	t.Helper()
	g, ok := w.cluster(t, "ml", "train-a").Spec.WorkerGroup(group)
	if !ok {
		t.Fatalf("no group %s", group)
	}
	return *g.Replicas
}

func TestScaleDialog(t *testing.T) {
	open := trainA(2, "s") // group cpu: min 1, replicas 3, max 5
	t.Run("dialog", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		screen, a := dialogRun(t, w.opts(), "Scale worker group cpu", open...)
		if a.mode != modeDialog {
			t.Fatal("no dialog")
		}
		mustContain(t, screen, "Replicas: 3", "Min:      1", "Max:      5", "no change", "Confirm (disabled)")
		requireGolden(t, screen)
	})
	t.Run("preview", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		screen, _ := dialogRun(t, w.opts(), "1 pod will be created", append(open, "4", "<enter>")...)
		// Enter in a field moves to the buttons, onto Cancel.
		mustContain(t, screen, "new:     min 1 / replicas 4 / max 5", "effect: 1 pod will be created (3 → 4)", "▶[Cancel]")
		requireGolden(t, screen)
	})
	bad := []struct {
		name  string
		typed []string
		want  string
	}{
		{"letters", []string{"abc"}, `error: replicas: "abc" is not a whole number`},
		{"letters after digits", []string{"4x"}, `error: replicas: "4x" is not a whole number`},
		{"negative", []string{"-1"}, "error: replicas: -1 is negative; enter 0 or more"},
		{"above max", []string{"9"}, "error: replicas 9 is above maxReplicas 5 of group cpu; raise"},
		{"below min", []string{"0"}, "error: replicas 0 is below minReplicas 1 of group cpu"},
		{"empty", []string{"<backspace>"}, "error: replicas: enter a whole number"},
		{"max letters", []string{"<tab>", "<tab>", "x"}, `error: maxReplicas: "x" is not a whole number`},
		{"max below min", []string{"<tab>", "<tab>", "0"}, "error: minReplicas 1 is above maxReplicas 0"},
		{"min empty", []string{"<tab>", "<backspace>"}, "error: minReplicas: enter a whole number"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, worldOpts{})
			tm, _ := start(t, w.opts(), 100, 30)
			typeKeys(tm, open...)
			typeKeys(tm, c.typed...)
			screen := waitScreen(t, tm, c.want)
			mustContain(t, screen, "Confirm (disabled)")
			if c.name == "letters" {
				requireGolden(t, screen)
			}
			// Confirm cannot take the focus: tab cycles fields and Cancel,
			// → stays on Cancel, and enter there closes with nothing done.
			typeKeys(tm, "<enter>", "<right>", "<tab>", "<tab>", "<tab>", "<tab>", "<right>")
			screen = screenNow(tm)
			mustContain(t, screen, "▶[Cancel]")
			typeKeys(tm, "<enter>")
			waitScreen(t, tm, "cancelled: nothing was changed")
			_, a := finalScreen(t, tm)
			if a.mode != modeNormal || replicas(t, w, "cpu") != 3 {
				t.Fatalf("mode %v, replicas %d", a.mode, replicas(t, w, "cpu"))
			}
		})
	}
	t.Run("cancel is the default", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		dialogRun(t, w.opts(), "cancelled: nothing was changed", append(open, "4", "<enter>", "<enter>")...)
		if n := replicas(t, w, "cpu"); n != 3 {
			t.Fatalf("replicas %d after cancel", n)
		}
	})
	t.Run("esc cancels", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		_, a := dialogRun(t, w.opts(), "cancelled: nothing was changed", append(open, "4", "<esc>")...)
		if a.mode != modeNormal || len(a.stack) != 2 || replicas(t, w, "cpu") != 3 {
			t.Fatalf("esc: mode %v stack %d", a.mode, len(a.stack))
		}
	})
	t.Run("confirm applies", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		dialogRun(t, w.opts(), "scaled ml/train-a group cpu: replicas 3 → 4", append(open, "4", "<enter>", "<right>", "<enter>")...)
		if n := replicas(t, w, "cpu"); n != 4 {
			t.Fatalf("replicas %d, want 4", n)
		}
		b, err := os.ReadFile(w.audit)
		if err != nil || !strings.Contains(string(b), `"action":"scale"`) || !strings.Contains(string(b), `"outcome":"applied"`) {
			t.Fatalf("audit log: %v %s", err, b)
		}
	})
	t.Run("confirm with a new max", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		dialogRun(t, w.opts(), "replicas 3 → 7", append(open, "7", "<tab>", "<tab>", "7", "<tab>", "<tab>", "<enter>")...)
		g, _ := w.cluster(t, "ml", "train-a").Spec.WorkerGroup("cpu")
		if *g.Replicas != 7 || *g.MaxReplicas != 7 || *g.MinReplicas != 1 {
			t.Fatalf("group %d/%d/%d", *g.MinReplicas, *g.Replicas, *g.MaxReplicas)
		}
	})
	t.Run("from a pod row", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		dialogRun(t, w.opts(), "Scale worker group gpu", trainA(7, "s")...)
	})
	t.Run("not on the head", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		_, a := dialogRun(t, w.opts(), "select a worker group", trainA(1, "s")...)
		if a.mode != modeNormal {
			t.Fatal("a dialog opened for the head")
		}
	})
}

func TestDeleteWorkersDialog(t *testing.T) {
	marked := func(a *App) []string {
		var out []string
		for _, o := range a.top().Target().Marked {
			out = append(out, o.GetName())
		}
		return out
	}
	t.Run("the head cannot be marked", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		_, a := dialogRun(t, w.opts(), "the head pod cannot be marked", trainA(1, "<space>")...)
		if a.top().Table().MarkCount() != 0 {
			t.Fatal("head marked")
		}
		_, a = dialogRun(t, w.opts(), "only worker pods can be marked", trainA(2, "<space>")...)
		if a.top().Table().MarkCount() != 0 {
			t.Fatal("group row marked")
		}
	})
	t.Run("a range skips groups and the head", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		_, a := run(t, w.opts(), trainA(0, "<space>", "j", "j", "j", "j", "j", "<space>", "j", "<ctrl+space>")...)
		// The head row is refused (the cursor stays); c2v7t is toggled at
		// row 5 (the cursor moves to the gpu group row), the range goes to
		// q5w8e at row 7 and skips the group row.
		if got := marked(a); !slices.Equal(got, []string{"train-a-cpu-worker-c2v7t", "train-a-gpu-worker-q5w8e"}) {
			t.Fatalf("marked %v", got)
		}
	})
	open := trainA(3, "<space>", "<space>", "<ctrl+d>") // 4hq9d and 8mz2n
	t.Run("dialog", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		screen, _ := dialogRun(t, w.opts(), "Delete worker pods of RayCluster ml/train-a", open...)
		mustContain(t, screen, "delete exactly these 2 worker pods", "  train-a-cpu-worker-4hq9d", "  train-a-cpu-worker-8mz2n",
			"group cpu: replicas 3 → 1", "▶[Cancel]")
		if strings.Contains(screen, "c2v7t  ") || strings.Contains(screen, "autoscal") {
			t.Fatalf("unexpected content:\n%s", screen)
		}
		requireGolden(t, screen)
	})
	t.Run("cancel is the default", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		dialogRun(t, w.opts(), "cancelled", append(open, "<enter>")...)
		g, _ := w.cluster(t, "ml", "train-a").Spec.WorkerGroup("cpu")
		if *g.Replicas != 3 || len(g.ScaleStrategy.WorkersToDelete) != 0 {
			t.Fatalf("changed on cancel: %+v", g)
		}
	})
	t.Run("confirm applies", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		dialogRun(t, w.opts(), "deleting 2 worker pods of ml/train-a", append(open, "<tab>", "<enter>")...)
		g, _ := w.cluster(t, "ml", "train-a").Spec.WorkerGroup("cpu")
		if *g.Replicas != 1 || !slices.Equal(g.ScaleStrategy.WorkersToDelete, []string{"train-a-cpu-worker-4hq9d", "train-a-cpu-worker-8mz2n"}) {
			t.Fatalf("group after: replicas %d, workersToDelete %v", *g.Replicas, g.ScaleStrategy.WorkersToDelete)
		}
		gpu, _ := w.cluster(t, "ml", "train-a").Spec.WorkerGroup("gpu")
		if *gpu.Replicas != 2 || len(gpu.ScaleStrategy.WorkersToDelete) != 0 {
			t.Fatal("the other group changed")
		}
	})
	t.Run("the selected pod without marks", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		screen, _ := dialogRun(t, w.opts(), "delete exactly this worker pod", trainA(7, "<ctrl+d>")...)
		mustContain(t, screen, "  train-a-gpu-worker-q5w8e", "group gpu: replicas 2 → 1")
		_, _ = dialogRun(t, w.opts(), "is the head pod", trainA(1, "<ctrl+d>")...)
	})
	t.Run("below min is refused", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		tm, _ := start(t, w.opts(), 100, 30)
		typeKeys(tm, trainA(3, "<space>", "<space>", "<space>", "<ctrl+d>")...)
		screen := waitScreen(t, tm, "below minReplicas 1")
		mustContain(t, screen, "Confirm (disabled)")
		typeKeys(tm, "<tab>", "<right>", "<enter>")
		waitScreen(t, tm, "cancelled")
		finalScreen(t, tm)
		if replicas(t, w, "cpu") != 3 {
			t.Fatal("applied")
		}
	})
	t.Run("autoscaling warning", func(t *testing.T) {
		w := newWorld(t, worldOpts{mod: func(st *watch.Store) {
			o, _ := st.Find(watch.RayCluster, "ml", "train-a")
			o.(*rayv1.RayCluster).Spec.EnableInTreeAutoscaling = ptr.To(true)
		}})
		screen, _ := dialogRun(t, w.opts(), "Delete worker pods", open...)
		mustContain(t, screen, "warning: in-tree autoscaling is on")
	})
}

func TestStopJobDialog(t *testing.T) {
	open := []string{":rj", "<enter>", "G", "x"} // nightly-eval, RUNNING on train-a
	t.Run("dialog", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		screen, _ := dialogRun(t, w.opts(), "Stop RayJob ml/nightly-eval", open...)
		mustContain(t, screen, "on RayCluster train-a", "▶[Cancel]")
		requireGolden(t, screen)
	})
	t.Run("cancel is the default", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		dialogRun(t, w.opts(), "cancelled", append(open, "<enter>")...)
		if v := w.job(t, "ml", "nightly-eval").Annotations[rayv1.StopRequestedAnnotationKey]; v != "" {
			t.Fatalf("stop requested on cancel: %q", v)
		}
	})
	t.Run("esc cancels, also on Confirm", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		_, a := dialogRun(t, w.opts(), "cancelled", append(open, "<tab>", "<esc>")...)
		if a.mode != modeNormal || w.job(t, "ml", "nightly-eval").Annotations[rayv1.StopRequestedAnnotationKey] != "" {
			t.Fatal("esc did not cancel")
		}
	})
	t.Run("confirm requests the stop", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		dialogRun(t, w.opts(), "stop requested for RayJob ml/nightly-eval", append(open, "<tab>", "<enter>")...)
		if v := w.job(t, "ml", "nightly-eval").Annotations[rayv1.StopRequestedAnnotationKey]; !strings.HasPrefix(v, "alice@") {
			t.Fatalf("annotation %q", v)
		}
	})
	t.Run("from the job detail", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		dialogRun(t, w.opts(), "stop requested", ":rj", "<enter>", "G", "<enter>", "x", "<right>", "<enter>")
		if w.job(t, "ml", "nightly-eval").Annotations[rayv1.StopRequestedAnnotationKey] == "" {
			t.Fatal("no stop request")
		}
	})
	t.Run("through the dashboard when another operator reconciles", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		w.deps.OtherOperator = func(client.Object) bool { return true }
		screen, _ := dialogRun(t, w.opts(), "the Ray dashboard stops submission nightly-eval-8f3k2", open...)
		mustContain(t, screen, "on RayCluster train-a")
		dialogRun(t, w.opts(), "through the Ray dashboard", append(open, "<tab>", "<enter>")...)
		if got := recv(t, w.stopper.calls); got != "ml/nightly-eval nightly-eval-8f3k2" {
			t.Fatalf("dashboard call %q", got)
		}
		if v := w.job(t, "ml", "nightly-eval").Annotations[rayv1.StopRequestedAnnotationKey]; v != "" {
			t.Fatalf("annotation written too: %q", v)
		}
	})
	t.Run("a finished job is refused", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		screen, _ := dialogRun(t, w.opts(), "has already finished", ":rj", "<enter>", "x")
		mustContain(t, screen, "Confirm (disabled)")
	})
}

func TestSuspendDialog(t *testing.T) {
	t.Run("suspend a cluster", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		screen, _ := dialogRun(t, w.opts(), "Suspend RayCluster ml/notebook", "j", "j", "z")
		mustContain(t, screen, "every pod of the cluster is deleted", "▶[Cancel]")
		requireGolden(t, screen)
		dialogRun(t, w.opts(), "cancelled", "j", "j", "z", "<enter>")
		if w.cluster(t, "ml", "notebook").Spec.IsSuspended() {
			t.Fatal("suspended on cancel")
		}
		dialogRun(t, w.opts(), "suspended RayCluster ml/notebook", "j", "j", "z", "<tab>", "<enter>")
		if !w.cluster(t, "ml", "notebook").Spec.IsSuspended() {
			t.Fatal("not suspended")
		}
	})
	t.Run("resume a cluster", func(t *testing.T) {
		w := newWorld(t, worldOpts{mod: func(st *watch.Store) {
			o, _ := st.Find(watch.RayCluster, "ml", "notebook")
			o.(*rayv1.RayCluster).Spec.Suspend = ptr.To(true)
		}})
		dialogRun(t, w.opts(), "resumed RayCluster ml/notebook", "j", "j", "z", "<tab>", "<enter>")
		if w.cluster(t, "ml", "notebook").Spec.IsSuspended() {
			t.Fatal("still suspended")
		}
	})
	t.Run("a service from its detail", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		dialogRun(t, w.opts(), "suspended RayService serve/fruit", ":rs", "<enter>", "<enter>", "z", "<tab>", "<enter>")
		s := &rayv1.RayService{}
		if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: "serve", Name: "fruit"}, s); err != nil || !s.Spec.Suspend {
			t.Fatalf("service not suspended: %v", err)
		}
	})
	t.Run("a rule of the spec refuses", func(t *testing.T) {
		w := newWorld(t, worldOpts{})
		// A RayJob can be suspended only with shutdownAfterJobFinishes.
		screen, _ := dialogRun(t, w.opts(), "cannot be suspended", ":rj", "<enter>", "G", "z")
		mustContain(t, screen, "Confirm (disabled)")
	})
}

// ownedWorld is the fixture with train-a owning its pods and a head
// Service that only the API server holds (the store has no Services).
func ownedWorld(t *testing.T, o worldOpts) *world {
	t.Helper()
	owner := []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: rayv1.KindRayCluster, Name: "train-a", UID: "ml-train-a"}}
	o.mod = func(st *watch.Store) {
		for _, p := range st.PodsOf(watch.ClusterRef{Namespace: "ml", Name: "train-a"}) {
			p.OwnerReferences = owner
		}
	}
	o.extra = append(o.extra, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train-a-head-svc", UID: "svc-uid", OwnerReferences: owner}})
	return newWorld(t, o)
}

func TestDeleteDialog(t *testing.T) {
	t.Run("dialog", func(t *testing.T) {
		w := ownedWorld(t, worldOpts{})
		screen, _ := dialogRun(t, w.opts(), "Delete RayCluster ml/train-a", "G", "<ctrl+d>")
		mustContain(t, screen, "also deleted: 1 service, 6 pods", "Service train-a-head-svc (owned by RayCluster train-a)",
			"Pod train-a-head-x7k2p", "▶[Cancel]")
		requireGolden(t, screen)
	})
	t.Run("cancel is the default", func(t *testing.T) {
		w := ownedWorld(t, worldOpts{})
		tm, _ := start(t, w.opts(), 100, 30)
		typeKeys(tm, "G", "<ctrl+d>")
		waitScreen(t, tm, "Delete RayCluster ml/train-a")
		typeKeys(tm, "<enter>")
		waitScreen(t, tm, "cancelled")
		finalScreen(t, tm)
		w.cluster(t, "ml", "train-a")
	})
	t.Run("confirm deletes", func(t *testing.T) {
		w := ownedWorld(t, worldOpts{})
		tm, _ := start(t, w.opts(), 100, 30)
		typeKeys(tm, "G", "<ctrl+d>")
		waitScreen(t, tm, "Delete RayCluster ml/train-a")
		typeKeys(tm, "<tab>", "<enter>")
		waitScreen(t, tm, "deleted RayCluster ml/train-a and 7 objects it owned")
		finalScreen(t, tm)
		err := w.c.Get(context.Background(), client.ObjectKey{Namespace: "ml", Name: "train-a"}, &rayv1.RayCluster{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("cluster still there: %v", err)
		}
	})
}

// TestReadOnlyHidesActions: with --readonly the mutating actions are not
// offered (hints, help) and their keys do nothing; describe and logs stay.
func TestReadOnlyHidesActions(t *testing.T) {
	w := newWorld(t, worldOpts{})
	opts := w.opts()
	opts.ReadOnly = true
	screen, _ := run(t, opts, trainA(2, "?")...)
	mustContain(t, screen, "describe", "logs")
	for _, hidden := range []string{"scale", "delete workers", "suspend/resume"} {
		if strings.Contains(screen, hidden) {
			t.Fatalf("read-only help offers %q:\n%s", hidden, screen)
		}
	}
	for _, seq := range [][]string{
		trainA(2, "s"), trainA(3, "<ctrl+d>"), trainA(3, "<space>", "<ctrl+d>"), trainA(0, "z"),
		{"<ctrl+d>"}, {"z"}, {":rj", "<enter>", "G", "x"}, {":rj", "<enter>", "G", "<enter>", "x"}, {":rs", "<enter>", "z"},
	} {
		screen, a := run(t, opts, seq...)
		if a.mode != modeNormal || strings.Contains(screen, "Confirm") {
			t.Fatalf("%v opened a dialog in read-only mode:\n%s", seq, screen)
		}
	}
	if replicas(t, w, "cpu") != 3 || w.cluster(t, "ml", "train-a").Spec.IsSuspended() {
		t.Fatal("something changed")
	}
}

// TestReadOnlyChokePoint: were a mutating action invoked anyway (here the
// TUI is not told, but kube/actions is), the apply is refused at the
// choke point and nothing changes.
func TestReadOnlyChokePoint(t *testing.T) {
	cases := []struct {
		name string
		seq  []string
		want string
	}{
		{"scale", trainA(2, "s", "4", "<enter>", "<right>", "<enter>"), "read-only mode: scale raycluster ml/train-a refused"},
		{"delete workers", trainA(3, "<space>", "<ctrl+d>", "<tab>", "<enter>"), "read-only mode: delete-workers raycluster ml/train-a refused"},
		{"stop", []string{":rj", "<enter>", "G", "x", "<tab>", "<enter>"}, "read-only mode: stop-job rayjob ml/nightly-eval refused"},
		{"suspend", []string{"G", "z", "<tab>", "<enter>"}, "read-only mode: suspend raycluster ml/train-a refused"},
		{"delete", []string{"G", "<ctrl+d>"}, "read-only mode: delete raycluster ml/train-a refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, worldOpts{readOnly: true})
			tm, _ := start(t, w.opts(), 100, 30)
			typeKeys(tm, c.seq...)
			if c.name == "delete" { // the dialog opens after reading Services and Jobs
				waitScreen(t, tm, "Delete RayCluster")
				typeKeys(tm, "<tab>", "<enter>")
			}
			waitScreen(t, tm, c.want)
			finalScreen(t, tm)
			rc := w.cluster(t, "ml", "train-a")
			g, _ := rc.Spec.WorkerGroup("cpu")
			if *g.Replicas != 3 || len(g.ScaleStrategy.WorkersToDelete) != 0 || rc.Spec.IsSuspended() ||
				w.job(t, "ml", "nightly-eval").Annotations[rayv1.StopRequestedAnnotationKey] != "" {
				t.Fatal("a read-only apply changed something")
			}
		})
	}
}

// TestActionsFollowTheContext: after a context switch the actions use the
// new session's Deps; without them they refuse rather than act on the
// cluster of the first context.
func TestActionsFollowTheContext(t *testing.T) {
	first, second := newWorld(t, worldOpts{}), newWorld(t, worldOpts{})
	first.deps.Context = "sandbox"
	for _, c := range []struct {
		deps *ActionDeps
		want string
	}{
		{nil, "actions are connected to context sandbox, not staging"},
		{&second.deps, "suspended RayCluster ml/train-a"},
	} {
		opts := first.opts()
		opts.Session = Session{Context: "staging", Deps: c.deps}
		dialogRun(t, opts, c.want, "G", "z", "<tab>", "<enter>")
	}
	if first.cluster(t, "ml", "train-a").Spec.IsSuspended() || !second.cluster(t, "ml", "train-a").Spec.IsSuspended() {
		t.Fatal("the action went to the wrong session")
	}
}

// TestActionsWithoutAPIClient: without kube/actions the mutating actions
// say so instead of opening a dialog.
func TestActionsWithoutAPIClient(t *testing.T) {
	_, a := dialogRun(t, Options{Actions: DefaultActions(ActionDeps{})}, "changes are not available in this session", trainA(2, "s")...)
	if a.mode != modeNormal {
		t.Fatal("a dialog opened")
	}
}

// TestActionHelp: ? lists the view's actions with their keys.
func TestActionHelp(t *testing.T) {
	w := newWorld(t, worldOpts{})
	screen, _ := run(t, w.opts(), trainA(0, "?")...)
	mustContain(t, screen, "s       scale", "ctrl+d  delete workers", "d       describe", "l       logs", "z       suspend/resume", "a       shell")
	requireGolden(t, screen)
	screen, _ = run(t, w.opts(), ":rj", "<enter>", "?")
	mustContain(t, screen, "x       stop job", "ctrl+d  delete")
	// When the hints do not fit, the help hint still shows.
	tm, _ := start(t, w.opts(), 60, 20)
	typeKeys(tm, trainA(0)...)
	screen, _ = finalScreen(t, tm)
	if hints := strings.Split(screen, "\n")[1]; !strings.HasSuffix(hints, "<?> help") || strings.Contains(hints, "suspend") {
		t.Fatalf("hints at 60 columns: %q", hints)
	}
}
