package actions_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// These tests run the apply paths on controller-runtime's fake client, with
// interceptors for what a fake cannot do on its own (refuse, conflict). The
// same paths run on a real API server in sandbox_test.go.

var testNow = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}

// auditLine is an audit record as read back from the file.
type auditLine struct {
	Time     time.Time         `json:"time"`
	Actor    string            `json:"actor"`
	Context  string            `json:"context"`
	Action   actions.Action    `json:"action"`
	Object   actions.ObjectRef `json:"object"`
	Details  json.RawMessage   `json:"details"`
	Outcome  actions.Outcome   `json:"outcome"`
	Error    string            `json:"error"`
	Attempts int               `json:"attempts"`
}

func readAudit(t *testing.T, path string) []auditLine {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l auditLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

// recorded is an Event a fakeRecorder got.
type recorded struct {
	Kind, Name, Type, Reason, Action, Note string
}

type fakeRecorder struct {
	mu  sync.Mutex
	got []recorded
	err error
}

func (r *fakeRecorder) Record(_ context.Context, obj client.Object, typ, reason, action, note string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	kind := reflect.TypeOf(obj).Elem().Name()
	r.got = append(r.got, recorded{kind, obj.GetName(), typ, reason, action, note})
	return r.err
}

type fakeStopper struct {
	calls []string
	err   error
}

func (s *fakeStopper) StopJob(_ context.Context, ns, name, id string) error {
	s.calls = append(s.calls, ns+"/"+name+"/"+id)
	return s.err
}

type harness struct {
	a       *actions.Actions
	c       client.WithWatch
	rec     *fakeRecorder
	stopper *fakeStopper
	audit   string
}

// newHarness builds Actions on a fake client holding objs; opts' Actor,
// Context, audit path, recorder, clock and stopper are filled in.
func newHarness(t *testing.T, opts actions.Options, funcs interceptor.Funcs, objs ...client.Object) *harness {
	t.Helper()
	base := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
	h := &harness{c: base, rec: &fakeRecorder{}, stopper: &fakeStopper{}, audit: filepath.Join(t.TempDir(), "state", "audit.log")}
	if opts.Actor == "" {
		opts.Actor = "alice"
	}
	if opts.Context == "" {
		opts.Context = "kind-dev"
	}
	opts.AuditLogPath = h.audit
	if opts.Recorder == nil {
		opts.Recorder = h.rec
	}
	opts.Clock = clocktesting.NewFakePassiveClock(testNow)
	opts.JobStopper = h.stopper
	a, err := actions.New(interceptor.NewClient(base, funcs), opts)
	if err != nil {
		t.Fatal(err)
	}
	h.a = a
	return h
}

func (h *harness) cluster(t *testing.T, ns, name string) *rayv1.RayCluster {
	t.Helper()
	rc := &rayv1.RayCluster{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
		t.Fatal(err)
	}
	return rc
}

func fixtures() []client.Object {
	rc := cluster("team-a", "rc", group("cpu", 1, 2, 5))
	w1, w2 := rayPod("team-a", "rc", "cpu", "rc-cpu-1"), rayPod("team-a", "rc", "cpu", "rc-cpu-2")
	head := rayPod("team-a", "rc", "", "rc-head")
	job := rayJob("team-a", "job", true)
	job.Status = rayv1.RayJobStatus{JobId: "job-1", RayClusterName: "job-raycluster-x",
		JobStatus: rayv1.JobStatusRunning, JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}
	svc := rayService("team-a", "svc")
	cj := rayCronJob("team-a", "nightly")
	for _, o := range []client.Object{rc, job, svc, cj} {
		o.SetResourceVersion("")
	}
	return []client.Object{rc, &w1, &w2, &head, job, svc, cj}
}

// everyAction runs each mutating action once.
var everyAction = map[actions.Action]func(ctx context.Context, a *actions.Actions) (*actions.Result, error){
	actions.ActionScale: func(ctx context.Context, a *actions.Actions) (*actions.Result, error) {
		return a.ScaleGroup(ctx, "team-a", "rc", "cpu", actions.ScaleRequest{Replicas: 3})
	},
	actions.ActionDeleteWorkers: func(ctx context.Context, a *actions.Actions) (*actions.Result, error) {
		return a.DeleteWorkers(ctx, "team-a", "rc", actions.DeleteWorkersRequest{Pods: []string{"rc-cpu-1"}})
	},
	actions.ActionStopJob: func(ctx context.Context, a *actions.Actions) (*actions.Result, error) {
		return a.StopJob(ctx, "team-a", "job")
	},
	actions.ActionStopJobDirect: func(ctx context.Context, a *actions.Actions) (*actions.Result, error) {
		return a.StopJobDirect(ctx, "team-a", "job")
	},
	actions.ActionSuspend: func(ctx context.Context, a *actions.Actions) (*actions.Result, error) {
		return a.Suspend(ctx, kinds.RayService, "team-a", "svc")
	},
	actions.ActionResume: func(ctx context.Context, a *actions.Actions) (*actions.Result, error) {
		return a.Resume(ctx, kinds.RayCluster, "team-a", "rc")
	},
	actions.ActionDelete: func(ctx context.Context, a *actions.Actions) (*actions.Result, error) {
		return a.Delete(ctx, kinds.RayCluster, "team-a", "rc")
	},
	actions.ActionTrigger: func(ctx context.Context, a *actions.Actions) (*actions.Result, error) {
		return a.Trigger(ctx, "team-a", "nightly")
	},
}

func TestReadOnlyRefusesEveryActionBeforeAnyIO(t *testing.T) {
	for action, run := range everyAction {
		t.Run(string(action), func(t *testing.T) {
			calls := 0
			count := func() { calls++ }
			funcs := interceptor.Funcs{
				Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					count()
					return nil
				},
				List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
					count()
					return nil
				},
				Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
					count()
					return nil
				},
				Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
					count()
					return nil
				},
				Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error {
					count()
					return nil
				},
				Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error {
					count()
					return nil
				},
			}
			h := newHarness(t, actions.Options{ReadOnly: true}, funcs, fixtures()...)
			if !h.a.ReadOnly() {
				t.Fatal("ReadOnly() is false")
			}
			r, err := run(context.Background(), h.a)
			var ro *actions.ReadOnlyError
			if !errors.Is(err, actions.ErrReadOnly) || !errors.As(err, &ro) || ro.Action != action {
				t.Fatalf("error %v (%T); want a ReadOnlyError for %s", err, err, action)
			}
			if !strings.Contains(err.Error(), "read-only mode: "+string(action)) {
				t.Fatalf("message %q", err)
			}
			if r == nil || r.Outcome != actions.OutcomeRefused || r.Plan != nil {
				t.Fatalf("result %+v", r)
			}
			if calls != 0 || len(h.rec.got) != 0 || len(h.stopper.calls) != 0 {
				t.Fatalf("%d API calls, %d events, %d stops in read-only mode", calls, len(h.rec.got), len(h.stopper.calls))
			}
			if _, err := os.Stat(h.audit); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("audit log touched in read-only mode: %v", err)
			}
		})
	}
}

