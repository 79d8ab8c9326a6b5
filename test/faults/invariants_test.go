package faults

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/sandbox/headsim"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The invariants every scenario ends with, checked by one checker.

// settleTimeout bounds how long the cluster may take to settle after the
// last fault on a loaded 2-core machine.
const settleTimeout = 3 * time.Minute

// stormFactor bounds status writes per object: at most this many per
// observable status change (a change a watcher sees).
const stormFactor = 3

// scenario is one fault scenario's namespace, its audit of status writes
// and the stops it requested.
type scenario struct {
	t          *testing.T
	ns         string
	audit      *Audit
	changes    *changeCounter
	goroutines int // at the start, before the scenario started anything

	mu    sync.Mutex
	stops []stopWant
}

// stopWant is a stop that must reach the simulated head exactly once.
type stopWant struct {
	sim                *headsim.Sim
	cluster, submisson string
}

// newScenario creates the scenario's namespace and starts watching its
// status changes. Status writes are counted by s.audit: the operator's
// client must go through it (Audit.Wrap or an APIProxy with s.audit).
func newScenario(t *testing.T) *scenario {
	t.Helper()
	needSandbox(t)
	s := &scenario{t: t, goroutines: runtime.NumGoroutine(), audit: &Audit{}}
	s.ns = newNamespace(t)
	s.changes = watchChanges(t, s.ns)
	return s
}

// wantStop records a stop the scenario requested of a head: it must be
// sent exactly once.
func (s *scenario) wantStop(sim *headsim.Sim, cluster, submissionID string) {
	s.mu.Lock()
	s.stops = append(s.stops, stopWant{sim: sim, cluster: cluster, submisson: submissionID})
	s.mu.Unlock()
}

// finish waits for the cluster to settle and checks every invariant; then
// it calls stopAll (which stops every operator, head simulator and proxy
// the scenario started) and checks that nothing leaked.
func (s *scenario) finish(stopAll func()) {
	t := s.t
	t.Helper()
	begin := time.Now()
	var last [3]string
	_, settled := poll(settleTimeout, func() (bool, string) {
		pods, err := livePods(s.ns)
		if err != nil {
			last[0] = err.Error()
			return false, ""
		}
		var ok [3]bool
		ok[0], last[0] = podsMatchDesired(s.ns, pods)
		ok[1], last[1] = noOrphans(s.ns, pods)
		ok[2], last[2] = noDuplicateReplicas(pods)
		return ok[0] && ok[1] && ok[2], ""
	})
	if settled {
		t.Logf("settled in %s", time.Since(begin).Round(time.Millisecond))
		last = [3]string{}
	}
	s.check("pods == desired for every group", last[0] == "", last[0])
	s.check("no orphan pod, Service, Job or RBAC object", last[1] == "", last[1])
	s.check("no duplicate replica index", last[2] == "", last[2])

	s.mu.Lock()
	stops := append([]stopWant(nil), s.stops...)
	s.mu.Unlock()
	for _, st := range stops {
		n := st.sim.Calls(s.ns, st.cluster, "POST", "/api/jobs/"+st.submisson+"/stop")
		s.check("stop sent exactly once", n == 1, fmt.Sprintf("%s/%s: job %s stopped %d times", s.ns, st.cluster, st.submisson, n))
	}

	s.checkStorm()

	stopAll()
	s.changes.stop()
	msg, ok := poll(time.Minute, func() (bool, string) {
		n := runtime.NumGoroutine()
		return n <= s.goroutines+goroutineSlack, fmt.Sprintf("%d goroutines, %d at the start", n, s.goroutines)
	})
	t.Logf("goroutines after stopping: %s", msg)
	// The test process's goroutines and the operator processes it
	// started are the harness's: raydar runs in child processes, which
	// stopAll kills, so neither check can fail because of raydar.
	s.selfCheck("no goroutine of the suite leaked", ok, msg+"\n"+goroutineDump())
	msg, ok = poll(30*time.Second, func() (bool, string) {
		c := childProcesses()
		return len(c) == 0, strings.Join(c, ", ")
	})
	s.selfCheck("no operator process the suite started is left", ok, msg)
}

