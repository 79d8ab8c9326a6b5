package conformance

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/raydar/raydar/controller"
)

// metricsSamples are the samples whose kuberay_* series are compared: a
// RayCluster, a RayJob (its cluster, its completion) and a RayService.
var metricsSamples = []string{
	"samples/ray-cluster.sample.yaml",
	"samples/ray-job.sample.yaml",
	"samples/ray-service.sample.yaml",
}

// TestConformanceMetrics runs KubeRay v1.6.2's operator with
// --enable-metrics (it serves the same nine kuberay_* metrics as v1.7.0)
// and raydar's loop with EnableMetrics, each on its namespaces, brings
// metricsSamples up on both sides, and compares the two /metrics: every
// kuberay_* series, by name and labels (values aside, but the info and
// condition gauges' 1), with the namespace, random name suffixes and UIDs
// normalised as the object diff does. Then the objects are deleted on both
// sides and neither may keep a series of those namespaces.
func TestConformanceMetrics(t *testing.T) {
	if env == nil {
		t.Skip("conformance suite: needs the sandbox and KubeRay's operator (skipped with -short)")
	}
	corpus := env.manifestsNamed(metricsSamples)
	if len(corpus) != len(metricsSamples) {
		t.Fatalf("found %d of the %d samples %v in the corpus", len(corpus), len(metricsSamples), metricsSamples)
	}
	krNS, rdNS, kr, rd := env.passNamespaces(t, "met", len(corpus))
	krAddr, rdAddr := loopbackAddr(t), loopbackAddr(t)
	cmd, err := env.startKubeRay(kr, "--enable-metrics", "--metrics-addr="+krAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer stopKubeRay(cmd)
	stop, err := env.startRaydar(rd, true, func(o *controller.Options) {
		o.EnableMetrics, o.MetricsBindAddress = true, rdAddr
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	summary := runPass(t, corpus, krNS, rdNS, false)
	t.Log(summary)

	krSeries, rdSeries := kuberaySeries(t, krAddr, kr), kuberaySeries(t, rdAddr, rd)
	for _, s := range krSeries {
		if !slices.Contains(rdSeries, s) {
			t.Errorf("KubeRay serves %s; raydar does not", s)
		}
	}
	for _, s := range rdSeries {
		if !slices.Contains(krSeries, s) {
			t.Errorf("raydar serves %s; KubeRay does not", s)
		}
	}
	names := map[string]bool{}
	for _, s := range krSeries {
		names[s[:strings.Index(s, "{")]] = true
	}
	t.Logf("metrics: KubeRay %s and raydar, %d kuberay_* series each, %d metrics, compared after bring-up and completion", KubeRayVersion, len(krSeries), len(names))
	if len(names) != 9 {
		t.Errorf("%d kuberay_* metrics seen, want all 9 (the samples reach every one): %v", len(names), krSeries)
	}

	// Deleted on both sides: no series of those namespaces stays.
	ctx := context.Background()
	for _, ns := range append(slices.Clone(kr), rd...) {
		for _, res := range []string{"rayservices", "rayjobs", "rayclusters"} {
			gvr := schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: res}
			if err := env.dyn.Resource(gvr).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				t.Fatalf("deleting %s in %s: %v", res, ns, err)
			}
		}
	}
	env.waitFor(t, "no kuberay_* series of the deleted objects on either side", func(context.Context) (bool, error) {
		if left := append(kuberaySeries(t, krAddr, kr), kuberaySeries(t, rdAddr, rd)...); len(left) > 0 {
			return false, fmt.Errorf("still served: %v", left)
		}
		return true, nil
	})
}

// loopbackAddr is a free port on 127.0.0.1.
func loopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// kuberaySeries scrapes http://addr/metrics and returns its kuberay_*
// series of the namespaces given, sorted, each as name{label="value",…}
// with its namespace, random name suffixes and UIDs normalised
// (normalizeString); an info or condition gauge's value other than 1 is
// kept in the key, a duration's value is left out.
func kuberaySeries(t *testing.T, addr string, namespaces []string) []string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scraping %s: %v", addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing %s/metrics: %v", addr, err)
	}
	var out []string
	for name, f := range fams {
		if !strings.HasPrefix(name, "kuberay_") {
			continue
		}
		for _, m := range f.Metric {
			ns := ""
			for _, l := range m.Label {
				if l.GetName() == "namespace" {
					ns = l.GetValue()
				}
			}
			if !slices.Contains(namespaces, ns) {
				continue
			}
			var ls []string
			for _, l := range m.Label {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), normalizeString(l.GetValue(), ns)))
			}
			sort.Strings(ls)
			key := name + "{" + strings.Join(ls, ",") + "}"
			if !strings.HasSuffix(name, "_duration_seconds") && m.GetGauge().GetValue() != 1 {
				key += fmt.Sprintf(" %v", m.GetGauge().GetValue())
			}
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}
