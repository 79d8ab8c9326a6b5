package raymetrics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// DefaultMaxBytes caps one response. A Ray node's exposition is some tens of
// kilobytes (a few hundred series; more with many task and actor names), so
// 4 MiB is generous and still bounds what a misbehaving endpoint costs.
const DefaultMaxBytes = 4 << 20

// ErrTooLarge is returned for a body above the cap; nothing of it is used.
var ErrTooLarge = errors.New("metrics response larger than the cap")

// Series names, as the exporter writes them (namespace "ray", see doc.go).
const (
	CPUUtilization = "ray_node_cpu_utilization" // percent of the node, 0..100
	CPUCount       = "ray_node_cpu_count"
	MemUsed        = "ray_node_mem_used"  // bytes
	MemTotal       = "ray_node_mem_total" // bytes
	GPUUtilization = "ray_node_gpus_utilization"
	GRAMUsed       = "ray_node_gram_used"      // MiB (see GPU)
	GRAMAvailable  = "ray_node_gram_available" // MiB
	ObjectStore    = "ray_object_store_memory" // bytes, by Location and ObjectState
	Resources      = "ray_resources"           // by Name and State (USED, AVAILABLE)
	Tasks          = "ray_tasks"               // by State; summed, as the doc says
	Actors         = "ray_actors"              // by State
	// Serve's proxy: a counter (the Prometheus client adds _total to a
	// counter's name; older exporters wrote it bare) and a histogram.
	ServeRequests  = "ray_serve_num_http_requests"
	ServeLatencyMS = "ray_serve_http_request_latency_ms"
)

// Labels.
const (
	LabelIP        = "ip" // node gauges: the node's IP (NODE_TAG_KEYS)
	LabelIsHead    = "IsHeadNode"
	LabelSession   = "SessionName"
	LabelGPUIndex  = "GpuIndex"
	LabelGPUName   = "GpuDeviceName"
	LabelName      = "Name"
	LabelState     = "State"
	LabelStatus    = "status_code"
	LabelLocation  = "Location"
	locationSpills = "SPILLED"
)

// GPU is one GPU of a node, as its gauges say.
type GPU struct {
	Index int
	Name  string // GpuDeviceName, "" when the exporter had none
	// UtilPct is the GPU's utilisation, 0..100 (one record per GpuIndex).
	UtilPct float64
	// GRAMUsedMiB and GRAMAvailableMiB: the reporter writes
	// GpuUtilizationInfo's memory_used and memory_total - memory_used,
	// which are MiB (its example: memory_total 22731 for an A10G), though
	// system-metrics.rst calls the first bytes.
	GRAMUsedMiB, GRAMAvailableMiB float64
	HasGRAM                       bool
}

// Node is the node gauges of one Ray node (one "ip").
type Node struct {
	IP          string
	SessionName string
	IsHead      bool
	// Each Has* says the gauge was present; absent is unknown, not 0.
	CPUPct      float64
	HasCPU      bool
	CPUCount    float64
	HasCPUCount bool
	MemUsed     float64 // bytes
	MemTotal    float64
	HasMem      bool
	GPUs        []GPU // by Index
}

// Serve is the Serve proxy's HTTP series on one node, summed over routes,
// applications and methods.
type Serve struct {
	Present  bool
	Requests float64 // counter: requests since the proxy started
	Errors   float64 // of which status_code 5xx
	// Latency is the cumulative histogram (le -> count), summed over label
	// sets, sorted by upper bound; Count and SumMS its count and sum.
	Latency []Bucket
	Count   float64
	SumMS   float64
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperMS float64 // +Inf for the last
	Count   float64
}

// Exposition is one scrape of one node's metrics port.
type Exposition struct {
	// Nodes are the node gauges by IP. A node's own port serves its own
	// node; more than one means the endpoint is an aggregator.
	Nodes map[string]*Node
	// The rest is summed over the whole response, which on a Ray node's
	// own port is that node's raylet and workers.
	ObjectStoreBytes float64 // in memory (every Location but SPILLED)
	SpilledBytes     float64
	HasObjectStore   bool
	Resources        map[string]ResourceUse // by Name (CPU, GPU, memory, ...)
	Tasks            map[string]float64     // by State
	Actors           map[string]float64     // by State
	Serve            Serve
}

// ResourceUse is a logical resource's USED and AVAILABLE.
type ResourceUse struct{ Used, Available float64 }