func TestEveryActionIsRecorded(t *testing.T) {
	want := map[actions.Action]recorded{
		actions.ActionScale: {Kind: "RayCluster", Name: "rc", Reason: actions.ReasonScaledWorkerGroup, Action: "Scale",
			Note: "Scaled worker group cpu from 2 to 3 replicas, by alice (context kind-dev) from raydar"},
		actions.ActionDeleteWorkers: {Kind: "RayCluster", Name: "rc", Reason: actions.ReasonDeletedWorkers, Action: "DeleteWorkers",
			Note: "Deleting 1 worker pod of group cpu (rc-cpu-1; replicas 2 to 1), by alice (context kind-dev) from raydar"},
		actions.ActionStopJob: {Kind: "RayJob", Name: "job", Reason: actions.ReasonStopRequested, Action: "Stop",
			Note: "Requested stop of the Ray job (annotation raydar.io/stop-requested=alice@2031-05-06T07:08:09Z), by alice (context kind-dev) from raydar"},
		actions.ActionStopJobDirect: {Kind: "RayJob", Name: "job", Reason: actions.ReasonStopRequested, Action: "Stop",
			Note: "Stopped Ray job job-1 through the Ray dashboard, by alice (context kind-dev) from raydar"},
		actions.ActionSuspend: {Kind: "RayService", Name: "svc", Reason: actions.ReasonSuspended, Action: "Suspend",
			Note: "Suspended (spec.suspend: true), by alice (context kind-dev) from raydar"},
		actions.ActionResume: {Kind: "RayCluster", Name: "rc", Reason: actions.ReasonResumed, Action: "Resume",
			Note: "Resumed (spec.suspend: false), by alice (context kind-dev) from raydar"},
		actions.ActionDelete: {Kind: "RayCluster", Name: "rc", Reason: actions.ReasonDeleted, Action: "Delete",
			Note: "Deleted, by alice (context kind-dev) from raydar"},
		actions.ActionTrigger: {Kind: "RayCronJob", Name: "nightly", Reason: actions.ReasonTriggered, Action: "Trigger",
			Note: "Triggered RayJob nightly-manual-32263628 now, outside the schedule, by alice (context kind-dev) from raydar"},
	}
	for action, run := range everyAction {
		t.Run(string(action), func(t *testing.T) {
			objs := fixtures()
			if action == actions.ActionResume {
				objs[0].(*rayv1.RayCluster).Spec.Suspend = ptr.To(true)
			}
			h := newHarness(t, actions.Options{}, interceptor.Funcs{}, objs...)
			r, err := run(context.Background(), h.a)
			if err != nil {
				t.Fatalf("%s: %v", action, err)
			}
			if r.Outcome != actions.OutcomeApplied || r.Plan == nil || r.Attempts != 1 || r.Actor != "alice" || r.Context != "kind-dev" || !r.Time.Equal(testNow) {
				t.Fatalf("result %+v", r)
			}
			if len(h.rec.got) != 1 {
				t.Fatalf("events %+v", h.rec.got)
			}
			ev := h.rec.got[0]
			if ev.Type != corev1.EventTypeNormal {
				t.Fatalf("event type %q", ev.Type)
			}
			ev.Type = ""
			if ev != want[action] {
				t.Fatalf("event\n%+v\nwant\n%+v", ev, want[action])
			}
			lines := readAudit(t, h.audit)
			if len(lines) != 1 {
				t.Fatalf("audit lines %+v", lines)
			}
			l := lines[0]
			if l.Actor != "alice" || l.Context != "kind-dev" || l.Action != action || l.Object != r.Object ||
				l.Outcome != actions.OutcomeApplied || l.Error != "" || !l.Time.Equal(testNow) || l.Attempts != 1 {
				t.Fatalf("audit line %+v", l)
			}
			plan, _ := json.Marshal(r.Plan)
			if string(l.Details) != string(plan) {
				t.Fatalf("audit details %s, want the plan %s", l.Details, plan)
			}
		})
	}
}

