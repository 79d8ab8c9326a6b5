package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/kube/sandbox"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/benchkit"
	"github.com/raydar/raydar/test/internal/procstat"
	"github.com/raydar/raydar/test/internal/testobj"
)

// run is what one contender's bring-up measured.
type run struct {
	up time.Duration
	// ready is each cluster's time from the first create until it read
	// ready (for raw: until its last pod was Running and Ready).
	ready []time.Duration
	// terminated counts the pod watchers the API server closed during the
	// bring-up because they fell behind (apiserver_terminated_watchers_total).
	terminated float64

	cpu      float64 // operator CPU-seconds, from /proc
	peakRSS  float64 // operator VmHWM, MiB
	requests requestCount
}

// requestCount is the operator's requests in its namespaces during the
// bring-up, from the API server's audit log (by user agent).
type requestCount struct {
	writes, podCreates, services, events, status, other int
	podWatches, podLists                                int
}

func (c requestCount) String() string {
	return fmt.Sprintf("%d writes (%d pod creates, %d Services, %d Events, %d status, %d other), %d pod watches, %d pod lists",
		c.writes, c.podCreates, c.services, c.events, c.status, c.other, c.podWatches, c.podLists)
}

// BenchmarkVersusKubeRay brings up N RayClusters of 1 head + 3 workers
// (min = max = 3), created by 8 parallel clients, three times on the same
// plane, one after another on fresh namespaces: the raw ceiling (the same
// 4 pods per cluster created directly, no operator), raydar's operator
// (the raydar-operator binary, as the image runs it) and KubeRay's
// (bin/k8s/kuberay-operator, default flags), each its own process. Time
// runs from the first create until every cluster is ready (every pod
// Running and Ready for raw). Requests per cluster are the operator's own
// (its user agent in the audit log). N is 100 and 300; RAYDAR_BENCH_SIZES
// (e.g. "100,300,1000") sets others; RAYDAR_BENCH_RAYDAR_FLAGS adds flags
// to raydar-operator's (e.g. "--concurrency=16", for tuning);
// RAYDAR_BENCH_SKIP_KUBERAY=1 leaves KubeRay out (its figures read 0);
// RAYDAR_BENCH_KUBERAY=PATH runs another KubeRay build in its place (e.g.
// v1.5.0: GOBIN=DIR go install github.com/ray-project/kuberay/ray-operator@v1.5.0).
// Besides the time until the last cluster is ready, each contender's median
// and p90 time for one cluster to read ready are reported.
func BenchmarkVersusKubeRay(b *testing.B) {
	if sb == nil {
		b.Skip("needs the sandbox control plane (skipped with -short)")
	}
	kuberay := filepath.Join(sb.ToolsDir, "kuberay-operator")
	if p := os.Getenv("RAYDAR_BENCH_KUBERAY"); p != "" {
		kuberay = p
	}
	b.Logf("KubeRay's operator: %s", kuberay)
	if _, err := os.Stat(kuberay); err != nil {
		b.Skipf("KubeRay's operator is not built (%v): run `make tools`", err)
	}
	raydar := filepath.Join(b.TempDir(), "raydar-operator")
	if out, err := exec.Command("go", "build", "-o", raydar, "github.com/raydar/raydar/cmd/raydar-operator").CombinedOutput(); err != nil {
		b.Fatalf("building raydar-operator: %v\n%s", err, out)
	}
	sizes := benchkit.EnvInts(b, "RAYDAR_BENCH_SIZES", []int{100, 300})
	extra := strings.Fields(os.Getenv("RAYDAR_BENCH_RAYDAR_FLAGS"))
	skipKubeRay := os.Getenv("RAYDAR_BENCH_SKIP_KUBERAY") != ""
	for _, n := range sizes {
		// kwok's nodes take 110 pods each: room for every pod of n clusters.
		ensureNodes(b, (4*n+podsPerNode-1)/podsPerNode)
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			var raw, rd, kr []run
			for range b.N {
				b.Logf("load average before: %s", benchkit.LoadAverage())
				raw = append(raw, bringUpRaw(b, n))
				rd = append(rd, bringUpOperator(b, n, "raydar-operator", raydar, func(ns string) []string {
					return append([]string{"--kubeconfig", sb.KubeconfigPath, "--no-leader-election", "--watch-namespaces", ns,
						"--ignore-other-operator", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, extra...)
				}))
				if skipKubeRay {
					kr = append(kr, run{})
				} else {
					kr = append(kr, bringUpOperator(b, n, "kuberay-operator", kuberay, func(ns string) []string {
						return []string{"--watch-namespace", ns, "--enable-leader-election=false", "--metrics-addr=0",
							"--health-probe-bind-address=0"}
					}))
				}
				b.Logf("load average after: %s", benchkit.LoadAverage())
			}
			report(b, n, raw, rd, kr)
		})
	}
}

