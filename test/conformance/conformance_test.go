package conformance

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

type comparedKind struct {
	gvr  schema.GroupVersionResource
	kind string
}

// compared are the kinds whose objects an operator may create, listed in
// every namespace of the suite on each poll (suite.kinds adds
// cert-manager's when both operators run mTLS).
var compared = []comparedKind{
	{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "Pod"},
	{schema.GroupVersionResource{Version: "v1", Resource: "services"}, "Service"},
	{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, "ServiceAccount"},
	{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "Secret"},
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ConfigMap"},
	{schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, "PersistentVolumeClaim"},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, "Role"},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, "RoleBinding"},
	{schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, "Job"},
	{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, "Ingress"},
	{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, "NetworkPolicy"},
	{schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}, "RayCluster"},
	{schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}, "RayJob"},
	{schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayservices"}, "RayService"},
	{schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "raycronjobs"}, "RayCronJob"},
	{schema.GroupVersionResource{Version: "v1", Resource: "events"}, "Event"},
}

// Settling: how often both sides are read, and how long a manifest may
// take to reach exactly its intended differences. Generous: a loaded
// 2-core machine runs two operators, a control plane and kwok here, and the
// SidecarMode sample settles only after both operators' 300 s grace period
// for a sidecar that never exits in the sandbox.
const (
	pollEvery      = 2 * time.Second
	settleDeadline = 12 * time.Minute
	// stablePolls is how many polls in a row both sides must stay
	// unchanged (and their differences all intended) to count as settled.
	// A settled manifest is compared once more after as many polls again
	// (confirmed): a change on either side in between (a late Warning, a
	// status a grace period turned) is seen, logged, and waited out anew.
	stablePolls = 5
)

// manifestRun is the state of one manifest during the suite.
type manifestRun struct {
	m       Manifest
	krNS    string          // the namespace KubeRay reconciles it in
	rdNS    string          // the namespace raydar reconciles it in
	applied map[string]bool // "Kind/name" the manifest created
	skipped []string        // objects not applied (cluster-scoped or unknown kinds)
	last    []Diff          // differences at the last poll
	prev    string          // both sides' snapshot at the previous poll
	stable  int             // polls in a row with the same snapshot and no unexplained difference
	// settled: the state stayed the same for stablePolls polls, and then
	// for as many again (the second comparison); firstSettled holds both
	// sides as they were at the first, so what changed after it is named
	// (lateChanges).
	settled      bool
	firstSettled *settledState
	lateChanges  []string
	// settledAfter is when it settled, from the start of the wait.
	settledAfter time.Duration
	objects      int
	// ticked says the manifest's RayCronJobs were suspended after each
	// side's first tick.
	ticked bool
}

func TestConformance(t *testing.T) {
	if env == nil {
		t.Skip("conformance suite: needs the sandbox and KubeRay's operator (skipped with -short)")
	}
	summary := runPass(t, env.corpus, env.kubeRayNS, env.raydarNS, true)
	t.Log(summary)
	fmt.Fprintln(os.Stderr, summary)
}

