package actions_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/raydar/raydar/kube/actions"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// effects is ClassifyEdit's answer as "path=effect" lines.
func effects(t *testing.T, before, after client.Object) []string {
	t.Helper()
	cs, err := actions.ClassifyEdit(before, after)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		out = append(out, c.Path+"="+string(c.Effect))
	}
	return out
}

func TestClassifyEditRayCluster(t *testing.T) {
	base := cluster("ns", "c", group("small", 0, 1, 4))
	base.Status.ReadyWorkerReplicas = 1 // the status is no change of the edit
	edit := base.DeepCopy()
	edit.Status = rayv1.RayClusterStatus{}
	edit.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3)
	edit.Spec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	edit.Labels = map[string]string{"team": "ml", "app.kubernetes.io/name": "x"}
	want := []string{
		"metadata.labels.team=applied",
		"metadata.labels[app.kubernetes.io/name]=applied",
		"spec.headGroupSpec.template.spec.containers[0].image=not-on-running",
		"spec.workerGroupSpecs[0].replicas=applied",
	}
	if d := cmp.Diff(want, effects(t, base, edit)); d != "" {
		t.Errorf("ClassifyEdit (-want +got):\n%s", d)
	}

	// With upgradeStrategy Recreate, the same image change recreates every pod.
	rec := base.DeepCopy()
	rec.Spec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: ptr.To(rayv1.RayClusterRecreate)}
	edit2 := rec.DeepCopy()
	edit2.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	edit2.Spec.WorkerGroupSpecs = append(edit2.Spec.WorkerGroupSpecs, group("big", 0, 0, 2))
	want = []string{"spec.workerGroupSpecs=applied"}
	if d := cmp.Diff(want, effects(t, rec, edit2)); d != "" {
		t.Errorf("a group added (-want +got):\n%s", d)
	}
	edit2.Spec.WorkerGroupSpecs = edit2.Spec.WorkerGroupSpecs[:1]
	want = []string{"spec.workerGroupSpecs[0].template.spec.containers[0].image=recreate"}
	if d := cmp.Diff(want, effects(t, rec, edit2)); d != "" {
		t.Errorf("Recreate (-want +got):\n%s", d)
	}
}

func TestClassifyEditRayJobBeforeAndAfterItStarted(t *testing.T) {
	j := rayJob("ns", "j", true)
	edit := j.DeepCopy()
	edit.Spec.Entrypoint = "python train.py"
	edit.Spec.ActiveDeadlineSeconds = ptr.To[int32](600)
	if d := cmp.Diff([]string{"spec.activeDeadlineSeconds=applied", "spec.entrypoint=applied"}, effects(t, j, edit)); d != "" {
		t.Errorf("a RayJob not started yet (-want +got):\n%s", d)
	}
	j.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
	if d := cmp.Diff([]string{"spec.activeDeadlineSeconds=applied", "spec.entrypoint=not-on-running"}, effects(t, j, edit)); d != "" {
		t.Errorf("a running RayJob (-want +got):\n%s", d)
	}
	j.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusSuspended
	if d := cmp.Diff([]string{"spec.activeDeadlineSeconds=applied", "spec.entrypoint=applied"}, effects(t, j, edit)); d != "" {
		t.Errorf("a suspended RayJob (-want +got):\n%s", d)
	}
}

func TestClassifyEditRayService(t *testing.T) {
	s := rayService("ns", "s")
	edit := s.DeepCopy()
	edit.Spec.RayClusterSpec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](2)
	edit.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	edit.Spec.ServeConfigV2 = "applications: []"
	want := []string{
		"spec.rayClusterConfig.headGroupSpec.template.spec.containers[0].image=new-cluster",
		"spec.rayClusterConfig.workerGroupSpecs[0].replicas=not-on-running",
		"spec.serveConfigV2=applied",
	}
	if d := cmp.Diff(want, effects(t, s, edit)); d != "" {
		t.Errorf("ClassifyEdit (-want +got):\n%s", d)
	}
	edit.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.None)}
	s.Spec.UpgradeStrategy = edit.Spec.UpgradeStrategy
	want[0] = "spec.rayClusterConfig.headGroupSpec.template.spec.containers[0].image=not-on-running"
	if d := cmp.Diff(want, effects(t, s, edit)); d != "" {
		t.Errorf("upgradeStrategy None (-want +got):\n%s", d)
	}
}

func TestClassifyEditRayCronJob(t *testing.T) {
	cj := rayCronJob("ns", "cj")
	edit := cj.DeepCopy()
	edit.Spec.Schedule = "*/5 * * * *"
	edit.Spec.JobTemplate.Entrypoint = "python nightly.py"
	want := []string{"spec.jobTemplate.entrypoint=next-run", "spec.schedule=applied"}
	if d := cmp.Diff(want, effects(t, cj, edit)); d != "" {
		t.Errorf("ClassifyEdit (-want +got):\n%s", d)
	}
}

func TestPlanEditSaysWhatWillNotTakeEffect(t *testing.T) {
	base := cluster("ns", "c", group("small", 0, 1, 4))
	edit := base.DeepCopy()
	edit.Spec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	edit.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](2)
	p, err := actions.PlanEdit(base, edit, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Join(p.Lines(), "\n")
	for _, want := range []string{
		"edit RayCluster ns/c",
		"  spec.workerGroupSpecs[0].replicas (applied)",
		"warning: these changes will not take effect on running pods: spec.headGroupSpec.template.spec.containers[0].image;",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("plan lines lack %q:\n%s", want, lines)
		}
	}
	// Scaling alone warns of nothing.
	edit.Spec.HeadGroupSpec = base.Spec.HeadGroupSpec
	if p, err = actions.PlanEdit(base, edit, nil); err != nil || len(p.Warnings) != 0 {
		t.Errorf("scaling only: warnings %q, err %v; want none", p.Warnings, err)
	}
}

