package controller

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// BenchmarkOperatorProcess runs the bring-up of 100 clusters against
// `raydar operator` as its own process, to measure what a deployed operator
// holds: its peak RSS (VmHWM), the file-backed (mapped binary) and
// anonymous (heap, stacks) parts of its resident set when every cluster is
// ready, and its own CPU, without the benchmark's clients and watch.
//
// With RAYDAR_BENCH_PROFILES=<dir> it also writes, for each run, the
// operator's heap profile (inuse_space and alloc_space in one file, `go
// tool pprof -sample_index=...`) and /proc/<pid>/smaps_rollup when half the
// clusters are ready (during), when all are, and 5 s later (after).
func BenchmarkOperatorProcess(b *testing.B) {
	needSandbox(b)
	for _, bin := range []struct{ name, pkg string }{{"raydar", "cmd/raydar"}, {"raydar-operator", "cmd/raydar-operator"}} {
		b.Run("binary="+bin.name, func(b *testing.B) {
			path := buildBinary(b, bin.pkg)
			args := []string{"--kubeconfig", sb.KubeconfigPath}
			if bin.name == "raydar" {
				args = append([]string{"operator"}, args...)
			}
			benchOperatorProcess(b, bin.name, path, args, 100)
		})
	}
}

// buildBinary builds the module's package pkg (cmd/...) into a temporary
// directory of b.
func buildBinary(b *testing.B, pkg string) string {
	bin := filepath.Join(b.TempDir(), filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/raydar/raydar/"+pkg).CombinedOutput(); err != nil {
		b.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// benchOperatorProcess brings up n clusters against the operator binary
// bin started with args and the flags of one namespace.
func benchOperatorProcess(b *testing.B, name, bin string, base []string, n int) {
	profiles := os.Getenv("RAYDAR_BENCH_PROFILES")
	var sumUp time.Duration
	var rss, anon, file, cpu float64
	for run := range b.N {
		b.StopTimer()
		ns := newNamespace(b)
		args := append(append([]string(nil), base...), "--no-leader-election",
			"--watch-namespaces", ns, "--ignore-other-operator", "--metrics-bind-address", "0", "--health-probe-bind-address", "0")
		pprofAddr := ""
		if profiles != "" {
			pprofAddr = freeAddr(b)
			args = append(args, "--pprof-bind-address", pprofAddr)
		}
		cmd := exec.Command(bin, args...)
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		pid := cmd.Process.Pid
		snapshot := func(when string) {
			if profiles == "" {
				return
			}
			base := filepath.Join(profiles, fmt.Sprintf("%s-n%d-run%d-%s", name, n, run, when))
			if err := fetchTo("http://"+pprofAddr+"/debug/pprof/heap", base+".heap.pprof"); err != nil {
				b.Logf("heap profile %s: %v", when, err)
			}
			if raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
				_ = os.WriteFile(base+".smaps_rollup", raw, 0o644)
			}
		}
		time.Sleep(2 * time.Second) // cache sync
		cpu0 := procCPUSeconds(pid)
		b.StartTimer()
		start := time.Now()
		createBenchClusters(b, ns, n)
		half := false
		eventually(b, 5*time.Minute, "all clusters ready", func() (bool, string) {
			ready := readyClusters(b, ns)
			if !half && ready >= n/2 {
				half = true
				snapshot("during")
			}
			return ready == n, fmt.Sprint(ready, " ready")
		})
		sumUp += time.Since(start)
		b.StopTimer()
		cpu += procCPUSeconds(pid) - cpu0
		status := fmt.Sprintf("/proc/%d/status", pid)
		rss += procPeakRSSMiB(status)
		anon += procField(status, "RssAnon:")
		file += procField(status, "RssFile:")
		snapshot("ready")
		if profiles != "" {
			time.Sleep(5 * time.Second) // what the operator keeps once the burst is over
			snapshot("after")
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		_ = cl.DeleteAllOf(context.Background(), &rayv1.RayCluster{}, client.InNamespace(ns))
	}
	b.ReportMetric(sumUp.Seconds()/float64(b.N), "s-to-ready")
	b.ReportMetric(rss/float64(b.N), "operator-peak-RSS-MiB")
	b.ReportMetric(anon/float64(b.N), "operator-anon-RSS-MiB")
	b.ReportMetric(file/float64(b.N), "operator-file-RSS-MiB")
	b.ReportMetric(cpu/float64(b.N), "operator-cpu-s")
}

// readyClusters counts the RayClusters of ns whose state is ready.
func readyClusters(b *testing.B, ns string) int {
	list := &rayv1.RayClusterList{}
	if err := cl.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	ready := 0
	for _, rc := range list.Items {
		if rc.Status.State == rayv1.Ready {
			ready++
		}
	}
	return ready
}

// freeAddr is a free loopback address for a child process to listen on.
func freeAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// fetchTo writes the body of GET url to path.
func fetchTo(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// procCPUSeconds is the CPU time (user + system) of process pid so far,
// from /proc/<pid>/stat (clock ticks of 1/100 s on Linux), 0 if unknown.
func procCPUSeconds(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count from after ")".
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100
}

// procField reads a "<field> <n> kB" line of a /proc status file, in MiB.
func procField(path, field string) float64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
