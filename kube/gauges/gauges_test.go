package gauges

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func pod(name, ip string, head bool, port bool) *podview.Pod {
	typ := rayv1.WorkerNode
	if head {
		typ = rayv1.HeadNode
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{
			rayv1.RayClusterLabelKey: "c", rayv1.RayNodeTypeLabelKey: string(typ), rayv1.RayNodeGroupLabelKey: "g"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip},
	}
	c := corev1.Container{Name: "ray-head"}
	if port {
		c.Ports = []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 8265}, {Name: "metrics", ContainerPort: 8080}}
	}
	p.Spec.Containers = []corev1.Container{c}
	return podview.Of(p)
}

// node is the exposition of a node at ip in Ray's shape, with a GPU per
// value of gpus.
func node(ip string, cpu float64, gpus ...float64) string {
	l := fmt.Sprintf(`IsHeadNode="false",SessionName="s",ip=%q`, ip)
	s := fmt.Sprintf("ray_node_cpu_utilization{%s} %g\nray_node_cpu_count{%s} 4\nray_node_mem_used{%s} 1e9\nray_node_mem_total{%s} 4e9\n", l, cpu, l, l, l)
	for i, u := range gpus {
		s += fmt.Sprintf("ray_node_gpus_utilization{GpuIndex=\"%d\",GpuDeviceName=\"T4\",%s} %g\n", i, l, u)
	}
	return s
}

type fakeFetcher struct {
	mu     sync.Mutex
	bodies map[string]string // pod -> body
	errs   map[string]error
	calls  []string
}

func (f *fakeFetcher) Fetch(_ context.Context, p *podview.Pod, port int32) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s:%d", p.Name, port))
	if err := f.errs[p.Name]; err != nil {
		return nil, err
	}
	return io.NopCloser(strings.NewReader(f.bodies[p.Name])), nil
}

func forbidden() error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "pods/proxy"}, "h:8080", fmt.Errorf("user cannot get pods/proxy"))
}

