package raycluster

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// A cluster with a batch-scheduler label is reconciled into the same
// objects as without it (KubeRay without --batch-scheduler), with one
// Warning naming the label and the flag that would honour it.
func TestBatchSchedulerLabelsWarnOnly(t *testing.T) {
	plain := decide(obsOf(freshCluster("c", 2), nil))
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   []string // substrings of the Warning; nil: no Warning
	}{
		{"unlabelled", nil, nil},
		{"other labels", map[string]string{"team": "a"}, nil},
		{"volcano queue", map[string]string{rayv1.VolcanoQueueNameLabelKey: "kuberay-test-queue"},
			[]string{"label volcano.sh/queue-name=kuberay-test-queue is ignored: raydar runs without --batch-scheduler (no PodGroup is made, pods are scheduled one by one); run raydar or KubeRay's operator with --batch-scheduler=volcano for gang scheduling"}},
		{"gang scheduling", map[string]string{rayv1.RayGangSchedulingEnabled: "true"},
			[]string{"label ray.io/gang-scheduling-enabled=true is ignored", "--batch-scheduler=scheduler-plugins or --batch-scheduler=yunikorn for gang scheduling"}},
		{"yunikorn", map[string]string{rayv1.RayGangSchedulingEnabled: "true", rayv1.YuniKornQueueLabelKey: "root.test", rayv1.YuniKornApplicationIDLabelKey: "x"},
			[]string{"labels ray.io/gang-scheduling-enabled=true, yunikorn.apache.org/queue=root.test, yunikorn.apache.org/app-id=x are ignored"}},
		{"kai", map[string]string{rayv1.KaiQueueLabelKey: "team-a"},
			[]string{"label kai.scheduler/queue=team-a is ignored", "--batch-scheduler=kai-scheduler for gang scheduling"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := freshCluster("c", 2)
			rc.Labels = tc.labels
			p := decide(obsOf(rc, nil))
			if !reflect.DeepEqual(p.CreatePods, plain.CreatePods) || !reflect.DeepEqual(p.CreateServices, plain.CreateServices) ||
				!reflect.DeepEqual(p.Status, plain.Status) {
				t.Errorf("the labels changed what is made or the status")
			}
			if tc.want == nil {
				if p.BatchScheduler != nil {
					t.Errorf("Warning %+v on a cluster without batch-scheduler labels", p.BatchScheduler)
				}
				return
			}
			if p.BatchScheduler == nil || p.BatchScheduler.Type != "Warning" || p.BatchScheduler.Reason != ReasonBatchSchedulerNotImplemented {
				t.Fatalf("Warning %+v", p.BatchScheduler)
			}
			for _, w := range tc.want {
				if !strings.Contains(p.BatchScheduler.Message, w) {
					t.Errorf("message %q lacks %q", p.BatchScheduler.Message, w)
				}
			}
		})
	}
}

// The Warning is said once, not on every pass; again when the labels
// change.
func TestBatchSchedulerWarningSaidOnce(t *testing.T) {
	rc := freshCluster("c", 1)
	rc.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "q1"}
	r, c, rec := fakeReconciler(t, interceptor.Funcs{}, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	warnings := func() []string {
		var out []string
		for len(rec.Events) > 0 {
			if e := <-rec.Events; strings.Contains(e, ReasonBatchSchedulerNotImplemented) {
				out = append(out, e)
			}
		}
		return out
	}
	for range 3 {
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if w := warnings(); len(w) != 1 || !strings.Contains(w[0], "Warning BatchSchedulerNotImplemented label volcano.sh/queue-name=q1 is ignored") {
		t.Fatalf("three passes: %q, want one Warning", w)
	}
	got := &rayv1.RayCluster{}
	if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	got.Labels[rayv1.VolcanoQueueNameLabelKey] = "q2"
	if err := c.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if w := warnings(); len(w) != 1 || !strings.Contains(w[0], "volcano.sh/queue-name=q2") {
		t.Fatalf("after the label changed: %q", w)
	}
}
