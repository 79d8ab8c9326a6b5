package raydash

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// fakeRay answers the four capacity endpoints as a Ray head with a head
// node (10.0.0.5) and one worker (10.0.0.7), both CPU only, and 4 tasks
// waiting for {GPU: 2}.
type fakeRay struct {
	srv      *httptest.Server
	polls    atomic.Int32  // GET /api/v0/nodes seen
	inFlight *atomic.Int32 // shared by the fixture's heads
	maxIn    *atomic.Int32
	hold     chan struct{} // when not nil, /api/v0/nodes waits for it (or the caller giving up)
}

func newFakeRay(t *testing.T, hold chan struct{}, in, most *atomic.Int32) *fakeRay {
	f := &fakeRay{hold: hold, inFlight: in, maxIn: most}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+dashboard.StateNodesPath, func(w http.ResponseWriter, r *http.Request) {
		f.polls.Add(1)
		n := f.inFlight.Add(1)
		defer f.inFlight.Add(-1)
		for {
			m := f.maxIn.Load()
			if n <= m || f.maxIn.CompareAndSwap(m, n) {
				break
			}
		}
		if f.hold != nil {
			select {
			case <-f.hold:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprint(w, `{"result": true, "msg": "", "data": {"result": {"total": 2, "num_after_truncation": 2, "num_filtered": 2, "result": [
		 {"node_id": "w1", "node_ip": "10.0.0.7", "is_head_node": false, "state": "ALIVE", "node_name": "10.0.0.7", "resources_total": {"CPU": 4.0, "node:10.0.0.7": 1.0}},
		 {"node_id": "h1", "node_ip": "10.0.0.5", "is_head_node": true, "state": "ALIVE", "node_name": "10.0.0.5", "resources_total": {"CPU": 2.0}}],
		 "partial_failure_warning": null, "warnings": null}}}`)
	})
	mux.HandleFunc("GET "+dashboard.ClusterStatusPath, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"result": true, "msg": "Got cluster status.", "data": {"autoscalingStatus": null, "autoscalingError": null,
		 "clusterStatus": {"loadMetricsReport": {"usage": {"CPU": [1.0, 6.0]}, "resourceDemand": [[{"GPU": 2.0}, 4]], "pgDemand": [], "requestDemand": [], "nodeTypes": [],
		  "usageByNode": {"h1": {"CPU": [1.0, 2.0]}, "w1": {"CPU": [0.0, 4.0]}}, "idleTimeMap": {"h1": 0, "w1": 5000}}}}}`)
	})
	mux.HandleFunc("GET "+dashboard.ActorsSummaryPath, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"result": true, "msg": "", "data": {"result": {"total": 1, "result": {"node_id_to_summary": {"cluster": {"summary": {"A": {"class_name": "A", "state_counts": {"ALIVE": 2}}}, "total_actors": 2, "summary_by": "class"}}}, "partial_failure_warning": null, "warnings": null, "num_after_truncation": 2, "num_filtered": 2}}}`)
	})
	mux.HandleFunc("GET "+dashboard.JobsPath, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `[{"submission_id": "a", "status": "RUNNING", "entrypoint": "x"}]`)
	})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close") // no idle connections left to count as goroutines
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func cpuCluster(ns, name string) *rayv1.RayCluster {
	rc := cluster(ns, name)
	rc.Spec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{{GroupName: "small", RayStartParams: map[string]string{},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-worker",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}}}}}}
	return rc
}

type capFixture struct {
	book     book
	rays     map[string]*fakeRay
	inFlight atomic.Int32 // /api/v0/nodes calls in flight over every head
	maxIn    atomic.Int32
	mu       sync.Mutex
	rcs      map[string]*rayv1.RayCluster
	pods     map[string][]*corev1.Pod
	poller   *CapacityPoller
}

func newCapFixture(t *testing.T, opts CapacityOptions, hold chan struct{}, names ...string) *capFixture {
	f := &capFixture{book: book{}, rays: map[string]*fakeRay{}, rcs: map[string]*rayv1.RayCluster{}, pods: map[string][]*corev1.Pod{}}
	for _, n := range names {
		r := newFakeRay(t, hold, &f.inFlight, &f.maxIn)
		f.rays[n] = r
		f.book["ns/"+n] = r.srv.URL
		f.rcs["ns/"+n] = cpuCluster("ns", n)
		f.pods["ns/"+n] = []*corev1.Pod{
			{ObjectMeta: metav1.ObjectMeta{Name: n + "-head"}, Status: corev1.PodStatus{PodIP: "10.0.0.5"}},
			{ObjectMeta: metav1.ObjectMeta{Name: n + "-small-abcde"}, Status: corev1.PodStatus{PodIP: "10.0.0.7"}},
		}
	}
	res, err := New(Options{AddressBook: f.book})
	if err != nil {
		t.Fatal(err)
	}
	opts.Resolver = res
	opts.Cluster = func(ns, name string) (*rayv1.RayCluster, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.rcs[ns+"/"+name], nil
	}
	opts.Pods = func(ns, name string) ([]*podview.Pod, error) { return podview.All(f.pods[ns+"/"+name]), nil }
	p, err := NewCapacityPoller(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.poller = p
	t.Cleanup(p.Close)
	return f
}

// waitGet calls Get until it reports a result, for up to 20 s.
func waitGet(t *testing.T, p *CapacityPoller, name string) (*dashboard.Capacity, error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if c, err, ok := p.Get("ns", name); ok {
			return c, err
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no capacity for %s within 20 s", name)
	return nil, nil
}

func TestCapacityPollerMapsNodesAndSplitsDemand(t *testing.T) {
	f := newCapFixture(t, CapacityOptions{Interval: time.Hour}, nil, "a")
	if _, _, ok := f.poller.Get("ns", "a"); ok {
		t.Fatal("ok before any poll")
	}
	c, err := waitGet(t, f.poller, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 2 || c.Nodes[0].Pod != "a-head" || c.Nodes[1].Pod != "a-small-abcde" {
		t.Errorf("nodes not mapped to pods by IP: %+v", c.Nodes)
	}
	if len(c.Infeasible) != 1 || c.Infeasible[0].Count != 4 || c.Infeasible[0].Shape["GPU"] != 2 || len(c.Pending) != 0 {
		t.Errorf("4×{GPU: 2} on a CPU-only cluster must be infeasible; pending %+v infeasible %+v", c.Pending, c.Infeasible)
	}
	if c.Actors != 2 || c.RunningJobs != 1 {
		t.Errorf("actors %d jobs %d, want 2 and 1", c.Actors, c.RunningJobs)
	}
	for range 100 {
		f.poller.Get("ns", "a")
	}
	if n := f.rays["a"].polls.Load(); n != 1 {
		t.Errorf("%d polls with a 1 h interval after 101 Gets; want 1", n)
	}
}

func TestCapacityPollerUnknownCluster(t *testing.T) {
	f := newCapFixture(t, CapacityOptions{}, nil)
	if _, err := waitGet(t, f.poller, "nope"); err == nil {
		t.Error("a cluster that does not exist: want an error")
	}
}

func TestCapacityPollerForgetsUnwantedClusters(t *testing.T) {
	f := newCapFixture(t, CapacityOptions{Interval: 10 * time.Millisecond, Forget: 200 * time.Millisecond}, nil, "a")
	if _, err := waitGet(t, f.poller, "a"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for f.poller.wanted() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("cluster still polled 20 s after the last Get")
		}
		time.Sleep(5 * time.Millisecond)
	}
	n := f.rays["a"].polls.Load()
	if _, _, ok := f.poller.Get("ns", "a"); ok {
		t.Error("forgotten cluster: want ok=false, its old result dropped")
	}
	if _, err := waitGet(t, f.poller, "a"); err != nil || f.rays["a"].polls.Load() <= n {
		t.Errorf("asked for again: want a new poll (err %v)", err)
	}
}

func TestCapacityPollerBoundsConcurrency(t *testing.T) {
	hold := make(chan struct{})
	f := newCapFixture(t, CapacityOptions{Interval: time.Hour, Concurrency: 1}, hold, "a", "b", "c")
	for _, n := range []string{"a", "b", "c"} {
		f.poller.Get("ns", n)
	}
	go func() {
		for range 3 {
			hold <- struct{}{}
		}
	}()
	for _, n := range []string{"a", "b", "c"} {
		if _, err := waitGet(t, f.poller, n); err != nil {
			t.Fatal(err)
		}
	}
	if most := f.maxIn.Load(); most != 1 {
		t.Errorf("concurrency 1: saw %d polls at once", most)
	}
}

func TestCapacityPollerCloseStopsEverything(t *testing.T) {
	base := runtime.NumGoroutine()
	hold := make(chan struct{}) // never released: the poll is in flight at Close
	f := newCapFixture(t, CapacityOptions{Interval: 10 * time.Millisecond}, hold, "a")
	f.poller.Get("ns", "a")
	deadline := time.Now().Add(20 * time.Second)
	for f.inFlight.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no poll started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.poller.Close()
	f.rays["a"].srv.Close()
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err, ok := f.poller.Get("ns", "b"); ok || err == nil {
		t.Error("Get of a new cluster after Close: want an error, not ok")
	}
}

// wanted counts the clusters the poller still keeps.
func (p *CapacityPoller) wanted() int { return p.sched.Len() }