func TestScaleWritesTheSpec(t *testing.T) {
	h := newHarness(t, actions.Options{}, interceptor.Funcs{}, fixtures()...)
	r, err := h.a.ScaleGroup(context.Background(), "team-a", "rc", "cpu", actions.ScaleRequest{Replicas: 7, Max: ptr.To[int32](8)})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := h.cluster(t, "team-a", "rc").Spec.WorkerGroup("cpu")
	if *g.Replicas != 7 || *g.MaxReplicas != 8 || *g.MinReplicas != 1 {
		t.Fatalf("group %+v", g)
	}
	p := r.Plan.(*actions.ScalePlan)
	if p.PodsToCreate != 5 {
		t.Fatalf("plan %+v", *p)
	}
	if h.rec.got[0].Note != "Scaled worker group cpu from 2 to 7 replicas, maxReplicas 5 to 8, by alice (context kind-dev) from raydar" {
		t.Fatalf("note %q", h.rec.got[0].Note)
	}
}

func TestUnchangedWritesNothing(t *testing.T) {
	patches := 0
	funcs := interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, o ...client.PatchOption) error {
		patches++
		return c.Patch(ctx, obj, p, o...)
	}}
	h := newHarness(t, actions.Options{}, funcs, fixtures()...)
	r, err := h.a.ScaleGroup(context.Background(), "team-a", "rc", "cpu", actions.ScaleRequest{Replicas: 2})
	if err != nil || r.Outcome != actions.OutcomeUnchanged || patches != 0 || len(h.rec.got) != 0 {
		t.Fatalf("err %v result %+v patches %d events %d", err, r, patches, len(h.rec.got))
	}
	if l := readAudit(t, h.audit); len(l) != 1 || l[0].Outcome != actions.OutcomeUnchanged {
		t.Fatalf("audit %+v", l)
	}
}