// report prints each contender's figures and the ratios, and reports the
// means as benchmark metrics.
func report(b *testing.B, n int, raw, rd, kr []run) {
	mean := func(rs []run, f func(run) float64) float64 {
		s := 0.0
		for _, r := range rs {
			s += f(r)
		}
		return s / float64(len(rs))
	}
	up := func(r run) float64 { return r.up.Seconds() }
	req := func(r run) float64 { return float64(r.requests.writes) / float64(n) }
	cpu := func(r run) float64 { return r.cpu }
	rss := func(r run) float64 { return r.peakRSS }
	p50 := func(r run) float64 { return benchkit.Quantile(r.ready, 0.5).Seconds() }
	p90 := func(r run) float64 { return benchkit.Quantile(r.ready, 0.9).Seconds() }
	for i := range raw {
		b.Logf("run %d, N=%d, one cluster ready, median / p90: raw %.2f / %.2f s | raydar %.2f / %.2f s | KubeRay %.2f / %.2f s",
			i, n, p50(raw[i]), p90(raw[i]), p50(rd[i]), p90(rd[i]), p50(kr[i]), p90(kr[i]))
		b.Logf("run %d, N=%d: raw %.2f s | raydar %.2f s (%.2f× raw), %.2f req/cluster [%s], %.2f CPU-s, peak RSS %.1f MiB | "+
			"KubeRay %.2f s (%.2f× raw), %.2f req/cluster [%s], %.2f CPU-s, peak RSS %.1f MiB | "+
			"pod watchers the API server closed as too slow: raw %.0f, raydar %.0f, KubeRay %.0f",
			i, n, up(raw[i]), up(rd[i]), up(rd[i])/up(raw[i]), req(rd[i]), rd[i].requests, rd[i].cpu, rd[i].peakRSS,
			up(kr[i]), up(kr[i])/up(raw[i]), req(kr[i]), kr[i].requests, kr[i].cpu, kr[i].peakRSS,
			raw[i].terminated, rd[i].terminated, kr[i].terminated)
	}
	b.ReportMetric(mean(raw, up), "raw-s")
	b.ReportMetric(mean(rd, up), "raydar-s")
	b.ReportMetric(mean(kr, up), "kuberay-s")
	b.ReportMetric(mean(rd, up)/mean(raw, up), "raydar/raw")
	b.ReportMetric(mean(raw, p50), "raw-p50-s")
	b.ReportMetric(mean(raw, p90), "raw-p90-s")
	b.ReportMetric(mean(rd, p50), "raydar-p50-s")
	b.ReportMetric(mean(rd, p90), "raydar-p90-s")
	b.ReportMetric(mean(kr, p50), "kuberay-p50-s")
	b.ReportMetric(mean(kr, p90), "kuberay-p90-s")
	b.ReportMetric(mean(kr, up)/mean(raw, up), "kuberay/raw")
	b.ReportMetric(mean(rd, req), "raydar-req/cluster")
	b.ReportMetric(mean(kr, req), "kuberay-req/cluster")
	b.ReportMetric(mean(rd, cpu), "raydar-cpu-s")
	b.ReportMetric(mean(kr, cpu), "kuberay-cpu-s")
	b.ReportMetric(mean(rd, rss), "raydar-peak-RSS-MiB")
	b.ReportMetric(mean(kr, rss), "kuberay-peak-RSS-MiB")
	b.ReportMetric(mean(rd, rss)/mean(kr, rss), "RSS-raydar/kuberay")
}

