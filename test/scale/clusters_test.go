package scale

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/benchkit"
)

// BenchmarkPerfTestRayClusters replays KubeRay's perf-tests N-raycluster
// tests: N of their RayClusters (1 head + 3 workers, 10m CPU each) over
// their 10 or 100 namespaces, created at 100 a second; the time runs from
// each cluster's create until its status says ready (raw: until its 4
// pods are Running and Ready). Per contender: all ready (first create →
// last ready), each cluster's time to ready (p50, p99), the operator's
// CPU, writes per cluster, peak and final RSS (KubeRay's memory
// benchmark's measure). N from RAYDAR_SCALE_SIZES (default 100; the
// perf-tests' are 100,1000,5000,10000). KubeRay runs with its defaults.
func BenchmarkPerfTestRayClusters(b *testing.B) {
	eachSize(b, "RAYDAR_SCALE_SIZES", "clusters", true, func(b *testing.B, c contender, n int, raw time.Duration) time.Duration {
		r := bringUp(b, c, n)
		r.log(b, raw) // raw's own line gives no ratio
		return r.all
	})
}

// upResult is one contender's bring-up.
type upResult struct {
	name          string
	n             int
	all           time.Duration   // first create → last ready
	created       time.Duration   // first create → last create returned
	ready         []time.Duration // each cluster's create → ready
	cpu, writes   float64
	peakRSS, rss  float64
	before, after string // load averages
}

func (r upResult) log(b *testing.B, raw time.Duration) {
	ratio := ""
	if raw > 0 && r.name != "raw" {
		ratio = fmt.Sprintf(" (%.2f× raw)", r.all.Seconds()/raw.Seconds())
	}
	b.Logf("%s N=%d: all ready %.1f s%s; created in %.1f s; one cluster: %s; CPU %.1f s; writes %.2f per cluster; peak RSS %.1f MiB, at the end %.1f MiB; load %s → %s",
		r.name, r.n, r.all.Seconds(), ratio, r.created.Seconds(), quantiles(r.ready), r.cpu, r.writes/float64(r.n), r.peakRSS, r.rss, r.before, r.after)
	b.ReportMetric(r.all.Seconds(), r.name+"-all-s")
	b.ReportMetric(benchkit.Quantile(r.ready, 0.5).Seconds(), r.name+"-p50-s")
	b.ReportMetric(benchkit.Quantile(r.ready, 0.99).Seconds(), r.name+"-p99-s")
	if r.name != "raw" {
		b.ReportMetric(r.peakRSS, r.name+"-peak-RSS-MiB")
		b.ReportMetric(r.cpu, r.name+"-cpu-s")
		b.ReportMetric(r.writes/float64(r.n), r.name+"-writes/cluster")
	}
}

// bringUp is one contender's N-raycluster test on a fresh plane.
func bringUp(b *testing.B, c contender, n int) upResult {
	b.Helper()
	p := newPlane(b, 4*n+1, false)
	defer p.stop()
	nss := p.namespaces(b, perfTestNamespaces(n))
	var op *operator
	if c.start != nil {
		op = c.start(b, p, flagsOf(c, kubeRayFlags()))
		defer op.stop()
		warmUp(b, p, op)
	}
	op.mark(b)
	r := upResult{name: c.name, n: n, before: benchkit.LoadAverage()}
	name := func(i int) (ns, name string) {
		return nss[i%len(nss)], fmt.Sprintf("raycluster-%d", i/len(nss))
	}
	createdAt := make([]time.Time, n)
	index := map[string]int{}
	for i := range n {
		ns, nm := name(i)
		index[ns+"/"+nm] = i
	}
	readyAt := map[string]time.Time{}
	var w *watcher
	var done func(client.Object, time.Time) bool
	var floor *floorWriter
	if c.start == nil {
		w = newWatcher(b, p, podList)
		podsReady := map[string]int{}
		seen := map[string]bool{}
		if c.name == "floor" {
			floor = newFloorWriter(b, p)
		}
		done = func(obj client.Object, at time.Time) bool {
			pod := obj.(*corev1.Pod)
			if seen[key(pod)] || !kit.IsRunningAndReady(pod) {
				return false
			}
			seen[key(pod)] = true
			if podsReady[podCluster(pod)]++; podsReady[podCluster(pod)] == 4 {
				readyAt[podCluster(pod)] = at
				floor.ready(podCluster(pod))
			}
			return len(readyAt) == n
		}
	} else {
		// The pods too, on their own watch: where the time goes.
		pw := newWatcher(b, p, podList)
		stages := make(chan podStages, 1)
		go func() { stages <- followPods(b, pw, index) }()
		defer func() {
			pw.stop()
			st := <-stages
			var toPods, toStatus []time.Duration
			for k, at := range st.first {
				toPods = append(toPods, at.Sub(createdAt[index[k]]))
			}
			for k, at := range st.ready {
				if r, ok := readyAt[k]; ok {
					toStatus = append(toStatus, r.Sub(at))
				}
			}
			b.Logf("%s N=%d, where the time goes: create → first pod seen: %s; all 4 pods Running and Ready → status ready: %s",
				c.name, n, quantiles(toPods), quantiles(toStatus))
		}()
		w = newWatcher(b, p, clusterList)
		done = func(obj client.Object, at time.Time) bool {
			if _, ok := index[key(obj)]; ok && clusterReady(obj) {
				if _, ok := readyAt[key(obj)]; !ok {
					readyAt[key(obj)] = at
				}
			}
			return len(readyAt) == n
		}
	}
	start := time.Now()
	created := paced(b, n, perfTestQPS, func(i int) error {
		ns, nm := name(i)
		rc := perfTestCluster(b, ns, nm, 3)
		createdAt[i] = time.Now()
		switch c.name {
		case "raw":
			return createAll(p.cl, rawPods(rc))
		case "floor":
			return floorCreate(p, rc)
		}
		return create(context.Background(), p.cl, rc)
	})
	if !w.until(b, 30*time.Minute, done) {
		b.Fatalf("%s: %d of %d clusters ready after 30 minutes", c.name, len(readyAt), n)
	}
	if floor != nil {
		// Ready when its status write returned.
		readyAt = floor.wait()
	}
	r.all = slicesMaxTime(readyAt).Sub(start)
	r.created = (<-created).Sub(start)
	for k, at := range readyAt {
		r.ready = append(r.ready, at.Sub(createdAt[index[k]]))
	}
	r.cpu, r.writes, r.peakRSS, r.rss = op.usage(b)
	r.after = benchkit.LoadAverage()
	return r
}

