package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// stepRecorder follows one side's incremental upgrade (one namespace, one
// RayService) through watches, so that no step is missed however short:
// every HTTPRoute version's backends and weights, and every RayService
// version's per-cluster Serve targetCapacity and trafficRoutedPercent.
// The steps in between the two compared passes are not settled at the
// same moment on both sides (each operator moves at its own pace), so
// they are compared as sequences: the distinct values each field went
// through, in order.
type stepRecorder struct {
	mu       sync.Mutex
	routes   []map[string]int64 // backend Service → weight, per version
	statuses []map[string]clusterStep
	stop     context.CancelFunc
	done     sync.WaitGroup
}

// clusterStep is what a RayService's status says of one of its clusters.
type clusterStep struct {
	target, traffic string // "-" when absent
}

var (
	httpRouteGVR  = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	rayServiceGVR = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayservices"}
)

// recordSteps starts watching RayService name and its HTTPRoute
// (<name>-httproute) in ns.
func recordSteps(t *testing.T, ns, name string) *stepRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &stepRecorder{stop: cancel}
	watchOne := func(gvr schema.GroupVersionResource, obj string, each func(*unstructured.Unstructured)) {
		w, err := env.dyn.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + obj})
		if err != nil {
			t.Fatalf("watching %s %s/%s: %v", gvr.Resource, ns, obj, err)
		}
		r.done.Go(func() {
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					if u, isU := ev.Object.(*unstructured.Unstructured); isU && (ev.Type == watch.Added || ev.Type == watch.Modified) {
						r.mu.Lock()
						each(u)
						r.mu.Unlock()
					}
				}
			}
		})
	}
	watchOne(httpRouteGVR, name+"-httproute", func(u *unstructured.Unstructured) {
		rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
		split := map[string]int64{}
		if len(rules) > 0 {
			refs, _, _ := unstructured.NestedSlice(rules[0].(map[string]any), "backendRefs")
			for _, ref := range refs {
				m := ref.(map[string]any)
				n, _, _ := unstructured.NestedString(m, "name")
				w, found, _ := unstructured.NestedInt64(m, "weight")
				if !found {
					w = 1 // the Gateway API's default
				}
				split[n] = w
			}
		}
		r.routes = append(r.routes, split)
	})
	watchOne(rayServiceGVR, name, func(u *unstructured.Unstructured) {
		st := map[string]clusterStep{}
		for _, side := range []string{"activeServiceStatus", "pendingServiceStatus"} {
			c, _, _ := unstructured.NestedString(u.Object, "status", side, "rayClusterName")
			if c == "" {
				continue
			}
			field := func(f string) string {
				if v, found, _ := unstructured.NestedInt64(u.Object, "status", side, f); found {
					return fmt.Sprint(v)
				}
				return "-"
			}
			st[c] = clusterStep{target: field("targetCapacity"), traffic: field("trafficRoutedPercent")}
		}
		r.statuses = append(r.statuses, st)
	})
	return r
}

// Steps stops the recorder and returns its sequences, each with repeats
// removed, the clusters named by role: "old" is oldCluster, "new" any
// other. Keys: "HTTPRoute weights old/new", "old targetCapacity",
// "old trafficRoutedPercent", "new targetCapacity", "new
// trafficRoutedPercent".
func (r *stepRecorder) Steps(oldCluster string) map[string][]string {
	r.stop()
	r.done.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	add := func(key, v string) {
		if s := out[key]; len(s) == 0 || s[len(s)-1] != v {
			out[key] = append(s, v)
		}
	}
	oldService := oldCluster + "-serve-svc"
	for _, split := range r.routes {
		var o, n int64
		for backend, w := range split {
			if backend == oldService {
				o += w
			} else {
				n += w
			}
		}
		add("HTTPRoute weights old/new", fmt.Sprintf("%d/%d", o, n))
	}
	for _, st := range r.statuses {
		for c, s := range st {
			role := "new"
			if c == oldCluster {
				role = "old"
			}
			add(role+" targetCapacity", s.target)
			add(role+" trafficRoutedPercent", s.traffic)
		}
	}
	return out
}

// intendedStep is a difference between the two sides' steps that raydar
// means: the one sequence it is in, the one shape it has, and why.
type intendedStep struct {
	key, why string
	matches  func(kr, rd []string) bool
}

var intendedSteps = []intendedStep{{
	key: "new targetCapacity",
	why: "KubeRay v1.6.2 names the new cluster in the status one pass before it gives it a targetCapacity " +
		"(rayservice_controller.go:488-510 sets 0 only when UpgradeInProgress is already True, and 577 sets that " +
		"condition later in the same pass), so its first Serve config goes to the new cluster without target_capacity " +
		"(1338-1354) and Serve may bring up every replica at once; raydar sets 0 with the name " +
		"(controller/rayservice/decide.go) and submits target_capacity 0 from the first",
	// KubeRay's sequence is raydar's with one absent value before it.
	matches: func(kr, rd []string) bool { return len(kr) == len(rd)+1 && kr[0] == "-" && slices.Equal(kr[1:], rd) },
}}

// compareSteps reports each sequence in which raydar's upgrade (rd) went
// through other steps than KubeRay's (kr), unless intendedSteps explains
// the difference, and returns how many sequences were compared, how many
// differ as intended and how many differ unexplained.
func compareSteps(t *testing.T, what string, kr, rd map[string][]string) (compared, intended, differ int) {
	t.Helper()
	keys := make([]string, 0, len(kr))
	for k := range kr {
		keys = append(keys, k)
	}
	for k := range rd {
		if _, ok := kr[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		compared++
		if i := slices.IndexFunc(intendedSteps, func(is intendedStep) bool { return is.key == k && is.matches(kr[k], rd[k]) }); i >= 0 {
			intended++
			t.Logf("%s: %s, intended difference: KubeRay %s, raydar %s: %s", what, k, strings.Join(kr[k], " → "), strings.Join(rd[k], " → "), intendedSteps[i].why)
			continue
		}
		if !slices.Equal(kr[k], rd[k]) {
			differ++
			t.Errorf("%s: %s went through other steps: KubeRay %s, raydar %s", what, k, strings.Join(kr[k], " → "), strings.Join(rd[k], " → "))
			continue
		}
		t.Logf("%s: %s, both: %s", what, k, strings.Join(kr[k], " → "))
	}
	return compared, intended, differ
}