// bringUpOperator starts the operator binary bin (args for a namespace),
// creates n clusters in a fresh namespace, waits until all are ready, and
// measures the process; then deletes the clusters, waits until their pods
// are gone (a clean plane for the next contender) and stops the operator.
func bringUpOperator(b *testing.B, n int, agent, bin string, args func(ns string) []string) run {
	b.Helper()
	ns := newNamespace(b)
	cmd := exec.Command(bin, args(ns)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+sb.KubeconfigPath)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	waitOperatorWatching(b, agent, ns, cmd)

	ctx := context.Background()
	w, err := cl.Watch(ctx, &rayv1.RayClusterList{}, client.InNamespace(ns))
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := procCPUSeconds(pid)
	term0 := terminatedPodWatchers(b)
	start := time.Now()
	go createClusters(b, ns, n)
	at := waitAll(b, ns, n, start, w, &rayv1.RayClusterList{}, func(obj client.Object) (string, bool) {
		rc, ok := obj.(*rayv1.RayCluster)
		return rc.GetName(), ok && rc.Status.State == rayv1.Ready
	})
	r := run{up: time.Since(start), ready: slices.Collect(maps.Values(at)), terminated: terminatedPodWatchers(b) - term0}
	time.Sleep(time.Second) // trailing writes (Events are sent asynchronously)
	r.cpu = procCPUSeconds(pid) - cpu0
	r.peakRSS = peakRSSMiB(pid)
	r.requests = countRequests(b, agent, ns, start)

	if err := cl.DeleteAllOf(ctx, &rayv1.RayCluster{}, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	waitNoPods(b, ns)
	return r
}

// bringUpRaw creates the same 4 pods per cluster directly (8 parallel
// clients) and waits until every one is Running and Ready.
func bringUpRaw(b *testing.B, n int) run {
	b.Helper()
	ns := newNamespace(b)
	ctx := context.Background()
	w, err := cl.Watch(ctx, &corev1.PodList{}, client.InNamespace(ns))
	if err != nil {
		b.Fatal(err)
	}
	pods := make([]*corev1.Pod, 0, 4*n)
	for i := range n {
		rc := testobj.Cluster(ns, fmt.Sprintf("raw-%04d", i), 3)
		rc.UID = types.UID(fmt.Sprint("raw-uid-", i))
		pods = append(pods, raycluster.BuildPod(rc, raycluster.PodBuild{Name: kit.HeadPodName(rc.Name, kit.RandomSuffix()), Head: true}, "h", raycluster.DefaultBuildConfig()))
		for range 3 {
			pods = append(pods, raycluster.BuildPod(rc, raycluster.PodBuild{Name: kit.WorkerPodName(rc.Name, "small", kit.RandomSuffix()), Group: &rc.Spec.WorkerGroupSpecs[0]}, "h", raycluster.DefaultBuildConfig()))
		}
	}
	term0 := terminatedPodWatchers(b)
	start := time.Now()
	go benchkit.Parallel(b, len(pods), func(i int) error {
		pods[i].OwnerReferences = nil
		return cl.Create(ctx, pods[i])
	})
	at := waitAll(b, ns, len(pods), start, w, &corev1.PodList{}, func(obj client.Object) (string, bool) {
		p, ok := obj.(*corev1.Pod)
		return obj.GetName(), ok && kit.IsRunningAndReady(p)
	})
	// A raw "cluster" is ready when its last pod is: the pods of raw-0007
	// are named raw-0007-….
	cluster := map[string]time.Duration{}
	for name, d := range at {
		c := name[:len("raw-0000")]
		cluster[c] = max(cluster[c], d)
	}
	r := run{up: time.Since(start), ready: slices.Collect(maps.Values(cluster)), terminated: terminatedPodWatchers(b) - term0}
	if err := cl.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0)); err != nil {
		b.Fatal(err)
	}
	waitNoPods(b, ns)
	return r
}

// createClusters creates n clusters of 1 head + 3 workers (min = max = 3).
func createClusters(b *testing.B, ns string, n int) {
	benchkit.Parallel(b, n, func(i int) error {
		rc := testobj.Cluster(ns, fmt.Sprintf("bench-%04d", i), 3)
		rc.Spec.WorkerGroupSpecs[0].MinReplicas = ptr.To(int32(3))
		rc.Spec.WorkerGroupSpecs[0].MaxReplicas = ptr.To(int32(3))
		return cl.Create(context.Background(), rc)
	})
}

