package scale

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/test/internal/procstat"
)

// A contender is what brings the objects up: nil start for the raw
// ceiling, else an operator process.
type contender struct {
	name  string
	start func(b *testing.B, p *plane, flags []string) *operator
}

// contenders are raw, (with floor) the floor, raydar and KubeRay, in that
// order; RAYDAR_SCALE_CONTENDERS (e.g. "raw,raydar") picks some. The
// floor (BenchmarkPerfTestRayClusters only) makes, with a plain client,
// the writes any operator keeping KubeRay's objects must: the head
// Service, the pods and one status write.
func contenders(b *testing.B, floor bool) []contender {
	all := []contender{{name: "raw"}, {name: "raydar", start: startRaydar}, {name: "kuberay", start: startKubeRay}}
	if floor {
		all = slices.Insert(all, 1, contender{name: "floor"})
	}
	pick := os.Getenv("RAYDAR_SCALE_CONTENDERS")
	if pick == "" {
		return all
	}
	var out []contender
	for _, c := range all {
		if strings.Contains(","+pick+",", ","+c.name+",") {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		b.Fatalf("RAYDAR_SCALE_CONTENDERS=%q names none of raw, floor, raydar, kuberay", pick)
	}
	return out
}

// operator is an operator process on a plane, its metrics served on a
// loopback port.
type operator struct {
	name    string
	cmd     *exec.Cmd
	metrics string
	log     string
	// cpu0 and writes0 are the baseline taken by mark.
	cpu0    time.Duration
	writes0 float64
	// peak is the largest memory sample so far (sampleMemory).
	mu   sync.Mutex
	peak memSample
}

// startRaydar runs raydar-operator on every namespace of p, as its image
// runs it but without leader election; flags are added to its own.
func startRaydar(b *testing.B, p *plane, flags []string) *operator {
	addr := freeAddr(b)
	// A history file of its own: the default one (~/.local/state) is the
	// machine's, as large as every earlier run left it, or held by another
	// raydar (then kept in memory); its pages mapped during a write count
	// in the RSS measured here.
	history := filepath.Join(b.TempDir(), "history.db")
	return startProcess(b, p, "raydar", raydarBin, append([]string{"--kubeconfig", p.sb.KubeconfigPath, "--no-leader-election",
		"--ignore-other-operator", "--metrics-bind-address", addr, "--health-probe-bind-address", "0", "--history-file", history}, flags...), addr)
}

// startKubeRay runs KubeRay's operator (v1.6.2, `make tools`; another
// build with RAYDAR_BENCH_KUBERAY=PATH) with its defaults (reconcile
// concurrency 1, QPS 100, burst 200) but leader election, its metrics on a
// loopback port; flags are added (e.g. --reconcile-concurrency=10).
func startKubeRay(b *testing.B, p *plane, flags []string) *operator {
	bin := filepath.Join(p.sb.ToolsDir, "kuberay-operator")
	if v := os.Getenv("RAYDAR_BENCH_KUBERAY"); v != "" {
		bin = v
	}
	if _, err := os.Stat(bin); err != nil {
		b.Fatalf("KubeRay's operator is not built (%v): run `make tools`", err)
	}
	addr := freeAddr(b)
	return startProcess(b, p, "kuberay", bin, append([]string{"--enable-leader-election=false", "--metrics-addr=" + addr,
		"--health-probe-bind-address=0"}, flags...), addr)
}

func startProcess(b *testing.B, p *plane, name, bin string, args []string, addr string) *operator {
	b.Helper()
	logf, err := os.CreateTemp("", "raydar-scale-"+name+"-*.log")
	if err != nil {
		b.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+p.sb.KubeconfigPath)
	if p.proxy != nil {
		u := p.proxy.URL()
		cmd.Env = append(cmd.Env, "HTTP_PROXY="+u, "http_proxy="+u, "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	o := &operator{name: name, cmd: cmd, metrics: "http://" + addr + "/metrics", log: logf.Name()}
	b.Cleanup(o.stop)
	go o.sampleMemory(cmd.Process.Pid)
	return o
}

// memSample is the operator's resident memory, KiB: in all, anonymous (heap,
// stacks) and file-backed (its binary's pages, mapped files).
type memSample struct{ rss, anon, file int64 }

// memSampleEvery is how often sampleMemory reads /proc.
const memSampleEvery = 100 * time.Millisecond

// sampleMemory reads pid's RSS every memSampleEvery until it exits and
// keeps the largest sample in o.peak, so that the peak (VmHWM, which
// the kernel keeps as one number) can be split into what Go allocated and
// what is mapped from files.
func (o *operator) sampleMemory(pid int) {
	for {
		m, err := procstat.StatusKBs(pid, "VmRSS", "RssAnon", "RssFile")
		if err != nil {
			return // gone (or a zombie, which has no VmRSS)
		}
		o.mu.Lock()
		if m[0] > o.peak.rss {
			o.peak = memSample{m[0], m[1], m[2]}
		}
		o.mu.Unlock()
		time.Sleep(memSampleEvery)
	}
}

// stop kills the process and waits for it; its log is kept only when the
// benchmark failed.
func (o *operator) stop() {
	if o == nil || o.cmd.ProcessState != nil {
		return
	}
	_ = o.cmd.Process.Kill()
	_ = o.cmd.Wait()
}

// mark takes the baseline of CPU and writes the figures are counted from.
func (o *operator) mark(b *testing.B) {
	b.Helper()
	if o == nil {
		return
	}
	o.cpu0, _ = procstat.CPU(o.cmd.Process.Pid)
	o.writes0 = o.writes(b)
}

// usage is the operator's CPU-seconds and writes since mark, its peak and
// current RSS in MiB.
func (o *operator) usage(b *testing.B) (cpu, writes, peakRSS, rss float64) {
	if o == nil {
		return 0, 0, 0, 0
	}
	pid := o.cmd.Process.Pid
	c, _ := procstat.CPU(pid)
	hwm, _ := procstat.StatusKB(pid, "VmHWM")
	cur, _ := procstat.StatusKB(pid, "VmRSS")
	o.mu.Lock()
	m := o.peak
	o.mu.Unlock()
	if m.rss > 0 {
		b.Logf("%s: its largest RSS sampled every %v: %.1f MiB = %.1f anonymous (heap, stacks) + %.1f mapped from files (its binary, libc, history); VmHWM %.1f MiB",
			o.name, memSampleEvery, mib(m.rss), mib(m.anon), mib(m.file), mib(hwm))
	}
	return (c - o.cpu0).Seconds(), o.writes(b) - o.writes0, mib(hwm), mib(cur)
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

// writes is the operator's write requests so far: client-go's
// rest_client_requests_total for POST, PUT, PATCH and DELETE, which both
// operators serve (controller-runtime registers it).
func (o *operator) writes(b *testing.B) float64 {
	b.Helper()
	var sum float64
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(o.metrics)
		if err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, line := range strings.Split(string(raw), "\n") {
				if !strings.HasPrefix(line, "rest_client_requests_total{") {
					continue
				}
				for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
					if strings.Contains(line, `method="`+m+`"`) {
						f := strings.Fields(line)
						v, _ := strconv.ParseFloat(f[len(f)-1], 64)
						sum += v
					}
				}
			}
			return sum
		}
		if time.Now().After(deadline) || o.cmd.ProcessState != nil {
			b.Fatalf("%s's metrics at %s: %v (log %s)", o.name, o.metrics, err, o.log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// freeAddr is a free loopback address for a listener.
func freeAddr(b *testing.B) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// warmUp creates one RayCluster of a head alone in its own namespace and
// waits until o reports it ready: the operator's caches are up and it
// reconciles. Raw needs none.
func warmUp(b *testing.B, p *plane, o *operator) {
	b.Helper()
	if o == nil {
		return
	}
	ctx := context.Background()
	if _, err := p.kc.CoreV1().Namespaces().Create(ctx, namespace("scale-warmup"), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	w := newWatcher(b, p, clusterList)
	if err := p.cl.Create(ctx, perfTestCluster(b, "scale-warmup", "warmup", 0)); err != nil {
		b.Fatal(err)
	}
	if !w.until(b, 3*time.Minute, func(obj client.Object, _ time.Time) bool { return clusterReady(obj) }) {
		b.Fatalf("%s did not make the warm-up cluster ready within 3 minutes (log %s)", o.name, o.log)
	}
}
