package tui

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/diagnose"
	"github.com/raydar/raydar/tui/pages/logs"
	"github.com/raydar/raydar/tui/registry"
	"github.com/raydar/raydar/tui/widgets"
)

// The scale of the performance targets: 10 namespaces, 1,000 RayClusters,
// 10,000 Ray pods (one head and nine workers per cluster);
// RAYDAR_BENCH_CLUSTERS=10000 runs the same benchmarks at 100,000 pods.
const (
	benchPodsPerCluster = 10
	benchW, benchH      = 120, 40
)

var benchClusters = func() int {
	if n, err := strconv.Atoi(os.Getenv("RAYDAR_BENCH_CLUSTERS")); err == nil && n > 0 {
		return n
	}
	return 1000
}()

func benchObjects() (clusters []*rayv1.RayCluster, pods []*corev1.Pod) {
	for i := range benchClusters {
		ns := fmt.Sprintf("team-%d", i%10)
		rc := mkCluster(ns, fmt.Sprintf("cluster-%04d", i), time.Duration(i)*time.Minute, group("cpu", 9, 1, 20))
		clusters = append(clusters, rc)
		for j := range benchPodsPerCluster {
			typ, grp := "worker", "cpu"
			if j == 0 {
				typ, grp = "head", rayv1.RayNodeHeadGroupLabelValue
			}
			pods = append(pods, mkPod(rc, fmt.Sprintf("%s-%s-%05d", rc.Name, typ, j), typ, grp,
				time.Duration(i*benchPodsPerCluster+j)*time.Second, true, fmt.Sprintf("10.%d.%d.%d", i/250, i%250, j)))
		}
	}
	return clusters, pods
}

func benchDeltas() []watch.Delta {
	clusters, pods := benchObjects()
	ds := make([]watch.Delta, 0, len(clusters)+len(pods))
	for _, c := range clusters {
		ds = append(ds, watch.Delta{Kind: watch.RayCluster, Object: c})
	}
	for _, p := range pods {
		ds = append(ds, watch.Delta{Kind: watch.Pod, Object: p})
	}
	return ds
}

// benchApp is the TUI with the full data set loaded, on view, sized.
func benchApp(b *testing.B, view ViewKind) *App {
	b.Helper()
	st := watch.NewStore()
	st.Apply(benchDeltas())
	a, err := New(Options{Store: st, Now: clock, StartView: view})
	if err != nil {
		b.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: benchW, Height: benchH})
	return a
}

// BenchmarkFrame: one View with 10,000 pods and 1,000 RayClusters cached.
func BenchmarkFrame(b *testing.B) {
	for _, v := range []ViewKind{PodsView, ClustersView} {
		b.Run(v.String(), func(b *testing.B) {
			a := benchApp(b, v)
			b.ReportAllocs()
			for b.Loop() {
				_ = a.View()
			}
		})
	}
	b.Run("cluster-detail", func(b *testing.B) {
		a := benchApp(b, ClustersView)
		a.Update(namedKey("enter"))
		b.ReportAllocs()
		for b.Loop() {
			_ = a.View()
		}
	})
}

// BenchmarkKeyToFrame: a key press (cursor down, or a re-sort) and the
// frame after it, on the 10,000-pod view.
func BenchmarkKeyToFrame(b *testing.B) {
	b.Run("down", func(b *testing.B) {
		a := benchApp(b, PodsView)
		down, up := namedKey("down"), namedKey("up")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			k := down
			if i/30%2 == 1 {
				k = up
			}
			i++
			a.Update(k)
			_ = a.View()
		}
	})
	b.Run("sort", func(b *testing.B) {
		a := benchApp(b, PodsView)
		keys := []tea.KeyPressMsg{{Code: 'A', Text: "A"}, {Code: 'S', Text: "S"}, {Code: 'N', Text: "N"}}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			a.Update(keys[i%3])
			i++
			_ = a.View()
		}
	})
	b.Run("filter-typed", func(b *testing.B) {
		// "/" then "worker-3" one key at a time, then Escape, as a user
		// types a filter (and the end-to-end benchmark does); per key.
		a := benchApp(b, PodsView)
		var seq []tea.KeyPressMsg
		seq = append(seq, tea.KeyPressMsg{Code: '/', Text: "/"})
		for _, r := range "worker-3" {
			seq = append(seq, tea.KeyPressMsg{Code: r, Text: string(r)})
		}
		seq = append(seq, namedKey("esc"))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			a.Update(seq[i%len(seq)])
			i++
			_ = a.View()
		}
	})
	b.Run("filter", func(b *testing.B) {
		a := benchApp(b, PodsView)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			f := []string{"cluster-00", "worker-0000[1-3]", ""}[i%3]
			i++
			_ = a.top().Table().SetFilter(f)
			_ = a.View()
		}
	})
}

