package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/raydar/raydar/kube/gauges"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/raymetrics"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// fakeGauges answers Get from fixed clusters and records the calls.
type fakeGauges struct {
	c     map[string]gauges.Cluster
	calls []string
}

func (f *fakeGauges) Get(ns, name string) gauges.Cluster {
	f.calls = append(f.calls, ns+"/"+name)
	c := f.c[ns+"/"+name]
	c.Namespace, c.Name = ns, name
	return c
}
func (f *fakeGauges) Idle(g gauges.GPUUse, now time.Time) bool {
	return g.IdleFor(now) >= 10*time.Minute
}
func (f *fakeGauges) IdleBelowPct() float64  { return 5 }
func (f *fakeGauges) IdleFor() time.Duration { return 10 * time.Minute }

// trainAGauges is train-a's gauges: the head and a GPU worker known (one GPU
// busy, one idle for 40 minutes), another worker not reporting.
func trainAGauges() gauges.Cluster {
	now := fixedNow
	gpuNode := &raymetrics.Node{IP: "10.0.0.14", CPUPct: 87, HasCPU: true, CPUCount: 8, HasCPUCount: true, MemUsed: 2 << 30, MemTotal: 8 << 30, HasMem: true,
		GPUs: []raymetrics.GPU{{Index: 0, Name: "NVIDIA A10G", UtilPct: 92, GRAMUsedMiB: 16000, GRAMAvailableMiB: 7028, HasGRAM: true},
			{Index: 1, Name: "NVIDIA A10G", UtilPct: 0, GRAMAvailableMiB: 23028, HasGRAM: true}}}
	head := &raymetrics.Node{IP: "10.0.0.10", CPUPct: 12, HasCPU: true, MemUsed: 1 << 30, MemTotal: 4 << 30, HasMem: true}
	var cpu []gauges.Point
	for i := range 20 {
		cpu = append(cpu, gauges.Point{T: now.Add(time.Duration(i-20) * 5 * time.Second), V: float64(i * 5)})
	}
	return gauges.Cluster{Done: true, At: now,
		Pods: []gauges.PodGauges{
			{Pod: "train-a-head-x7k2p", Node: head},
			{Pod: "train-a-gpu-worker-q5w8e", Node: gpuNode},
			{Pod: "train-a-cpu-worker-4hq9d", Reason: gauges.NotReporting},
		},
		History: map[gauges.Series][]gauges.Point{gauges.CPU: cpu},
		GPUs: []gauges.GPUUse{
			{Namespace: "ml", Cluster: "train-a", Pod: "train-a-gpu-worker-q5w8e", Index: 0, Name: "NVIDIA A10G", UtilPct: 92, Seen: now},
			{Namespace: "ml", Cluster: "train-a", Pod: "train-a-gpu-worker-q5w8e", Index: 1, Name: "NVIDIA A10G", UtilPct: 0,
				BelowSince: now.Add(-40 * time.Minute), IdleSeconds: 2400, Seen: now},
		},
	}
}

func line(t *testing.T, s, pod string) string {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, pod) && strings.Contains(l, "Running") {
			return l
		}
	}
	t.Fatalf("no row of %s:\n%s", pod, s)
	return ""
}

// The cluster page shows each pod's use from Ray's gauges, "?" with the
// reason for a pod whose gauges are unknown (never 0), and the cluster's
// sparkline; the gauges are read for the open cluster only.
func TestClusterDetailGauges(t *testing.T) {
	fg := &fakeGauges{c: map[string]gauges.Cluster{"ml/train-a": trainAGauges()}}
	a, err := New(Options{Store: fixture(), Now: clock, NoColor: true, Session: Session{Gauges: fg}})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	a.Update(tickMsg{})
	_ = a.View()
	if len(fg.calls) != 0 {
		t.Fatalf("gauges read from the list: %v", fg.calls)
	}
	a.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
	a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	s := a.View().Content
	if len(fg.calls) == 0 || fg.calls[0] != "ml/train-a" {
		t.Fatalf("calls %v, want the open cluster", fg.calls)
	}
	if l := line(t, s, "train-a-gpu-worker-q5w8e"); !strings.Contains(l, "87%") || !strings.Contains(l, "92%,0%") || !strings.Contains(l, "2Gi/8Gi") {
		t.Errorf("GPU worker row: %q", l)
	}
	if l := line(t, s, "train-a-cpu-worker-4hq9d"); strings.Count(l, "?") != 4 {
		t.Errorf("unknown worker row: %q, want four ?", l)
	}
	if l := line(t, s, "train-a-cpu-worker-4hq9d"); strings.Contains(l, "0%") {
		t.Errorf("unknown shown as 0: %q", l)
	}
	if !strings.Contains(s, "train-a-cpu-worker-4hq9d: not yet reporting") {
		t.Errorf("the reason is not said:\n%s", s)
	}
	// The diagnosis reads the gauges too: the idle GPU is a cause.
	if !strings.Contains(s, "1 of 2 GPUs held by the cluster's pods idle: below 5% for 10m or more") {
		t.Errorf("no GPUsIdle cause in the Why block:\n%s", s)
	}
	if l := useLine(t, s); !strings.Contains(l, "CPU 95%    ...:::---===+++**") {
		t.Errorf("Use block: %q, want the last CPU and its sparkline", l)
	}
}

