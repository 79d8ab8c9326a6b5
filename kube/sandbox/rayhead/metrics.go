package rayhead

import (
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/raymetrics"
)

// Ray's gauges, simulated (issue 44). A real Ray node serves them on its
// own metrics export port; kwok's pod IPs route nowhere, so the head serves
// every node of its cluster at MetricsPath/<node IP>/metrics on the
// dashboard listener, and kube/raydash/addrbook publishes the base
// (kube/gauges.BookFetcher reads it). The text is the exposition Ray's
// exporter writes (rayapi/raymetrics' names and labels), written by
// prometheus/common's encoder.
//
// The values follow the simulated work, with a slow wobble so that a chart
// moves:
//   - CPU: a few percent for Ray's own processes, plus the node's placed
//     logical CPUs (job reservations, tasks, Serve replicas) and, on the
//     head, one core per RUNNING job (its driver, which runs there);
//   - GPUs: a node with logical GPUs has that many devices; as many as its
//     placed GPU demand (rounded up) are busy (~90 %), the rest idle (0 %);
//   - memory and the object store grow with what is placed;
//   - Serve: on the head, each RUNNING application with a route serves
//     ~20 requests a second, counted in ray_serve_num_http_requests_total,
//     with a latency histogram.

// MetricsPath is the base path of the simulated nodes' metrics.
const MetricsPath = "/raydar-sandbox/nodes"

// MetricsURL is the base URL under which each node's metrics answer.
func (h *Head) MetricsURL() string { return h.DashboardURL() + MetricsPath }

// simGPUMiB is a simulated GPU's memory (an A10G's 24 GB as nvidia-smi
// counts it).
const simGPUMiB = 23028

func wobble(now time.Time, seed string, period time.Duration) float64 {
	f := fnv.New32a()
	f.Write([]byte(seed))
	phase := float64(f.Sum32()%1000) / 1000 * 2 * math.Pi
	return math.Sin(2*math.Pi*float64(now.UnixNano())/float64(period) + phase)
}

func (h *Head) handleNodeMetrics(w http.ResponseWriter, r *http.Request) {
	ip := r.PathValue("ip")
	now := time.Now()
	h.mu.Lock()
	var node *simNode
	for _, n := range h.cap.nodes {
		if n.alive && n.IP == ip {
			node = n
			break
		}
	}
	if node == nil {
		h.mu.Unlock()
		http.Error(w, "no alive Ray node at "+ip+" (yet)", http.StatusServiceUnavailable)
		return
	}
	fams := h.nodeFamiliesLocked(node, now)
	h.mu.Unlock()
	w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	for _, f := range fams {
		if _, err := expfmt.MetricFamilyToText(w, f); err != nil {
			return
		}
	}
}

type lbl = [2]string

func family(name, help string, typ dto.MetricType) *dto.MetricFamily {
	return &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help), Type: typ.Enum()}
}

func gauge(f *dto.MetricFamily, v float64, labels ...lbl) {
	m := &dto.Metric{Gauge: &dto.Gauge{Value: proto.Float64(v)}}
	for _, l := range labels {
		m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(l[0]), Value: proto.String(l[1])})
	}
	f.Metric = append(f.Metric, m)
}

