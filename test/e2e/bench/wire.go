package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// What a launch asks of the API server, to compare raydar's with the
// floor's (issue 47: the pods' initial list took 1.3–2.4 s in raydar
// against 1.0 s in the floor's bare cache): every request of one client
// from the audit log (when it was received, when its response started or
// completed), and the kube-apiserver's own figures from its /metrics
// around the launch: requests by verb and resource, and how long each
// watch-list's initial events took to send (client-go's informers list
// through a watch with sendInitialEvents since client-go 1.35's
// WatchListClient, so the audit log's "watch" has no end for the list).

// auditLine is what the timeline reads of an audit event.
type auditLine struct {
	AuditID        string    `json:"auditID"`
	Stage          string    `json:"stage"`
	Verb           string    `json:"verb"`
	RequestURI     string    `json:"requestURI"`
	UserAgent      string    `json:"userAgent"`
	Received       time.Time `json:"requestReceivedTimestamp"`
	StageAt        time.Time `json:"stageTimestamp"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// requestTimeline lists the requests of the user agents starting with ua
// received in [from, to], times relative to from: received, and the
// response's start (watches) or end (everything else).
func requestTimeline(stateDir, ua string, from, to time.Time) (string, error) {
	paths, err := filepath.Glob(filepath.Join(stateDir, "audit-*.log"))
	if err != nil {
		return "", err
	}
	sort.Strings(paths)
	paths = append(paths, filepath.Join(stateDir, "audit.log"))
	byID := map[string]*auditLine{}
	var order []string
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
		for sc.Scan() {
			var e auditLine
			if json.Unmarshal(sc.Bytes(), &e) != nil || !strings.HasPrefix(e.UserAgent, ua) {
				continue
			}
			if e.Received.Before(from) || e.Received.After(to) {
				continue
			}
			if old, ok := byID[e.AuditID]; ok {
				if e.Stage == "ResponseComplete" || e.Stage == "Panic" {
					*old = e
				}
				continue
			}
			byID[e.AuditID] = &e
			order = append(order, e.AuditID)
		}
		f.Close()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| received (s) | %s (s) | verb | request | code |\n|---|---|---|---|---|\n", "response started/complete")
	for _, id := range order {
		e := byID[id]
		code := 0
		if e.ResponseStatus != nil {
			code = e.ResponseStatus.Code
		}
		uri := e.RequestURI
		if len(uri) > 160 {
			uri = uri[:157] + "..."
		}
		fmt.Fprintf(&b, "| %.3f | %.3f (%s) | %s | `%s` | %d |\n", e.Received.Sub(from).Seconds(), e.StageAt.Sub(from).Seconds(), e.Stage, e.Verb, uri, code)
	}
	return b.String(), nil
}

// apiMetrics is the part of the kube-apiserver's /metrics the wire
// comparison reads: requests by verb and resource (counted as they end,
// so an open watch is not among them), and the watch-lists' count and
// summed seconds by resource.
type apiMetrics struct {
	requests      map[string]float64 // "VERB group/resource"
	watchListN    map[string]float64 // resource
	watchListSecs map[string]float64
	gcs           float64 // the kube-apiserver's garbage collections
	// watchBytes, watchEvents: the watch events' bytes sent and their
	// number, by resource (protobuf or JSON tells in the bytes per event).
	watchBytes, watchEvents map[string]float64
}

// scrapeMetrics reads the kube-apiserver's /metrics through cfg.
func scrapeMetrics(ctx context.Context, cfg *rest.Config) (apiMetrics, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return apiMetrics{}, err
	}
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return apiMetrics{}, err
	}
	return parseMetrics(string(raw)), nil
}

// parseMetrics reads the figures of apiMetrics from /metrics' text
// (expfmt's parser, as rayapi/raymetrics reads Ray's, which wants the last
// line ended too); what follows a line it cannot parse reads as no figures.
func parseMetrics(text string) apiMetrics {
	m := apiMetrics{requests: map[string]float64{}, watchListN: map[string]float64{}, watchListSecs: map[string]float64{},
		watchBytes: map[string]float64{}, watchEvents: map[string]float64{}}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, _ := parser.TextToMetricFamilies(strings.NewReader(text))
	for _, s := range samples(fams) {
		res := s.labels["group"] + "/" + s.labels["resource"]
		switch s.name {
		case "apiserver_request_total":
			if sub := s.labels["subresource"]; sub != "" {
				res += "/" + sub
			}
			m.requests[s.labels["verb"]+" "+res] += s.v
		case "apiserver_watch_list_duration_seconds_count":
			m.watchListN[res] += s.v
		case "apiserver_watch_list_duration_seconds_sum":
			m.watchListSecs[res] += s.v
		case "apiserver_watch_events_sizes_sum":
			m.watchBytes[res] += s.v
		case "apiserver_watch_events_total":
			m.watchEvents[res] += s.v
		case "go_gc_duration_seconds_count":
			m.gcs += s.v
		}
	}
	return m
}

// sample is one value of the exposition under its text-format name: a
// histogram's or summary's count and sum as NAME_count and NAME_sum.
type sample struct {
	name   string
	labels map[string]string
	v      float64
}

func samples(fams map[string]*dto.MetricFamily) []sample {
	var out []sample
	for name, f := range fams {
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			add := func(n string, v float64) { out = append(out, sample{n, labels, v}) }
			switch {
			case mt.Counter != nil:
				add(name, mt.GetCounter().GetValue())
			case mt.Gauge != nil:
				add(name, mt.GetGauge().GetValue())
			case mt.Untyped != nil:
				add(name, mt.GetUntyped().GetValue())
			case mt.Histogram != nil:
				add(name+"_count", float64(mt.GetHistogram().GetSampleCount()))
				add(name+"_sum", mt.GetHistogram().GetSampleSum())
			case mt.Summary != nil:
				add(name+"_count", float64(mt.GetSummary().GetSampleCount()))
				add(name+"_sum", mt.GetSummary().GetSampleSum())
			}
		}
	}
	return out
}

// metricsDiff says what the API server served between two scrapes: the
// requests that ended, by verb and resource, and each resource's
// watch-lists (count and seconds to their initial events' end).
func metricsDiff(a, b apiMetrics) string {
	var parts []string
	for k, v := range b.requests {
		if d := v - a.requests[k]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s ×%.0f", k, d))
		}
	}
	sort.Strings(parts)
	var wl []string
	for k, n := range b.watchListN {
		if d := n - a.watchListN[k]; d > 0 {
			wl = append(wl, fmt.Sprintf("%s ×%.0f %.3f s", k, d, b.watchListSecs[k]-a.watchListSecs[k]))
		}
	}
	sort.Strings(wl)
	var ev []string
	for k, n := range b.watchEvents {
		if d := n - a.watchEvents[k]; d > 0 {
			ev = append(ev, fmt.Sprintf("%s %.0f events %.0f B each", k, d, (b.watchBytes[k]-a.watchBytes[k])/d))
		}
	}
	sort.Strings(ev)
	return fmt.Sprintf("requests ended: %s; watch-lists (initial events sent): %s; watch events sent: %s; the kube-apiserver's garbage collections: %.0f", strings.Join(parts, ", "), strings.Join(wl, ", "), strings.Join(ev, ", "), b.gcs-a.gcs)
}
