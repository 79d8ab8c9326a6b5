package rayjob

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestSuspendWorkersRetriesAConflictWithoutAWarning: deletion rule
// DeleteWorkers patches the cluster with the resourceVersion it read (a
// merge patch replaces workerGroupSpecs whole, so a newer version must not
// be overwritten); a status write in between makes that a 409. That is no
// failure: the pass asks to be run again soon and says nothing, and the
// next pass suspends the workers and says so once.
func TestSuspendWorkersRetriesAConflictWithoutAWarning(t *testing.T) {
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc"},
		Spec: rayv1.RayClusterSpec{WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "small"}}}}
	conflicts := 1
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(rc).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if conflicts > 0 {
				conflicts--
				return apierrors.NewConflict(schema.GroupResource{Group: "ray.io", Resource: "rayclusters"}, obj.GetName(), nil)
			}
			return cl.Patch(ctx, obj, patch, opts...)
		}}).Build()
	rec := events.NewFakeRecorder(10)
	r := &reconciler{client: c, events: kit.NewEvents(rec)}
	job := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "job-uid"}}
	pass := func() *acting {
		a := &acting{r: r, ctx: context.Background(), p: &Plan{SuspendWorkers: "rc"}, rj: job}
		a.suspendWorkers()
		return a
	}

	a := pass()
	if len(a.errs) != 0 || a.res.RequeueAfter != soon || len(rec.Events) != 0 {
		t.Fatalf("after a conflict: errors %v, requeue %v, %d Events; want none, %v, none", a.errs, a.res.RequeueAfter, len(rec.Events), soon)
	}
	a = pass()
	if len(a.errs) != 0 {
		t.Fatalf("second pass: %v", a.errs)
	}
	got := &rayv1.RayCluster{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(rc), got); err != nil {
		t.Fatal(err)
	}
	if s := got.Spec.WorkerGroupSpecs[0].Suspend; s == nil || !*s {
		t.Fatalf("the worker group is not suspended: %v", s)
	}
	if len(rec.Events) != 1 {
		t.Fatalf("%d Events, want the one saying the workers were suspended", len(rec.Events))
	}
	if e := <-rec.Events; e != "Normal "+rayv1.EventUpdatedRayCluster+" Suspended every worker group of RayCluster rc (its worker pods go): deletion rule DeleteWorkers" {
		t.Fatalf("Event %q", e)
	}
}
