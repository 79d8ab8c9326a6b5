// Package tuitest holds what the TUI's tests share: the fixed clock, the
// fixture world (clusters, pods, events, jobs, services, cronjobs) and its
// object builders, the fuzz targets' key decoding, numbered log lines, and a
// diagnoser that records what it is asked. Only tests import it, and it
// imports no TUI package, so the tests of every one of them can.
package tuitest

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// FixedNow is the clock of every test.
var FixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Clock is the tests' clock: FixedNow, always.
func Clock() time.Time { return FixedNow }

// Ago is the time d before FixedNow.
func Ago(d time.Duration) metav1.Time { return metav1.NewTime(FixedNow.Add(-d)) }

// OM is object meta in ns, created the given time ago, with a UID of
// "ns-name".
func OM(ns, name string, created time.Duration, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name),
		CreationTimestamp: Ago(created), Labels: labels}
}

// Cond is a condition of type t.
func Cond(t, status, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason}
}

// MkCluster is a Ready RayCluster of the groups, its status counting them.
func MkCluster(ns, name string, created time.Duration, groups ...rayv1.WorkerGroupSpec) *rayv1.RayCluster {
	rc := &rayv1.RayCluster{ObjectMeta: OM(ns, name, created, map[string]string{"team": "ml"})}
	rc.Spec.RayVersion = "2.41.0"
	rc.Spec.WorkerGroupSpecs = groups
	var desired, min, max int32
	for _, g := range groups {
		desired += *g.Replicas
		min += *g.MinReplicas
		max += *g.MaxReplicas
	}
	rc.Status = rayv1.RayClusterStatus{
		State: rayv1.Ready, DesiredWorkerReplicas: desired, AvailableWorkerReplicas: desired, ReadyWorkerReplicas: desired,
		MinWorkerReplicas: min, MaxWorkerReplicas: max,
		DesiredCPU: resource.MustParse(fmt.Sprint(1 + 2*desired)), DesiredMemory: resource.MustParse(fmt.Sprintf("%dGi", 2+4*desired)),
		Head: rayv1.HeadInfo{PodIP: "10.0.0.10", ServiceName: name + "-head-svc", ServiceIP: "10.96.0.20"},
		Conditions: []metav1.Condition{
			Cond(string(rayv1.HeadPodReady), "True", rayv1.HeadPodRunningAndReady),
			Cond(string(rayv1.RayClusterProvisioned), "True", rayv1.AllPodRunningAndReadyFirstTime),
		},
	}
	return rc
}

// Group is a worker group spec.
func Group(name string, replicas, min, max int32) rayv1.WorkerGroupSpec {
	return rayv1.WorkerGroupSpec{GroupName: name, Replicas: ptr.To(replicas), MinReplicas: ptr.To(min), MaxReplicas: ptr.To(max)}
}

// MkPod is a pod of rc (its labels), Running and Ready or Pending.
func MkPod(rc *rayv1.RayCluster, name, nodeType, grp string, created time.Duration, ready bool, ip string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: OM(rc.Namespace, name, created, map[string]string{
		rayv1.RayClusterLabelKey: rc.Name, rayv1.RayNodeTypeLabelKey: nodeType, rayv1.RayNodeGroupLabelKey: grp,
	})}
	p.Spec.Containers = []corev1.Container{{Name: "ray-" + nodeType}}
	p.Spec.NodeName = "kwok-node-1"
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP = ip
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray-" + nodeType, Ready: ready}}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	if !ready {
		p.Status.Phase = corev1.PodPending
		p.Status.PodIP = ""
		p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	return p
}

// MkEvent is an Event about an object, last seen at ago.
func MkEvent(about client.Object, kind, apiVersion, typ, reason, msg string, at time.Duration) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     OM(about.GetNamespace(), about.GetName()+"."+reason, at, nil),
		InvolvedObject: corev1.ObjectReference{Kind: kind, APIVersion: apiVersion, Namespace: about.GetNamespace(), Name: about.GetName(), UID: about.GetUID()},
		Type:           typ, Reason: reason, Message: msg, LastTimestamp: Ago(at),
	}
}

