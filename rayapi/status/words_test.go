package status

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func cond[T ~string](t T, status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: status, Reason: reason}
}

var deleted = ptr.To(metav1.Now())

// checkWord checks a kind's word function (rayapi/kinds checks that each
// kind's descriptor names it: kinds.StatusOf agrees).
func checkWord[T runtime.Object](t *testing.T, name string, word func(T) string, obj T, want string) {
	t.Helper()
	if got := word(obj); got != want {
		t.Errorf("%s: %q, want %q", name, got, want)
	}
}

func TestCluster(t *testing.T) {
	const yes, no = metav1.ConditionTrue, metav1.ConditionFalse
	tests := []struct {
		name    string
		suspend bool
		deleted bool
		st      rayv1.RayClusterStatus
		want    string
	}{
		{"nothing written yet", false, false, rayv1.RayClusterStatus{}, "pending"},
		{"state", false, false, rayv1.RayClusterStatus{State: rayv1.Ready}, "ready"},
		{"failed state", false, false, rayv1.RayClusterStatus{State: rayv1.Failed, Reason: "x"}, "failed"},
		{"deleting wins over everything", true, true, rayv1.RayClusterStatus{State: rayv1.Ready}, "deleting"},
		{"suspend requested, not yet seen", true, false, rayv1.RayClusterStatus{State: rayv1.Ready}, "suspending"},
		{"suspending condition", true, false, rayv1.RayClusterStatus{State: rayv1.Ready,
			Conditions: []metav1.Condition{cond(rayv1.RayClusterSuspending, yes, "")}}, "suspending"},
		{"suspending condition after resume", false, false, rayv1.RayClusterStatus{State: rayv1.Ready,
			Conditions: []metav1.Condition{cond(rayv1.RayClusterSuspending, yes, "")}}, "suspending"},
		{"suspended", true, false, rayv1.RayClusterStatus{State: rayv1.Suspended,
			Conditions: []metav1.Condition{cond(rayv1.RayClusterSuspended, yes, "")}}, "suspended"},
		{"suspended before the state is written", true, false, rayv1.RayClusterStatus{
			Conditions: []metav1.Condition{cond(rayv1.RayClusterSuspended, yes, "")}}, "suspended"},
		{"resumed, state still suspended", false, false, rayv1.RayClusterStatus{State: rayv1.Suspended,
			Conditions: []metav1.Condition{cond(rayv1.RayClusterSuspended, yes, "")}}, "suspended"},
		{"replica failure explains a missing state", false, false, rayv1.RayClusterStatus{
			Conditions: []metav1.Condition{cond(rayv1.RayClusterReplicaFailure, yes, "FailedCreateHeadPod"),
				cond(rayv1.RayClusterProvisioned, no, rayv1.RayClusterPodsProvisioning)}}, "FailedCreateHeadPod"},
		{"replica failure without reason", false, false, rayv1.RayClusterStatus{
			Conditions: []metav1.Condition{cond(rayv1.RayClusterReplicaFailure, yes, "")}}, "pending"},
		{"status reason", false, false, rayv1.RayClusterStatus{Reason: "InvalidSpec"}, "InvalidSpec"},
		{"provisioning", false, false, rayv1.RayClusterStatus{
			Conditions: []metav1.Condition{cond(rayv1.RayClusterProvisioned, no, rayv1.RayClusterPodsProvisioning)}}, "provisioning"},
		{"provisioned, no state", false, false, rayv1.RayClusterStatus{
			Conditions: []metav1.Condition{cond(rayv1.RayClusterProvisioned, yes, "")}}, "pending"},
	}
	for _, tt := range tests {
		rc := &rayv1.RayCluster{Status: tt.st}
		if tt.suspend {
			rc.Spec.Suspend = ptr.To(true)
		}
		if tt.deleted {
			rc.DeletionTimestamp = deleted
		}
		checkWord(t, tt.name, Cluster, rc, tt.want)
	}
}

