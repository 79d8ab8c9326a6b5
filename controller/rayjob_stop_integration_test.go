package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/rayjob"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestIntegrationRayJobStopAnnotation(t *testing.T) {
	h := newRJHarness(t, nil)
	h.rayJob("stopme", `sleep 600`)
	j := h.wait("stopme", "RUNNING", jobIs(rayv1.JobStatusRunning))
	patchRJ(t, h.ns, "stopme", func(j *rayv1.RayJob) {
		j.Annotations = map[string]string{rayv1.StopRequestedAnnotationKey: "tester@2030-01-01T00:00:00Z"}
	})
	j = h.wait("stopme", "STOPPED", func(j *rayv1.RayJob) bool {
		return j.Status.JobStatus == rayv1.JobStatusStopped && j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete
	})
	if !condTrue(j, rayv1.JobStopConditionType) {
		t.Fatal(describeRJ(j))
	}
	if rec, ok := rayjob.StopRecordOf(j); !ok || rec.Request != "tester@2030-01-01T00:00:00Z" || rec.JobID != j.Status.JobId {
		t.Fatalf("record %+v %v", rec, ok)
	}
	if n := h.stopCalls(j); n != 1 {
		t.Fatalf("%d stop calls, want 1: %v", n, h.sim.AllCalls(h.ns, j.Status.RayClusterName))
	}
	h.waitEvent("stopme", rayjob.ReasonStopConfirmed, "tester@")
	// More passes (a label change wakes the reconciler) send nothing more.
	patchRJ(t, h.ns, "stopme", func(j *rayv1.RayJob) { j.Labels = map[string]string{"touched": "yes"} })
	consistently(t, 3*time.Second, "one stop call", func() (bool, string) {
		n := h.stopCalls(j)
		return n == 1, fmt.Sprint(n)
	})
	// Not retried, even with retries left: a stop is not a failure.
	if rayjob.DerefInt32(j.Status.Failed) != 0 {
		t.Fatal(describeRJ(j))
	}
}

func TestIntegrationRayJobDeleteStopsOnce(t *testing.T) {
	h := newRJHarness(t, nil)
	h.rayJob("del", `sleep 600`)
	j := h.wait("del", "RUNNING", jobIs(rayv1.JobStatusRunning))
	if !containsString(j.Finalizers, rayv1.RayJobStopJobFinalizer) {
		t.Fatalf("finalizers %v", j.Finalizers)
	}
	dc := h.dashboard(j.Status.RayClusterName)
	if err := cl.Delete(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	h.waitGone("del")
	if n := h.stopCalls(j); n != 1 {
		t.Fatalf("%d stop calls, want 1: %v", n, h.sim.AllCalls(h.ns, j.Status.RayClusterName))
	}
	h.waitEvent("del", rayjob.ReasonStopConfirmed, "deleted")
	// The Ray job was stopped by the call (the head may already be gone
	// with the cluster, which the garbage collector deletes next).
	if info, err := dc.GetJobInfo(context.Background(), j.Status.JobId); err == nil && info.Status != dashboard.JobStopped {
		t.Fatalf("Ray job %s", info.Status)
	}
}

func TestIntegrationRayJobDeleteUnreachableReleasesFinalizer(t *testing.T) {
	const bound = 5 * time.Second
	h := newRJHarness(t, func(o *Options) { o.RayJob.StopConfirmTimeout = bound })
	h.rayJob("lost", `sleep 600`)
	j := h.wait("lost", "RUNNING", jobIs(rayv1.JobStatusRunning))
	if err := h.sim.SetRefuse(h.ns, j.Status.RayClusterName, true); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := cl.Delete(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	h.waitGone("lost")
	if took := time.Since(begin); took < bound-time.Second {
		t.Fatalf("finalizer released after %s, before the %s bound", took, bound)
	}
	e := h.waitEvent("lost", rayjob.ReasonStopNotConfirmed, "did not confirm")
	if e.Type != corev1.EventTypeWarning || !strings.Contains(e.Note, j.Status.JobId) {
		t.Fatalf("%+v", e)
	}
	if n := h.stopCalls(j); n != 0 {
		t.Fatalf("%d stop calls reached a refusing dashboard", n)
	}
}

// A stop confirmed and recorded by one raydar that dies before releasing the
// finalizer is not sent again by the next one.
func TestIntegrationRayJobStopRecordSurvivesRestart(t *testing.T) {
	recorded := make(chan struct{})
	unblock := make(chan struct{})
	var once sync.Once
	h := newRJHarness(t, func(o *Options) {
		o.RayJob.AfterStopRecorded = func(*rayv1.RayJob) error {
			once.Do(func() { close(recorded) })
			<-unblock
			return errors.New("simulated crash after recording the stop")
		}
	})
	h.rayJob("crash", `sleep 600`)
	j := h.wait("crash", "RUNNING", jobIs(rayv1.JobStatusRunning))
	if err := cl.Delete(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	select {
	case <-recorded:
	case <-time.After(rjLong):
		t.Fatal("the stop was never recorded")
	}
	// raydar A "dies" here: its context ends before the pass can go on.
	h.op.cancel()
	close(unblock)
	h.op.stop()

	j = h.wait("crash", "still held by the finalizer, the stop on record", func(j *rayv1.RayJob) bool {
		return containsString(j.Finalizers, rayv1.RayJobStopJobFinalizer) && rayjob.StopConfirmedFor(j, j.Status.JobId)
	})
	if n := h.stopCalls(j); n != 1 {
		t.Fatalf("%d stop calls before the restart, want 1", n)
	}
	// raydar B finishes the deletion without a second stop.
	h.start(context.Background(), nil)
	h.waitGone("crash")
	if n := h.stopCalls(j); n != 1 {
		t.Fatalf("%d stop calls after the restart, want 1: %v", n, h.sim.AllCalls(h.ns, j.Status.RayClusterName))
	}
}