// Node returns the node gauges whose "ip" is the pod's IP.
func (e *Exposition) Node(podIP string) (*Node, bool) {
	if podIP == "" {
		return nil, false
	}
	n, ok := e.Nodes[podIP]
	return n, ok
}

// Parse reads one exposition of at most maxBytes (DefaultMaxBytes when <= 0).
func Parse(r io.Reader, maxBytes int64) (*Exposition, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	body, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading Ray metrics: %w", err)
	}
	if int64(len(body)) > maxBytes {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, maxBytes)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(keepRead(body)))
	if err != nil {
		return nil, fmt.Errorf("parsing Ray metrics: %w", err)
	}
	return fromFamilies(fams), nil
}

// read are the families Parse reads; every other is dropped before the
// parser sees it (a busy node serves hundreds of per-component and per-task
// series raydar does not show: parsing them cost ten times the rest).
var read = map[string]bool{
	CPUUtilization: true, CPUCount: true, MemUsed: true, MemTotal: true,
	GPUUtilization: true, GRAMUsed: true, GRAMAvailable: true,
	ObjectStore: true, Resources: true, Tasks: true, Actors: true,
	ServeRequests: true, ServeRequests + "_total": true, ServeLatencyMS: true,
}

// keepRead returns the lines of body that belong to a family Parse reads:
// its # HELP and # TYPE lines and its samples (a histogram's _bucket, _sum
// and _count too). Other comments and blank lines go; a line it cannot
// name is kept, so that the parser judges it.
func keepRead(body []byte) []byte {
	out := make([]byte, 0, len(body)/4)
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i+1], body[i+1:]
		} else {
			body = nil
		}
		name, ok := familyOf(line)
		if !ok || read[name] {
			out = append(out, line...)
			if line[len(line)-1] != '\n' {
				out = append(out, '\n')
			}
		}
	}
	return out
}

// familyOf is the family a line belongs to; ok is false for a line that is
// not one of a family's (blank, another comment) and for one it cannot read
// (kept for the parser).
func familyOf(line []byte) (string, bool) {
	t := bytes.TrimLeft(line, " \t")
	if len(bytes.TrimSpace(t)) == 0 {
		return "", true // blank: dropped
	}
	if t[0] == '#' {
		f := bytes.Fields(t[1:])
		if len(f) >= 2 && (string(f[0]) == "HELP" || string(f[0]) == "TYPE") {
			return string(f[1]), true
		}
		return "", true // another comment: dropped
	}
	end := bytes.IndexAny(t, "{ \t")
	if end <= 0 {
		return "", false
	}
	name := string(t[:end])
	if !model.LegacyValidation.IsValidMetricName(name) {
		return "", false // not a sample line: the parser says what is wrong
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, cut := strings.CutSuffix(name, suf); cut && read[base] {
			return base, true
		}
	}
	return name, true
}