// :gpus lists the GPUs of the clusters in scope that ask for GPUs, the
// idle one first, with how long and the GPU-hours.
func TestGPUsViewListsIdleFirst(t *testing.T) {
	w := newWorld(t, worldOpts{mod: func(st *watch.Store) {
		for _, o := range st.List(watch.RayCluster) {
			if rc := o.(*rayv1.RayCluster); rc.Name == "train-a" {
				rc.Spec.WorkerGroupSpecs[1].Template.Spec.Containers = []corev1.Container{{Name: "ray-worker",
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}}}}
			}
		}
	}})
	fg := &fakeGauges{c: map[string]gauges.Cluster{"ml/train-a": trainAGauges()}}
	opts := w.opts()
	opts.Now, opts.NoColor, opts.Session.Gauges = clock, true, fg
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 220, Height: 40})
	for _, k := range ":gpus" {
		a.Update(tea.KeyPressMsg{Code: k, Text: string(k)})
	}
	a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	s := a.View().Content
	for _, c := range fg.calls {
		if c != "ml/train-a" {
			t.Errorf("gauges of %s read: it asks for no GPU", c)
		}
	}
	var rows []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "train-a-gpu-worker-q5w8e") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2 {
		t.Fatalf("GPU rows %q:\n%s", rows, s)
	}
	if f := rows[0]; !strings.Contains(f, " 1 ") || !strings.Contains(f, "40m") || !strings.Contains(f, "0.67") || !strings.HasSuffix(strings.TrimSpace(f), "idle") {
		t.Errorf("first row %q, want GPU 1 idle for 40m, 0.67 GPU-hours", f)
	}
	if !strings.Contains(rows[1], "92%") || strings.Contains(rows[1], "idle") {
		t.Errorf("second row %q, want the busy GPU", rows[1])
	}
	if !strings.Contains(s, "ml/train-a-cpu-worker-4hq9d: not yet reporting") {
		t.Errorf("unknown pod not said:\n%s", s)
	}
	// z on the idle GPU asks to suspend its cluster (the usual confirmed
	// action); s scales its worker group.
	typeInto(a, "z")
	if s := a.View().Content; !strings.Contains(s, "Suspend RayCluster ml/train-a") {
		t.Errorf("z on a GPU row: no suspend confirmation:\n%s", s)
	}
}

func useLine(t *testing.T, s string) string {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "Use:") {
			return l
		}
	}
	t.Fatalf("no Use block:\n%s", s)
	return ""
}

func typeInto(a *App, keys ...string) {
	for _, k := range keys {
		switch k {
		case "<enter>":
			a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		default:
			for _, r := range k {
				a.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
			}
		}
	}
}

