package rayjob

// The restartable SidecarMode submitter, behind KubeRay's
// SidecarSubmitterRestart gate (controller/features), as KubeRay v1.7.0
// does it (ray-operator/; line numbers are v1.7.0's):
//
//   - the submitter container in the head pod gets its own restartPolicy
//     OnFailure (rayjob_controller.go:617-630, a per-container restart rule,
//     Kubernetes 1.35+): the kubelet restarts it alone after a non-zero
//     exit (typically `ray job logs --follow` losing its WebSocket), while
//     the pod's restartPolicy stays Never;
//   - its script then checks the job first, as K8sJobMode's does
//     (common/job.go:154-170): `if ! ray job status …; then ray job submit
//     --no-wait …; fi; ray job logs --follow …`, so a restarted submitter
//     reattaches to the job instead of submitting it again;
//   - a submitter that exited non-zero no longer fails the RayJob at once
//     (:1096-1134): only once it has been restarted (lastState terminated)
//     twice (sidecarSubmitterRestarts) and is not now
//     terminated with exit 0; the message is "Ray head pod submitter
//     container ray-job-submitter terminated after exceeding the maximum
//     restart count" (SubmissionFailed, or AppFailed with the Ray job's own
//     message when Ray already reported it FAILED). A terminated submitter,
//     whatever its exit code, still starts the submitter-finished grace
//     (getSubmitterContainerFinishedTime :1396-1406), as in KubeRay;
//   - the operator refuses to start with the gate on against an API server
//     older than 1.35 (main.go:200-222; controller.New).

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/controller/features"
)

// sidecarSubmitterRestarts is how often the SidecarMode submitter may be
// restarted before its failure fails the RayJob: KubeRay reads
// submitterConfig.backoffLimit, default 2 (rayjob_controller.go:1114-1117),
// but submitterConfig is refused outside K8sJobMode (rayapi/v1
// validation_rayjob.go, as utils/validation.go:596-598), so in SidecarMode
// it is always the default.
const sidecarSubmitterRestarts int32 = 2

// sidecarRestartOn: the SidecarSubmitterRestart gate is on.
func sidecarRestartOn(g features.Gates) bool { return g.Enabled(features.SidecarSubmitterRestart) }

// makeRestartable gives the submitter container its own OnFailure restart
// policy (rayjob_controller.go:617-630).
func makeRestartable(c *corev1.Container) {
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyOnFailure)
}

// restartsExhausted is KubeRay's checkIsRestartCountExceeded
// (rayjob_controller.go:1216-1232): the submitter has terminated before
// (lastState), is not now terminated with exit 0, and has been restarted
// at least limit times.
func restartsExhausted(cs *corev1.ContainerStatus, limit int32) bool {
	if cs == nil || cs.LastTerminationState.Terminated == nil {
		return false
	}
	if cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0 {
		return false
	}
	return cs.RestartCount >= limit
}

// restartsExhaustedMessage is KubeRay's message for it.
func restartsExhaustedMessage(cs *corev1.ContainerStatus) string {
	return fmt.Sprintf("Ray head pod submitter container %s terminated after exceeding the maximum restart count", cs.Name)
}
