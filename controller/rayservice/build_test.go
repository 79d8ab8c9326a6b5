package rayservice

import (
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/raycluster"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The pods of a RayService's cluster get their initial ray.io/serve label
// from the pod builder, as KubeRay v1.7.0's common/pod.go BuildPod sets it
// for clusters labelled ray.io/originated-from-crd: RayService (over the
// template's own value): the head "false" until its proxy answers, workers
// "true". Other clusters' pods get none; the cluster's spec stays as the
// user wrote it.
func TestBuildPodRayServiceServeLabel(t *testing.T) {
	for _, tc := range []struct {
		name       string
		crd        string
		template   string // the templates' own ray.io/serve; "" for none
		wantHead   string // "" for absent
		wantWorker string
	}{
		{name: "RayService cluster", crd: rayv1.KindRayService, wantHead: "false", wantWorker: "true"},
		{name: "RayService cluster, the template's value is overridden", crd: rayv1.KindRayService, template: "maybe", wantHead: "false", wantWorker: "true"},
		{name: "RayJob cluster", crd: rayv1.KindRayJob},
		{name: "plain RayCluster", crd: ""},
		{name: "plain RayCluster keeps the template's label", crd: "", template: "x", wantHead: "x", wantWorker: "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := fixture.Cluster("c", fixture.Group("g", 1))
			if tc.crd != "" {
				rc.Labels = map[string]string{rayv1.RayOriginatedFromCRDLabelKey: tc.crd, rayv1.RayOriginatedFromCRNameLabelKey: "svc"}
			}
			if tc.template != "" {
				rc.Spec.HeadGroupSpec.Template.Labels = map[string]string{rayv1.RayClusterServingServiceLabelKey: tc.template}
				rc.Spec.WorkerGroupSpecs[0].Template.Labels = map[string]string{rayv1.RayClusterServingServiceLabelKey: tc.template}
			}
			before := rc.DeepCopy()
			head := raycluster.BuildPod(rc, raycluster.PodBuild{Name: "c-head-x", Head: true}, "h", raycluster.DefaultBuildConfig())
			worker := raycluster.BuildPod(rc, raycluster.PodBuild{Name: "c-g-worker-x", Group: &rc.Spec.WorkerGroupSpecs[0]}, "h", raycluster.DefaultBuildConfig())
			label := func(l map[string]string) string { return l[rayv1.RayClusterServingServiceLabelKey] }
			if _, ok := head.Labels[rayv1.RayClusterServingServiceLabelKey]; label(head.Labels) != tc.wantHead || ok != (tc.wantHead != "") {
				t.Errorf("head ray.io/serve %q (present %v), want %q", label(head.Labels), ok, tc.wantHead)
			}
			if _, ok := worker.Labels[rayv1.RayClusterServingServiceLabelKey]; label(worker.Labels) != tc.wantWorker || ok != (tc.wantWorker != "") {
				t.Errorf("worker ray.io/serve %q (present %v), want %q", label(worker.Labels), ok, tc.wantWorker)
			}
			if label(rc.Spec.HeadGroupSpec.Template.Labels) != label(before.Spec.HeadGroupSpec.Template.Labels) ||
				label(rc.Spec.WorkerGroupSpecs[0].Template.Labels) != label(before.Spec.WorkerGroupSpecs[0].Template.Labels) {
				t.Error("the cluster's templates were modified")
			}
		})
	}
}
