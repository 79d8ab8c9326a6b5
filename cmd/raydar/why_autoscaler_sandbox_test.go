package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/kube/sandbox/headsim"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// A worker group at maxReplicas, explained by raydar why: two RayJobs each
// reserve a CPU (entrypointNumCpus 1) on a cluster whose head offers none
// and whose group cpu of 1-CPU workers may grow to 1. The sandbox's
// simulated Ray autoscaler grows the group for one job; the other job's
// entrypoint stays Ray's pending demand, which raydar why names on that job
// (JobDemand: the group is at maxReplicas 1) and on the cluster
// (RayInfeasible), both read from Ray's dashboard.
func TestWhyGroupAtMaxReplicas(t *testing.T) {
	e := newWhyEnvWith(t, needSandbox(t), func(o *headsim.Options) {
		o.Autoscaler = &headsim.AutoscalerOptions{Interval: time.Second}
	})
	ctx := whyStep(t)
	rc := whyCluster(e.ns, "capped")
	v2 := rayv1.AutoscalerVersionV2
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
	rc.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{Version: &v2}
	rc.Spec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
	g := &rc.Spec.WorkerGroupSpecs[0]
	g.Replicas, g.MaxReplicas = ptr.To[int32](0), ptr.To[int32](1)
	one := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	g.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: one, Limits: one}
	create(t, ctx, rc)
	jobs := []string{"first", "second"}
	for _, name := range jobs {
		create(t, ctx, &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
			Spec: rayv1.RayJobSpec{Entrypoint: "python train.py", EntrypointNumCpus: 1, SubmissionMode: rayv1.HTTPMode,
				ClusterSelector: map[string]string{rayv1.RayClusterLabelKey: "capped"},
				Metadata:        map[string]string{"raydar.io/sandbox-duration": "600s"}}})
	}
	// Whichever job the autoscaler's one worker took, the other says why
	// it waits.
	var waiting string
	var last []string
	for waiting == "" && ctx.Err() == nil {
		last = last[:0]
		for _, name := range jobs {
			for _, c := range decodeCauses(t, e.why(t, "job", name, "-o", "json")) {
				last = append(last, name+": "+c.Code+": "+c.Summary)
				if c.Code == "JobDemand" && c.mentions("entrypoint asks {CPU: 1}", "group cpu: it is at maxReplicas 1", "Ray autoscaler: 1 task wants {CPU: 1}") {
					waiting = name
				}
			}
		}
		pollPause(ctx)
	}
	if waiting == "" {
		t.Fatalf("no job names its demand held by group cpu at maxReplicas 1; last causes %q\npods:\n%s", last, e.pods())
	}
	human := e.why(t, "job", waiting)
	t.Logf("raydar why job %s:\n%s", waiting, human.stdout)
	wantHumanLine(t, human.stdout, "JobDemand", "RayJob "+e.ns+"/"+waiting, "maxReplicas 1")
	if strings.Contains(human.stdout, "RayInfeasible") {
		t.Errorf("the job's own demand is stated twice (also as the cluster's RayInfeasible):\n%s", human.stdout)
	}
	_, cluster := e.waitCause(t, ctx, "cluster", "capped", "RayInfeasible", "1 task wants {CPU: 1}", "group cpu: it is at maxReplicas 1")
	wantHumanLine(t, cluster, "RayInfeasible", "maxReplicas 1")
	if got := fmt.Sprint(decodeCauses(t, e.why(t, "cluster", "capped", "-o", "json"))); strings.Contains(got, "Autoscaler") {
		t.Errorf("an autoscaler cause on a cluster whose autoscaler works: %s", got)
	}
}

// An autoscaler refused by RBAC, explained by raydar why: the head runs as
// a ServiceAccount whose Role only lets it get pods (made before the
// cluster, as the operator only creates the autoscaler's Role when
// missing). raydar why asks the API server what that ServiceAccount may do
// and names both refusals; the simulated autoscaler, refused too, leaves
// replicas at 0.
func TestWhyAutoscalerRefusedByRBAC(t *testing.T) {
	e := newWhyEnvWith(t, needSandbox(t), func(o *headsim.Options) {
		o.Autoscaler = &headsim.AutoscalerOptions{Interval: time.Second}
	})
	ctx := whyStep(t)
	create(t, ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "bare"}})
	create(t, ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "refused"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}})
	create(t, ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "refused"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "bare", Namespace: e.ns}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "refused"}})
	rc := whyCluster(e.ns, "refused")
	v2 := rayv1.AutoscalerVersionV2
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
	rc.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{Version: &v2}
	rc.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName = "bare"
	rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](0)
	create(t, ctx, rc)
	c, human := e.waitCause(t, ctx, "cluster", "refused", "AutoscalerForbidden",
		"ServiceAccount bare may not patch rayclusters.ray.io, list pods",
		"SubjectAccessReview: system:serviceaccount:"+e.ns+":bare may not patch rayclusters.ray.io")
	if c.Subject != "ServiceAccount "+e.ns+"/bare" {
		t.Errorf("subject %q, want the ServiceAccount", c.Subject)
	}
	wantHumanLine(t, human, "AutoscalerForbidden", "refused by RBAC", "bare")
	for ctx.Err() == nil { // its first round may come after raydar why's answer
		if st, ok := e.sim.AutoscalerStatus(e.ns, "refused"); ok && st.State == "Forbidden" {
			break
		}
		pollPause(ctx)
	}
	if st, ok := e.sim.AutoscalerStatus(e.ns, "refused"); !ok || st.State != "Forbidden" {
		t.Errorf("the simulated autoscaler is not refused too: %+v (%v)", st, ok)
	}
	if got := e.why(t, "cluster", "refused", "-o", "json"); !strings.Contains(got.stdout, `"code": "AutoscalerForbidden"`) && !strings.Contains(got.stdout, `"code":"AutoscalerForbidden"`) {
		t.Errorf("raydar why -o json has no AutoscalerForbidden code:\n%s", got.stdout)
	}
}