// podUpdates returns n changed copies of pods: a new restart count (the row
// stays in place when sorted by name) or a new phase (the row moves when
// sorted by status).
func podUpdates(pods []*corev1.Pod, n, round int, phase bool) []watch.Delta {
	ds := make([]watch.Delta, 0, n)
	for i := range n {
		p := pods[(round*n+i*7)%len(pods)].DeepCopy()
		if phase {
			if round%2 == 0 {
				p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
			}
		} else {
			p.Status.ContainerStatuses[0].RestartCount = int32(round + 1)
		}
		ds = append(ds, watch.Delta{Kind: watch.Pod, Object: p})
	}
	return ds
}

// BenchmarkApplyBatch: one batch of 1,000 pod updates applied to the store
// and the views, and the frame after it.
func BenchmarkApplyBatch(b *testing.B) {
	for _, c := range []struct {
		name  string
		sort  string
		phase bool
	}{
		{"in-place", "", false},           // sorted by name, rows keep their places
		{"rows-move", "S", true},          // sorted by status, rows move
		{"cluster-detail-open", "", true}, // a detail view follows the batch too
	} {
		b.Run(c.name, func(b *testing.B) {
			a := benchApp(b, PodsView)
			if c.sort != "" {
				a.Update(tea.KeyPressMsg{Code: rune(c.sort[0]), Text: c.sort})
			}
			if c.name == "cluster-detail-open" {
				a.Update(namedKey("enter"))
			}
			_, pods := benchObjects()
			batches := make([][]watch.Delta, 8)
			for r := range batches {
				batches[r] = podUpdates(pods, 1000, r, c.phase)
			}
			b.ReportAllocs()
			r := 0
			for b.Loop() {
				a.Update(batchMsg{gen: a.gen, deltas: batches[r%len(batches)]})
				r++
				_ = a.View()
			}
		})
	}
}

// BenchmarkFirstRender: an empty TUI receives the informers' initial list
// (11,000 objects) as one batch and draws the pods view.
func BenchmarkFirstRender(b *testing.B) {
	ds := benchDeltas()
	b.ReportAllocs()
	for b.Loop() {
		a, err := New(Options{Now: clock, StartView: PodsView})
		if err != nil {
			b.Fatal(err)
		}
		a.Update(tea.WindowSizeMsg{Width: benchW, Height: benchH})
		a.Update(batchMsg{gen: a.gen, deltas: ds})
		_ = a.View()
	}
}

