package mutation

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/controller/rayjob"
	"github.com/raydar/raydar/controller/rayservice"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/conformance"
)

// DefaultSeed picks the mutations when RAYDAR_MUTATION_SEED is unset;
// PerManifest bounds them so that the package finishes within 4 minutes
// on a loaded 2-core machine (RAYDAR_MUTATION_PER_MANIFEST raises it: 100
// applies every mutation to every manifest).
const (
	DefaultSeed = 20261201
	PerManifest = 4
)

var gvrs = map[string]schema.GroupVersionResource{
	rayv1.KindRayCluster: rayv1.SchemeGroupVersion.WithResource("rayclusters"),
	rayv1.KindRayJob:     rayv1.SchemeGroupVersion.WithResource("rayjobs"),
	rayv1.KindRayService: rayv1.SchemeGroupVersion.WithResource("rayservices"),
}

// outcome of one case.
type outcome int

const (
	pending outcome = iota
	refusedAtAdmission
	refusedByRaydar
	reconciled
)

type run struct {
	Case
	ns      string
	name    string // as created (some samples use generateName)
	outcome outcome
	detail  string // the refusal's message
}

// envUint reads a number from the environment, def when unset.
func envUint(t *testing.T, name string, def uint64) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

func TestMutatedCorpus(t *testing.T) {
	if env == nil {
		t.Skip("integration test: needs the sandbox control plane (skipped with -short)")
	}
	start := time.Now()
	sd := envUint(t, "RAYDAR_MUTATION_SEED", DefaultSeed)
	corpus, skipped := acceptedAsIs(t, env.corpus)
	cases := Plan(sd, corpus, int(envUint(t, "RAYDAR_MUTATION_PER_MANIFEST", PerManifest)))
	t.Logf("mutation: seed %d (RAYDAR_MUTATION_SEED replays it): %d cases over %d manifests (%d more left out: %s)",
		sd, len(cases), len(corpus), len(skipped), strings.Join(skipped, ", "))
	ctx := context.Background()
	var violations []string
	violate := func(r *run, format string, a ...any) {
		v := r.String() + ": " + fmt.Sprintf(format, a...)
		violations = append(violations, v)
		t.Error(v)
	}

	// Each manifest with a harmless case is also applied unmutated, in a
	// namespace of its own: what raydar makes of it is what the harmless
	// case must give (harmless_test.go).
	baselines := map[string]*run{}
	var order []*run
	for _, c := range cases {
		if !c.Mutation.Harmless() || baselines[c.Manifest] != nil {
			continue
		}
		for _, m := range corpus {
			if m.Name == c.Manifest {
				b := &run{Case: Case{Manifest: m.Name, Mutation: Mutation{Name: "unmutated"}, Object: firstRayObject(m)}, ns: fmt.Sprintf("m-base-%03d", len(order))}
				baselines[c.Manifest] = b
				order = append(order, b)
			}
		}
	}
	apply := func(r *run) error {
		if _, err := env.kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		o := r.Object.DeepCopy()
		o.SetNamespace(r.ns)
		got, err := env.dyn.Resource(gvrs[o.GetKind()]).Namespace(r.ns).Create(ctx, o, metav1.CreateOptions{})
		if err == nil {
			r.name = got.GetName()
		}
		return err
	}
	for _, b := range order {
		if err := apply(b); err != nil {
			t.Fatalf("%s unmutated: creating: %v", b.Manifest, err)
		}
	}

	runs := make([]*run, len(cases))
	for i, c := range cases {
		r := &run{Case: c, ns: fmt.Sprintf("m-%03d", i)}
		runs[i] = r
		err := apply(r)
		switch {
		case err == nil:
		case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsRequestEntityTooLargeError(err):
			r.outcome, r.detail = refusedAtAdmission, err.Error()
			if c.Mutation.Harmless() {
				violate(r, "a harmless mutation was refused at admission: %s", firstLines(err.Error()))
			} else if !namesField(err.Error(), c.Field) {
				violate(r, "refused at admission without naming %s: %s", c.Field, firstLines(err.Error()))
			}
		default:
			t.Fatalf("%s: creating: %v", r, err)
		}
	}

	// Poll every accepted object until raydar refuses or reconciles it.
	deadline := time.Now().Add(150 * time.Second)
	for {
		left := 0
		for _, r := range append(order, runs...) {
			if r.outcome == pending {
				r.outcome, r.detail = observe(ctx, r)
			}
			if r.outcome == pending {
				left++
			}
		}
		if left == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}

	// Judge the outcomes, once everything has settled.
	var admission, refused, harmless, compared int
	var toCompare []*run
	for _, r := range runs {
		switch r.outcome {
		case pending:
			violate(r, "neither refused nor reconciled within the deadline; status: %s", r.detail)
		case refusedAtAdmission:
			admission++
		case refusedByRaydar:
			refused++
			if r.Mutation.Harmless() {
				violate(r, "a harmless mutation was refused by raydar: %s", firstLines(r.detail))
				continue
			}
			if !namesField(r.detail, r.Field) {
				violate(r, "raydar's refusal does not name %s: %s", r.Field, firstLines(r.detail))
			}
			if !warningEvent(ctx, r) {
				violate(r, "refused without a Warning Event naming %s", r.Field)
			}
			if n := created(ctx, r); n != "" {
				violate(r, "refused, but half-created: %s", n)
			}
		case reconciled:
			if !r.Mutation.Harmless() {
				violate(r, "silently accepted: reconciled with %s mutated (%s)", r.Field, r.Mutation.Class)
				continue
			}
			if b := baselines[r.Manifest]; b.outcome != reconciled {
				violate(r, "the manifest unmutated (namespace %s) was not reconciled, so the harmless mutation cannot be judged: %s", b.ns, firstLines(b.detail))
				continue
			}
			toCompare = append(toCompare, r)
		}
	}
	// A harmless case counts once what raydar made of it equals what it
	// made of the manifest unmutated. Both were created a moment apart and
	// raydar is still creating pods: compare until they agree or the
	// deadline passes, and report the last differences.
	last, lastDetail := map[*run]string{}, map[*run]string{}
	deadline = time.Now().Add(2 * time.Minute)
	for {
		left := 0
		for _, r := range toCompare {
			if d, seen := last[r]; seen && d == "" {
				continue
			}
			d, n, detail, err := sameAsBaseline(ctx, r, baselines[r.Manifest])
			if err != nil {
				d = err.Error()
			}
			last[r], lastDetail[r] = d, detail
			if d == "" {
				harmless++
				compared += n
			} else {
				left++
			}
		}
		if left == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	for _, r := range toCompare {
		if d := last[r]; d != "" {
			violate(r, "reconciled, but not as the manifest unmutated (namespace %s): %s", baselines[r.Manifest].ns, firstLines(d))
			t.Logf("%s: the objects of the differing IDs, both sides:\n%s", r, lastDetail[r])
		}
	}
	if p := env.log.seen(); len(p) > 0 {
		violations = append(violations, fmt.Sprintf("the operator logged %d panics", len(p)))
		t.Errorf("the operator logged panics:\n%s", strings.Join(p, "\n"))
	}
	if n := reconcilePanics(t); n > 0 {
		violations = append(violations, fmt.Sprintf("controller_runtime_reconcile_panics_total = %v", n))
		t.Errorf("controller_runtime_reconcile_panics_total = %v", n)
	}
	select {
	case <-env.opDone:
		violations = append(violations, "the operator stopped")
		t.Errorf("the operator stopped during the run: %v", env.opErr)
	default:
	}
	byMutation := map[string]*[4]int{}
	var names []string
	for _, r := range runs {
		if byMutation[r.Mutation.Name] == nil {
			byMutation[r.Mutation.Name] = &[4]int{}
			names = append(names, r.Mutation.Name)
		}
		byMutation[r.Mutation.Name][r.outcome]++
	}
	slices.Sort(names)
	for _, n := range names {
		c := byMutation[n]
		t.Logf("  %-20s admission %3d  raydar %3d  reconciled %3d  pending %3d", n, c[refusedAtAdmission], c[refusedByRaydar], c[reconciled], c[pending])
	}
	summary := fmt.Sprintf("mutation: %d mutated manifests applied, %d refused at admission, %d refused by raydar, "+
		"%d harmless (reconciled as the manifest unmutated: %d objects compared), %d violations (seed %d, %s)",
		len(runs), admission, refused, harmless, compared, len(violations), sd, time.Since(start).Round(time.Second))
	t.Log(summary)
	fmt.Println(summary)
}

// observe reads one accepted object and says whether raydar has refused it
// (with its refusal message) or reconciled it.
func observe(ctx context.Context, r *run) (outcome, string) {
	kind := r.Object.GetKind()
	o, err := env.dyn.Resource(gvrs[kind]).Namespace(r.ns).Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		return pending, err.Error()
	}
	switch kind {
	case rayv1.KindRayCluster:
		if msg, ok := conditionWithReason(o, string(rayv1.RayClusterReplicaFailure), ""); ok {
			return refusedByRaydar, msg // ValidationFailed, or a pod the API server refused
		}
		if pods, _ := env.kc.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: rayv1.RayNodeTypeLabelKey + "=" + string(rayv1.HeadNode)}); pods != nil && len(pods.Items) > 0 {
			return reconciled, ""
		}
		// A suspended cluster has no pods: its status says raydar saw it.
		if st, _, _ := unstructured.NestedString(o.Object, "status", "state"); st != "" {
			return reconciled, ""
		}
	case rayv1.KindRayJob:
		ds, _, _ := unstructured.NestedString(o.Object, "status", "jobDeploymentStatus")
		msg, _, _ := unstructured.NestedString(o.Object, "status", "message")
		switch ds {
		case string(rayv1.JobDeploymentStatusValidationFailed):
			return refusedByRaydar, msg
		case "":
			return pending, fmt.Sprintf("jobDeploymentStatus %q, message %q", ds, msg)
		default:
			return reconciled, ""
		}
	case rayv1.KindRayService:
		if msg, ok := conditionWithReason(o, string(rayv1.RayServiceReady), string(rayv1.RayServiceValidationFailed)); ok {
			return refusedByRaydar, msg
		}
		if n := rayClusters(ctx, r.ns); n > 0 {
			return reconciled, ""
		}
	}
	st, _, _ := unstructured.NestedMap(o.Object, "status")
	return pending, firstLines(fmt.Sprint(st))
}

