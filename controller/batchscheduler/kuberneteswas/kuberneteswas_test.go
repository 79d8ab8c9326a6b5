package kuberneteswas

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/raydar/raydar/controller/internal/fixture"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func labelled(groups ...rayv1.WorkerGroupSpec) *rayv1.RayCluster {
	rc := fixture.Cluster("c", groups...)
	rc.Labels = map[string]string{rayv1.RayGangSchedulingEnabled: "True"} // any case
	return rc
}

// The Workload and PodGroup KubeRay v1.7.0 makes: one template "cluster",
// the head and every desired worker (multi-host: replicas × hosts) in the
// gang, controlled by the cluster.
func TestDesired(t *testing.T) {
	g := fixture.Group("tpu", 2)
	g.NumOfHosts = 4
	rc := labelled(fixture.Group("cpu", 3), g)
	wl, pg, err := Desired(rc)
	if err != nil {
		t.Fatal(err)
	}
	if wl.GroupVersionKind() != WorkloadKind || wl.GetName() != "c" || pg.GroupVersionKind() != PodGroupKind || pg.GetName() != "c-cluster" ||
		pg.GetNamespace() != "ns" || pg.GetLabels()[rayv1.RayClusterLabelKey] != "c" {
		t.Errorf("%v %s, %v %s/%s %v", wl.GroupVersionKind(), wl.GetName(), pg.GroupVersionKind(), pg.GetNamespace(), pg.GetName(), pg.GetLabels())
	}
	if n := gangMinCount(pg, "spec", "schedulingPolicy"); n != 1+3+8 {
		t.Errorf("PodGroup minCount %d, want 12", n)
	}
	tmpls, _, _ := unstructured.NestedSlice(wl.Object, "spec", "podGroupTemplates")
	if len(tmpls) != 1 || tmpls[0].(map[string]any)["name"] != "cluster" || gangMinCount(tmpls[0], "schedulingPolicy") != 12 {
		t.Errorf("templates %v", tmpls)
	}
	ref, _, _ := unstructured.NestedStringMap(wl.Object, "spec", "controllerRef")
	wref, _, _ := unstructured.NestedStringMap(pg.Object, "spec", "podGroupTemplateRef", "workload")
	if ref["kind"] != "RayCluster" || ref["apiGroup"] != "ray.io" || ref["name"] != "c" || wref["workloadName"] != "c" || wref["podGroupTemplateName"] != "cluster" {
		t.Errorf("refs %v %v", ref, wref)
	}
	if !metav1.IsControlledBy(wl, rc) || !metav1.IsControlledBy(pg, rc) {
		t.Error("not controlled by the cluster")
	}
}

// Pods of a gang-scheduled cluster name its PodGroup and the default
// scheduler; an unlabelled or autoscaling cluster's, and a RayJob's
// children, get nothing.
func TestDecorate(t *testing.T) {
	rc := labelled(fixture.Group("w", 1))
	pod := &corev1.Pod{Spec: corev1.PodSpec{SchedulerName: "other"}}
	Scheduler{}.Decorate(rc, pod, "w")
	if pod.Spec.SchedulerName != "default-scheduler" || pod.Spec.SchedulingGroup == nil || *pod.Spec.SchedulingGroup.PodGroupName != "c-cluster" {
		t.Errorf("%q %+v", pod.Spec.SchedulerName, pod.Spec.SchedulingGroup)
	}
	rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
	for _, parent := range []metav1.Object{rc, fixture.Cluster("plain"), &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Labels: rc.Labels}}} {
		tmpl := &corev1.PodTemplateSpec{}
		Scheduler{}.Decorate(parent, tmpl, "")
		if tmpl.Spec.SchedulerName != "" || tmpl.Spec.SchedulingGroup != nil {
			t.Errorf("%s: decorated %q %+v", parent.GetName(), tmpl.Spec.SchedulerName, tmpl.Spec.SchedulingGroup)
		}
	}
}

func names(us []*unstructured.Unstructured) string {
	var s []string
	for _, u := range us {
		s = append(s, u.GetKind()+"/"+u.GetName())
	}
	return strings.Join(s, ",")
}