// goroutineSlack allows for idle HTTP connections of the suite's own
// clients; a leaked operator or informer is hundreds of goroutines.
const goroutineSlack = 15

func goroutineDump() string {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	s := string(buf[:n])
	if len(s) > 6000 {
		s = s[:6000] + "…"
	}
	return s
}

// checkStorm bounds each object's status writes by its observable status
// changes and records the figure.
func (s *scenario) checkStorm() {
	writes := s.audit.StatusWrites(s.ns)
	changes := s.changes.snapshot()
	var (
		total, totalChanges int
		worst               string
		worstRatio          float64
		bad                 []string
	)
	keys := make([]string, 0, len(writes))
	for k := range writes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w, c := writes[k], changes[k]
		total += w
		totalChanges += c
		r := float64(w) / float64(max(c, 1))
		if r > worstRatio {
			worstRatio, worst = r, fmt.Sprintf("%s: %d writes for %d changes", k, w, c)
		}
		if w > stormFactor*max(c, 1) {
			var at []string
			for _, ts := range s.audit.StatusWriteTimes(s.ns, k) {
				at = append(at, ts.Format("15:04:05.000"))
			}
			bad = append(bad, fmt.Sprintf("%s: %d status writes for %d observable changes (writes at %s; changes at %s)", k, w, c,
				strings.Join(at, " "), strings.Join(s.changes.times(k), " ")))
		}
	}
	if os.Getenv("FAULTS_DEBUG") != "" {
		for _, r := range s.audit.Requests() {
			if strings.HasSuffix(r.Path, "/status") {
				s.t.Logf("%s %s %s %d %s", r.At.Format("15:04:05.000"), r.Method, r.Path, r.Code, r.Body)
			}
		}
	}
	s.t.Logf("status writes: %d for %d observable changes over %d objects (worst %s)", total, totalChanges, len(writes), worst)
	tally.figure("%s: %d status writes for %d observable changes over %d objects (worst %.2f per change)", s.t.Name(), total, totalChanges, len(writes), worstRatio)
	s.check("no status write storm (<= 3 writes per observable change)", len(bad) == 0, strings.Join(bad, "; "))
	s.selfCheck("status writes were counted", len(writes) > 0, "no status write went through the audit: the operator's client bypassed it")
}

// livePods lists the namespace's pods that are not being deleted.
func livePods(ns string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := cl.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// desiredWorkers is the number of pods a group should have.
func desiredWorkers(rc *rayv1.RayCluster, g *rayv1.WorkerGroupSpec) int {
	if (rc.Spec.Suspend != nil && *rc.Spec.Suspend) || (g.Suspend != nil && *g.Suspend) {
		return 0
	}
	n := int32(1)
	if g.Replicas != nil {
		n = *g.Replicas
	}
	if g.MinReplicas != nil && n < *g.MinReplicas {
		n = *g.MinReplicas
	}
	if g.MaxReplicas != nil && n > *g.MaxReplicas {
		n = *g.MaxReplicas
	}
	hosts := max(g.NumOfHosts, 1)
	return int(n * hosts)
}

// podsMatchDesired: every RayCluster has one head (none when suspended)
// and each group its desired number of workers.
func podsMatchDesired(ns string, pods []corev1.Pod) (bool, string) {
	list := &rayv1.RayClusterList{}
	if err := cl.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		return false, err.Error()
	}
	count := map[string]int{} // cluster/head, cluster/group
	for _, p := range pods {
		c := p.Labels[rayv1.RayClusterLabelKey]
		if p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode) {
			count[c+"/head"]++
		} else if g := p.Labels[rayv1.RayNodeGroupLabelKey]; g != "" {
			count[c+"/"+g]++
		}
	}
	var bad []string
	for i := range list.Items {
		rc := &list.Items[i]
		if rc.DeletionTimestamp != nil {
			bad = append(bad, rc.Name+" still being deleted")
			continue
		}
		head := 1
		if rc.Spec.Suspend != nil && *rc.Spec.Suspend {
			head = 0
		}
		if n := count[rc.Name+"/head"]; n != head {
			bad = append(bad, fmt.Sprintf("%s: %d head pods, want %d", rc.Name, n, head))
		}
		for j := range rc.Spec.WorkerGroupSpecs {
			g := &rc.Spec.WorkerGroupSpecs[j]
			if n, want := count[rc.Name+"/"+g.GroupName], desiredWorkers(rc, g); n != want {
				bad = append(bad, fmt.Sprintf("%s/%s: %d worker pods, want %d", rc.Name, g.GroupName, n, want))
			}
		}
	}
	return len(bad) == 0, strings.Join(bad, "; ")
}