func TestService(t *testing.T) {
	const yes, no = metav1.ConditionTrue, metav1.ConditionFalse
	tests := []struct {
		name    string
		deleted bool
		st      rayv1.RayServiceStatuses
		want    string
	}{
		{"nothing written yet", false, rayv1.RayServiceStatuses{}, "Pending"},
		{"ready", false, rayv1.RayServiceStatuses{Conditions: []metav1.Condition{cond(rayv1.RayServiceReady, yes, "")}}, "Ready"},
		{"upgrading while ready", false, rayv1.RayServiceStatuses{Conditions: []metav1.Condition{
			cond(rayv1.RayServiceReady, yes, ""), cond(rayv1.UpgradeInProgress, yes, "")}}, "Upgrading"},
		{"rolling back while upgrading", false, rayv1.RayServiceStatuses{Conditions: []metav1.Condition{
			cond(rayv1.UpgradeInProgress, yes, ""), cond(rayv1.RollbackInProgress, yes, "")}}, "RollingBack"},
		{"suspending", false, rayv1.RayServiceStatuses{Conditions: []metav1.Condition{
			cond(rayv1.RayServiceReady, yes, ""), cond(rayv1.RayServiceSuspending, yes, "")}}, "Suspending"},
		{"suspended", false, rayv1.RayServiceStatuses{Conditions: []metav1.Condition{
			cond(rayv1.RayServiceSuspending, yes, ""), cond(rayv1.RayServiceSuspended, yes, "")}}, "Suspended"},
		{"not ready: the reason", false, rayv1.RayServiceStatuses{ServiceStatus: rayv1.Running,
			Conditions: []metav1.Condition{cond(rayv1.RayServiceReady, no, string(rayv1.RayServiceInitializing))}}, "Initializing"},
		{"service status without conditions", false, rayv1.RayServiceStatuses{ServiceStatus: rayv1.Running}, "Running"},
		{"deleting", true, rayv1.RayServiceStatuses{Conditions: []metav1.Condition{cond(rayv1.RayServiceReady, yes, "")}}, "Deleting"},
	}
	for _, tt := range tests {
		s := &rayv1.RayService{Status: tt.st}
		if tt.deleted {
			s.DeletionTimestamp = deleted
		}
		checkWord(t, tt.name, Service, s, tt.want)
	}
}

func TestPod(t *testing.T) {
	waiting := func(r string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: r}}
	}
	terminated := func(r string) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: r}}
	}
	tests := []struct {
		name    string
		deleted bool
		st      podview.Status
		want    string
	}{
		{"no status", false, podview.Status{}, "Pending"},
		{"running", false, podview.Status{Phase: corev1.PodRunning,
			ContainerStatuses: []podview.ContainerStatus{{Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}, "Running"},
		{"terminating wins", true, podview.Status{Phase: corev1.PodRunning,
			ContainerStatuses: []podview.ContainerStatus{{State: waiting("CrashLoopBackOff")}}}, "Terminating"},
		{"crash loop", false, podview.Status{Phase: corev1.PodRunning,
			ContainerStatuses: []podview.ContainerStatus{{State: waiting("CrashLoopBackOff")}}}, "CrashLoopBackOff"},
		{"container creating", false, podview.Status{Phase: corev1.PodPending,
			ContainerStatuses: []podview.ContainerStatus{{State: waiting("ContainerCreating")}}}, "ContainerCreating"},
		{"init container waits", false, podview.Status{Phase: corev1.PodPending,
			InitContainerStatuses: []podview.ContainerStatus{{State: waiting("ErrImagePull")}},
			ContainerStatuses:     []podview.ContainerStatus{{State: waiting("PodInitializing")}}}, "Init:ErrImagePull"},
		{"init done, main initializing", false, podview.Status{Phase: corev1.PodPending,
			InitContainerStatuses: []podview.ContainerStatus{{State: waiting("PodInitializing")}},
			ContainerStatuses:     []podview.ContainerStatus{{State: waiting("PodInitializing")}}}, "PodInitializing"},
		{"container of a running pod terminated", false, podview.Status{Phase: corev1.PodRunning,
			ContainerStatuses: []podview.ContainerStatus{{State: terminated("OOMKilled")}}}, "OOMKilled"},
		{"failed pod: the phase, not the container", false, podview.Status{Phase: corev1.PodFailed,
			ContainerStatuses: []podview.ContainerStatus{{State: terminated("Error")}}}, "Failed"},
		{"evicted", false, podview.Status{Phase: corev1.PodFailed, Reason: "Evicted"}, "Evicted"},
	}
	for _, tt := range tests {
		p := &podview.Pod{Status: tt.st}
		if tt.deleted {
			p.DeletionTimestamp = deleted
		}
		checkWord(t, tt.name, Pod, p, tt.want)
	}
}

func TestJob(t *testing.T) {
	j := &rayv1.RayJob{}
	if Job(j) != None || JobDeployment(j) != None {
		t.Errorf("new job: %q %q, want %q", Job(j), JobDeployment(j), None)
	}
	j.Status = rayv1.RayJobStatus{JobStatus: rayv1.JobStatusRunning, JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}
	if Job(j) != "RUNNING" || JobDeployment(j) != "Running" {
		t.Errorf("running job: %q %q", Job(j), JobDeployment(j))
	}
}
