package gauges

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/raymetrics"
)

// realisticNode is a Ray node's exposition of the size a busy node serves:
// the 8-GPU worker's gauges (rayapi/raymetrics testdata) and 600 more series
// (per-component CPU and memory, tasks and actors by name and state, disk
// and network), which raydar reads past.
func realisticNode(b *testing.B) string {
	body, err := os.ReadFile("../../rayapi/raymetrics/testdata/worker-8gpu.prom")
	if err != nil {
		b.Fatal(err)
	}
	var s strings.Builder
	s.Write(body)
	s.WriteString("# TYPE ray_component_cpu_percentage gauge\n")
	for i := range 200 {
		fmt.Fprintf(&s, "ray_component_cpu_percentage{Component=\"ray::Trainer.step_%d\",SessionName=\"s\",Version=\"2.52.0\",ip=\"10.244.2.9\",pid=\"%d\"} %d.5\n", i, 1000+i, i%100)
	}
	s.WriteString("# TYPE ray_component_rss_mb gauge\n")
	for i := range 200 {
		fmt.Fprintf(&s, "ray_component_rss_mb{Component=\"ray::Trainer.step_%d\",SessionName=\"s\",Version=\"2.52.0\",ip=\"10.244.2.9\",pid=\"%d\"} %d\n", i, 1000+i, 300+i)
	}
	s.WriteString("# TYPE ray_tasks gauge\n")
	for i := range 200 {
		fmt.Fprintf(&s, "ray_tasks{Component=\"core_worker\",IsRetry=\"0\",JobId=\"01000000\",Name=\"step_%d\",NodeAddress=\"10.244.2.9\",SessionName=\"s\",Source=\"executor\",State=\"RUNNING\",Version=\"2.52.0\",WorkerId=\"w%d\"} 1\n", i, i)
	}
	return s.String()
}

// BenchmarkScrapeNode is one node's scrape as the poller does it, the
// transport aside: parse a realistic exposition, match the pod's IP.
func BenchmarkScrapeNode(b *testing.B) {
	body := realisticNode(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		e, err := raymetrics.Parse(strings.NewReader(body), 0)
		if err != nil {
			b.Fatal(err)
		}
		if n, ok := e.Node("10.244.2.9"); !ok || len(n.GPUs) != 8 {
			b.Fatal("no node")
		}
	}
}

// BenchmarkHistoryMemory: what the poller holds for 1,000 Ray nodes (100
// clusters of 10, each node with 8 GPUs) once 15 minutes of rounds have
// filled the rings: the latest gauges of each pod, each GPU's idle clock and
// the clusters' series; reported as heap bytes per node.
func BenchmarkHistoryMemory(b *testing.B) {
	e0, err := raymetrics.Parse(strings.NewReader(realisticNode(b)), 0)
	if err != nil {
		b.Fatal(err)
	}
	proto := e0.Nodes["10.244.2.9"]
	const clusters, perCluster = 100, 10
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		now := time.Unix(0, 0)
		p, _ := newPoller(Options{Fetcher: &fakeFetcher{}, Pods: func(string, string) ([]*podview.Pod, error) { return nil, nil },
			Now: func() time.Time { return now }, Forget: time.Hour})
		for c := range clusters {
			p.Get("ns", fmt.Sprint(c))
		}
		for range p.Capacity() {
			now = now.Add(DefaultInterval)
			for c := range clusters {
				k := types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(c)}
				p.sched.Want(k, func(e *entry) {
					pods := make([]PodGauges, perCluster)
					for n := range pods {
						node := *proto
						node.IP = fmt.Sprintf("10.%s.%d.9", k.Name, n)
						node.GPUs = append([]raymetrics.GPU(nil), proto.GPUs...)
						pods[n] = PodGauges{Pod: fmt.Sprintf("c%s-w%d", k.Name, n), IP: node.IP, Node: &node, At: now,
							Resources: map[string]raymetrics.ResourceUse{"CPU": {Used: 90, Available: 6}, "GPU": {Used: 7, Available: 1}}}
					}
					e.done, e.at, e.pods = true, now, pods
					p.record(k, e, now)
				})
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(clusters*perCluster), "heap-B/node")
		runtime.KeepAlive(p)
	}
}