// The job page shows its cluster's Use block beside its run, and the
// service page its active cluster's Serve traffic.
func TestJobAndServicePagesShowTheirClustersGauges(t *testing.T) {
	c := trainAGauges()
	c.History[gauges.ServeRPS] = []gauges.Point{{T: fixedNow.Add(-5 * time.Second), V: 18}, {T: fixedNow, V: 21.5}}
	c.History[gauges.ServeP50MS] = []gauges.Point{{T: fixedNow, V: 12}}
	c.History[gauges.ServeP99MS] = []gauges.Point{{T: fixedNow, V: 88}}
	fg := &fakeGauges{c: map[string]gauges.Cluster{"ml/train-a": trainAGauges(), "serve/fruit-raycluster-abcde": c}}
	a, err := New(Options{Store: fixture(), Now: clock, NoColor: true, Session: Session{Gauges: fg}})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	typeInto(a, ":rj", "<enter>", "G", "<enter>")
	s := a.View().Content
	if !strings.Contains(s, "nightly-eval") || !strings.Contains(useLine(t, s), "CPU 95%") {
		t.Errorf("job page without its cluster's Use block:\n%s", s)
	}
	typeInto(a, ":rs", "<enter>", "<enter>")
	s = a.View().Content
	if !strings.Contains(s, "Serve traffic: 21.5 req/s") || !strings.Contains(s, "p50 12 ms  p99 88 ms") {
		t.Errorf("service page without the Serve traffic:\n%s", s)
	}
	if fg.calls[len(fg.calls)-1] != "serve/fruit-raycluster-abcde" {
		t.Errorf("calls %v: want the active cluster's last", fg.calls)
	}
}

// A fleet view's :gpus lists every context's GPUs, each row with its
// context, the idle ones first whichever context holds them.
func TestGPUsViewAcrossAFleet(t *testing.T) {
	member := func(ctx string, c gauges.Cluster) FleetMember {
		st := fixture()
		for _, o := range st.List(watch.RayCluster) {
			if rc := o.(*rayv1.RayCluster); rc.Name == "train-a" {
				rc.Spec.WorkerGroupSpecs[1].Template.Spec.Containers = []corev1.Container{{Name: "ray-worker",
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}}}}
			}
		}
		return FleetMember{Store: st, Session: Session{Context: ctx, Gauges: &fakeGauges{c: map[string]gauges.Cluster{"ml/train-a": c}}}}
	}
	busy := trainAGauges()
	busy.GPUs = busy.GPUs[:1] // east: only the busy GPU
	a, err := New(Options{Now: clock, NoColor: true, Fleet: []FleetMember{member("east", busy), member("west", trainAGauges())}})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 240, Height: 40})
	typeInto(a, ":gpus", "<enter>")
	s := a.View().Content
	var rows []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "train-a-gpu-worker-q5w8e") {
			rows = append(rows, strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "> "))[0])
		}
	}
	if strings.Join(rows, " ") != "west east west" { // west's idle GPU first, then the busy ones
		t.Errorf("contexts of the rows %v, want west (idle) first:\n%s", rows, s)
	}
	if !strings.Contains(s, "idle: below 5% for 10m;") {
		t.Errorf("threshold line:\n%s", s)
	}
}

// :gpus on a short screen shows the selected GPU wherever the cursor goes,
// formatting only the rows on screen: 60 GPUs on a 15-line terminal, the
// cursor moved to the 41st.
func TestGPUsViewScrollsToTheCursor(t *testing.T) {
	c := trainAGauges()
	c.GPUs = nil
	for i := range 60 {
		c.GPUs = append(c.GPUs, gauges.GPUUse{Namespace: "ml", Cluster: "train-a", Pod: "train-a-gpu-worker-q5w8e",
			Index: i, Name: "NVIDIA A10G", UtilPct: float64(10 + i), Seen: fixedNow})
	}
	st := fixture()
	for _, o := range st.List(watch.RayCluster) {
		if rc := o.(*rayv1.RayCluster); rc.Name == "train-a" {
			rc.Spec.WorkerGroupSpecs[1].Template.Spec.Containers = []corev1.Container{{Name: "ray-worker",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("60")}}}}
		}
	}
	a, err := New(Options{Store: st, Now: clock, NoColor: true, Session: Session{Gauges: &fakeGauges{c: map[string]gauges.Cluster{"ml/train-a": c}}}})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 220, Height: 15})
	typeInto(a, ":gpus", "<enter>")
	for range 40 {
		a.Update(tea.KeyPressMsg{Code: 'j', Text: "j"})
	}
	s := a.View().Content
	rows := 0
	var selected string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "train-a-gpu-worker-q5w8e") {
			rows++
			if strings.HasPrefix(strings.TrimSpace(l), ">") {
				selected = l
			}
		}
	}
	if !strings.Contains(selected, " 40 ") || !strings.Contains(selected, "50%") {
		t.Errorf("selected row %q, want GPU 40 at 50%% on screen:\n%s", selected, s)
	}
	if rows == 0 || rows > 15 {
		t.Errorf("%d GPU rows drawn on a 15-line screen:\n%s", rows, s)
	}
}
