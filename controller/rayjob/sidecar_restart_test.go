package rayjob

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

var restartOn = features.MustParse("SidecarSubmitterRestart=true")

// With the gate on the SidecarMode submitter restarts alone on failure and
// checks the job before submitting, as KubeRay v1.7.0 builds it
// (rayjob_controller.go:617-630, common/job.go:154-170); off, neither.
func TestSidecarSubmitterRestartBuild(t *testing.T) {
	j := newJob(mode(rayv1.SidecarMode))
	j.Status.JobId = "rj-id"
	side := func(restart bool) corev1.Container {
		rc, err := buildCluster(j, "rj-rc001", restart)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rc.Spec.HeadGroupSpec.Template.Spec.Containers {
			if c.Name == rayv1.RayJobSubmitterContainerName {
				if rc.Spec.HeadGroupSpec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
					t.Errorf("head pod restartPolicy %q, want Never", rc.Spec.HeadGroupSpec.Template.Spec.RestartPolicy)
				}
				return c
			}
		}
		t.Fatal("no submitter")
		return corev1.Container{}
	}
	on := side(true)
	if on.RestartPolicy == nil || *on.RestartPolicy != corev1.ContainerRestartPolicyOnFailure {
		t.Errorf("gate on: container restartPolicy %v, want OnFailure", on.RestartPolicy)
	}
	local := "http://127.0.0.1:8265"
	want := "if ! ray job status --address " + local + " rj-id >/dev/null 2>&1 ; then ray job submit --address " + local + " --no-wait "
	if !strings.Contains(on.Args[0], want) || !strings.Contains(on.Args[0], " ; fi ; ray job logs --address "+local+" --follow rj-id") {
		t.Errorf("gate on: script %q", on.Args[0])
	}
	off := side(false)
	if off.RestartPolicy != nil || strings.Contains(off.Args[0], "ray job status") || strings.Contains(off.Args[0], "--no-wait") {
		t.Errorf("gate off: restartPolicy %v, script %q", off.RestartPolicy, off.Args[0])
	}
}

// With the gate on a failed submitter fails the RayJob only once it has
// been restarted twice, as KubeRay's checkIsRestartCountExceeded
// (rayjob_controller.go:1216-1232; submitterConfig.backoffLimit would
// change the limit, but SidecarMode refuses submitterConfig,
// utils/validation.go:596-598).
func TestSidecarSubmitterRestartDecide(t *testing.T) {
	run := inPhase(rayv1.JobDeploymentStatusRunning, "")
	now := fixture.T0.Add(20 * time.Second)
	head := func(restarts int32, last bool, state corev1.ContainerState) func(*Observed) {
		return func(o *Observed) {
			cs := corev1.ContainerStatus{Name: rayv1.RayJobSubmitterContainerName, RestartCount: restarts, State: state}
			if last {
				cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1}
			}
			o.HeadPod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rj-rc001-head-x"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{cs}}}
		}
	}
	gate := func(g features.Gates) func(*Observed) { return func(o *Observed) { o.Config.Build.Features = g } }
	exited := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: metav1.NewTime(now)}}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	for _, tc := range []struct {
		name     string
		job      *rayv1.RayJob
		mods     []func(*Observed)
		failed   bool
		reason   rayv1.JobFailedReason
		message  string
		complete bool
	}{
		{name: "gate off: a non-zero exit fails at once", job: newJob(run, mode(rayv1.SidecarMode)),
			mods: []func(*Observed){head(0, false, exited)}, failed: true, reason: rayv1.SubmissionFailed,
			message: "Ray head pod container ray-job-submitter terminated with exit code 1: Error"},
		{name: "gate on: a first non-zero exit waits for the restart", job: newJob(run, mode(rayv1.SidecarMode)),
			mods: []func(*Observed){gate(restartOn), head(0, false, exited)}},
		{name: "gate on: restarted once, running again", job: newJob(run, mode(rayv1.SidecarMode)),
			mods: []func(*Observed){gate(restartOn), head(1, true, running)}},
		{name: "gate on: restarted twice (the default limit) → Failed", job: newJob(run, mode(rayv1.SidecarMode)),
			mods: []func(*Observed){gate(restartOn), head(2, true, running)}, failed: true, reason: rayv1.SubmissionFailed,
			message: "Ray head pod submitter container ray-job-submitter terminated after exceeding the maximum restart count"},
		{name: "gate on: restarted once, failed again (restarting)", job: newJob(run, mode(rayv1.SidecarMode)),
			mods: []func(*Observed){gate(restartOn), head(1, true, exited)}},
		{name: "gate on: Ray said FAILED, restarts used up → AppFailed, Ray's message kept",
			job:  newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusFailed), mode(rayv1.SidecarMode), func(j *rayv1.RayJob) { j.Status.Message = "boom" }),
			mods: []func(*Observed){gate(restartOn), head(3, true, exited)}, failed: true, reason: rayv1.AppFailed, message: "boom"},
		{name: "gate on: restarted, then exited 0 with Ray SUCCEEDED → Complete", job: newJob(run, mode(rayv1.SidecarMode)),
			mods: []func(*Observed){gate(restartOn), withDash(info(dashboard.JobSucceeded)),
				head(2, true, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(now)}})},
			complete: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mods := append([]func(*Observed){withCluster(newCluster(true))}, tc.mods...)
			if !tc.complete {
				mods = append(mods, withDash(info(dashboard.JobRunning)))
			}
			p := Decide(observe(tc.job, now, mods...))
			st := p.Status
			switch {
			case tc.complete:
				if st.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete {
					t.Fatalf("%+v", st)
				}
			case tc.failed:
				if st.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || st.Reason != tc.reason || st.Message != tc.message {
					t.Fatalf("%+v", st)
				}
			default:
				if st.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
					t.Fatalf("%+v", st)
				}
			}
		})
	}
}
