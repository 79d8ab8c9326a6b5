package admission

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/test/conformance"
	"github.com/raydar/raydar/test/internal/benchkit"
	"github.com/raydar/raydar/test/internal/procstat"
)

// One sandbox (etcd and kube-apiserver only: nothing else reads or writes
// RayClusters) for the package; none with -short or when no benchmark is
// asked for (`go test ./...` in `make test` runs none here).
var (
	sb  *sandbox.Sandbox
	dyn dynamic.Interface
	ext apiextensionsclient.Interface
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() || flag.Lookup("test.bench").Value.String() == "" {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	s, err := sandbox.Start(context.Background(), sandbox.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "test/bench/admission: starting the sandbox:", err)
		os.Exit(1)
	}
	sb = s
	code := 1
	if dyn, err = dynamic.NewForConfig(s.Config); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else if ext, err = apiextensionsclient.NewForConfig(s.Config); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
	}
	os.Exit(code)
}

var rayClusters = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}

// batch is what one batch of creates cost.
type batch struct {
	wall time.Duration // first create until the last answer
	cpu  time.Duration // kube-apiserver's CPU time (user + system) meanwhile
	// latency is the API server's mean time per create
	// (apiserver_request_duration_seconds, POST rayclusters).
	latency time.Duration
	// cel is the CEL evaluation time in the batch
	// (apiserver_cel_evaluation_duration_seconds) and celN the evaluations.
	cel  time.Duration
	celN float64
}

// crdSet is one contender: a name and its RayCluster CRD.
type crdSet struct {
	name string
	crd  *apiextensionsv1.CustomResourceDefinition
}

// BenchmarkAdmission creates N RayClusters (KubeRay's
// ray-cluster.sample.yaml, names differing) by 8 parallel clients with no
// operator running, under raydar's RayCluster CRD and under KubeRay
// v1.6.2's, on one API server: each round installs one CRD, warms its
// handler with one create, times the N creates, deletes the CRD (and with
// it the objects) and does the same with the other; the order alternates
// per round (A B, B A, ...) so that load drifts equally. It prints each
// round and reports the median per CRD set and their ratio. N is 100 and
// 300; RAYDAR_BENCH_SIZES sets others, RAYDAR_BENCH_ROUNDS the rounds (5).
// RAYDAR_BENCH_RAYDAR_CRD replaces raydar's CRD by a file's (to measure a
// variant, e.g. with one rule removed); RAYDAR_BENCH_SAMPLE replaces the
// sample by another RayCluster manifest (a path).
func BenchmarkAdmission(b *testing.B) {
	if testing.Short() {
		b.Skip("-short: needs a control plane")
	}
	sizes := benchkit.EnvInts(b, "RAYDAR_BENCH_SIZES", []int{100, 300})
	rounds := benchkit.EnvInts(b, "RAYDAR_BENCH_ROUNDS", []int{5})[0]
	sets := []crdSet{{"raydar", raydarCRD(b)}, {"kuberay", kubeRayCRD(b)}}
	sample := sampleCluster(b)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			for range b.N {
				res := map[string][]batch{}
				for r := range rounds {
					order := []crdSet{sets[0], sets[1]}
					if r%2 == 1 {
						order[0], order[1] = order[1], order[0]
					}
					// One line per round: go test keeps only a benchmark's
					// first 10 lines of output without -v.
					line := fmt.Sprintf("N=%d round %d", n, r+1)
					for _, s := range order {
						m := measure(b, s, sample, n)
						res[s.name] = append(res[s.name], m)
						line += fmt.Sprintf("; %s %.2f s, API server CPU %.2f s, %.1f ms per create, CEL %.1f ms in %.0f evaluations",
							s.name, m.wall.Seconds(), m.cpu.Seconds(), ms(m.latency), ms(m.cel), m.celN)
					}
					b.Logf("%s (load %s)", line, benchkit.LoadAverage())
				}
				rd, kr := medians(res["raydar"]), medians(res["kuberay"])
				b.Logf("N=%d medians of %d rounds: wall raydar %.2f s, kuberay %.2f s (%.2f×); API server CPU raydar %.2f s, kuberay %.2f s (%.2f×); per create raydar %.1f ms, kuberay %.1f ms (%.2f×); CEL raydar %.1f ms, kuberay %.1f ms",
					n, rounds, rd.wall.Seconds(), kr.wall.Seconds(), ratio(rd.wall, kr.wall),
					rd.cpu.Seconds(), kr.cpu.Seconds(), ratio(rd.cpu, kr.cpu),
					ms(rd.latency), ms(kr.latency), ratio(rd.latency, kr.latency), ms(rd.cel), ms(kr.cel))
				b.ReportMetric(rd.wall.Seconds(), "raydar-s")
				b.ReportMetric(kr.wall.Seconds(), "kuberay-s")
				b.ReportMetric(ratio(rd.wall, kr.wall), "wall-ratio")
				b.ReportMetric(ratio(rd.cpu, kr.cpu), "cpu-ratio")
				b.ReportMetric(ratio(rd.latency, kr.latency), "latency-ratio")
				b.ReportMetric(ms(rd.cel)/float64(n), "raydar-CEL-ms/create")
			}
		})
	}
}

