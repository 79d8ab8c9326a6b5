package raycluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The order of a pass's writes, as KubeRay v1.7.0 makes them: the children
// before the pods (raycluster_controller.go:359-370, the first error ends
// the pass), the head pod before the workers (reconcilePods :1013-1052:
// a failed head create returns before the worker loop at :1068).

// writeLog records every create and delete that reaches the API.
type writeLog struct {
	mu               sync.Mutex // the pass writes in parallel
	created, deleted []string
}

// refuseCreates answers creates of the objects match picks with an
// admission refusal and logs the other writes.
func refuseCreates(match func(client.Object) bool, log *writeLog) interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if match(obj) {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, obj.GetName(),
					errors.New(`admission webhook "deny.example" denied the request`))
			}
			log.mu.Lock()
			log.created = append(log.created, kindName(obj))
			log.mu.Unlock()
			return cl.Create(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			log.mu.Lock()
			log.deleted = append(log.deleted, kindName(obj))
			log.mu.Unlock()
			return cl.Delete(ctx, obj, opts...)
		},
	}
}

func kindName(obj client.Object) string {
	switch o := obj.(type) {
	case *corev1.Pod:
		if kit.IsHeadPod(o) {
			return "head"
		}
		return "worker " + o.Name
	case *corev1.Service:
		return "Service " + o.Name
	}
	return obj.GetName()
}

// warningReasons drains rec and returns the reasons of its Warning Events.
func warningReasons(rec *events.FakeRecorder) []string {
	var out []string
	for len(rec.Events) > 0 {
		e := <-rec.Events
		if strings.HasPrefix(e, corev1.EventTypeWarning+" ") {
			out = append(out, strings.SplitN(e, " ", 3)[1])
		}
	}
	return out
}

func TestReconcileHeadBeforeWorkers(t *testing.T) {
	isHead := func(o client.Object) bool { p, ok := o.(*corev1.Pod); return ok && kit.IsHeadPod(p) }
	isHeadSvc := func(o client.Object) bool { s, ok := o.(*corev1.Service); return ok && s.Name == "c-head-svc" }
	never := func(client.Object) bool { return false }
	for _, tc := range []struct {
		name     string
		refuse   func(client.Object) bool
		existing func(rc *rayv1.RayCluster) []client.Object
		replicas int32
		// what reaches the API server, and KubeRay's Warning reasons and
		// ReplicaFailure reason ("" none)
		created, deleted []string
		warnings         []string
		condition        string
	}{
		{
			// The suite's case: KubeRay has FailedCreateHeadPod only, no
			// worker create attempted.
			name: "head refused: no worker is created", refuse: isHead, replicas: 2,
			created:  []string{"Service c-head-svc"},
			warnings: []string{rayv1.EventFailedToCreateHeadPod}, condition: rayv1.FailedCreateHeadPod,
		},
		{
			// Nor deleted: KubeRay's worker loop does not run.
			name: "head refused: a surplus worker stays", refuse: isHead, replicas: 0,
			existing: func(rc *rayv1.RayCluster) []client.Object {
				return []client.Object{headSvc(rc), workerPods(rc, "small", ready, 1)[0]}
			},
			warnings: []string{rayv1.EventFailedToCreateHeadPod}, condition: rayv1.FailedCreateHeadPod,
		},
		{
			name: "head Service refused: no pod at all", refuse: isHeadSvc, replicas: 2,
			warnings: []string{rayv1.EventFailedToCreateService},
		},
		{
			name: "head created: workers in the same pass", refuse: never, replicas: 2,
			created: []string{"Service c-head-svc", "head", "worker c-small-worker-s0001", "worker c-small-worker-s0002"},
		},
		{
			// KubeRay goes on to the workers whenever one head pod exists
			// and need not be deleted, ready or not.
			name: "head pending: workers created", refuse: isHead, replicas: 2,
			existing: func(rc *rayv1.RayCluster) []client.Object {
				return []client.Object{headSvc(rc), headPod(rc, pending)}
			},
			created: []string{"worker c-small-worker-s0000", "worker c-small-worker-s0001"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := freshCluster("c", tc.replicas)
			objs := []client.Object{rc}
			if tc.existing != nil {
				objs = append(objs, tc.existing(rc)...)
			}
			log := &writeLog{}
			r, c, rec := fakeReconciler(t, refuseCreates(tc.refuse, log), objs...)
			n := 0
			r.newSuffix = func() string { n++; return []string{"s0000", "s0001", "s0002", "s0003"}[n-1] }
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
			_, err := r.Reconcile(context.Background(), req)
			if (err != nil) != (len(tc.warnings) > 0) {
				t.Fatalf("reconcile error %v", err)
			}
			slices.Sort(log.created)
			if !slices.Equal(log.created, tc.created) || !slices.Equal(log.deleted, tc.deleted) {
				t.Errorf("created %q, deleted %q; want %q, %q", log.created, log.deleted, tc.created, tc.deleted)
			}
			if got := warningReasons(rec); !slices.Equal(got, tc.warnings) {
				t.Errorf("Warning Events %q, want %q", got, tc.warnings)
			}
			got := &rayv1.RayCluster{}
			if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, string(rayv1.RayClusterReplicaFailure))
			switch {
			case tc.condition == "" && cond != nil && cond.Status == "True":
				t.Errorf("ReplicaFailure %+v, want none", cond)
			case tc.condition != "" && (cond == nil || cond.Reason != tc.condition):
				t.Errorf("ReplicaFailure %+v, want reason %s", cond, tc.condition)
			}
		})
	}
}