// namesField reports whether an error message names path: the path itself,
// or (for rules on the parent, such as the CRD's CEL rules) the parent's
// path followed by a message that names the field.
func namesField(msg, path string) bool {
	if strings.Contains(msg, path) {
		return true
	}
	i := strings.LastIndexByte(path, '.')
	return i > 0 && strings.Contains(msg, path[:i]+":") && strings.Contains(msg[strings.Index(msg, path[:i]+":"):], path[i+1:])
}

// acceptedAsIs keeps the manifests whose first Ray object raydar accepts
// unmutated (a harmless mutation must then be reconciled); the others are
// named (raydar refuses them for a feature it does not implement).
func acceptedAsIs(t *testing.T, corpus []conformance.Manifest) (kept []conformance.Manifest, skipped []string) {
	for _, m := range corpus {
		o := firstRayObject(m)
		if o == nil {
			continue
		}
		errs, err := raydarRefuses(o)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if len(errs) > 0 {
			skipped = append(skipped, m.Name+" (raydar refuses it unmutated)")
			continue
		}
		if by, _, _ := unstructured.NestedString(o.Object, "spec", "managedBy"); by != "" && by != rayv1.KubeRayController && by != rayv1.ManagedByRaydar {
			// MultiKueue's: neither operator reconciles it here, so a
			// mutation can be neither refused nor reconciled.
			skipped = append(skipped, m.Name+" (spec.managedBy "+by+": no operator here reconciles it)")
			continue
		}
		if typ, _, _ := unstructured.NestedString(o.Object, "spec", "upgradeStrategy", "type"); o.GetKind() == rayv1.KindRayService && typ == string(rayv1.NewClusterWithIncrementalUpgrade) {
			// The gate is on by default and this sandbox has no Gateway
			// API: raydar refuses it at run time, mutated or not
			// (test/conformance's TestConformanceIncrementalUpgrade runs it
			// with the Gateway API).
			skipped = append(skipped, m.Name+" (NewClusterWithIncrementalUpgrade: no Gateway API in this sandbox, raydar refuses it unmutated)")
			continue
		}
		kept = append(kept, m)
	}
	return kept, skipped
}