// measure installs s's CRD, warms it up, times n creates of sample by 8
// clients, and removes the CRD and its objects again.
func measure(b *testing.B, s crdSet, sample *unstructured.Unstructured, n int) batch {
	ctx := context.Background()
	install(b, s.crd)
	defer uninstall(b, s.crd.Name)
	api := dyn.Resource(rayClusters).Namespace("default")
	// The first create builds the CRD's handler (schema, CEL programs); it
	// is not what a cluster's creates cost afterwards.
	warm := sample.DeepCopy()
	warm.SetName("warm-up")
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := api.Create(ctx, warm, metav1.CreateOptions{})
		if apierrors.IsNotFound(err) || meta404(err) {
			return false, nil // not served yet
		}
		return err == nil, err
	})
	if err != nil {
		b.Fatalf("%s: warm-up create: %v", s.name, err)
	}
	m0, cpu0 := scrape(b), apiServerCPU(b)
	start := time.Now()
	benchkit.Parallel(b, n, func(i int) error {
		o := sample.DeepCopy()
		o.SetName(fmt.Sprintf("bench-%04d", i))
		_, err := api.Create(ctx, o, metav1.CreateOptions{})
		return err
	})
	res := batch{wall: time.Since(start), cpu: apiServerCPU(b) - cpu0}
	m1 := scrape(b)
	if c := m1.createN - m0.createN; c > 0 {
		res.latency = seconds((m1.createSum - m0.createSum) / c)
	}
	res.cel, res.celN = seconds(m1.celSum-m0.celSum), m1.celN-m0.celN
	return res
}

// apiMetrics are the sums read off the API server's /metrics.
type apiMetrics struct {
	createSum, createN float64 // POST rayclusters
	celSum, celN       float64 // CEL evaluations
}

// scrape reads the API server's metrics.
func scrape(b *testing.B) apiMetrics {
	raw, err := sb.Clientset().CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Fatalf("reading the API server's metrics: %v", err)
	}
	var m apiMetrics
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		post := strings.Contains(line, `verb="POST"`) && strings.Contains(line, `resource="rayclusters"`)
		switch {
		case strings.HasPrefix(line, "apiserver_request_duration_seconds_sum{") && post:
			m.createSum += v
		case strings.HasPrefix(line, "apiserver_request_duration_seconds_count{") && post:
			m.createN += v
		case strings.HasPrefix(line, "apiserver_cel_evaluation_duration_seconds_sum"):
			m.celSum += v
		case strings.HasPrefix(line, "apiserver_cel_evaluation_duration_seconds_count"):
			m.celN += v
		}
	}
	return m
}

// apiServerCPU is kube-apiserver's CPU time so far.
func apiServerCPU(b *testing.B) time.Duration {
	pid, ok := sb.APIServerPID()
	if !ok {
		b.Fatal("the sandbox has no kube-apiserver pid")
	}
	d, err := procstat.CPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

// meta404 is the REST mapper-less "the server could not find the requested
// resource" a just-created CRD answers for a moment.
func meta404(err error) bool {
	var st apierrors.APIStatus
	return errors.As(err, &st) && st.Status().Code == 404
}

// install creates crd and waits until it is Established and served.
func install(b *testing.B, crd *apiextensionsv1.CustomResourceDefinition) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := sb.InstallCRDs(ctx, crd.DeepCopy()); err != nil {
		b.Fatalf("installing %s: %v", crd.Name, err)
	}
}

// uninstall deletes the CRD and waits until it (and so every object of
// it) is gone.
func uninstall(b *testing.B, name string) {
	ctx := context.Background()
	api := ext.ApiextensionsV1().CustomResourceDefinitions()
	if err := api.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		b.Fatalf("deleting %s: %v", name, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := api.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		b.Fatalf("%s gone: %v", name, err)
	}
}

// raydarCRD is raydar's RayCluster CRD (rayapi/crds), or the file
// RAYDAR_BENCH_RAYDAR_CRD names.
func raydarCRD(b *testing.B) *apiextensionsv1.CustomResourceDefinition {
	if path := os.Getenv("RAYDAR_BENCH_RAYDAR_CRD"); path != "" {
		return readCRD(b, path)
	}
	objs, err := crds.Objects()
	if err != nil {
		b.Fatal(err)
	}
	for _, o := range objs {
		if o.Name == "rayclusters.ray.io" {
			return o
		}
	}
	b.Fatal("rayapi/crds has no rayclusters.ray.io")
	return nil
}

// kubeRayCRD is KubeRay v1.6.2's RayCluster CRD, from its module.
func kubeRayCRD(b *testing.B) *apiextensionsv1.CustomResourceDefinition {
	dir, err := conformance.KubeRayModuleDir()
	if err != nil {
		b.Fatal(err)
	}
	return readCRD(b, filepath.Join(dir, "config", "crd", "bases", "ray.io_rayclusters.yaml"))
}

func readCRD(b *testing.B, path string) *apiextensionsv1.CustomResourceDefinition {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	return crd
}

// sampleCluster is KubeRay's ray-cluster.sample.yaml, or the manifest
// RAYDAR_BENCH_SAMPLE names.
func sampleCluster(b *testing.B) *unstructured.Unstructured {
	path := os.Getenv("RAYDAR_BENCH_SAMPLE")
	if path == "" {
		dir, err := conformance.KubeRayModuleDir()
		if err != nil {
			b.Fatal(err)
		}
		path = filepath.Join(dir, "config", "samples", "ray-cluster.sample.yaml")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	o := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &o.Object); err != nil {
		b.Fatal(err)
	}
	o.SetNamespace("default")
	return o
}

// medians is each figure's median over the rounds.
func medians(bs []batch) batch {
	pick := func(f func(batch) time.Duration) time.Duration {
		var ds []time.Duration
		for _, x := range bs {
			ds = append(ds, f(x))
		}
		return median(ds)
	}
	return batch{
		wall:    pick(func(x batch) time.Duration { return x.wall }),
		cpu:     pick(func(x batch) time.Duration { return x.cpu }),
		latency: pick(func(x batch) time.Duration { return x.latency }),
		cel:     pick(func(x batch) time.Duration { return x.cel }),
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