// runPass applies every manifest of corpus to its KubeRay namespace
// (krNS(i)) and its raydar namespace (rdNS(i)), waits until each has
// settled, reports every unexplained difference as an error and returns
// the summary line. checkUnused also fails on intended entries that match
// nothing (a pass over part of the corpus leaves them unchecked). more are
// intended files read on top of intended.yaml (a pass of its own), each of
// whose entries must match.
func runPass(t *testing.T, corpus []Manifest, krNS, rdNS func(int) string, checkUnused bool, more ...string) string {
	t.Helper()
	intended, err := LoadIntended("intended.yaml")
	var own []*Intended
	for _, f := range more {
		if err != nil {
			break
		}
		var l []*Intended
		l, err = LoadIntended(f)
		own = append(own, l...)
	}
	intended = append(intended, own...)
	if err == nil && os.Getenv(oracleBinEnv) != "" {
		// A KubeRay built from its source: what that build stamps
		// differently from the release (intended-source.yaml).
		var more []*Intended
		more, err = LoadIntended("intended-source.yaml")
		intended = append(intended, more...)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	runs := make([]*manifestRun, len(corpus))
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(env.kc.Discovery()))
	for i, m := range corpus {
		r := &manifestRun{m: m, krNS: krNS(i), rdNS: rdNS(i), applied: map[string]bool{}}
		runs[i] = r
		for _, ns := range []string{r.krNS, r.rdNS} {
			if err := r.apply(ctx, mapper, ns); err != nil {
				t.Fatalf("%s: applying to %s: %v", m.Name, ns, err)
			}
		}
	}

	// A manifest pending as a whole in intended.yaml (raydar refuses what
	// KubeRay runs, so KubeRay's side may never settle) is compared at
	// every poll like the others but does not hold the wait: waiting for
	// it cost the suite its whole deadline while everything else had
	// settled. The last manifest to settle is logged with its time.
	start := time.Now()
	deadline := start.Add(settleDeadline)
	var last *manifestRun
	for {
		snap, err := snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		holding := 0
		for _, r := range runs {
			if r.settled {
				continue
			}
			r.evaluate(snap, intended, time.Since(start))
			if r.settled {
				r.settledAfter = time.Since(start)
				if last == nil || r.settledAfter >= last.settledAfter {
					last = r
				}
			} else if pendingManifest(r.m.Name, intended) == nil {
				holding++
			}
		}
		if holding == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(pollEvery)
	}
	if last != nil {
		t.Logf("settling took %s; the last manifest to settle was %s", time.Since(start).Round(time.Second), last.m.Name)
	}
	// Compared: RayCronJobs make a RayJob (a cluster, pods, a submitter)
	// every tick on both sides; suspended, they stop adding load for the
	// tests that follow.
	for _, r := range runs {
		r.suspendCronJobs(ctx, t)
	}

	// Report: unexplained differences per manifest, intended entries that
	// matched nothing, and the summary line.
	used := map[*Intended]int{}
	var nIntended, nPending, nUnexplained, nObjects int
	for _, r := range runs {
		in, un := Classify(r.last, intended, used)
		for _, d := range in {
			if pendingEntry(d, intended) {
				nPending++
				t.Logf("known difference, not yet fixed: %s", d)
			} else {
				nIntended++
			}
		}
		nUnexplained += len(un)
		nObjects += r.objects
		for _, d := range un {
			t.Errorf("unexplained difference: %s", d)
		}
		if !r.settled && len(un) == 0 {
			if e := pendingManifest(r.m.Name, intended); e != nil {
				used[e]++ // it explains the manifest that did not settle
				t.Logf("%s: had not settled when the others had (the whole manifest is pending in intended.yaml: it does not hold the wait)", r.m.Name)
			} else {
				t.Errorf("%s: did not settle within %s", r.m.Name, settleDeadline)
			}
		}
		for _, c := range r.lateChanges {
			t.Logf("%s: changed after it had settled, so it was compared again once stable: %s", r.m.Name, c)
		}
		if len(r.skipped) > 0 {
			t.Logf("%s: not applied (cluster-scoped or unknown kinds): %s", r.m.Name, strings.Join(r.skipped, ", "))
		}
	}
	only := os.Getenv(manifestsEnv)
	if checkUnused && only == "" {
		for _, e := range intended {
			if used[e] == 0 && e.Pending {
				t.Logf("a pending difference no longer occurs (remove it from intended.yaml if it is fixed): %s", e)
			}
			if used[e] == 0 && !e.Sometimes && !e.Pending {
				t.Errorf("intended difference no longer occurs (remove it from intended.yaml and docs/kuberay-compatibility.md): %s", e)
			}
		}
	} else if only == "" {
		for _, e := range own {
			if used[e] == 0 && !e.Sometimes && !e.Pending {
				t.Errorf("intended difference no longer occurs (remove it from %v): %s", more, e)
			}
		}
	}
	if only != "" {
		t.Logf("%s=%q: %d of the corpus's manifests; intended entries that match nothing are not checked", manifestsEnv, only, len(runs))
	}
	oracle := KubeRayVersion
	if b := os.Getenv(oracleBinEnv); b != "" {
		oracle = b + " (" + oracleBinEnv + ")"
	}
	if g := os.Getenv(gatesEnv); g != "" {
		oracle += ", both with " + g
	}
	return fmt.Sprintf("conformance: KubeRay %s, %d manifests compared, %d objects compared, %d differences intended, %d known and not yet fixed, %d differences unexplained",
		oracle, len(runs), nObjects, nIntended, nPending, nUnexplained)
}

