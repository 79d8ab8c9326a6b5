package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Edit: a whole object as the person edited it (kube/edit: `e` and
// `raydar edit`), written as kubectl edit writes it: one JSON merge patch
// from the object the editor was opened on to the edited one, carrying the
// resourceVersion the editor was opened on (a 409 when the object changed
// meanwhile: the edit is never laid over a version the person did not
// see). A conflict is not retried here: the editor reopens on the new
// version (kube/edit).

// Effect is what the operator does with one changed field of an edit.
type Effect string

// The effects, from harmless to surprising.
const (
	// EffectApplied: the operator acts on the change (scaling, suspend,
	// metadata, the schedule of a RayCronJob, …).
	EffectApplied Effect = "applied"
	// EffectNextRun: a RayCronJob's jobTemplate: the RayJobs it creates
	// from now on get it; those it created keep theirs.
	EffectNextRun Effect = "next-run"
	// EffectNotRunning: kept in the spec, but the running pods (or the
	// running job) do not get it: only what is created from now on.
	EffectNotRunning Effect = "not-on-running"
	// EffectRecreate: every pod of the RayCluster is deleted and created
	// afresh (upgradeStrategy Recreate).
	EffectRecreate Effect = "recreate"
	// EffectNewCluster: a RayService prepares a new RayCluster and moves
	// the traffic to it (its zero-downtime upgrade).
	EffectNewCluster Effect = "new-cluster"
)

// EditChange is one changed field of an edit and what it does.
type EditChange struct {
	// Path is the field, as Kubernetes names fields:
	// spec.workerGroupSpecs[0].replicas, metadata.labels.team,
	// metadata.annotations[ray.io/ft-enabled].
	Path   string `json:"path"`
	Effect Effect `json:"effect"`
}

// EditPlan is the preview of Edit: what changed, what the operator will
// do with each change, and what it will not do (warnings).
type EditPlan struct {
	Kind      Kind   `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// ResourceVersion is the version the editor was opened on: the write
	// fails with a conflict when the object is at another.
	ResourceVersion string       `json:"resourceVersion,omitempty"`
	Changes         []EditChange `json:"changes,omitempty"`
	// Unchanged: the edited object is the one the editor was opened on.
	Unchanged bool `json:"unchanged,omitempty"`
	// Warnings say, before applying, what will not happen as one may
	// expect: fields that do not reach running pods, pods recreated,
	// fields raydar refuses.
	Warnings []string `json:"warnings,omitempty"`
}

// Lines implements Plan.
func (p *EditPlan) Lines() []string {
	l := []string{fmt.Sprintf("edit %s %s/%s", p.Kind, p.Namespace, p.Name)}
	if p.Unchanged {
		return append(l, "no change: the edited object is the one read")
	}
	for _, c := range p.Changes {
		l = append(l, fmt.Sprintf("  %s (%s)", c.Path, c.Effect))
	}
	return appendWarnings(l, p.Warnings)
}

// Paths are the changed fields with the given effect.
func (p *EditPlan) Paths(e Effect) []string {
	var out []string
	for _, c := range p.Changes {
		if c.Effect == e {
			out = append(out, c.Path)
		}
	}
	return out
}

// Unsupported lists the fields of obj the running operator refuses (it
// holds the object back with a condition and an Event until they are
// fixed): controller/raycluster's UnsupportedRayCluster and its kin. The
// caller (cmd) wires it, as kube may not import the controllers.
type Unsupported func(obj client.Object) field.ErrorList

// PlanEdit validates edited against before (the object the editor was
// opened on) and previews the edit. Pure. It refuses (an *InvalidError
// naming the fields) a changed kind, name or namespace and what breaks a
// rule of rayapi/v1 validation that before did not break; it warns of the
// fields the operator does not act on for what already runs (ClassifyEdit)
// and of the fields unsupported (nil: none) says raydar refuses.
func PlanEdit(before, edited client.Object, unsupported Unsupported) (*EditPlan, error) {
	kind, err := kindOf(before)
	if err != nil {
		return nil, err
	}
	p := &EditPlan{Kind: kind, Namespace: before.GetNamespace(), Name: before.GetName(), ResourceVersion: before.GetResourceVersion()}
	if reflect.TypeOf(before) != reflect.TypeOf(edited) {
		return nil, invalidf("kind: the edited object is a %T, not a %s", edited, kind)
	}
	var errs field.ErrorList
	if edited.GetName() != before.GetName() {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), edited.GetName(), "cannot be changed (a new name is a new object; the name was "+before.GetName()+")"))
	}
	if edited.GetNamespace() != before.GetNamespace() {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), edited.GetNamespace(), "cannot be changed (it was "+before.GetNamespace()+")"))
	}
	if len(errs) > 0 {
		return nil, &InvalidError{Reason: fmt.Sprintf("%s %s/%s cannot be saved", kind, p.Namespace, p.Name), Fields: errs}
	}
	if bad := introduced(validate(before), validate(edited)); len(bad) > 0 {
		return nil, &InvalidError{Reason: fmt.Sprintf("%s %s/%s is not valid", kind, p.Namespace, p.Name), Fields: bad}
	}
	p.Changes, err = ClassifyEdit(before, edited)
	if err != nil {
		return nil, err
	}
	p.Unchanged = len(p.Changes) == 0
	p.Warnings = editWarnings(edited, p)
	if unsupported != nil {
		for _, e := range introduced(unsupported(before), unsupported(edited)) {
			p.Warnings = append(p.Warnings, "raydar refuses "+e.Error()+": its operator holds the "+kind.Kind+" back (nothing created or deleted) until that is undone")
		}
	}
	return p, nil
}

// validate is the kind's rayapi/v1 validation.
func validate(obj client.Object) field.ErrorList {
	switch o := obj.(type) {
	case *rayv1.RayCluster:
		return rayv1.ValidateRayCluster(o)
	case *rayv1.RayJob:
		return rayv1.ValidateRayJob(o)
	case *rayv1.RayService:
		return rayv1.ValidateRayService(o)
	case *rayv1.RayCronJob:
		return rayv1.ValidateRayCronJob(o)
	}
	return nil
}

// editWarnings are the plan's warnings by effect, one line each.
func editWarnings(edited client.Object, p *EditPlan) []string {
	var w []string
	if ps := p.Paths(EffectNotRunning); len(ps) > 0 {
		why := "only what is created from now on gets them"
		switch o := edited.(type) {
		case *rayv1.RayCluster:
			why = "only pods created from now on get them; running pods are recreated only with " +
				"spec.upgradeStrategy.type: Recreate (KubeRay v1.7.0 raycluster_controller.go:1462-1500, and raydar)"
		case *rayv1.RayJob:
			why = fmt.Sprintf("the RayJob (deployment status %s) has made its RayCluster and submitted its job; "+
				"KubeRay v1.7.0 does not update them from the RayJob's spec (rayjob_controller.go: the cluster is created once)", orDash(string(o.Status.JobDeploymentStatus)))
		case *rayv1.RayService:
			why = "the RayService's running RayCluster is not changed by them (KubeRay v1.7.0 rayservice_controller.go:1351-1407: " +
				"replicas, min/max and workersToDelete are left out of the cluster's hash; with upgradeStrategy None no new cluster is prepared)"
		}
		w = append(w, "these changes will not take effect on running pods: "+strings.Join(ps, ", ")+"; "+why)
	}
	if ps := p.Paths(EffectRecreate); len(ps) > 0 {
		w = append(w, "upgradeStrategy Recreate: because of "+strings.Join(ps, ", ")+" every pod of the cluster is deleted and created afresh (the Ray cluster restarts)")
	}
	if ps := p.Paths(EffectNewCluster); len(ps) > 0 {
		w = append(w, "because of "+strings.Join(ps, ", ")+" the RayService prepares a new RayCluster and moves the traffic to it once it serves (KubeRay v1.7.0 rayservice_controller.go:1409-1440)")
	}
	if ps := p.Paths(EffectNextRun); len(ps) > 0 {
		w = append(w, "the RayJobs this RayCronJob created keep their spec: "+strings.Join(ps, ", ")+" apply to the runs from now on")
	}
	if rc, ok := edited.(*rayv1.RayCluster); ok {
		if owner := ownerOfKind(rc.OwnerReferences, rayv1.KindRayJob, rayv1.KindRayService); owner != "" && !p.Unchanged {
			w = append(w, "this cluster belongs to "+owner+", whose controller may undo the change; edit the "+owner+" instead")
		}
	}
	return w
}

// ClassifyEdit lists the fields that differ between before and after,
// sorted, each with what the operator does with it (Effect) given the kind
// and, for a RayJob, how far it got. Pure.
//
// RayCluster: scaling (replicas, minReplicas, maxReplicas, a group's
// suspend, idleTimeoutSeconds, scaleStrategy), spec.suspend, the upgrade
// strategy, worker groups added or removed and metadata are acted on. The
// rest shapes pods, and neither KubeRay nor raydar touches a running pod
// for it (KubeRay v1.7.0 raycluster_controller.go:934-980, 1462-1500;
// raydar controller/raycluster decide.go's Recreate) unless
// upgradeStrategy is Recreate, which then deletes every pod.
//
// RayJob: once it has started (a deployment status past New, and not
// Suspended, whose cluster is made anew on resume), only
// suspend, the deadlines, the finishing rules and metadata still act;
// its cluster spec and its submission were used once.
//
// RayService: serveConfigV2 and the service's own settings are acted on;
// a changed rayClusterConfig prepares a new RayCluster (zero-downtime
// upgrade), except replicas, min/max and workersToDelete, which KubeRay
// leaves out of the cluster's hash (and so does not pass on), and with
// upgradeStrategy None, which prepares none.
//
// RayCronJob: its schedule, suspend and limits act at once; its
// jobTemplate on the RayJobs created from now on.
func ClassifyEdit(before, after client.Object) ([]EditChange, error) {
	a, err := toMap(before)
	if err != nil {
		return nil, err
	}
	b, err := toMap(after)
	if err != nil {
		return nil, err
	}
	// What the editor does not show and the API server does not take from
	// a write: the status and managedFields.
	for _, m := range []map[string]any{a, b} {
		delete(m, "status")
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "managedFields")
		}
	}
	var paths []string
	diffPaths("", a, b, &paths)
	sort.Strings(paths)
	classify := classifierOf(before, after)
	out := make([]EditChange, 0, len(paths))
	for _, p := range paths {
		out = append(out, EditChange{Path: p, Effect: classify(p)})
	}
	return out, nil
}

func toMap(obj client.Object) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("actions: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("actions: %w", err)
	}
	return m, nil
}

// diffPaths appends the paths under prefix where a and b differ: a map's
// keys one by one, a list's items one by one when it kept its length (the
// whole list when it did not), a value as a whole.
func diffPaths(prefix string, a, b any, out *[]string) {
	// A map added or removed is its keys added or removed.
	if _, ok := b.(map[string]any); ok && a == nil {
		a = map[string]any{}
	}
	if _, ok := a.(map[string]any); ok && b == nil {
		b = map[string]any{}
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		for k := range keys {
			diffPaths(joinPath(prefix, k), av[k], bv[k], out)
		}
		return
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			break
		}
		for i := range av {
			diffPaths(prefix+"["+strconv.Itoa(i)+"]", av[i], bv[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, prefix)
	}
}

// joinPath adds key k to a field path: "a.b", or "a[k]" for a key that is
// no identifier (labels, annotations, resource names).
func joinPath(prefix, k string) string {
	plain := k != ""
	for _, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
		}
	}
	switch {
	case !plain:
		return prefix + "[" + k + "]"
	case prefix == "":
		return k
	}
	return prefix + "." + k
}

// classifierOf returns the Effect of a changed path for the kind of
// before/after.
func classifierOf(before, after client.Object) func(path string) Effect {
	switch o := after.(type) {
	case *rayv1.RayCluster:
		recreate := o.Spec.UpgradeType() == rayv1.RayClusterRecreate
		return func(p string) Effect { return clusterEffect(p, "spec", recreate) }
	case *rayv1.RayJob:
		started := false
		if bj, ok := before.(*rayv1.RayJob); ok {
			s := bj.Status.JobDeploymentStatus
			// A suspended RayJob's cluster is gone: resuming makes it anew.
			started = s != rayv1.JobDeploymentStatusNew && s != rayv1.JobDeploymentStatusSuspended
		}
		return func(p string) Effect { return jobEffect(p, started) }
	case *rayv1.RayService:
		none := o.Spec.UpgradeStrategy != nil && o.Spec.UpgradeStrategy.Type != nil && *o.Spec.UpgradeStrategy.Type == rayv1.None
		return func(p string) Effect { return serviceEffect(p, none) }
	case *rayv1.RayCronJob:
		return cronJobEffect
	}
	return func(string) Effect { return EffectApplied }
}

// under reports whether path is p or a field below it.
func under(path, p string) bool {
	return path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[")
}

// groupField returns the field of a worker group a path is in, below
// spec (".workerGroupSpecs[i]."): "replicas", "template.spec…"; "" when
// the path is not in a worker group. whole reports the group list itself
// (groups added or removed).
func groupField(path, spec string) (f string, whole bool) {
	p := spec + ".workerGroupSpecs"
	if path == p {
		return "", true
	}
	rest, ok := strings.CutPrefix(path, p+"[")
	if !ok {
		return "", false
	}
	i := strings.Index(rest, "]")
	if i < 0 {
		return "", false
	}
	return strings.TrimPrefix(rest[i+1:], "."), false
}

// scaling are the worker group fields the scaling acts on, and which
// KubeRay's cluster hash leaves out (utils/util.go:645-668).
var scaling = []string{"replicas", "minReplicas", "maxReplicas", "scaleStrategy", "suspend", "idleTimeoutSeconds"}

func isScaling(f string) bool {
	for _, s := range scaling {
		if under(f, s) {
			return true
		}
	}
	return false
}

// clusterEffect is the effect of a changed path of a RayCluster (spec at
// "spec").
func clusterEffect(p, spec string, recreate bool) Effect {
	switch {
	case !under(p, spec):
		return EffectApplied // metadata
	case under(p, spec+".suspend"), under(p, spec+".upgradeStrategy"):
		return EffectApplied
	}
	if f, whole := groupField(p, spec); whole || (f != "" && isScaling(f)) {
		return EffectApplied
	}
	if recreate {
		return EffectRecreate
	}
	return EffectNotRunning
}

// jobActs are the RayJob fields that act after it started.
var jobActs = []string{"spec.suspend", "spec.activeDeadlineSeconds", "spec.preRunningDeadlineSeconds", "spec.backoffLimit",
	"spec.ttlSecondsAfterFinished", "spec.shutdownAfterJobFinishes", "spec.deletionStrategy"}

func jobEffect(p string, started bool) Effect {
	if !under(p, "spec") || !started {
		return EffectApplied
	}
	for _, f := range jobActs {
		if under(p, f) {
			return EffectApplied
		}
	}
	return EffectNotRunning
}

func serviceEffect(p string, upgradeNone bool) Effect {
	const cfg = "spec.rayClusterConfig"
	if !under(p, cfg) {
		return EffectApplied
	}
	f, whole := groupField(p, cfg)
	switch {
	case whole:
		// Groups appended are added in place (rayservice_controller.go:1374-1376),
		// others make a new cluster: either way the spec acts.
		if upgradeNone {
			return EffectNotRunning
		}
		return EffectNewCluster
	case f != "" && isScaling(f) && !under(f, "suspend") && !under(f, "idleTimeoutSeconds"):
		return EffectNotRunning
	case upgradeNone:
		return EffectNotRunning
	}
	return EffectNewCluster
}

func cronJobEffect(p string) Effect {
	if under(p, "spec.jobTemplate") {
		return EffectNextRun
	}
	return EffectApplied
}

// PreviewEdit previews an edit of the object read fresh: PlanEdit from it.
// The editor was opened on base; a fresh read at another resourceVersion
// is a conflict, said before the question rather than at the write.
func (a *Actions) PreviewEdit(base, edited client.Object) (*EditPlan, error) {
	return PlanEdit(base, edited, a.opts.Unsupported)
}

// Edit writes edited, the object base as the person edited it, in one JSON
// merge patch carrying base's resourceVersion, through the choke point
// (read-only, protected contexts, the audit log, an Event "Edited"). It
// refuses what PlanEdit refuses, with nothing written. A conflict (the
// object changed since base was read) is not retried: the error matches
// apierrors.IsConflict, and the caller shows the new version. An
// API-server refusal (422) unwraps to its status, whose causes name the
// fields.
func (a *Actions) Edit(ctx context.Context, base, edited client.Object) (*Result, error) {
	kind, err := kindOf(base)
	if err != nil {
		return nil, err
	}
	ref := ObjectRef{Kind: kind, Namespace: base.GetNamespace(), Name: base.GetName()}
	return a.run(ctx, ActionEdit, ref, func(r *Result) (*change, error) {
		r.Attempts = 1
		p, err := PlanEdit(base, edited, a.opts.Unsupported)
		if err != nil {
			return nil, err
		}
		r.Plan = p
		if p.Unchanged {
			return nil, nil
		}
		patch, err := EditPatch(base, edited)
		if err != nil {
			return nil, err
		}
		out := edited.DeepCopyObject().(client.Object)
		if err := a.c.Patch(ctx, out, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return nil, a.apiErr(err, "patch", resourceOf(kind), ref.Namespace, ref.Name)
		}
		what := fmt.Sprintf("Edited %s (%s)", strings.ToLower(kind.Kind), strings.Join(changedPaths(p.Changes, 6), ", "))
		return &change{obj: out, reason: ReasonEdited, verb: "Edit", what: what}, nil
	})
}

// EditPatch is the JSON merge patch (RFC 7386) from base to edited, with
// base's resourceVersion in it, so that the API server refuses it with 409
// Conflict when the object is at another version (kubectl edit's
// precondition). Status and managedFields are left out: the editor does not
// show them.
func EditPatch(base, edited client.Object) ([]byte, error) {
	b := stripForEdit(base)
	e := stripForEdit(edited)
	e.SetResourceVersion(b.GetResourceVersion())
	return client.MergeFromWithOptions(b, client.MergeFromWithOptimisticLock{}).Data(e)
}

// StripForEdit is obj as the editor shows it (kubectl edit's default):
// without managedFields and status. A copy.
func StripForEdit(obj client.Object) client.Object { return stripForEdit(obj) }

func stripForEdit(obj client.Object) client.Object {
	out := obj.DeepCopyObject().(client.Object)
	out.SetManagedFields(nil)
	switch o := out.(type) {
	case *rayv1.RayCluster:
		o.Status = rayv1.RayClusterStatus{}
	case *rayv1.RayJob:
		o.Status = rayv1.RayJobStatus{}
	case *rayv1.RayService:
		o.Status = rayv1.RayServiceStatuses{}
	case *rayv1.RayCronJob:
		o.Status = rayv1.RayCronJobStatus{}
	}
	return out
}

// changedPaths names at most n changes, and counts the rest.
func changedPaths(cs []EditChange, n int) []string {
	var out []string
	for i, c := range cs {
		if i == n {
			out = append(out, fmt.Sprintf("and %d more", len(cs)-n))
			break
		}
		out = append(out, c.Path)
	}
	return out
}
