package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The /metrics figures the wire comparison reads: requests by verb and
// resource, the watch-lists' seconds and the events' bytes by resource,
// as a diff between two scrapes.
func TestMetricsDiff(t *testing.T) {
	parse := parseMetrics
	a := parse(`# HELP x
apiserver_request_total{code="200",component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 3
apiserver_watch_list_duration_seconds_count{group="",resource="pods",scope="cluster",version="v1"} 1
apiserver_watch_list_duration_seconds_sum{group="",resource="pods",scope="cluster",version="v1"} 0.5
apiserver_watch_events_sizes_sum{group="",resource="pods",version="v1"} 1000
apiserver_watch_events_total{group="",resource="pods",version="v1"} 10`)
	b := parse(`apiserver_request_total{code="200",component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 4
apiserver_watch_list_duration_seconds_count{group="",resource="pods",scope="cluster",version="v1"} 2
apiserver_watch_list_duration_seconds_sum{group="",resource="pods",scope="cluster",version="v1"} 1.25
apiserver_watch_events_sizes_sum{group="",resource="pods",version="v1"} 31000
apiserver_watch_events_total{group="",resource="pods",version="v1"} 20`)
	got := metricsDiff(a, b)
	for _, want := range []string{"LIST /pods ×1", "/pods ×1 0.750 s", "/pods 10 events 3000 B each"} {
		if !strings.Contains(got, want) {
			t.Errorf("metricsDiff = %q, want %q in it", got, want)
		}
	}
}

// The timeline lists one client's requests in the window, a watch by
// its later stage, and leaves out other clients and other times.
func TestRequestTimeline(t *testing.T) {
	dir := t.TempDir()
	log := `{"auditID":"1","stage":"ResponseStarted","verb":"watch","requestURI":"/api/v1/pods?watch=true","userAgent":"raydar/v1","requestReceivedTimestamp":"2026-12-06T07:00:00.100000Z","stageTimestamp":"2026-12-06T07:00:00.101000Z"}
{"auditID":"2","stage":"ResponseComplete","verb":"get","requestURI":"/api","userAgent":"kubectl/v1","requestReceivedTimestamp":"2026-12-06T07:00:00.200000Z","stageTimestamp":"2026-12-06T07:00:00.201000Z"}
{"auditID":"1","stage":"ResponseComplete","verb":"watch","requestURI":"/api/v1/pods?watch=true","userAgent":"raydar/v1","requestReceivedTimestamp":"2026-12-06T07:00:00.100000Z","stageTimestamp":"2026-12-06T07:00:01.500000Z","responseStatus":{"code":200}}
{"auditID":"3","stage":"ResponseComplete","verb":"get","requestURI":"/late","userAgent":"raydar/v1","requestReceivedTimestamp":"2026-12-06T07:00:09.000000Z","stageTimestamp":"2026-12-06T07:00:09.001000Z"}
`
	if err := os.WriteFile(filepath.Join(dir, "audit.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
	got, err := requestTimeline(dir, "raydar/", from, from.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "| 0.100 | 1.500 (ResponseComplete) | watch | `/api/v1/pods?watch=true` | 200 |") {
		t.Errorf("the pods watch is not in the timeline with its end:\n%s", got)
	}
	if strings.Contains(got, "/late") || strings.Contains(got, "`/api`") {
		t.Errorf("the timeline holds a request outside its client or window:\n%s", got)
	}
}

// -floor-clients refuses a key it does not know, naming it.
func TestPickFloorClients(t *testing.T) {
	if _, err := pickFloorClients("clusters+pods,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("pickFloorClients(nope) = %v, want an error naming it", err)
	}
	cs, err := pickFloorClients("s:source,clusters+pods")
	if err != nil || len(cs) != 2 || cs[0].key != "s:source" || cs[1].key != "clusters+pods" {
		t.Errorf("pickFloorClients = %v, %v", cs, err)
	}
}