// pendingManifest returns the entry that marks the whole manifest pending
// (object and path "*"), nil when none does: a manifest that cannot be
// compared yet, counted as known and not yet fixed and listed in the docs.
func pendingManifest(name string, list []*Intended) *Intended {
	for _, e := range list {
		if e.wholeManifestPending() && e.Matches(Diff{Manifest: name, Object: "*", Path: "*"}) {
			return e
		}
	}
	return nil
}

// pendingEntry reports whether the first entry that explains d (the one
// Classify counts) is a pending one: raydar's to fix.
func pendingEntry(d Diff, list []*Intended) bool {
	for _, e := range list {
		if e.Matches(d) {
			return e.Pending
		}
	}
	return false
}

// apply creates the manifest's namespaced objects in ns.
func (r *manifestRun) apply(ctx context.Context, mapper meta.RESTMapper, ns string) error {
	for _, o := range r.m.Objects {
		obj := o.DeepCopy()
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			r.skip(fmt.Sprintf("%s %s (kind not served)", gvk.Kind, obj.GetName()))
			continue
		}
		if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			r.skip(fmt.Sprintf("%s %s (cluster-scoped)", gvk.Kind, obj.GetName()))
			continue
		}
		obj.SetNamespace(ns)
		if _, err := env.dyn.Resource(mapping.Resource).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		r.applied[gvk.Kind+"/"+obj.GetName()] = true
	}
	return nil
}

// suspendAfterFirstTick suspends the manifest's RayCronJobs once each side
// has made a RayJob for one: a schedule that ticks every minute (KubeRay's
// sample) keeps both sides moving, so nothing would settle, and the first
// tick shows everything a tick makes. Ticks a side made before the suspend
// reached it are compared as they are.
func (r *manifestRun) suspendAfterFirstTick(kr, rd []unstructured.Unstructured) {
	if r.ticked {
		return
	}
	hasCron := false
	for _, o := range r.m.Objects {
		if o.GetKind() == "RayCronJob" {
			hasCron = true
		}
	}
	if !hasCron {
		r.ticked = true
		return
	}
	ticked := func(objs []unstructured.Unstructured) bool {
		for _, o := range objs {
			if o.GetKind() == "RayJob" && o.GetLabels()[cronTickLabel] != "" {
				return true
			}
		}
		return false
	}
	if ticked(kr) && ticked(rd) {
		r.suspendCronJobs(context.Background(), nil)
		r.ticked = true
	}
}

// suspendCronJobs suspends the manifest's RayCronJobs on both sides (t nil:
// an error is the next poll's to see).
func (r *manifestRun) suspendCronJobs(ctx context.Context, t *testing.T) {
	cronJobs := schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "raycronjobs"}
	for _, o := range r.m.Objects {
		if o.GetKind() != "RayCronJob" {
			continue
		}
		for _, ns := range []string{r.krNS, r.rdNS} {
			if _, err := env.dyn.Resource(cronJobs).Namespace(ns).Patch(ctx, o.GetName(), types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{}); err != nil && t != nil {
				t.Errorf("%s: suspending RayCronJob %s/%s: %v", r.m.Name, ns, o.GetName(), err)
			}
		}
	}
}

func (r *manifestRun) skip(what string) {
	for _, s := range r.skipped {
		if s == what {
			return
		}
	}
	r.skipped = append(r.skipped, what)
}