// Fixture is a small, fixed world: clusters in two namespaces, a job, a
// service in the middle of an upgrade, their pods and events.
func Fixture() *watch.Store {
	st := watch.NewStore()
	gpu := Group("gpu", 2, 1, 4)
	rc1 := MkCluster("ml", "train-a", 3*time.Hour, Group("cpu", 3, 1, 5), gpu)
	rc1.Status.DesiredGPU = resource.MustParse("2")
	rc1.Status.AvailableWorkerReplicas = 4
	rc2 := MkCluster("ml", "notebook", 26*time.Hour, Group("small", 1, 0, 2))
	rc3 := MkCluster("serve", "fruit-raycluster-abcde", 40*time.Minute, Group("serve", 2, 1, 3))
	rc4 := MkCluster("serve", "fruit-raycluster-fghij", 2*time.Minute, Group("serve", 2, 1, 3))
	rc4.Status.State = ""
	rc4.Status.AvailableWorkerReplicas = 1
	rc4.Status.Conditions = []metav1.Condition{Cond(string(rayv1.RayClusterProvisioned), "False", rayv1.RayClusterPodsProvisioning)}
	st.Add(rc1, rc2, rc3, rc4)

	st.Add(
		MkPod(rc1, "train-a-head-x7k2p", "head", rayv1.RayNodeHeadGroupLabelValue, 3*time.Hour, true, "10.0.0.10"),
		MkPod(rc1, "train-a-cpu-worker-4hq9d", "worker", "cpu", 3*time.Hour, true, "10.0.0.11"),
		MkPod(rc1, "train-a-cpu-worker-8mz2n", "worker", "cpu", 3*time.Hour, true, "10.0.0.12"),
		MkPod(rc1, "train-a-cpu-worker-c2v7t", "worker", "cpu", 90*time.Second, false, ""),
		MkPod(rc1, "train-a-gpu-worker-q5w8e", "worker", "gpu", 2*time.Hour, true, "10.0.0.14"),
		MkPod(rc1, "train-a-gpu-worker-z1x3c", "worker", "gpu", 2*time.Hour, true, "10.0.0.15"),
		MkPod(rc2, "notebook-head-2b4c6", "head", rayv1.RayNodeHeadGroupLabelValue, 26*time.Hour, true, "10.0.1.10"),
		MkPod(rc2, "notebook-small-worker-k9j8h", "worker", "small", 26*time.Hour, true, "10.0.1.11"),
		MkPod(rc3, "fruit-raycluster-abcde-head-m3n4b", "head", rayv1.RayNodeHeadGroupLabelValue, 40*time.Minute, true, "10.0.2.10"),
		MkPod(rc4, "fruit-raycluster-fghij-head-p0o9i", "head", rayv1.RayNodeHeadGroupLabelValue, 2*time.Minute, true, "10.0.3.10"),
	)
	head := st.PodsOf(watch.ClusterRef{Namespace: "ml", Name: "train-a"})[1]
	st.Add(
		MkEvent(rc1, rayv1.KindRayCluster, "ray.io/v1", "Normal", "CreatedWorkerPod", "Created worker Pod ml/train-a-cpu-worker-c2v7t", 90*time.Second),
		MkEvent(rc1, rayv1.KindRayCluster, "ray.io/v1", "Normal", "CreatedHeadPod", "Created head Pod ml/train-a-head-x7k2p", 3*time.Hour),
		MkEvent(head, "Pod", "v1", "Warning", "FailedScheduling", "0/20 nodes are available: insufficient cpu", 80*time.Second),
	)

	j1 := &rayv1.RayJob{ObjectMeta: OM("ml", "nightly-eval", 50*time.Minute, nil)}
	j1.Spec.Entrypoint = "python eval.py --epochs 3"
	j1.Spec.SubmissionMode = rayv1.K8sJobMode
	j1.Status = rayv1.RayJobStatus{JobId: "nightly-eval-8f3k2", RayClusterName: "train-a", JobStatus: rayv1.JobStatusRunning,
		JobDeploymentStatus: rayv1.JobDeploymentStatusRunning, StartTime: ptr.To(Ago(45 * time.Minute))}
	j2 := &rayv1.RayJob{ObjectMeta: OM("ml", "backfill", 5*time.Hour, nil)}
	j2.Status = rayv1.RayJobStatus{JobId: "backfill-1", RayClusterName: "backfill-raycluster-q8w7e", JobStatus: rayv1.JobStatusFailed,
		JobDeploymentStatus: rayv1.JobDeploymentStatusFailed, Reason: rayv1.AppFailed, Message: "Job entrypoint command failed with exit code 1",
		StartTime: ptr.To(Ago(5 * time.Hour)), EndTime: ptr.To(Ago(4 * time.Hour))}
	st.Add(j1, j2)

	svc := &rayv1.RayService{ObjectMeta: OM("serve", "fruit", 2*time.Hour, nil)}
	svc.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.NewCluster)}
	apps := func(status string) map[string]rayv1.AppStatus {
		return map[string]rayv1.AppStatus{"fruit_app": {Status: status, Deployments: map[string]rayv1.ServeDeploymentStatus{
			"FruitMarket": {Status: rayv1.DeploymentStatusHealthy}, "MangoStand": {Status: rayv1.DeploymentStatusHealthy},
		}}, "math_app": {Status: rayv1.ApplicationStatusRunning, Deployments: map[string]rayv1.ServeDeploymentStatus{
			"Adder": {Status: rayv1.DeploymentStatusHealthy},
		}}}
	}
	pending := apps(rayv1.ApplicationStatusDeploying)
	pending["fruit_app"].Deployments["MangoStand"] = rayv1.ServeDeploymentStatus{Status: rayv1.DeploymentStatusUpdating, Message: "Deploying 1 replica"}
	svc.Status = rayv1.RayServiceStatuses{
		ServiceStatus: rayv1.Running, NumServeEndpoints: 2,
		Conditions: []metav1.Condition{
			Cond(string(rayv1.RayServiceReady), "True", string(rayv1.NonZeroServeEndpoints)),
			Cond(string(rayv1.UpgradeInProgress), "True", string(rayv1.BothActivePendingClustersExist)),
		},
		ActiveServiceStatus:  rayv1.RayServiceStatus{RayClusterName: "fruit-raycluster-abcde", Applications: apps(rayv1.ApplicationStatusRunning)},
		PendingServiceStatus: rayv1.RayServiceStatus{RayClusterName: "fruit-raycluster-fghij", Applications: pending},
	}
	svc2 := &rayv1.RayService{ObjectMeta: OM("serve", "llm", 10*time.Minute, nil)}
	svc2.Status.Conditions = []metav1.Condition{Cond(string(rayv1.RayServiceReady), "False", string(rayv1.RayServiceInitializing))}
	st.Add(svc, svc2)
	return st
}