func TestForbiddenIsClearAndAudited(t *testing.T) {
	forbid := func(verb, resource string) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: "ray.io", Resource: resource}, "rc",
			errors.New(`User "alice" cannot `+verb+` resource "`+resource+`" in API group "ray.io" in the namespace "team-a"`))
	}
	funcs := interceptor.Funcs{
		Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			return forbid("patch", "rayclusters")
		},
		Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error {
			return forbid("delete", "rayclusters")
		},
	}
	h := newHarness(t, actions.Options{}, funcs, fixtures()...)
	for _, tc := range []struct {
		action actions.Action
		want   string
	}{
		{actions.ActionScale, "forbidden: user alice cannot patch rayclusters in namespace team-a"},
		{actions.ActionDeleteWorkers, "forbidden: user alice cannot patch rayclusters in namespace team-a"},
		{actions.ActionDelete, "forbidden: user alice cannot delete rayclusters in namespace team-a"},
	} {
		r, err := everyAction[tc.action](context.Background(), h.a)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !apierrors.IsForbidden(err) {
			t.Fatalf("%s: error %v; want it to start with %q and be IsForbidden", tc.action, err, tc.want)
		}
		var ae *actions.APIError
		if !errors.As(err, &ae) || ae.Verb == "" {
			t.Fatalf("%s: %T is not an APIError", tc.action, err)
		}
		if r.Outcome != actions.OutcomeFailed || r.Error != err.Error() || r.Plan == nil {
			t.Fatalf("%s: result %+v", tc.action, r)
		}
	}
	if len(h.rec.got) != 0 {
		t.Fatalf("events recorded for refused writes: %+v", h.rec.got)
	}
	lines := readAudit(t, h.audit)
	if len(lines) != 3 {
		t.Fatalf("audit %+v", lines)
	}
	for _, l := range lines {
		if l.Outcome != actions.OutcomeFailed || !strings.HasPrefix(l.Error, "forbidden: user alice cannot") {
			t.Fatalf("audit line %+v", l)
		}
	}
	if g, _ := h.cluster(t, "team-a", "rc").Spec.WorkerGroup("cpu"); *g.Replicas != 2 {
		t.Fatalf("replicas changed to %d", *g.Replicas)
	}
}

func TestConflictIsRetriedFromAFreshRead(t *testing.T) {
	patches := 0
	var h *harness
	funcs := interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, o ...client.PatchOption) error {
		patches++
		if patches == 1 {
			// Someone else raises min to 3 between our read and our write.
			rc := &rayv1.RayCluster{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), rc); err != nil {
				return err
			}
			rc.Spec.WorkerGroupSpecs[0].MinReplicas = ptr.To[int32](3)
			rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3)
			if err := c.Update(ctx, rc); err != nil {
				return err
			}
		}
		return c.Patch(ctx, obj, p, o...)
	}}
	h = newHarness(t, actions.Options{}, funcs, fixtures()...)
	r, err := h.a.ScaleGroup(context.Background(), "team-a", "rc", "cpu", actions.ScaleRequest{Replicas: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r.Attempts != 2 || patches != 2 {
		t.Fatalf("attempts %d patches %d", r.Attempts, patches)
	}
	// The plan is the one of the fresh read: min 3, replicas 3 → 4.
	p := r.Plan.(*actions.ScalePlan)
	if p.Current != (actions.GroupSize{Min: 3, Replicas: 3, Max: 5}) || p.New.Replicas != 4 {
		t.Fatalf("plan %+v", *p)
	}
	g, _ := h.cluster(t, "team-a", "rc").Spec.WorkerGroup("cpu")
	if *g.Replicas != 4 || *g.MinReplicas != 3 {
		t.Fatalf("group %+v", g)
	}
	if len(h.rec.got) != 1 {
		t.Fatalf("events %+v", h.rec.got)
	}
}

func TestConflictThatDoesNotSettle(t *testing.T) {
	funcs := interceptor.Funcs{Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
		return apierrors.NewConflict(schema.GroupResource{Group: "ray.io", Resource: "rayclusters"}, "rc", errors.New("the object has been modified"))
	}}
	h := newHarness(t, actions.Options{ConflictBackoff: wait.Backoff{Steps: 3, Duration: time.Millisecond}}, funcs, fixtures()...)
	r, err := h.a.ScaleGroup(context.Background(), "team-a", "rc", "cpu", actions.ScaleRequest{Replicas: 4})
	if !apierrors.IsConflict(err) || !strings.HasPrefix(err.Error(), `conflict: raycluster "rc" in namespace team-a kept changing`) {
		t.Fatalf("error %v", err)
	}
	if r.Attempts != 3 || r.Outcome != actions.OutcomeFailed {
		t.Fatalf("result %+v", r)
	}
}