// evaluate compares both sides. The manifest is settled when both
// operators have written a status on every Ray object it applied, its
// differences are all intended, and neither side changed for stablePolls
// polls, and then for stablePolls polls more (confirm).
func (r *manifestRun) evaluate(snap map[string][]unstructured.Unstructured, intended []*Intended, elapsed time.Duration) {
	krNS, rdNS := r.krNS, r.rdNS
	krObjs, rdObjs := r.filter(snap[krNS]), r.filter(snap[rdNS])
	r.suspendAfterFirstTick(krObjs, rdObjs)
	kr := Normalize(krNS, krObjs)
	rd := Normalize(rdNS, rdObjs)
	r.objects = max(len(kr), len(rd))
	r.last = Compare(r.m.Name, kr, rd)
	state := canonical(kr) + "|" + canonical(rd)
	_, un := Classify(r.last, intended, nil)
	if len(un) == 0 && state == r.prev && r.seenByOperator(krObjs) && r.seenByOperator(rdObjs) &&
		!jobBetweenPods(krObjs) && !jobBetweenPods(rdObjs) {
		r.stable++
	} else {
		r.stable = 0
	}
	r.confirm(state, kr, rd, elapsed)
	r.prev = state
}

// settledState is both sides' normalised objects when a manifest first
// looked settled.
type settledState struct {
	state   string
	kr, rd  []Object
	elapsed time.Duration
}

// confirm is evaluate's second look: once the state has held for
// stablePolls polls it is kept as firstSettled, and the manifest is
// settled when the same state has held for stablePolls polls more. A
// change in between is named in lateChanges (which side, which paths) and
// the wait starts over.
func (r *manifestRun) confirm(state string, kr, rd []Object, elapsed time.Duration) {
	first := r.firstSettled
	if first != nil && state != first.state {
		var changed []string
		for _, side := range []struct {
			name     string
			was, now []Object
		}{{"kuberay", first.kr, kr}, {"raydar", first.rd, rd}} {
			for _, d := range Compare(r.m.Name, side.was, side.now) {
				changed = append(changed, fmt.Sprintf("%s: %s %s: %s -> %s", side.name, d.Object, d.Path, short(d.KubeRay), short(d.Raydar)))
			}
		}
		r.lateChanges = append(r.lateChanges, fmt.Sprintf("after %s stable (at %s): %s",
			time.Duration(stablePolls)*pollEvery, first.elapsed.Round(time.Second), strings.Join(changed, "; ")))
		r.firstSettled = nil
	}
	switch {
	case r.stable < stablePolls:
		r.firstSettled = nil
	case r.firstSettled == nil:
		r.firstSettled = &settledState{state: state, kr: kr, rd: rd, elapsed: elapsed}
	}
	r.settled = r.stable >= 2*stablePolls
}

// short cuts a value for a log line.
func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// seenByOperator reports whether every Ray object the manifest applied has a
// status: before that, both sides look alike because neither has acted.
func (r *manifestRun) seenByOperator(objs []unstructured.Unstructured) bool {
	warned := map[string]bool{} // "Kind-name" of Ray objects with a Warning Event (filter's Warning objects)
	for _, o := range objs {
		if o.GetKind() == "Warning" {
			on, _, _ := strings.Cut(o.GetName(), " ")
			warned[on] = true
		}
	}
	for _, o := range objs {
		if !r.applied[o.GetKind()+"/"+o.GetName()] || !isRayKind(o.GetKind()) || managedElsewhere(o) {
			continue
		}
		// A status, or a Warning on it: KubeRay refuses an invalid spec
		// with a Warning Event (InvalidRayClusterSpec) and writes no status.
		if st, _ := o.Object["status"].(map[string]any); len(st) == 0 && !warned[o.GetKind()+"-"+o.GetName()] {
			return false
		}
	}
	return true
}

// managedElsewhere reports whether o's spec.managedBy names a controller
// that is neither operator (Kueue's MultiKueue): neither writes a status
// for it, and having none is what both must show.
func managedElsewhere(o unstructured.Unstructured) bool {
	m, _, _ := unstructured.NestedString(o.Object, "spec", "managedBy")
	return m != "" && m != "ray.io/kuberay-operator"
}

