package actions_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/raydar/raydar/kube/actions"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestTriggerCreatesTheRayJob: the RayJob of the plan, owned by the
// RayCronJob; a retry within the minute creates nothing more and says so.
func TestTriggerCreatesTheRayJob(t *testing.T) {
	h := newHarness(t, actions.Options{}, interceptor.Funcs{}, fixtures()...)
	ctx := context.Background()
	preview, err := h.a.PreviewTrigger(ctx, "team-a", "nightly")
	if err != nil || preview.AlreadyExists {
		t.Fatalf("preview %+v, %v", preview, err)
	}
	r, err := h.a.Trigger(ctx, "team-a", "nightly")
	if err != nil || r.Outcome != actions.OutcomeApplied {
		t.Fatalf("result %+v, %v", r, err)
	}
	p := r.Plan.(*actions.TriggerPlan)
	if p.Job != preview.Job {
		t.Fatalf("created %s, previewed %s", p.Job, preview.Job)
	}
	j := &rayv1.RayJob{}
	if err := h.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: p.Job}, j); err != nil {
		t.Fatal(err)
	}
	if j.Labels[rayv1.RayCronJobNameLabelKey] != "nightly" || j.Annotations[rayv1.CronJobInstantiateAnnotationKey] != rayv1.CronJobInstantiateManual ||
		len(j.OwnerReferences) != 1 || j.OwnerReferences[0].Kind != rayv1.KindRayCronJob || j.OwnerReferences[0].Name != "nightly" {
		t.Fatalf("RayJob labels %v annotations %v owners %+v", j.Labels, j.Annotations, j.OwnerReferences)
	}

	// Again within the minute: unchanged, no second Event, said in the plan.
	again, err := h.a.Trigger(ctx, "team-a", "nightly")
	if err != nil || again.Outcome != actions.OutcomeUnchanged || !again.Plan.(*actions.TriggerPlan).AlreadyExists {
		t.Fatalf("retry: result %+v, %v", again, err)
	}
	if l := again.Plan.Lines(); !strings.Contains(l[1], "no change: RayJob "+p.Job+" exists already") {
		t.Fatalf("retry lines %q", l)
	}
	if len(h.rec.got) != 1 {
		t.Fatalf("events %+v, want the first trigger's only", h.rec.got)
	}
	if pv, err := h.a.PreviewTrigger(ctx, "team-a", "nightly"); err != nil || !pv.AlreadyExists {
		t.Fatalf("preview after the trigger %+v, %v", pv, err)
	}
	if l := readAudit(t, h.audit); len(l) != 2 || l[0].Outcome != actions.OutcomeApplied || l[1].Outcome != actions.OutcomeUnchanged {
		t.Fatalf("audit %+v", l)
	}
	var list rayv1.RayJobList
	if err := h.c.List(ctx, &list, client.MatchingLabelsSelector{Selector: rayv1.CronJobRayJobSelector("nightly")}); err != nil || len(list.Items) != 1 {
		t.Fatalf("RayJobs of the RayCronJob: %d (%v), want 1", len(list.Items), err)
	}
}

// TestTriggerRefusesAForeignRayJob: a RayJob with the manual run's name
// that is not the RayCronJob's is not taken for done.
func TestTriggerRefusesAForeignRayJob(t *testing.T) {
	objs := fixtures()
	foreign := rayJob("team-a", rayv1.CronJobManualName("nightly", testNow), true)
	foreign.SetResourceVersion("")
	h := newHarness(t, actions.Options{}, interceptor.Funcs{}, append(objs, foreign)...)
	r, err := h.a.Trigger(context.Background(), "team-a", "nightly")
	if !errors.Is(err, actions.ErrInvalid) || r.Outcome != actions.OutcomeRejected ||
		!strings.Contains(err.Error(), "exists and is not RayCronJob nightly's") {
		t.Fatalf("result %+v, error %v", r, err)
	}
	if _, err := h.a.PreviewTrigger(context.Background(), "team-a", "nightly"); !errors.Is(err, actions.ErrInvalid) {
		t.Fatalf("preview error %v, want the same refusal", err)
	}
	if len(h.rec.got) != 0 {
		t.Fatalf("events %+v", h.rec.got)
	}
}

// TestTriggerForbidden: a create the user may not make is worded for
// people and names rayjobs.
func TestTriggerForbidden(t *testing.T) {
	funcs := interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.CreateOption) error {
		if _, ok := obj.(*rayv1.RayJob); ok {
			return apierrors.NewForbidden(schema.GroupResource{Group: "ray.io", Resource: "rayjobs"}, obj.GetName(), errors.New("RBAC"))
		}
		return c.Create(ctx, obj, o...)
	}}
	h := newHarness(t, actions.Options{}, funcs, fixtures()...)
	r, err := h.a.Trigger(context.Background(), "team-a", "nightly")
	if !apierrors.IsForbidden(err) || r.Outcome != actions.OutcomeFailed ||
		!strings.Contains(err.Error(), "forbidden: user alice cannot create rayjobs in namespace team-a") {
		t.Fatalf("result %+v, error %v", r, err)
	}
}