func TestScrapeMatchesByIPAndSaysWhyUnknown(t *testing.T) {
	f := &fakeFetcher{
		bodies: map[string]string{
			"h":     node("10.0.0.1", 20),
			"w1":    node("10.0.0.2", 80, 100, 0),
			"other": node("10.0.0.99", 50), // answers for another IP
		},
		errs: map[string]error{"late": apierrors.NewServiceUnavailable("error trying to reach service: connection refused")},
	}
	pending := pod("pending", "", false, true)
	pending.Status.Phase = corev1.PodPending
	pods := []*podview.Pod{pod("w1", "10.0.0.2", false, true), pod("h", "10.0.0.1", true, true),
		pod("noport", "10.0.0.3", false, false), pending, pod("other", "10.0.0.4", false, true), pod("late", "10.0.0.5", false, true)}
	out, forb := ScrapeCluster(context.Background(), ScrapeOptions{Fetcher: f}, pods)
	if forb {
		t.Fatal("forbidden")
	}
	got := map[string]string{}
	for _, g := range out {
		if g.Known() {
			got[g.Pod] = fmt.Sprintf("cpu %g gpus %d", g.Node.CPUPct, len(g.Node.GPUs))
		} else {
			got[g.Pod] = string(g.Reason)
		}
	}
	want := map[string]string{"h": "cpu 20 gpus 0", "w1": "cpu 80 gpus 2", "noport": "metrics port absent",
		"pending": "pod not running", "other": "not yet reporting", "late": "not yet reporting"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if f.calls[0] != "h:8080" {
		t.Errorf("first request %v, want the head's metrics port first", f.calls)
	}
}

func TestForbiddenIsAskedOnceThenBacksOff(t *testing.T) {
	f := &fakeFetcher{errs: map[string]error{"h": forbidden(), "w1": forbidden()}}
	pods := []*podview.Pod{pod("h", "10.0.0.1", true, true), pod("w1", "10.0.0.2", false, true)}
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	p, err := newPoller(Options{Fetcher: f, Pods: func(string, string) ([]*podview.Pod, error) { return pods, nil }, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	round := func() Cluster {
		p.Get("ns", "c")
		p.sched.StartDue()
		p.sched.Wait()
		return p.Get("ns", "c")
	}
	c := round()
	if !c.Forbidden || len(f.calls) != 1 {
		t.Fatalf("forbidden %v after %v; want one request", c.Forbidden, f.calls)
	}
	for _, g := range c.Pods {
		if g.Reason != Forbidden || g.Known() {
			t.Errorf("%s: %+v", g.Pod, g)
		}
	}
	for range 10 { // a minute of rounds
		now = now.Add(DefaultInterval + time.Second)
		round()
	}
	if len(f.calls) != 1 {
		t.Errorf("asked again within the backoff: %v", f.calls)
	}
	now = now.Add(DefaultForbiddenBackoff)
	round()
	if len(f.calls) != 2 {
		t.Errorf("not asked again after the backoff: %v", f.calls)
	}
}

func TestHistoryAndIdleGPU(t *testing.T) {
	f := &fakeFetcher{bodies: map[string]string{"h": node("10.0.0.1", 10), "w1": node("10.0.0.2", 50, 90, 1)}}
	pods := []*podview.Pod{pod("h", "10.0.0.1", true, true), pod("w1", "10.0.0.2", false, true)}
	now := time.Unix(1000, 0)
	p, _ := newPoller(Options{Fetcher: f, Pods: func(string, string) ([]*podview.Pod, error) { return pods, nil },
		Now: func() time.Time { return now }, Forget: time.Hour})
	var c Cluster
	for i := range 300 { // 25 minutes at 5 s
		if i > 0 {
			now = now.Add(5 * time.Second)
		}
		p.Get("ns", "c")
		p.sched.StartDue()
		p.sched.Wait()
	}
	c = p.Get("ns", "c")
	if n := len(c.History[CPU]); n != p.Capacity() || n != 181 {
		t.Errorf("%d CPU points, want the cap %d (15 min at 5 s)", n, p.Capacity())
	}
	if last, _ := c.Last(CPU); last.V != 30 { // (10% of 4 + 50% of 4) / 8 cores
		t.Errorf("cluster CPU %v, want 30", last.V)
	}
	if last, _ := c.Last(GPU); last.V != 45.5 {
		t.Errorf("cluster GPU %v, want 45.5", last.V)
	}
	if len(c.GPUs) != 2 {
		t.Fatalf("GPUs %+v", c.GPUs)
	}
	busy, idle := c.GPUs[0], c.GPUs[1]
	if p.Idle(busy, now) || busy.IdleSeconds != 0 {
		t.Errorf("busy GPU counted idle: %+v", busy)
	}
	if !p.Idle(idle, now) || idle.IdleFor(now) != 299*5*time.Second || idle.IdleGPUHours() != 299*5/3600.0 {
		t.Errorf("idle GPU: idle %v for %v, %v GPU-hours", p.Idle(idle, now), idle.IdleFor(now), idle.IdleGPUHours())
	}
	// It gets work: no longer idle, its GPU-hours stay.
	f.bodies["w1"] = node("10.0.0.2", 50, 90, 60)
	now = now.Add(5 * time.Second)
	p.sched.StartDue()
	p.sched.Wait()
	c = p.Get("ns", "c")
	if g := c.GPUs[1]; p.Idle(g, now) || g.IdleFor(now) != 0 || g.IdleSeconds != 299*5 {
		t.Errorf("after work: %+v", g)
	}
}

func TestServeRateAndLatency(t *testing.T) {
	body := func(n, le10, le50 int) string {
		return node("10.0.0.1", 1) + fmt.Sprintf(`ray_serve_num_http_requests_total{route="/",status_code="200"} %d
# TYPE ray_serve_http_request_latency_ms histogram
ray_serve_http_request_latency_ms_bucket{route="/",le="10"} %d
ray_serve_http_request_latency_ms_bucket{route="/",le="50"} %d
ray_serve_http_request_latency_ms_bucket{route="/",le="+Inf"} %d
ray_serve_http_request_latency_ms_count{route="/"} %d
ray_serve_http_request_latency_ms_sum{route="/"} 1
`, n, le10, le50, n, n)
	}
	f := &fakeFetcher{bodies: map[string]string{"h": body(100, 100, 100)}}
	pods := []*podview.Pod{pod("h", "10.0.0.1", true, true)}
	now := time.Unix(1000, 0)
	p, _ := newPoller(Options{Fetcher: f, Pods: func(string, string) ([]*podview.Pod, error) { return pods, nil }, Now: func() time.Time { return now }})
	p.Get("ns", "c")
	p.sched.StartDue()
	p.sched.Wait()
	f.bodies["h"] = body(200, 100, 200) // 100 requests in 10 s, all in (10, 50]
	now = now.Add(10 * time.Second)
	p.sched.StartDue()
	p.sched.Wait()
	c := p.Get("ns", "c")
	rps, _ := c.Last(ServeRPS)
	p50, _ := c.Last(ServeP50MS)
	if rps.V != 10 || p50.V != 30 {
		t.Errorf("rps %v p50 %v, want 10 and 30", rps.V, p50.V)
	}
}

func TestCellsSayUnknownNotZero(t *testing.T) {
	unknown := PodGauges{Reason: Forbidden}
	if c := unknown.CPUCell() + unknown.MemCell() + unknown.GPUCell() + unknown.GRAMCell(); c != "????" {
		t.Errorf("unknown cells %q, want ????", c)
	}
	if unknown.Why() != "proxy forbidden" {
		t.Errorf("why %q", unknown.Why())
	}
	for n, want := range map[float64]string{0: "0", 512: "512", 1536: "1.5Ki", 8 << 30: "8Gi", 3.25 * (1 << 30): "3.2Gi", 160 << 30: "160Gi"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%v) = %q, want %q", n, got, want)
		}
	}
}