// waitAll follows w (a watch of list's kind in ns) until want objects are
// done, and returns when each was first seen done, since start; when the
// API server ends the watch it lists and watches again.
func waitAll(b *testing.B, ns string, want int, start time.Time, w watch.Interface, list client.ObjectList, done func(client.Object) (string, bool)) map[string]time.Duration {
	b.Helper()
	ctx := context.Background()
	seen := map[string]time.Duration{}
	mark := func(name string) {
		if _, ok := seen[name]; !ok {
			seen[name] = time.Since(start)
		}
	}
	deadline := time.After(15 * time.Minute)
	defer func() { w.Stop() }()
	for len(seen) < want {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				l := list.DeepCopyObject().(client.ObjectList)
				if err := cl.List(ctx, l, client.InNamespace(ns)); err != nil {
					b.Fatal(err)
				}
				items, _ := metaItems(l)
				for _, o := range items {
					if name, ok := done(o); ok {
						mark(name)
					}
				}
				var err error
				if w, err = cl.Watch(ctx, list.DeepCopyObject().(client.ObjectList), client.InNamespace(ns),
					&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.GetResourceVersion()}}); err != nil {
					b.Fatal(err)
				}
				continue
			}
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				if o, ok := ev.Object.(client.Object); ok {
					if name, ok := done(o); ok {
						mark(name)
					}
				}
			}
		case <-deadline:
			b.Fatalf("only %d of %d ready in %s after 15 minutes", len(seen), want, ns)
		}
	}
	return seen
}

// metaItems are the objects of a RayClusterList or PodList.
func metaItems(l client.ObjectList) ([]client.Object, error) {
	var out []client.Object
	switch l := l.(type) {
	case *rayv1.RayClusterList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *corev1.PodList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	default:
		return nil, fmt.Errorf("list %T", l)
	}
	return out, nil
}

// waitNoPods waits until ns has no pods left (the garbage collector).
func waitNoPods(b *testing.B, ns string) {
	b.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		pods := &corev1.PodList{}
		if err := cl.List(context.Background(), pods, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		if len(pods.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d pods left in %s 10 minutes after deletion", len(pods.Items), ns)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitOperatorWatching waits until the operator (by user agent) watches
// RayClusters in ns: its cache is up.
func waitOperatorWatching(b *testing.B, agent, ns string, cmd *exec.Cmd) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		evs, err := sb.AuditEvents()
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range evs {
			if strings.HasPrefix(e.UserAgent, agent) && e.Verb == "watch" && e.Namespace() == ns &&
				e.ObjectRef != nil && e.ObjectRef.Resource == "rayclusters" {
				time.Sleep(time.Second) // the other informers start alongside
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s did not watch RayClusters in %s within 2 minutes", agent, ns)
		}
		if cmd.ProcessState != nil {
			b.Fatalf("%s exited", agent)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// countRequests counts the requests of the user agent in ns since start.
func countRequests(b *testing.B, agent, ns string, start time.Time) requestCount {
	b.Helper()
	evs, err := sb.AuditEvents()
	if err != nil {
		b.Fatal(err)
	}
	var c requestCount
	for _, e := range evs {
		if !strings.HasPrefix(e.UserAgent, agent) || e.Namespace() != ns || e.RequestReceivedTimestamp.Before(start) {
			continue
		}
		countOne(&c, e)
	}
	return c
}

func countOne(c *requestCount, e sandbox.AuditEvent) {
	res := e.Resource()
	switch {
	case e.Verb == "watch" && res == "pods":
		c.podWatches++
	case e.Verb == "list" && res == "pods":
		c.podLists++
	}
	if !e.Mutating() {
		return
	}
	c.writes++
	switch {
	case strings.HasSuffix(res, "/status"):
		c.status++
	case res == "pods" && e.Verb == "create":
		c.podCreates++
	case res == "services":
		c.services++
	case res == "events" || res == "events.k8s.io/events":
		c.events++
	default:
		c.other++
	}
}

// terminatedPodWatchers is the API server's count of pod watchers it
// closed because they did not keep up (apiserver_terminated_watchers_total
// for pods), 0 when its metrics cannot be read.
func terminatedPodWatchers(b *testing.B) float64 {
	raw, err := kc.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Logf("reading the API server's metrics: %v", err)
		return 0
	}
	sum := 0.0
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "apiserver_terminated_watchers_total{") && strings.Contains(line, `resource="pods"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}

// newNamespace creates a namespace for one contender.
func newNamespace(b *testing.B) string {
	b.Helper()
	name := "bench-" + strings.ToLower(utilrand.String(6))
	if _, err := kc.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	return name
}

// procCPUSeconds is the CPU time (user + system) of process pid so far, 0
// if unknown.
func procCPUSeconds(pid int) float64 {
	d, _ := procstat.CPU(pid)
	return d.Seconds()
}

// peakRSSMiB is the process's VmHWM in MiB, 0 if unknown.
func peakRSSMiB(pid int) float64 {
	kb, _ := procstat.StatusKB(pid, "VmHWM")
	return float64(kb) / 1024
}