// nodeFamiliesLocked builds one node's exposition. h.mu must be held.
func (h *Head) nodeFamiliesLocked(n *simNode, now time.Time) []*dto.MetricFamily {
	typ := "worker"
	if n.Head {
		typ = "head"
	}
	session := lbl{raymetrics.LabelSession, "session_" + h.startedAt}
	node := []lbl{{raymetrics.LabelIsHead, strconv.FormatBool(n.Head)}, {"RayNodeType", typ}, session,
		{"Version", "2.52.0"}, {raymetrics.LabelIP, n.IP}}
	total, used := n.Total, n.used
	cores := total["CPU"]
	if cores <= 0 {
		cores = 1
	}
	busyCores := used["CPU"]
	if n.Head {
		for _, j := range h.jobs {
			if j.info.Status == dashboard.JobRunning {
				busyCores++
			}
		}
	}
	cpu := 3 + 2*wobble(now, n.IP, 40*time.Second) + 100*min(busyCores, cores)/cores*(0.9+0.08*wobble(now, n.IP+"c", 25*time.Second))
	cpu = max(0, min(100, cpu))
	memTotal := total["memory"]
	if memTotal <= 0 {
		memTotal = 4 << 30
	}
	memUsed := min(memTotal, 0.2*memTotal+used["memory"]+0.05*memTotal*(1+wobble(now, n.IP+"m", 60*time.Second)))

	var out []*dto.MetricFamily
	add := func(name, help string, v float64, labels []lbl) {
		f := family(name, help, dto.MetricType_GAUGE)
		gauge(f, v, labels...)
		out = append(out, f)
	}
	add(raymetrics.CPUUtilization, "Total CPU usage on a ray node", cpu, node)
	add(raymetrics.CPUCount, "Total CPUs available on a ray node", cores, node)
	add(raymetrics.MemUsed, "Memory usage on a ray node", memUsed, node)
	add("ray_node_mem_available", "Memory available on a ray node", memTotal-memUsed, node)
	add(raymetrics.MemTotal, "Total memory on a ray node", memTotal, node)
	if gpus := int(total["GPU"]); gpus > 0 {
		busy := int(math.Ceil(used["GPU"]))
		util := family(raymetrics.GPUUtilization, "Total GPUs usage on a ray node", dto.MetricType_GAUGE)
		gused := family(raymetrics.GRAMUsed, "Total GPU RAM usage on a ray node", dto.MetricType_GAUGE)
		gavail := family(raymetrics.GRAMAvailable, "Total GPU RAM available on a ray node", dto.MetricType_GAUGE)
		for i := range gpus {
			l := append([]lbl{{raymetrics.LabelGPUName, "NVIDIA A10G"}, {raymetrics.LabelGPUIndex, strconv.Itoa(i)}}, node...)
			u, m := 0.0, 0.0
			if i < busy {
				u = 90 + 6*wobble(now, n.IP+strconv.Itoa(i), 20*time.Second)
				m = 0.7 * simGPUMiB
			}
			gauge(util, u, l...)
			gauge(gused, m, l...)
			gauge(gavail, simGPUMiB-m, l...)
		}
		out = append(out, util, gused, gavail)
	}
	obj := family(raymetrics.ObjectStore, "Object store memory by various sub-kinds on this node", dto.MetricType_GAUGE)
	store := (16 + 64*busyCores) * (1 << 20) * (1 + 0.1*wobble(now, n.IP+"o", 90*time.Second))
	gauge(obj, store, lbl{"Location", "MMAP_SHM"}, lbl{"ObjectState", "SEALED"}, lbl{"NodeAddress", n.IP}, session)
	out = append(out, obj)
	res := family(raymetrics.Resources, "Logical Ray resources broken down by state", dto.MetricType_GAUGE)
	for _, name := range []string{"CPU", "GPU", "memory"} {
		if t := total[name]; t > 0 {
			gauge(res, used[name], lbl{raymetrics.LabelName, name}, lbl{raymetrics.LabelState, "USED"}, lbl{"NodeAddress", n.IP}, session)
			gauge(res, t-used[name], lbl{raymetrics.LabelName, name}, lbl{raymetrics.LabelState, "AVAILABLE"}, lbl{"NodeAddress", n.IP}, session)
		}
	}
	out = append(out, res)
	if n.Head {
		out = append(out, h.serveFamiliesLocked(now, session)...)
	}
	return out
}

// serveLatencyShare is the simulated proxies' latency distribution: the
// share of requests at or below each bound (ms).
var serveLatencyShare = []struct{ le, share float64 }{{5, 0.2}, {10, 0.55}, {25, 0.85}, {50, 0.95}, {100, 0.99}, {250, 0.998}, {500, 1}}

// serveFamiliesLocked advances and writes the simulated Serve traffic.
// h.mu must be held.
func (h *Head) serveFamiliesLocked(now time.Time, session lbl) []*dto.MetricFamily {
	s := &h.serve
	reqs := family(raymetrics.ServeRequests+"_total", "The number of HTTP requests processed.", dto.MetricType_COUNTER)
	lat := family(raymetrics.ServeLatencyMS, "The end-to-end latency of HTTP requests (measured from the Serve HTTP proxy).", dto.MetricType_HISTOGRAM)
	for name, a := range s.apps {
		if a.status == dashboard.AppRunning && a.routePrefix != nil && s.proxyUp {
			if !a.trafficAt.IsZero() {
				rate := 20 * (1 + 0.4*wobble(now, name, 45*time.Second))
				a.requests += rate * now.Sub(a.trafficAt).Seconds()
			}
			a.trafficAt = now
		} else {
			a.trafficAt = time.Time{}
		}
		if a.requests == 0 {
			continue
		}
		n := math.Floor(a.requests)
		labels := []*dto.LabelPair{{Name: proto.String("application"), Value: proto.String(name)},
			{Name: proto.String("route"), Value: proto.String(*a.routePrefixOr())}, {Name: proto.String("method"), Value: proto.String("GET")},
			{Name: proto.String(raymetrics.LabelStatus), Value: proto.String("200")},
			{Name: proto.String(session[0]), Value: proto.String(session[1])}}
		reqs.Metric = append(reqs.Metric, &dto.Metric{Label: labels, Counter: &dto.Counter{Value: proto.Float64(n)}})
		hist := &dto.Histogram{SampleCount: proto.Uint64(uint64(n)), SampleSum: proto.Float64(n * 14)}
		for _, b := range serveLatencyShare {
			hist.Bucket = append(hist.Bucket, &dto.Bucket{UpperBound: proto.Float64(b.le), CumulativeCount: proto.Uint64(uint64(math.Floor(n * b.share)))})
		}
		lat.Metric = append(lat.Metric, &dto.Metric{Label: labels, Histogram: hist})
	}
	if len(reqs.Metric) == 0 {
		return nil
	}
	return []*dto.MetricFamily{reqs, lat}
}

// routePrefixOr is the application's route prefix, "/" when it has none.
func (a *serveApp) routePrefixOr() *string {
	if a.routePrefix != nil {
		return a.routePrefix
	}
	s := "/"
	return &s
}