func TestInvalidRequestIsRejectedAndAudited(t *testing.T) {
	h := newHarness(t, actions.Options{}, interceptor.Funcs{}, fixtures()...)
	r, err := h.a.ScaleGroup(context.Background(), "team-a", "rc", "cpu", actions.ScaleRequest{Replicas: 9})
	if !errors.Is(err, actions.ErrInvalid) || r.Outcome != actions.OutcomeRejected {
		t.Fatalf("err %v result %+v", err, r)
	}
	_, err = h.a.DeleteWorkers(context.Background(), "team-a", "rc", actions.DeleteWorkersRequest{Pods: []string{"rc-head"}})
	if !errors.Is(err, actions.ErrInvalid) || !strings.Contains(err.Error(), "the head cannot be deleted") {
		t.Fatalf("err %v", err)
	}
	_, err = h.a.ScaleGroup(context.Background(), "team-a", "missing", "cpu", actions.ScaleRequest{Replicas: 1})
	if !apierrors.IsNotFound(err) || err.Error() != `raycluster "missing" not found in namespace team-a` {
		t.Fatalf("err %v", err)
	}
	lines := readAudit(t, h.audit)
	if len(lines) != 3 || lines[0].Outcome != actions.OutcomeRejected || lines[1].Outcome != actions.OutcomeRejected || lines[2].Outcome != actions.OutcomeFailed {
		t.Fatalf("audit %+v", lines)
	}
	if len(h.rec.got) != 0 {
		t.Fatalf("events %+v", h.rec.got)
	}
}

func TestUnwritableAuditLogRefuses(t *testing.T) {
	patches := 0
	funcs := interceptor.Funcs{Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
		patches++
		return nil
	}}
	h := newHarness(t, actions.Options{}, funcs, fixtures()...)
	// A directory where the file should be.
	if err := os.MkdirAll(h.audit, 0o700); err != nil {
		t.Fatal(err)
	}
	r, err := h.a.ScaleGroup(context.Background(), "team-a", "rc", "cpu", actions.ScaleRequest{Replicas: 3})
	if err == nil || !strings.Contains(err.Error(), "scale refused: the audit log cannot be written") || patches != 0 || r.Outcome != actions.OutcomeFailed {
		t.Fatalf("err %v patches %d result %+v", err, patches, r)
	}
}

func TestStopJobDirect(t *testing.T) {
	h := newHarness(t, actions.Options{}, interceptor.Funcs{}, fixtures()...)
	if _, err := h.a.StopJobDirect(context.Background(), "team-a", "job"); err != nil {
		t.Fatal(err)
	}
	if len(h.stopper.calls) != 1 || h.stopper.calls[0] != "team-a/job/job-1" {
		t.Fatalf("stopper calls %q", h.stopper.calls)
	}
	h.stopper.err = errors.New("dashboard: unavailable")
	r, err := h.a.StopJobDirect(context.Background(), "team-a", "job")
	if err == nil || !strings.Contains(err.Error(), "stopping Ray job job-1 of RayJob team-a/job through the dashboard: dashboard: unavailable") ||
		r.Outcome != actions.OutcomeFailed {
		t.Fatalf("err %v result %+v", err, r)
	}
	if len(h.rec.got) != 1 {
		t.Fatalf("events %+v", h.rec.got)
	}
}

