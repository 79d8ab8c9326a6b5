package raymetrics

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func parseFile(t *testing.T, name string) *Exposition {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e, err := Parse(f, 0)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return e
}

func TestHeadWithoutGPU(t *testing.T) {
	e := parseFile(t, "head-nogpu.prom")
	if _, ok := e.Node("10.244.9.9"); ok {
		t.Errorf("a node matched another pod's IP")
	}
	n, ok := e.Node("10.244.1.7")
	if !ok {
		t.Fatalf("no node for the pod's IP; nodes %v", e.Nodes)
	}
	want := Node{IP: "10.244.1.7", SessionName: "session_2026-12-05_21-10-03_118417_1", IsHead: true,
		CPUPct: 12.5, HasCPU: true, CPUCount: 4, HasCPUCount: true,
		MemUsed: 2 << 30, MemTotal: 8 << 30, HasMem: true}
	if d := cmp.Diff(want, *n); d != "" {
		t.Errorf("node (-want +got):\n%s", d)
	}
	if e.ObjectStoreBytes != 100<<20 || e.SpilledBytes != 50<<20 || !e.HasObjectStore {
		t.Errorf("object store %v in memory, %v spilled", e.ObjectStoreBytes, e.SpilledBytes)
	}
	if d := cmp.Diff(map[string]ResourceUse{"CPU": {Used: 1, Available: 3}, "memory": {Available: 5e9}}, e.Resources); d != "" {
		t.Errorf("resources (-want +got):\n%s", d)
	}
	// ray_tasks is summed by State (system-metrics.rst): the owner's +2
	// and the executor's -1 SUBMITTED_TO_WORKER leave 1.
	if d := cmp.Diff(map[string]float64{"SUBMITTED_TO_WORKER": 1, "RUNNING": 1}, e.Tasks); d != "" {
		t.Errorf("tasks (-want +got):\n%s", d)
	}
	if e.Actors["ALIVE"] != 1 {
		t.Errorf("actors %v", e.Actors)
	}
	s := e.Serve
	if !s.Present || s.Requests != 1203 || s.Errors != 3 || s.Count != 1200 || s.SumMS != 42000 {
		t.Errorf("serve %+v", s)
	}
	p50, ok := Quantile(0.5, nil, s.Latency)
	if !ok || math.Abs(p50-(10+40*500.0/800)) > 1e-9 { // rank 600 of 1200: in (10,50], 500 of its 800
		t.Errorf("p50 = %v, %v", p50, ok)
	}
	p99, _ := Quantile(0.99, nil, s.Latency)
	if p99 <= 100 || p99 > 500 {
		t.Errorf("p99 = %v, want in (100, 500]", p99)
	}
}

func TestWorkerWithEightGPUs(t *testing.T) {
	e := parseFile(t, "worker-8gpu.prom")
	n, ok := e.Node("10.244.2.9")
	if !ok {
		t.Fatal("no node for the pod's IP")
	}
	if n.IsHead || !n.HasCPU || n.CPUPct != 87.25 || n.CPUCount != 96 {
		t.Errorf("node %+v", n)
	}
	if len(n.GPUs) != 8 {
		t.Fatalf("%d GPUs, want 8", len(n.GPUs))
	}
	for i, g := range n.GPUs {
		if g.Index != i || g.Name != "NVIDIA A100-SXM4-80GB" || !g.HasGRAM || g.GRAMUsedMiB+g.GRAMAvailableMiB != 81920 {
			t.Errorf("GPU %d: %+v", i, g)
		}
	}
	if g := n.GPUs[3]; g.UtilPct != 0 || g.GRAMUsedMiB != 0 {
		t.Errorf("GPU 3 should be idle: %+v", g)
	}
	if g := n.GPUs[2]; g.UtilPct != 99 || g.GRAMUsedMiB != 71000 {
		t.Errorf("GPU 2: %+v", g)
	}
	if e.HasObjectStore || e.Serve.Present {
		t.Errorf("series the response does not carry: object store %v, serve %v", e.HasObjectStore, e.Serve.Present)
	}
}

func TestNodeWithoutGaugesIsNotReporting(t *testing.T) {
	// A node whose agent has not written its first record yet serves only
	// the raylet's series: no node gauges, so nothing for its IP.
	e, err := Parse(strings.NewReader(`# TYPE ray_resources gauge
ray_resources{Name="CPU",State="AVAILABLE"} 4
`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Node("10.244.1.7"); ok {
		t.Error("a node without gauges matched")
	}
}

func TestCapAndGarbage(t *testing.T) {
	body := strings.Repeat("# padding line that is only a comment\n", 100)
	if _, err := Parse(strings.NewReader(body), 1000); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the cap: %v, want ErrTooLarge", err)
	}
	if _, err := Parse(strings.NewReader(body), int64(len(body))); err != nil {
		t.Errorf("at the cap: %v", err)
	}
	if _, err := Parse(strings.NewReader("<html>502 Bad Gateway</html>\n"), 0); err == nil {
		t.Error("an HTML error page parsed as metrics")
	}
}

func TestQuantileBetweenScrapes(t *testing.T) {
	before := []Bucket{{10, 100}, {50, 100}, {math.Inf(1), 100}}
	after := []Bucket{{10, 100}, {50, 200}, {math.Inf(1), 200}}
	if got, ok := Quantile(0.5, before, after); !ok || got != 30 { // all 100 new requests in (10,50]
		t.Errorf("p50 = %v, %v; want 30", got, ok)
	}
	if _, ok := Quantile(0.5, after, after); ok {
		t.Error("a quantile of no requests")
	}
}

// The families Parse does not read are dropped before the parser, and the
// ones it reads are unchanged by that: a histogram's samples, a counter
// with its _total, a sample after a comment.
func TestOtherFamiliesAreDroppedNotMisread(t *testing.T) {
	body := `# HELP ray_component_rss_mb RSS usage of all components on the node.
# TYPE ray_component_rss_mb gauge
ray_component_rss_mb{Component="raylet",ip="10.0.0.1"} 120
# an unrelated comment
ray_node_cpu_utilization{ip="10.0.0.1"} 40

ray_node_cpu_count{ip="10.0.0.1"} 2
`
	if got := string(keepRead([]byte(body))); got != "ray_node_cpu_utilization{ip=\"10.0.0.1\"} 40\nray_node_cpu_count{ip=\"10.0.0.1\"} 2\n" {
		t.Errorf("kept %q", got)
	}
	e, err := Parse(strings.NewReader(body), 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := e.Node("10.0.0.1"); !ok || n.CPUPct != 40 || n.CPUCount != 2 {
		t.Errorf("node %+v", n)
	}
}
