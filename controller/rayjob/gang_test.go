package rayjob

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/raydar/raydar/controller/batchscheduler/volcano"
	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func withVolcano(o *Observed) { o.Config.Build.Scheduler = volcano.Scheduler{} }

// Initializing with --batch-scheduler volcano: the RayJob's PodGroup
// (the cluster and the submitter's resources) before its cluster, which
// in K8sJobMode names it; the submitter's pod template is in the gang.
func TestRayJobVolcanoInitializing(t *testing.T) {
	init := inPhase(rayv1.JobDeploymentStatusInitializing, "")
	queue := func(j *rayv1.RayJob) { j.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "q"} }
	p := Decide(observe(newJob(init, mode(rayv1.K8sJobMode), queue), fixture.T0.Add(time.Second), withVolcano))
	g, ok := p.CreateGroup.(*volcanov1beta1.PodGroup)
	// head 2 CPU 4Gi + the default submitter's requests 500m 200Mi.
	if !ok || g.Name != "ray-rj-pg" || g.Spec.MinMember != 1 || g.Spec.Queue != "q" ||
		g.Spec.MinResources.Cpu().String() != "2500m" || g.Spec.MinResources.Memory().String() != "4296Mi" {
		t.Fatalf("group %+v", p.CreateGroup)
	}
	c := p.CreateCluster
	if c == nil || c.Annotations[volcano.GroupNameAnnotationKey] != "ray-rj-pg" || c.Labels[rayv1.VolcanoQueueNameLabelKey] != "q" {
		t.Fatalf("cluster %+v", c)
	}

	// SidecarMode: the cluster carries nothing of Volcano's (KubeRay
	// decorates it in K8sJobMode only); its pods still name the RayJob's
	// PodGroup (controller/raycluster).
	p = Decide(observe(newJob(init, mode(rayv1.SidecarMode)), fixture.T0.Add(time.Second), withVolcano))
	if p.CreateGroup == nil || p.CreateCluster == nil || p.CreateCluster.Annotations[volcano.GroupNameAnnotationKey] != "" {
		t.Fatalf("sidecar: group %v cluster annotations %v", p.CreateGroup, p.CreateCluster.Annotations)
	}

	// The submitter Job, once the cluster is ready.
	o := observe(newJob(init, mode(rayv1.K8sJobMode)), fixture.T0.Add(time.Second), withVolcano, withCluster(newCluster(true)))
	o.Group = g
	p = Decide(o)
	if p.CreateGroup != nil || p.UpdateGroup != nil {
		t.Errorf("PodGroup unchanged, yet create %v update %v", p.CreateGroup, p.UpdateGroup)
	}
	tmpl := p.CreateSubmitter.Spec.Template
	if tmpl.Spec.SchedulerName != "volcano" || tmpl.Annotations[volcano.GroupNameAnnotationKey] != "ray-rj-pg" ||
		tmpl.Annotations[volcano.TaskSpecAnnotationKey] != "submittergroup" {
		t.Errorf("submitter template %v %q", tmpl.Annotations, tmpl.Spec.SchedulerName)
	}
}

// A clusterSelector RayJob cannot be gang-scheduled: KubeRay v1.6.2
// refuses it on every pass and it goes no further.
func TestRayJobVolcanoRefusesClusterSelector(t *testing.T) {
	j := newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), selector("shared"))
	p := Decide(observe(j, fixture.T0.Add(time.Second), withVolcano, withCluster(newCluster(true))))
	if p.CreateGroup != nil || p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing ||
		!hasEvent(p, rayv1.EventFailedToCreateRayCluster, "gang scheduling does not support RayJob ns/rj referencing an existing RayCluster") {
		t.Fatalf("status %+v events %s", p.Status, eventsOf(p))
	}
}

// Finished: the PodGroup is brought to what the cluster still holds, and
// that is said once it changed.
func TestRayJobVolcanoFinished(t *testing.T) {
	j := newJob(inPhase(rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded), mode(rayv1.K8sJobMode))
	running, _ := volcano.Scheduler{}.JobGroup(j)
	o := observe(j, fixture.T0.Add(2*time.Minute), withVolcano)
	o.Group = running
	p := Decide(o)
	g, ok := p.UpdateGroup.(*volcanov1beta1.PodGroup)
	if !ok || g.Spec.MinMember != 0 || len(*g.Spec.MinResources) != 0 || !p.GroupCleanup {
		t.Fatalf("cluster gone: update %+v cleanup %v", p.UpdateGroup, p.GroupCleanup)
	}
	o.Group = g
	if p := Decide(o); p.UpdateGroup != nil || p.CreateGroup != nil || p.GroupCleanup {
		t.Errorf("again: %+v", p)
	}
}

// The pass that finishes the RayJob cleans its PodGroup up: raydar's
// status write brings no other pass.
func TestRayJobVolcanoFinishingPassCleansUp(t *testing.T) {
	j := newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning))
	running, _ := volcano.Scheduler{}.JobGroup(j)
	o := observe(j, fixture.T0.Add(time.Minute), withVolcano, withCluster(newCluster(true)), withDash(info(dashboard.JobSucceeded)))
	o.Group = running
	p := Decide(o)
	if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete {
		t.Fatalf("status %s", p.Status.JobDeploymentStatus)
	}
	// The cluster alone: the HTTPMode job had no submitter pod, so nothing changes.
	if p.UpdateGroup != nil || p.GroupCleanup {
		t.Fatalf("HTTPMode: update %+v", p.UpdateGroup)
	}
	k8s := newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning), mode(rayv1.K8sJobMode))
	running, _ = volcano.Scheduler{}.JobGroup(k8s)
	o = observe(k8s, fixture.T0.Add(time.Minute), withVolcano, withCluster(newCluster(true)), withDash(info(dashboard.JobSucceeded)),
		withSubmitter(submitterJob(batchv1.JobComplete, fixture.T0.Add(50*time.Second))))
	o.Group = running
	p = Decide(o)
	g, ok := p.UpdateGroup.(*volcanov1beta1.PodGroup)
	if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete || !ok || !p.GroupCleanup ||
		g.Spec.MinResources.Cpu().String() != "2" {
		t.Fatalf("K8sJobMode: status %s update %+v", p.Status.JobDeploymentStatus, p.UpdateGroup)
	}
}