func fromFamilies(fams map[string]*dto.MetricFamily) *Exposition {
	e := &Exposition{
		Nodes:     map[string]*Node{},
		Resources: map[string]ResourceUse{},
		Tasks:     map[string]float64{},
		Actors:    map[string]float64{},
	}
	node := func(m *dto.Metric) *Node {
		ip := label(m, LabelIP)
		if ip == "" {
			return nil
		}
		n := e.Nodes[ip]
		if n == nil {
			n = &Node{IP: ip, SessionName: label(m, LabelSession), IsHead: label(m, LabelIsHead) == "true"}
			e.Nodes[ip] = n
		}
		return n
	}
	gpus := map[string]map[int]*GPU{} // ip -> index
	gpu := func(m *dto.Metric) *GPU {
		n := node(m)
		idx, err := strconv.Atoi(label(m, LabelGPUIndex))
		if n == nil || err != nil {
			return nil
		}
		if gpus[n.IP] == nil {
			gpus[n.IP] = map[int]*GPU{}
		}
		g := gpus[n.IP][idx]
		if g == nil {
			g = &GPU{Index: idx, Name: label(m, LabelGPUName)}
			gpus[n.IP][idx] = g
		}
		return g
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			v := value(m)
			if math.IsNaN(v) {
				continue
			}
			switch name {
			case CPUUtilization:
				if n := node(m); n != nil {
					n.CPUPct, n.HasCPU = v, true
				}
			case CPUCount:
				if n := node(m); n != nil {
					n.CPUCount, n.HasCPUCount = v, true
				}
			case MemUsed:
				if n := node(m); n != nil {
					n.MemUsed = v
					n.HasMem = n.HasMem || n.MemTotal > 0
				}
			case MemTotal:
				if n := node(m); n != nil {
					n.MemTotal, n.HasMem = v, true
				}
			case GPUUtilization:
				if g := gpu(m); g != nil {
					g.UtilPct = v
				}
			case GRAMUsed:
				if g := gpu(m); g != nil {
					g.GRAMUsedMiB, g.HasGRAM = v, true
				}
			case GRAMAvailable:
				if g := gpu(m); g != nil {
					g.GRAMAvailableMiB, g.HasGRAM = v, true
				}
			case ObjectStore:
				e.HasObjectStore = true
				if label(m, LabelLocation) == locationSpills {
					e.SpilledBytes += v
				} else {
					e.ObjectStoreBytes += v
				}
			case Resources:
				r := e.Resources[label(m, LabelName)]
				switch label(m, LabelState) {
				case "USED":
					r.Used += v
				case "AVAILABLE":
					r.Available += v
				}
				e.Resources[label(m, LabelName)] = r
			case Tasks:
				e.Tasks[label(m, LabelState)] += v
			case Actors:
				e.Actors[label(m, LabelState)] += v
			case ServeRequests, ServeRequests + "_total":
				e.Serve.Present = true
				e.Serve.Requests += v
				if strings.HasPrefix(label(m, LabelStatus), "5") {
					e.Serve.Errors += v
				}
			case ServeLatencyMS:
				e.Serve.Present = true
				addHistogram(&e.Serve, m.GetHistogram())
			}
		}
	}
	for ip, byIdx := range gpus {
		n := e.Nodes[ip]
		for _, g := range byIdx {
			n.GPUs = append(n.GPUs, *g)
		}
		sort.Slice(n.GPUs, func(a, b int) bool { return n.GPUs[a].Index < n.GPUs[b].Index })
	}
	return e
}

func addHistogram(s *Serve, h *dto.Histogram) {
	if h == nil {
		return
	}
	s.Count += float64(h.GetSampleCount())
	s.SumMS += h.GetSampleSum()
	for _, b := range h.GetBucket() {
		ub, c := b.GetUpperBound(), float64(b.GetCumulativeCount())
		i := sort.Search(len(s.Latency), func(i int) bool { return s.Latency[i].UpperMS >= ub })
		if i < len(s.Latency) && s.Latency[i].UpperMS == ub {
			s.Latency[i].Count += c
			continue
		}
		s.Latency = append(s.Latency, Bucket{})
		copy(s.Latency[i+1:], s.Latency[i:])
		s.Latency[i] = Bucket{UpperMS: ub, Count: c}
	}
	// The text parser drops the +Inf bucket into the sample count.
	if n := len(s.Latency); n == 0 || !math.IsInf(s.Latency[n-1].UpperMS, 1) {
		s.Latency = append(s.Latency, Bucket{UpperMS: math.Inf(1), Count: s.Count})
	} else {
		s.Latency[n-1].Count = s.Count
	}
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	case m.Histogram != nil:
		return 0
	}
	return math.NaN()
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Quantile estimates the q-quantile (0..1) of the requests between two
// cumulative histograms (before may be nil: since the proxy started), by
// linear interpolation inside the bucket, as Prometheus's
// histogram_quantile does. ok is false when no request fell between them.
func Quantile(q float64, before, after []Bucket) (ms float64, ok bool) {
	delta := make([]Bucket, len(after))
	for i, b := range after {
		delta[i] = b
		for _, p := range before {
			if p.UpperMS == b.UpperMS {
				delta[i].Count -= p.Count
			}
		}
	}
	if len(delta) == 0 {
		return 0, false
	}
	total := delta[len(delta)-1].Count
	if total <= 0 {
		return 0, false
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for _, b := range delta {
		if b.Count >= rank {
			if math.IsInf(b.UpperMS, 1) {
				return lower, true // above the highest finite bound
			}
			if b.Count == below {
				return b.UpperMS, true
			}
			return lower + (b.UpperMS-lower)*(rank-below)/(b.Count-below), true
		}
		lower, below = b.UpperMS, b.Count
	}
	return lower, true
}