// CronFixture is Fixture() with RayCronJobs and the RayJobs they created:
// a nightly one in Berlin (three runs, the middle one failed), one that
// fires every minute (one run going), a suspended weekly one and one
// whose time zone is invalid. Fixture() itself stays as it is, so the
// other views' goldens do not move.
func CronFixture() *watch.Store {
	st := Fixture()
	cron := func(ns, name, schedule, tz string, created time.Duration) *rayv1.RayCronJob {
		c := &rayv1.RayCronJob{ObjectMeta: OM(ns, name, created, nil)}
		c.Spec.Schedule = schedule
		if tz != "" {
			c.Spec.TimeZone = ptr.To(tz)
		}
		c.Spec.JobTemplate = rayv1.RayJobSpec{Entrypoint: "python " + name + ".py", RayClusterSpec: ptr.To(ClusterSpec(1)),
			ShutdownAfterJobFinishes: true}
		c.Status.Conditions = []metav1.Condition{Cond(rayv1.RayCronJobScheduleValid, "True", rayv1.RayCronJobReasonValid)}
		return c
	}
	// tick is the RayJob of cj's tick at, as the reconciler creates it.
	tick := func(cj *rayv1.RayCronJob, at time.Time, status rayv1.JobStatus, dep rayv1.JobDeploymentStatus, ran time.Duration) *rayv1.RayJob {
		j := rayv1.CronJobTickJob(cj, at)
		j.UID = types.UID(j.Namespace + "-" + j.Name)
		j.CreationTimestamp = metav1.NewTime(at)
		j.Status = rayv1.RayJobStatus{JobStatus: status, JobDeploymentStatus: dep, RayClusterName: j.Name + "-raycluster",
			JobId: j.Name + "-id", StartTime: ptr.To(metav1.NewTime(at.Add(time.Minute)))}
		if status.IsTerminal() {
			j.Status.EndTime = ptr.To(metav1.NewTime(at.Add(time.Minute + ran)))
		}
		return j
	}
	// 02:00 in Berlin (CET) is 01:00 UTC: the last run was 11h ago.
	nightly := cron("ml", "nightly-train", "0 2 * * *", "Europe/Berlin", 30*24*time.Hour)
	today := time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	nightly.Status.LastScheduleTime = ptr.To(metav1.NewTime(today))
	ok1 := tick(nightly, today, rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, 40*time.Minute)
	failed := tick(nightly, today.Add(-24*time.Hour), rayv1.JobStatusFailed, rayv1.JobDeploymentStatusFailed, 3*time.Minute)
	failed.Status.Reason = rayv1.AppFailed
	failed.Status.Message = "Job entrypoint command failed with exit code 1: CUDA out of memory"
	ok3 := tick(nightly, today.Add(-48*time.Hour), rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, 38*time.Minute)

	minutely := cron("ml", "every-minute", "* * * * *", "UTC", 2*time.Hour)
	// The tick of 12:00 (now) has just created its RayJob; 11:59's ran.
	minutely.Status.LastScheduleTime = ptr.To(metav1.NewTime(FixedNow))
	starting := tick(minutely, FixedNow, rayv1.JobStatusNew, rayv1.JobDeploymentStatusInitializing, 0)
	starting.Status.StartTime, starting.Status.JobId = nil, ""
	ran := tick(minutely, FixedNow.Add(-time.Minute), rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, -20*time.Second)

	weekly := cron("serve", "weekly-report", "@weekly", "", 10*24*time.Hour)
	weekly.Spec.Suspend = ptr.To(true)

	bad := cron("serve", "bad-zone", "30 9 * * 1-5", "Mars/Olympus", 5*time.Minute)
	bad.Status.Conditions = []metav1.Condition{{Type: rayv1.RayCronJobScheduleValid, Status: metav1.ConditionFalse,
		Reason: rayv1.RayCronJobReasonInvalidTimeZone, Message: `spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone`}}

	st.Add(nightly, minutely, weekly, bad, ok1, failed, ok3, starting, ran)
	return st
}

// ClusterSpec is a small valid cluster: a head and one worker group.
func ClusterSpec(workers int32) rayv1.RayClusterSpec {
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}
	ctr := func(name string) []corev1.Container {
		return []corev1.Container{{Name: name, Image: "rayproject/ray:2.52.0", Resources: res}}
	}
	return rayv1.RayClusterSpec{
		RayVersion: "2.52.0",
		HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: ctr("ray-head")}}},
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "cpu", Replicas: ptr.To(workers),
			MinReplicas: ptr.To[int32](0), MaxReplicas: ptr.To[int32](8), RayStartParams: map[string]string{},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: ctr("ray-worker")}}}},
	}
}

// MkNode is a Ready node with 32 CPUs, 128Gi and gpus nvidia.com/gpu.
func MkNode(name string, gpus int64) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-" + name)}}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi")}
	if gpus > 0 {
		n.Status.Allocatable["nvidia.com/gpu"] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	return n
}

// LogLines returns n numbered log lines, from from on.
func LogLines(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "2026-03-01 11:%02d:%02d INFO worker.py:%d -- step %d loss=%.4f\n", i/60%60, i%60, 100+i, i, 1/float64(i))
	}
	return b.String()
}