func TestEventFailureDoesNotUndoTheChange(t *testing.T) {
	rec := &fakeRecorder{err: errors.New("events are forbidden")}
	h := newHarness(t, actions.Options{Recorder: rec}, interceptor.Funcs{}, fixtures()...)
	r, err := h.a.Suspend(context.Background(), kinds.RayCluster, "team-a", "rc")
	if err != nil || r.Outcome != actions.OutcomeApplied || !strings.Contains(r.EventError, "events are forbidden") {
		t.Fatalf("err %v result %+v", err, r)
	}
	if !h.cluster(t, "team-a", "rc").Spec.IsSuspended() {
		t.Fatal("not suspended")
	}
}

func TestAPIRecorder(t *testing.T) {
	h := newHarness(t, actions.Options{}, interceptor.Funcs{}, fixtures()...)
	rec := actions.NewAPIRecorder(h.c, clocktesting.NewFakePassiveClock(testNow))
	rc := h.cluster(t, "team-a", "rc")
	if err := rec.Record(context.Background(), rc, corev1.EventTypeNormal, "ScaledWorkerGroup", "Scale", strings.Repeat("x", 2000)); err != nil {
		t.Fatal(err)
	}
	var evs eventsv1.EventList
	if err := h.c.List(context.Background(), &evs, client.InNamespace("team-a")); err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) != 1 {
		t.Fatalf("events %+v", evs.Items)
	}
	ev := evs.Items[0]
	if ev.ReportingController != rayv1.AuditEventSource || !strings.HasPrefix(ev.ReportingInstance, "raydar@") ||
		ev.Regarding.Kind != "RayCluster" || ev.Regarding.APIVersion != "ray.io/v1" || ev.Regarding.Name != "rc" ||
		ev.Regarding.UID != rc.UID || ev.Reason != "ScaledWorkerGroup" || ev.Action != "Scale" || len(ev.Note) != 1024 ||
		!ev.EventTime.Time.Equal(testNow) {
		t.Fatalf("event %+v", ev)
	}
}

func TestDefaultAuditLogPath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/var/state")
	if p, err := actions.DefaultAuditLogPath(); err != nil || p != "/var/state/raydar/audit.log" {
		t.Fatalf("%q %v", p, err)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/bob")
	if p, err := actions.DefaultAuditLogPath(); err != nil || p != "/home/bob/.local/state/raydar/audit.log" {
		t.Fatalf("%q %v", p, err)
	}
}

func TestUnknownActor(t *testing.T) {
	a, err := actions.New(fake.NewClientBuilder().WithScheme(scheme.New()).Build(), actions.Options{AuditLogPath: filepath.Join(t.TempDir(), "a.log")})
	if err != nil || a.Actor() != actions.UnknownActor {
		t.Fatalf("%v %q", err, a.Actor())
	}
}

// addressBook points every cluster at one URL.
type addressBook string

func (b addressBook) DashboardURL(string, string) (string, bool) { return string(b), true }

func TestDashboardStopper(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"stopped": true}`))
	}))
	defer srv.Close()
	objs := append(fixtures(), cluster("team-a", "job-raycluster-x", group("small", 0, 1, 2)))
	h := newHarness(t, actions.Options{}, interceptor.Funcs{}, objs...)
	res, err := raydash.New(raydash.Options{AddressBook: addressBook(srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	s := &actions.DashboardStopper{Reader: h.c, Resolver: res}
	if err := s.StopJob(context.Background(), "team-a", "job", "job-1"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "POST /api/jobs/job-1/stop" {
		t.Fatalf("dashboard calls %q", got)
	}
	if err := s.StopJob(context.Background(), "team-a", "nope", "job-1"); !apierrors.IsNotFound(err) {
		t.Fatalf("err %v", err)
	}
}