// Plan follows KubeRay's DoBatchSchedulingOnSubmission on each state of
// the two objects.
func TestPlan(t *testing.T) {
	rc := labelled(fixture.Group("w", 2))
	wl, pg, _ := Desired(rc)
	scaled := rc.DeepCopy()
	scaled.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(5))
	staleWL, stalePG, _ := Desired(scaled)
	protected := pg.DeepCopy()
	protected.SetFinalizers([]string{ProtectionFinalizer})
	staleProtected := stalePG.DeepCopy()
	staleProtected.SetFinalizers([]string{"other", ProtectionFinalizer})
	foreign := pg.DeepCopy()
	foreign.SetOwnerReferences(nil)
	deleting := protected.DeepCopy()
	now := metav1.Now()
	deleting.SetDeletionTimestamp(&now)
	unlabelled := rc.DeepCopy()
	unlabelled.Labels = nil
	autoscaling := rc.DeepCopy()
	autoscaling.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)

	for _, tc := range []struct {
		name                     string
		rc                       *rayv1.RayCluster
		wl, pg                   *unstructured.Unstructured
		unprotect, del, create   string
		held                     bool
		errHas                   string
		unprotectedHasFinalizers []string
	}{
		{name: "none: both made, Workload first", rc: rc, create: "Workload/c,PodGroup/c-cluster"},
		{name: "in place", rc: rc, wl: wl, pg: protected},
		{name: "PodGroup missing", rc: rc, wl: wl, create: "PodGroup/c-cluster"},
		{name: "scaled: the stale PodGroup goes before the Workload", rc: rc, wl: staleWL, pg: staleProtected,
			unprotect: "PodGroup/c-cluster", del: "PodGroup/c-cluster", held: true, unprotectedHasFinalizers: []string{"other"}},
		{name: "scaled, PodGroup gone: the Workload goes", rc: rc, wl: staleWL, del: "Workload/c", held: true},
		{name: "stale PodGroup alone", rc: rc, wl: wl, pg: stalePG, del: "PodGroup/c-cluster", held: true},
		{name: "PodGroup being deleted: its finalizer only", rc: rc, wl: wl, pg: deleting, unprotect: "PodGroup/c-cluster", held: true},
		{name: "a foreign PodGroup", rc: rc, wl: wl, pg: foreign, held: true, errHas: "PodGroup ns/c-cluster already exists and is not owned by this RayCluster"},
		{name: "unlabelled, nothing there", rc: unlabelled},
		{name: "unlabelled: the PodGroup goes first, pods wait", rc: unlabelled, wl: wl, pg: protected,
			unprotect: "PodGroup/c-cluster", del: "PodGroup/c-cluster", held: true},
		{name: "autoscaling: then the Workload", rc: autoscaling, wl: wl, del: "Workload/c"},
		{name: "unlabelled: a foreign PodGroup is left alone", rc: unlabelled, pg: foreign},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Plan(tc.rc, tc.wl, tc.pg)
			if got := names(s.Unprotect); got != tc.unprotect {
				t.Errorf("unprotect %q, want %q", got, tc.unprotect)
			}
			if got := names(s.Delete); got != tc.del {
				t.Errorf("delete %q, want %q", got, tc.del)
			}
			if got := names(s.Create); got != tc.create {
				t.Errorf("create %q, want %q", got, tc.create)
			}
			if s.Held() != tc.held {
				t.Errorf("held %t (%q, %v), want %t", s.Held(), s.Hold, s.Err, tc.held)
			}
			if tc.errHas != "" && (s.Err == nil || !strings.Contains(s.Err.Error(), tc.errHas)) {
				t.Errorf("err %v, want %q", s.Err, tc.errHas)
			}
			if tc.unprotectedHasFinalizers != nil && strings.Join(s.Unprotect[0].GetFinalizers(), ",") != strings.Join(tc.unprotectedHasFinalizers, ",") {
				t.Errorf("finalizers left %v", s.Unprotect[0].GetFinalizers())
			}
		})
	}
}