// BenchmarkBurstToScreen: 1,000 informer events pushed into the bridge
// (from another goroutine, as informers do) until the updated frame exists:
// the batch window, the apply and one View.
func BenchmarkBurstToScreen(b *testing.B) {
	a := benchApp(b, PodsView)
	src := watch.NewSource(watch.DefaultWindow)
	_, pods := benchObjects()
	b.ReportAllocs()
	r := 0
	for b.Loop() {
		ds := podUpdates(pods, 1000, r, false)
		r++
		go func() {
			for _, d := range ds {
				src.Push(d)
			}
		}()
		got := 0
		for got < len(ds) { // the burst may straddle two windows
			batch, err := src.Next(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			got += len(batch)
			a.Update(batchMsg{gen: a.gen, deltas: batch})
		}
		_ = a.View()
	}
}

// BenchmarkMemory reports the heap held by the store and the four list
// views with the full data set (objects included, as the informer cache
// shares them).
func BenchmarkMemory(b *testing.B) {
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ds := benchDeltas()
		st := watch.NewStore()
		st.Apply(ds)
		a, err := New(Options{Store: st, Now: clock})
		if err != nil {
			b.Fatal(err)
		}
		a.Update(tea.WindowSizeMsg{Width: benchW, Height: benchH})
		for _, v := range []ViewKind{JobsView, ServicesView, PodsView, ClustersView} {
			a.showList(v)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MiB")
		runtime.KeepAlive(a)
		runtime.KeepAlive(ds)
	}
}

// countingWriter counts bytes and signals each write.
type countingWriter struct {
	mu     sync.Mutex
	n      int
	wrote  chan struct{}
	frames []string
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.n += len(p)
	w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *countingWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// BenchmarkBytesPerUpdate runs a real program (colour profile ANSI256,
// 120×40) on the 10,000-pod view and counts the bytes written to the
// terminal for a steady-state update (one visible pod changes), against a
// full repaint (the first frame).
func BenchmarkBytesPerUpdate(b *testing.B) {
	a := benchApp(b, PodsView)
	w := &countingWriter{wrote: make(chan struct{}, 1)}
	p := tea.NewProgram(a, tea.WithInput(strings.NewReader("")), tea.WithOutput(w), tea.WithoutSignals(),
		tea.WithWindowSize(benchW, benchH), tea.WithColorProfile(colorprofile.ANSI256),
		tea.WithEnvironment([]string{"TERM=xterm-256color"}))
	done := make(chan struct{})
	go func() { _, _ = p.Run(); close(done) }()
	<-w.wrote // the first frame
	full := waitQuiet(w)
	// visible pods: the first rows of the view sorted by name
	visible := a.lists[PodsView].(*registry.ListPage[*corev1.Pod]).Visible()[:20]
	before := w.count()
	updates := 0
	for b.Loop() {
		pod := visible[updates%len(visible)].DeepCopy()
		pod.Status.ContainerStatuses[0].RestartCount = int32(updates + 1)
		updates++
		p.Send(batchMsg{gen: a.gen, deltas: []watch.Delta{{Kind: watch.Pod, Object: pod}}})
		<-w.wrote
	}
	b.StopTimer()
	steady := float64(w.count()-before) / float64(updates)
	p.Quit()
	<-done
	b.ReportMetric(float64(full), "full-repaint-B")
	b.ReportMetric(steady, "B/update")
	b.ReportMetric(100*steady/float64(full), "%-of-full")
}

// waitQuiet waits until the writer has been idle for a while and returns
// its count (only for the benchmark's baseline; tests never do this).
func waitQuiet(w *countingWriter) int {
	for {
		select {
		case <-w.wrote:
		case <-time.After(200 * time.Millisecond):
			return w.count()
		}
	}
}

// BenchmarkPodLogs: a full log page (MaxPodLogLines lines) receives a
// batch of 500 lines (what a chatty pod writes in one 100 ms batch window)
// and draws a frame; with wrap on, long lines wrap at the frame.
func BenchmarkPodLogs(b *testing.B) {
	batch := strings.Split(strings.TrimRight(logLines(1, 500), "\n"), "\n")
	for _, wrap := range []bool{false, true} {
		name := "batch-frame"
		if wrap {
			name = "batch-frame-wrap"
		}
		b.Run(name, func(b *testing.B) {
			a := benchApp(b, PodsView)
			a.Update(tea.WindowSizeMsg{Width: benchW, Height: benchH})
			p := logs.NewPage(a.e, a.e.Store.List(watch.Pod)[0].(*podview.Pod), nil)
			p.Opened, p.Wrap = true, wrap
			a.push(p)
			long := strings.Repeat("traceback frame ", 40)
			for i := 0; i < widgets.MaxPodLogLines; i += len(batch) {
				p.Add(append(batch[:len(batch)-1:len(batch)-1], long), 0)
			}
			msg := widgets.LinesMsg{ID: p.ID, Lines: batch}
			b.ReportAllocs()
			for b.Loop() {
				a.Update(msg)
				_ = a.View()
			}
		})
	}
}

// benchWhyStore is the full data set with something to diagnose in every
// RayCluster: one more worker per cluster Pending, asking 4 nvidia.com/gpu
// on 20 nodes without GPUs, with the scheduler's FailedScheduling Event.
func benchWhyStore() (*watch.Store, []*corev1.Pod) {
	st := watch.NewStore()
	st.Apply(benchDeltas())
	for i := range 20 {
		st.Add(mkNode(fmt.Sprintf("kwok-node-%d", i), 0))
	}
	st.SetNodesKnown(true)
	var pending []*corev1.Pod
	for _, o := range st.List(watch.RayCluster) {
		rc := o.(*rayv1.RayCluster)
		p := mkPod(rc, rc.Name+"-gpu-worker-pend1", "worker", "cpu", time.Minute, false, "")
		p.Spec.NodeName = ""
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/20 nodes are available: 20 Insufficient nvidia.com/gpu."}}
		st.Add(p, mkEvent(p, "Pod", "v1", "Warning", "FailedScheduling", "0/20 nodes are available: 20 Insufficient nvidia.com/gpu.", 30*time.Second))
		pending = append(pending, p)
	}
	return st, pending
}

// noDiagnosis is the TUI as it was before the diagnosis: no causes, an
// empty WHY column.
var noDiagnosis = diagnose.Diagnosers{
	Cluster: func(why.ClusterInput) []why.Cause { return nil },
	Job:     func(why.JobInput) []why.Cause { return nil },
	Service: func(why.ServiceInput) []why.Cause { return nil },
	Column:  func([]why.Cause) string { return "" },
}

// BenchmarkWhy: the diagnosis of 1,000 RayClusters with pods and Events.
// frame: one View of the cluster list, with every WHY cell filled (the
// causes are cached: nothing is diagnosed per frame) and without any
// diagnosis; batch-50: a batch that changes a pod of 50 clusters (and an
// Event each), applied, diagnosed and drawn, against the same without
// diagnosis.
func BenchmarkWhy(b *testing.B) {
	for _, diag := range []struct {
		name string
		fn   diagnose.Diagnosers
	}{{"why", diagnose.WhyDiagnosers}, {"none", noDiagnosis}} {
		newApp := func(b *testing.B) (*App, []*corev1.Pod) {
			st, pending := benchWhyStore()
			a, err := New(Options{Store: st, Now: clock, StartView: ClustersView})
			if err != nil {
				b.Fatal(err)
			}
			a.e.Why.Fn = diag.fn
			a.e.Why.All()
			a.applyWhy()
			a.Update(tea.WindowSizeMsg{Width: benchW, Height: benchH})
			return a, pending
		}
		b.Run("frame/"+diag.name, func(b *testing.B) {
			a, _ := newApp(b)
			b.ReportAllocs()
			for b.Loop() {
				_ = a.View()
			}
		})
		b.Run("batch-50/"+diag.name, func(b *testing.B) {
			a, pending := newApp(b)
			batches := make([][]watch.Delta, 8)
			for r := range batches {
				for i := range 50 {
					p := pending[(r*50+i)%len(pending)].DeepCopy()
					p.ResourceVersion = fmt.Sprint(r)
					ev := mkEvent(p, "Pod", "v1", "Warning", "FailedScheduling", fmt.Sprintf("0/20 nodes are available: 20 Insufficient nvidia.com/gpu. (round %d)", r), 0)
					batches[r] = append(batches[r], watch.Delta{Kind: watch.Pod, Object: p}, watch.Delta{Kind: watch.Event, Object: ev})
				}
			}
			b.ReportAllocs()
			r := 0
			for b.Loop() {
				a.Update(batchMsg{gen: a.gen, deltas: batches[r%len(batches)]})
				r++
				_ = a.View()
			}
		})
	}
}

// BenchmarkIdleTick: what one idle second costs the TUI with the data set
// loaded: the 1 s tick's Update (ages, role, timed diagnoses) and the frame
// after it.
func BenchmarkIdleTick(b *testing.B) {
	for _, v := range []ViewKind{PodsView, ClustersView} {
		b.Run(v.String(), func(b *testing.B) {
			a := benchApp(b, v)
			b.ReportAllocs()
			for b.Loop() {
				a.Update(tickMsg{})
				_ = a.View()
			}
		})
	}
}

// BenchmarkClusterPage: the page of one RayCluster of 1,000 workers with
// the data set loaded (issue 47): an idle second (the 1 s tick and the
// frame after it) and a cursor move (j and its frame).
func BenchmarkClusterPage(b *testing.B) {
	st := watch.NewStore()
	ds := benchDeltas()
	rc := mkCluster("team-0", "big-cluster", 0, group("cpu", 1000, 0, 1000))
	ds = append(ds, watch.Delta{Kind: watch.RayCluster, Object: rc})
	for j := range 1001 {
		typ, grp := "worker", "cpu"
		if j == 0 {
			typ, grp = "head", rayv1.RayNodeHeadGroupLabelValue
		}
		ds = append(ds, watch.Delta{Kind: watch.Pod, Object: mkPod(rc, fmt.Sprintf("big-cluster-%s-%05d", typ, j), typ, grp,
			time.Duration(j)*time.Second, true, fmt.Sprintf("10.200.%d.%d", j/250, j%250))})
	}
	st.Apply(ds)
	a, err := New(Options{Store: st, Now: clock, StartView: ClustersView})
	if err != nil {
		b.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: benchW, Height: benchH})
	press := func(s string) {
		if s == "enter" {
			a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
			return
		}
		for _, r := range s {
			a.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
	press("/")
	press("big-cluster")
	press("enter")
	press("enter")
	if a.top().Kind() != ClusterDetailView || !strings.Contains(a.View().Content, "1000/1000") {
		b.Fatalf("not on the big cluster's page:\n%s", a.View().Content)
	}
	b.Run("idle", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a.Update(tickMsg{})
			_ = a.View()
		}
	})
	b.Run("down", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			press("j")
			_ = a.View()
		}
	})
}