// floorCreate is the floor's cluster: the RayCluster (as the user creates
// it), its head Service and its 4 pods as raydar builds them: the writes
// any operator keeping KubeRay's objects makes, without Events, without
// an operator's reads, in one step.
func floorCreate(p *plane, rc *rayv1.RayCluster) error {
	ctx := context.Background()
	if err := create(ctx, p.cl, rc.DeepCopy()); err != nil {
		return err
	}
	svc := raycluster.BuildHeadService(rc, raycluster.DefaultBuildConfig())
	svc.OwnerReferences = nil
	if err := create(ctx, p.cl, svc); err != nil {
		return err
	}
	return createAll(p.cl, rawPods(rc))
}

// floorWriter writes the floor's one status write per cluster (state
// ready) once its pods are, on workers clients, and records when each
// write returned.
type floorWriter struct {
	p       *plane
	q       chan string
	mu      sync.Mutex
	readyAt map[string]time.Time
	wg      sync.WaitGroup
}

func newFloorWriter(b *testing.B, p *plane) *floorWriter {
	f := &floorWriter{p: p, q: make(chan string, 1<<16), readyAt: map[string]time.Time{}}
	for range workers {
		f.wg.Go(func() {
			for k := range f.q {
				ns, name, _ := strings.Cut(k, "/")
				rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
				err := p.cl.Status().Patch(context.Background(), rc, client.RawPatch(types.MergePatchType, []byte(`{"status":{"state":"ready"}}`)))
				if err != nil {
					b.Error(err)
				}
				f.mu.Lock()
				f.readyAt[k] = time.Now()
				f.mu.Unlock()
			}
		})
	}
	return f
}

// ready queues cluster k's status write (nothing on a nil floorWriter).
func (f *floorWriter) ready(k string) {
	if f != nil {
		f.q <- k
	}
}

// wait returns when every queued write has, with their times.
func (f *floorWriter) wait() map[string]time.Time {
	close(f.q)
	f.wg.Wait()
	return f.readyAt
}

// slicesMaxTime is the latest of the times.
func slicesMaxTime(m map[string]time.Time) time.Time {
	var t time.Time
	for _, v := range m {
		if v.After(t) {
			t = v
		}
	}
	return t
}

// podStages are, per cluster, when its first pod was seen and when its
// 4th pod was seen Running and Ready.
type podStages struct{ first, ready map[string]time.Time }

// followPods records the pod stages of the clusters of index until pw is
// stopped.
func followPods(b *testing.B, pw *watcher, index map[string]int) podStages {
	st := podStages{first: map[string]time.Time{}, ready: map[string]time.Time{}}
	n, seen := map[string]int{}, map[string]bool{}
	pw.until(b, 2*time.Hour, func(obj client.Object, at time.Time) bool {
		pod := obj.(*corev1.Pod)
		k := podCluster(pod)
		if _, ok := index[k]; !ok {
			return false
		}
		if _, ok := st.first[k]; !ok {
			st.first[k] = at
		}
		if !seen[key(pod)] && kit.IsRunningAndReady(pod) {
			seen[key(pod)] = true
			if n[k]++; n[k] == 4 {
				st.ready[k] = at
			}
		}
		return false
	})
	return st
}