// jobBetweenPods reports whether a Job is neither finished nor running a
// pod: a submitter whose pod failed, waiting out the Job's back-off before
// the next (10 s, then 20 s, …). Its pods are not compared and its status
// is not (normalizeObject), so nothing compared moves while it waits, yet
// its RayJob fails (SubmissionFailed, and raydar's Warning) only once the
// Job's backoffLimit is used up: a manifest is not settled in between, or
// whether that failure is compared would depend on the back-off outlasting
// stablePolls (the light-weight-submitter sample's Warning was "sometimes"
// for that reason).
func jobBetweenPods(objs []unstructured.Unstructured) bool {
	for _, o := range objs {
		if o.GetKind() != "Job" {
			continue
		}
		active, _, _ := unstructured.NestedInt64(o.Object, "status", "active")
		failed, _, _ := unstructured.NestedInt64(o.Object, "status", "failed")
		if active > 0 || failed == 0 || jobFinished(o) {
			continue
		}
		return true
	}
	return false
}

// jobFinished reports whether a Job has its Complete or Failed condition.
func jobFinished(o unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if (cm["type"] == "Complete" || cm["type"] == "Failed") && cm["status"] == "True" {
			return true
		}
	}
	return false
}

// filter keeps what an operator made or writes: the manifest's Ray objects
// and every object the manifest did not create, less what Kubernetes makes
// by itself (the default ServiceAccount, the root CA ConfigMap, a Job's
// pods, which follow from the Job compared).
func (r *manifestRun) filter(objs []unstructured.Unstructured) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	warnings := map[string]bool{} // "Kind-name Reason"
	for _, o := range objs {
		k, n := o.GetKind(), o.GetName()
		switch {
		case k == "Event":
			// Warning Events are what users alert on: each object must get
			// the same reasons (how often, and Normal Events, are each
			// operator's own).
			// Only Events on Ray objects: the operators' own (pods get
			// the scheduler's, which differ with pod names).
			kind, _, _ := unstructured.NestedString(o.Object, "involvedObject", "kind")
			name, _, _ := unstructured.NestedString(o.Object, "involvedObject", "name")
			if t, _ := o.Object["type"].(string); t == "Warning" && isRayKind(kind) {
				reason, _ := o.Object["reason"].(string)
				warnings[kind+"-"+name+" "+reason] = true
			}
		case r.applied[k+"/"+n] && !isRayKind(k):
		case k == "ServiceAccount" && n == "default":
		case k == "ConfigMap" && n == "kube-root-ca.crt":
		case k == "Pod" && ownedBy(o, "Job", "ReplicaSet"):
		default:
			out = append(out, o)
		}
	}
	// Each reason on each object is an object of its own ("Warning
	// RayJob-x AppFailed"), so a difference names the one reason one side
	// lacks, whatever other reasons the object has: an intended entry
	// excuses that reason alone, in every combination a race can make.
	for key := range warnings {
		_, reason, _ := strings.Cut(key, " ")
		w := unstructured.Unstructured{Object: map[string]any{"reason": reason}}
		w.SetKind("Warning")
		w.SetName(key)
		out = append(out, w)
	}
	return out
}

func ownedBy(o unstructured.Unstructured, kinds ...string) bool {
	for _, ref := range o.GetOwnerReferences() {
		for _, k := range kinds {
			if ref.Kind == k {
				return true
			}
		}
	}
	return false
}

// snapshot lists every compared kind once, across all namespaces, by
// namespace.
func snapshot(ctx context.Context) (map[string][]unstructured.Unstructured, error) {
	out := map[string][]unstructured.Unstructured{}
	for _, c := range env.kinds {
		list, err := env.dyn.Resource(c.gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", c.gvr.Resource, err)
		}
		for _, item := range list.Items {
			ns := item.GetNamespace()
			if !strings.HasPrefix(ns, "kr-") && !strings.HasPrefix(ns, "rd-") {
				continue
			}
			item.SetKind(c.kind)
			out[ns] = append(out[ns], item)
		}
	}
	for ns := range out {
		sort.Slice(out[ns], func(i, j int) bool {
			a, b := out[ns][i], out[ns][j]
			return a.GetKind()+"/"+a.GetName() < b.GetKind()+"/"+b.GetName()
		})
	}
	return out, nil
}
