package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/raydar/raydar/kube/gauges"
	"github.com/raydar/raydar/rayapi/raymetrics"
)

func topRows() []topRow {
	worker := &raymetrics.Node{IP: "10.0.0.2", CPUPct: 87, HasCPU: true, CPUCount: 8, HasCPUCount: true, MemUsed: 2 << 30, MemTotal: 8 << 30, HasMem: true,
		GPUs: []raymetrics.GPU{{Index: 0, Name: "A10G", UtilPct: 92, GRAMUsedMiB: 16000, GRAMAvailableMiB: 7028, HasGRAM: true},
			{Index: 1, Name: "A10G", UtilPct: 0, GRAMAvailableMiB: 23028, HasGRAM: true}}}
	return []topRow{
		{Namespace: "ns", Cluster: "c", PodGauges: gauges.PodGauges{Pod: "c-head", Head: true, Reason: gauges.NotReporting}},
		{Namespace: "ns", Cluster: "c", PodGauges: gauges.PodGauges{Pod: "c-w1", Node: worker}},
	}
}

func TestTopNodesSaysUnknownWithItsReason(t *testing.T) {
	var out bytes.Buffer
	if err := writeTopNodes(&out, outputTable, topRows(), false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("output:\n%s", out.String())
	}
	if f := strings.Fields(lines[1]); strings.Join(f[3:7], " ") != "? ? ? ?" || !strings.Contains(lines[1], "not yet reporting") {
		t.Errorf("unknown head row: %q", lines[1])
	}
	if f := strings.Fields(lines[2]); strings.Join(f[3:7], " ") != "87% 2Gi/8Gi 92%,0% 15.6Gi/45Gi" {
		t.Errorf("worker row: %q", lines[2])
	}
	out.Reset()
	if err := writeTopNodes(&out, outputJSON, topRows(), false); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if _, has := got[0]["cpuPercent"]; has || got[0]["reason"] != "not yet reporting" {
		t.Errorf("unknown head in JSON: %v (an unknown gauge is absent, not 0)", got[0])
	}
	if got[1]["cpuPercent"] != 87.0 || len(got[1]["gpus"].([]any)) != 2 {
		t.Errorf("worker in JSON: %v", got[1])
	}
}

func TestTopGPUsIdleFirst(t *testing.T) {
	var out bytes.Buffer
	if err := writeTopGPUs(&out, outputTable, topRows(), false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[1], " 1 ") || !strings.Contains(lines[1], "0%") || !strings.Contains(lines[2], "92%") {
		t.Errorf("want the idle GPU 1 first:\n%s", out.String())
	}
	if !strings.HasPrefix(lines[3], "not known: ns/c-head: not yet reporting") {
		t.Errorf("the unknown pod is not said: %q", lines[3])
	}
}

// Several contexts: CONTEXT first, and the unknown pods say their context.
func TestTopGPUsAcrossContexts(t *testing.T) {
	rows := topRows()
	rows[0].Context, rows[1].Context = "east", "west"
	var out bytes.Buffer
	if err := writeTopGPUs(&out, outputTable, rows, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.HasPrefix(lines[0], "CONTEXT") || !strings.HasPrefix(lines[1], "west") || !strings.HasPrefix(lines[3], "not known: east ns/c-head") {
		t.Errorf("output:\n%s", out.String())
	}
}
