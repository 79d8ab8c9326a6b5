package raycluster

import (
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestDecideGCSFaultTolerance(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 1))
	rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379",
		RedisPassword: &rayv1.RedisCredential{Value: "secret"}}
	p := decide(obsOf(rc, nil))
	if !p.AddFinalizer {
		t.Fatal("no finalizer added for a GCS FT cluster")
	}
	var head, worker *corev1.Pod
	for _, pod := range p.CreatePods {
		if kit.IsHeadPod(pod) {
			head = pod
		} else {
			worker = pod
		}
	}
	env := func(p *corev1.Pod, n string) string {
		for _, e := range p.Spec.Containers[0].Env {
			if e.Name == n {
				return e.Value
			}
		}
		return "<unset>"
	}
	if env(head, envRedisAddress) != "redis:6379" || env(head, envRedisPassword) != "secret" || env(head, envExternalStorageNS) != string(rc.UID) {
		t.Errorf("head FT env: %v", head.Spec.Containers[0].Env)
	}
	if env(worker, envGcsReconnectTimout) != "600" {
		t.Errorf("worker reconnect timeout env missing")
	}
	if head.Annotations[rayv1.RayFTEnabledAnnotationKey] != "true" {
		t.Errorf("head annotations %v", head.Annotations)
	}
	if !strings.Contains(head.Spec.Containers[0].Args[0], "--redis-password=$REDIS_PASSWORD") {
		t.Errorf("ray start: %s", head.Spec.Containers[0].Args[0])
	}
}

func TestDecideDeletion(t *testing.T) {
	base := fixture.Cluster("c", fixture.Group("small", 1))
	base.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
	base.Finalizers = []string{rayv1.GCSFaultToleranceRedisCleanupFinalizer}
	del := metav1.NewTime(fixture.T0)
	base.DeletionTimestamp = &del

	at := func(d time.Duration, pods []*corev1.Pod, job *batchv1.Job) *plan {
		o := obsOf(base, headSvc(base), pods)
		o.Now = fixture.T0.Add(d)
		o.CleanupJob = job
		return decide(o)
	}
	// Pods left: delete them all, poll.
	p := at(time.Second, append(one(headPod(base, ready)), workerPods(base, "small", ready, 1)...), nil)
	if !p.DeleteAll || len(p.DeletePods) != 2 || p.RemoveFinalizer || p.RequeueAfter == 0 || !p.SkipStatus {
		t.Fatalf("pods left: %+v", p)
	}
	// Head still terminating: wait.
	p = at(time.Second, one(mkPod(base, true, "", "c-head-x", terminating)), nil)
	if p.CreateJob != nil || p.RemoveFinalizer || p.RequeueAfter == 0 {
		t.Fatalf("head terminating: %+v", p)
	}
	// All gone: clean-up Job.
	p = at(time.Second, nil, nil)
	if p.CreateJob == nil || p.CreateJob.Name != "c-redis-cleanup" {
		t.Fatalf("no clean-up job: %+v", p)
	}
	if p.CreateJob.OwnerReferences[0].UID != base.UID {
		t.Error("clean-up job not owned by the cluster")
	}
	// Job running: poll.
	job := p.CreateJob
	if p := at(2*time.Second, nil, job); p.RemoveFinalizer || p.RequeueAfter == 0 {
		t.Fatalf("job running: %+v", p)
	}
	// Job complete: finalizer goes.
	done := job.DeepCopy()
	done.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	if p := at(3*time.Second, nil, done); !p.RemoveFinalizer || p.Events[0].Type != corev1.EventTypeNormal {
		t.Fatalf("job complete: %+v", p)
	}
	// Job failed: finalizer goes with a warning.
	failedJob := job.DeepCopy()
	failedJob.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	if p := at(3*time.Second, nil, failedJob); !p.RemoveFinalizer || p.Events[0].Type != corev1.EventTypeWarning {
		t.Fatalf("job failed: %+v", p)
	}
	// Timeout (default 300 s, or the annotation): finalizer goes whatever is left.
	if p := at(301*time.Second, one(headPod(base, ready)), nil); !p.RemoveFinalizer || p.Events[0].Reason != ReasonRedisCleanupTimedOut {
		t.Fatalf("timeout: %+v", p)
	}
	base.Annotations = map[string]string{rayv1.GCSFaultToleranceDeletionTimeoutAnnotationKey: "5"}
	if p := at(6*time.Second, nil, job); !p.RemoveFinalizer {
		t.Fatalf("annotation timeout: %+v", p)
	}
	// No finalizer: nothing to do, garbage collection does the rest.
	plain := fixture.Cluster("d")
	plain.DeletionTimestamp = &del
	if p := decide(obsOf(plain, nil, one(headPod(plain, ready)))); len(p.DeletePods) != 0 || !p.SkipStatus {
		t.Fatalf("plain deletion: %+v", p)
	}
}
