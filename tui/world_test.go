package tui

import (
	"context"
	"path/filepath"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// world is the fixture on both sides: the TUI's store, and a fake API
// server (controller-runtime's fake client) holding copies of the same
// objects, with the default actions applying through kube/actions on it.
type world struct {
	store   *watch.Store
	c       client.WithWatch
	acts    *actions.Actions
	audit   string
	stopper *fakeStopper
	deps    ActionDeps
}

type worldOpts struct {
	// readOnly makes the choke point (kube/actions) refuse; the TUI's
	// Options.ReadOnly is separate.
	readOnly bool
	// mod changes the fixture before both sides get it.
	mod func(*watch.Store)
	// extra objects for the API server only (Services, Jobs).
	extra []client.Object
	// cron starts from cronFixture (RayCronJobs and their RayJobs) and
	// pins the actions' clock to the tests' (trigger now names its RayJob
	// by the minute).
	cron bool
	// policy is raydar's config file's guardrails, applied to the
	// world's context.
	policy *actions.Policy
	// context is the world's kube context ("": sandbox).
	context string
}

// fakeStopper records StopJobDirect's dashboard calls.
type fakeStopper struct{ calls chan string }

func (s *fakeStopper) StopJob(_ context.Context, ns, name, id string) error {
	s.calls <- ns + "/" + name + " " + id
	return nil
}

func newWorld(t *testing.T, o worldOpts) *world {
	t.Helper()
	st := fixture()
	if o.cron {
		st = cronFixture()
	}
	if o.mod != nil {
		o.mod(st)
	}
	var objs []client.Object
	for _, k := range []watch.Kind{watch.RayCluster, watch.RayJob, watch.RayService, watch.RayCronJob, watch.Pod} {
		for _, obj := range st.List(k) {
			objs = append(objs, obj.DeepCopyObject().(client.Object))
		}
	}
	for _, obj := range o.extra {
		objs = append(objs, obj.DeepCopyObject().(client.Object))
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).
		WithStatusSubresource(&rayv1.RayCluster{}, &rayv1.RayJob{}, &rayv1.RayService{}, &rayv1.RayCronJob{}).Build()
	w := &world{store: st, c: c, audit: filepath.Join(t.TempDir(), "audit.log"), stopper: &fakeStopper{calls: make(chan string, 4)}}
	if o.context == "" {
		o.context = "sandbox"
	}
	ao := actions.Options{ReadOnly: o.readOnly, Actor: "alice", Context: o.context,
		AuditLogPath: w.audit, JobStopper: w.stopper}
	if o.cron {
		ao.Clock = clocktesting.NewFakePassiveClock(fixedNow)
	}
	o.policy.Apply(ao.Context, &ao)
	a, err := actions.New(c, ao)
	if err != nil {
		t.Fatal(err)
	}
	w.acts = a
	w.deps = ActionDeps{Actions: a}
	return w
}

// opts are TUI options on the world's store with the default actions.
func (w *world) opts() Options {
	return Options{Store: w.store, Actions: DefaultActions(w.deps)}
}

// apiGet reads an object from the world's API server (fails without it).
func apiGet[T any, P interface {
	*T
	client.Object
}](t *testing.T, w *world, ns, name string) P {
	t.Helper()
	o := P(new(T))
	if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, o); err != nil {
		t.Fatal(err)
	}
	return o
}

func (w *world) cluster(t *testing.T, ns, name string) *rayv1.RayCluster {
	t.Helper()
	return apiGet[rayv1.RayCluster](t, w, ns, name)
}

func (w *world) job(t *testing.T, ns, name string) *rayv1.RayJob {
	t.Helper()
	return apiGet[rayv1.RayJob](t, w, ns, name)
}

func (w *world) cronJob(t *testing.T, ns, name string) *rayv1.RayCronJob {
	t.Helper()
	return apiGet[rayv1.RayCronJob](t, w, ns, name)
}