// raydarRefuses is what raydar's reconcilers check before acting: the
// validation and the features raydar does not implement.
func raydarRefuses(o *unstructured.Unstructured) (field.ErrorList, error) {
	switch o.GetKind() {
	case rayv1.KindRayCluster:
		var rc rayv1.RayCluster
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &rc); err != nil {
			return nil, err
		}
		rc.Default()
		return append(rayv1.ValidateRayCluster(&rc), raycluster.UnsupportedRayCluster(&rc)...), nil
	case rayv1.KindRayJob:
		var rj rayv1.RayJob
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &rj); err != nil {
			return nil, err
		}
		rj.Default()
		return append(rayv1.ValidateRayJob(&rj), rayjob.Unsupported(&rj)...), nil
	case rayv1.KindRayService:
		var rs rayv1.RayService
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &rs); err != nil {
			return nil, err
		}
		rs.Default()
		return append(rayv1.ValidateRayService(&rs), rayservice.Unsupported(&rs)...), nil
	}
	return nil, nil
}

func conditionWithReason(o *unstructured.Unstructured, typ, reason string) (string, bool) {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ && (m["reason"] == reason || reason == "" && m["status"] == "True") {
			msg, _ := m["message"].(string)
			return msg, true
		}
	}
	return "", false
}

func rayClusters(ctx context.Context, ns string) int {
	l, err := env.dyn.Resource(gvrs[rayv1.KindRayCluster]).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0
	}
	return len(l.Items)
}

// created lists what a refused object must not have: pods, and for a
// RayJob or RayService any RayCluster.
func created(ctx context.Context, r *run) string {
	var out []string
	if pods, err := env.kc.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{}); err == nil && len(pods.Items) > 0 {
		out = append(out, fmt.Sprintf("%d pods", len(pods.Items)))
	}
	if r.Object.GetKind() != rayv1.KindRayCluster {
		if n := rayClusters(ctx, r.ns); n > 0 {
			out = append(out, fmt.Sprintf("%d RayClusters", n))
		}
	}
	return strings.Join(out, ", ")
}

// warningEvent waits briefly for a Warning Event regarding the object whose
// note names the field.
func warningEvent(ctx context.Context, r *run) bool {
	deadline := time.Now().Add(20 * time.Second)
	for {
		l, err := env.kc.EventsV1().Events(r.ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, e := range l.Items {
				if e.Type == corev1.EventTypeWarning && e.Regarding.Name == r.name && strings.Contains(e.Note, r.Field) {
					return true
				}
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// reconcilePanics is controller-runtime's count of recovered reconcile
// panics (the operator runs in this process).
func reconcilePanics(t *testing.T) float64 {
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "controller_runtime_reconcile_panics_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}
