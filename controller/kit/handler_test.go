package kit_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/raydar/raydar/controller/kit"
)

// ownedPod is a pod of the RayCluster owner, running, ready or not.
func ownedPod(owner string, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: owner + "-head", UID: types.UID("pod-" + owner),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: owner, UID: types.UID("uid-" + owner), Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

// A cluster whose pod just became ready is served before the clusters
// queued ahead of it, which are still being built: at 10,000 RayClusters
// its status waited minutes behind them in a FIFO queue. Any other change
// keeps its place.
func TestPodReadyIsQueuedFirst(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	h := &kit.ChildHandler{Exp: kit.NewExpectations(time.Minute, time.Now), Owner: kit.ControllerOwner("RayCluster", "ray.io/v1")}
	ctx := context.Background()
	for _, owner := range []string{"building-1", "building-2", "almost"} {
		h.Create(ctx, crevent.CreateEvent{Object: ownedPod(owner, false)}, q)
	}
	// A change that is not readiness keeps the FIFO order.
	moved := ownedPod("building-2", false)
	moved.Status.PodIP = "10.0.0.2"
	h.Update(ctx, crevent.UpdateEvent{ObjectOld: ownedPod("building-2", false), ObjectNew: moved}, q)
	h.Update(ctx, crevent.UpdateEvent{ObjectOld: ownedPod("almost", false), ObjectNew: ownedPod("almost", true)}, q)

	var got []string
	for q.Len() > 0 { // Len flushes what was added; a missing request fails below, not hangs
		req, prio, _ := q.GetWithPriority()
		got = append(got, req.Name)
		q.Done(req)
		if req.Name == "almost" && prio != kit.ReadyFirst {
			t.Errorf("the ready cluster's priority is %d, want %d", prio, kit.ReadyFirst)
		}
	}
	want := []string{"almost", "building-1", "building-2"}
	if len(got) != len(want) {
		t.Fatalf("served %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("served %v, want %v: the cluster whose pod became ready first, the rest in their order", got, want)
		}
	}
}