// noOrphans: every pod, Service, Job, ServiceAccount, Role and RoleBinding
// of a Ray object has a live owner; none carries a cluster label without
// an owner.
func noOrphans(ns string, pods []corev1.Pod) (bool, string) {
	ctx := context.Background()
	live := map[types.UID]bool{}
	lists := []client.ObjectList{&rayv1.RayClusterList{}, &rayv1.RayJobList{}, &rayv1.RayServiceList{}, &rayv1.RayCronJobList{}, &batchv1.JobList{}}
	for _, l := range lists {
		if err := cl.List(ctx, l, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
	}
	for _, o := range metaItems(lists...) {
		if o.DeletionTimestamp == nil {
			live[o.UID] = true
		}
	}
	others := []client.ObjectList{&corev1.ServiceList{}, &corev1.ServiceAccountList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{}}
	for _, l := range others {
		if err := cl.List(ctx, l, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
	}
	items := metaItems(append(others, lists[4])...)
	for i := range pods {
		items = append(items, &pods[i].ObjectMeta)
	}
	var bad []string
	for _, o := range items {
		if o.DeletionTimestamp != nil {
			continue
		}
		if len(o.OwnerReferences) == 0 {
			if c := o.Labels[rayv1.RayClusterLabelKey]; c != "" {
				bad = append(bad, fmt.Sprintf("%s has label %s=%s and no owner", o.Name, rayv1.RayClusterLabelKey, c))
			}
			continue
		}
		for _, r := range o.OwnerReferences {
			if !live[r.UID] {
				bad = append(bad, fmt.Sprintf("%s is owned by %s %s, which is gone", o.Name, r.Kind, r.Name))
			}
		}
	}
	return len(bad) == 0, strings.Join(bad, "; ")
}

// metaItems returns the ObjectMeta of every item of the lists.
func metaItems(lists ...client.ObjectList) []*metav1.ObjectMeta {
	var out []*metav1.ObjectMeta
	for _, l := range lists {
		v := reflect.ValueOf(l).Elem().FieldByName("Items")
		for i := 0; i < v.Len(); i++ {
			out = append(out, v.Index(i).FieldByName("ObjectMeta").Addr().Interface().(*metav1.ObjectMeta))
		}
	}
	return out
}

// noDuplicateReplicas: no two live worker pods of a group share a replica
// (and host) index.
func noDuplicateReplicas(pods []corev1.Pod) (bool, string) {
	seen := map[string]string{}
	var bad []string
	for _, p := range pods {
		if p.Labels[rayv1.RayNodeTypeLabelKey] != string(rayv1.WorkerNode) {
			continue
		}
		idx, ok := p.Labels[rayv1.RayWorkerReplicaIndexKey]
		if !ok {
			bad = append(bad, p.Name+" has no replica index label")
			continue
		}
		k := p.Labels[rayv1.RayClusterLabelKey] + "/" + p.Labels[rayv1.RayNodeGroupLabelKey] + "/" + idx + "/" + p.Labels[rayv1.RayHostIndexKey]
		if other, dup := seen[k]; dup {
			bad = append(bad, fmt.Sprintf("%s and %s share replica %s", other, p.Name, k))
		}
		seen[k] = p.Name
	}
	return len(bad) == 0, strings.Join(bad, "; ")
}

// changeCounter counts the observable status changes of each RayCluster
// and RayJob of a namespace ("rayclusters/<name>", "rayjobs/<name>"): the
// updates a watcher sees in which the status differs from the one before.
type changeCounter struct {
	mu sync.Mutex
	n  map[string]int
	at map[string][]string
	// made are the RayClusters ever created in the namespace, by their
	// controller ("RayJob/name", "RayService/name"; "" for none).
	made map[string]map[string]bool
	done chan struct{}
	once sync.Once
}

// clustersOf are the names of the RayClusters the controller ("Kind/name")
// ever had, sorted.
func (c *changeCounter) clustersOf(controller string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for n := range c.made[controller] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func watchChanges(t testing.TB, ns string) *changeCounter {
	t.Helper()
	c := &changeCounter{n: map[string]int{}, at: map[string][]string{}, made: map[string]map[string]bool{}, done: make(chan struct{})}
	kinds := []struct {
		plural string
		obj    client.Object
		list   func() client.ObjectList
		status func(any) any
	}{
		{"rayclusters", &rayv1.RayCluster{}, func() client.ObjectList { return &rayv1.RayClusterList{} },
			func(o any) any { return o.(*rayv1.RayCluster).Status }},
		{"rayjobs", &rayv1.RayJob{}, func() client.ObjectList { return &rayv1.RayJobList{} },
			func(o any) any { return o.(*rayv1.RayJob).Status }},
		{"rayservices", &rayv1.RayService{}, func() client.ObjectList { return &rayv1.RayServiceList{} },
			func(o any) any { return o.(*rayv1.RayService).Status }},
	}
	var synced []toolscache.InformerSynced
	for _, k := range kinds {
		lw := &toolscache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
				l := k.list()
				err := cl.List(ctx, l, client.InNamespace(ns), &client.ListOptions{Raw: &opts})
				return l, err
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				return cl.Watch(ctx, k.list(), client.InNamespace(ns), &client.ListOptions{Raw: &opts})
			},
		}
		inf := toolscache.NewSharedIndexInformer(lw, k.obj, 0, toolscache.Indexers{})
		_, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				rc, ok := obj.(*rayv1.RayCluster)
				if !ok {
					return
				}
				owner := ""
				if ref := metav1.GetControllerOf(rc); ref != nil {
					owner = ref.Kind + "/" + ref.Name
				}
				c.mu.Lock()
				if c.made[owner] == nil {
					c.made[owner] = map[string]bool{}
				}
				c.made[owner][rc.Name] = true
				c.mu.Unlock()
			},
			UpdateFunc: func(oldObj, newObj any) {
				if reflect.DeepEqual(k.status(oldObj), k.status(newObj)) {
					return
				}
				name := newObj.(client.Object).GetName()
				c.mu.Lock()
				c.n[k.plural+"/"+name]++
				c.at[k.plural+"/"+name] = append(c.at[k.plural+"/"+name], time.Now().Format("15:04:05.000"))
				c.mu.Unlock()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		go inf.Run(c.done)
		synced = append(synced, inf.HasSynced)
	}
	if !toolscache.WaitForCacheSync(c.done, synced...) {
		t.Fatal("status watch did not sync")
	}
	t.Cleanup(c.stop)
	return c
}

func (c *changeCounter) stop() { c.once.Do(func() { close(c.done) }) }

func (c *changeCounter) times(key string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.at[key]...)
}

func (c *changeCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}