func TestPlanEditSaysWhatRaydarRefuses(t *testing.T) {
	base := cluster("ns", "c", group("small", 0, 1, 4))
	edit := base.DeepCopy()
	edit.Spec.EnableInTreeAutoscaling = ptr.To(true)
	refused := func(obj client.Object) field.ErrorList {
		if rc := obj.(*rayv1.RayCluster); rc.Spec.EnableInTreeAutoscaling != nil && *rc.Spec.EnableInTreeAutoscaling {
			return field.ErrorList{field.NotSupported(field.NewPath("spec", "enableInTreeAutoscaling"), true, []string{"false"})}
		}
		return nil
	}
	p, err := actions.PlanEdit(base, edit, refused)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Warnings, "\n"); !strings.Contains(got, "raydar refuses spec.enableInTreeAutoscaling: Unsupported value: true") {
		t.Errorf("warnings %q do not say raydar refuses the field", got)
	}
}

func TestPlanEditRefuses(t *testing.T) {
	base := cluster("ns", "c", group("small", 0, 1, 4))
	for _, tc := range []struct {
		name, want string
		edit       func(*rayv1.RayCluster)
	}{
		{"rename", "metadata.name: Invalid value: \"d\": cannot be changed", func(c *rayv1.RayCluster) { c.Name = "d" }},
		{"namespace", "metadata.namespace: Invalid value: \"other\"", func(c *rayv1.RayCluster) { c.Namespace = "other" }},
		{"a spec rule", "spec.workerGroupSpecs[0].minReplicas: Invalid value: 5: must be <= maxReplicas (4)", func(c *rayv1.RayCluster) { c.Spec.WorkerGroupSpecs[0].MinReplicas = ptr.To[int32](5) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edit := base.DeepCopy()
			tc.edit(edit)
			_, err := actions.PlanEdit(base, edit, nil)
			if !errors.Is(err, actions.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("PlanEdit = %v, want an invalid error with %q", err, tc.want)
			}
		})
	}
}

func TestEditPatchCarriesTheResourceVersion(t *testing.T) {
	base := cluster("ns", "c", group("small", 0, 1, 4))
	base.ResourceVersion = "42"
	base.Status.ReadyWorkerReplicas = 1
	edit := base.DeepCopy()
	edit.Status = rayv1.RayClusterStatus{}
	edit.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3)
	b, err := actions.EditPatch(base, edit)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"metadata": map[string]any{"resourceVersion": "42"},
		// A merge patch replaces lists whole.
		"spec": map[string]any{"workerGroupSpecs": got["spec"].(map[string]any)["workerGroupSpecs"]},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("patch (-want +got):\n%s", d)
	}
	if _, ok := got["status"]; ok {
		t.Errorf("the patch touches the status: %s", b)
	}
}

func TestEditApplies(t *testing.T) {
	h := newHarness(t, actions.Options{}, interceptor.Funcs{}, cluster("ns", "c", group("small", 0, 1, 4)))
	base := h.cluster(t, "ns", "c")
	edit := base.DeepCopy()
	edit.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3)
	r, err := h.a.Edit(context.Background(), base, edit)
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != actions.OutcomeApplied || r.Action != actions.ActionEdit {
		t.Errorf("result %s %s, want edit applied", r.Action, r.Outcome)
	}
	if got := *h.cluster(t, "ns", "c").Spec.WorkerGroupSpecs[0].Replicas; got != 3 {
		t.Errorf("replicas %d after the edit, want 3", got)
	}
	au := readAudit(t, h.audit)
	if len(au) != 1 || au[0].Action != actions.ActionEdit || !strings.Contains(string(au[0].Details), "spec.workerGroupSpecs[0].replicas") {
		t.Errorf("audit %+v, want one edit line naming the field", au)
	}
	if len(h.rec.got) != 1 || h.rec.got[0].Reason != actions.ReasonEdited {
		t.Errorf("events %+v, want one %s", h.rec.got, actions.ReasonEdited)
	}

	// Edited again from the old base: 409, not laid over the new version.
	_, err = h.a.Edit(context.Background(), base, edit)
	if !apierrors.IsConflict(err) {
		t.Errorf("an edit of a stale version: %v, want a conflict", err)
	}
}

func TestEditReadOnlySendsNothing(t *testing.T) {
	calls := 0
	count := interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, o ...client.PatchOption) error {
			calls++
			return c.Patch(ctx, obj, p, o...)
		},
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object, o ...client.GetOption) error {
			calls++
			return c.Get(ctx, k, obj, o...)
		},
	}
	base := cluster("ns", "c", group("small", 0, 1, 4))
	h := newHarness(t, actions.Options{ReadOnly: true}, count, base)
	edit := base.DeepCopy()
	edit.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3)
	_, err := h.a.Edit(context.Background(), base, edit)
	if !errors.Is(err, actions.ErrReadOnly) || calls != 0 {
		t.Errorf("read-only edit: %v after %d requests, want a read-only refusal and none", err, calls)
	}
}
