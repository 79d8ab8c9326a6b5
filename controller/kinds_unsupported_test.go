package controller

import (
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/controller/rayjob"
	"github.com/raydar/raydar/controller/rayservice"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestUnsupportedFields(t *testing.T) {
	incremental := rayv1.NewClusterWithIncrementalUpgrade
	newCluster := rayv1.NewCluster
	for _, tc := range []struct {
		name string
		spec func(*rayv1.RayClusterSpec)
		ann  map[string]string
		// want is the field path under the RayCluster's spec/metadata; ""
		// means accepted.
		want string
		// invalid: not a missing feature, a spec that cannot be honoured.
		invalid bool
		// gate: implemented behind this feature gate, off by default.
		gate features.Gate
	}{
		{name: "nothing unusual", spec: func(*rayv1.RayClusterSpec) {}},
		{name: "tlsOptions: refused with its gate off, naming the gate", spec: func(s *rayv1.RayClusterSpec) { s.TLSOptions = &rayv1.TLSOptions{Enabled: fixture.Ptr(true)} },
			want: "spec.tlsOptions", gate: features.RayClusterMTLS},
		{name: "tlsOptions disabled is still refused, as KubeRay does without its gate", spec: func(s *rayv1.RayClusterSpec) {
			s.TLSOptions = &rayv1.TLSOptions{Enabled: fixture.Ptr(false)}
		}, want: "spec.tlsOptions", gate: features.RayClusterMTLS},
		{name: "networkPolicy: refused with its gate off, naming the gate", spec: func(s *rayv1.RayClusterSpec) { s.NetworkPolicy = &rayv1.NetworkPolicyConfig{} },
			want: "spec.networkPolicy", gate: features.RayClusterNetworkPolicy},
		{name: "historyServerOptions: refused with its gate off, naming the gate", spec: func(s *rayv1.RayClusterSpec) {
			s.HistoryServerOptions = &rayv1.HistoryServerOptions{CollectorOptions: &rayv1.CollectorOptions{}}
		}, want: "spec.historyServerOptions", gate: features.RayClusterHistoryServer},
		{name: "rocksdb GCS FT: refused with its gate off, naming the gate", spec: func(s *rayv1.RayClusterSpec) {
			s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB}
		}, want: "spec.gcsFaultToleranceOptions.backend", gate: features.GCSFaultToleranceEmbeddedStorage},
		{name: "GCS storage with redis: ignored otherwise, so refused (KubeRay refuses it too)", spec: func(s *rayv1.RayClusterSpec) {
			s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379", Storage: &rayv1.GcsEmbeddedStorage{}}
		}, want: "spec.gcsFaultToleranceOptions.storage", invalid: true},
		{name: "redis GCS FT is implemented", spec: func(s *rayv1.RayClusterSpec) {
			s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRedis, RedisAddress: "redis:6379"}
		}},
		{name: "enableK8sTokenAuth is implemented (in RayJobs and RayServices rayapi/v1 validation refuses it, as KubeRay)", spec: func(s *rayv1.RayClusterSpec) {
			s.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, EnableK8sTokenAuth: fixture.Ptr(true)}
		}},
		{name: "token auth is implemented", spec: func(s *rayv1.RayClusterSpec) {
			s.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, EnableK8sTokenAuth: fixture.Ptr(false)}
		}},
		{name: "enableIngress is implemented", spec: func(s *rayv1.RayClusterSpec) { s.HeadGroupSpec.EnableIngress = fixture.Ptr(true) }},
		{name: "enableIngress false", spec: func(s *rayv1.RayClusterSpec) { s.HeadGroupSpec.EnableIngress = fixture.Ptr(false) }},
		{name: "ray.io/enable-serve-service is implemented", spec: func(*rayv1.RayClusterSpec) {}, ann: map[string]string{rayv1.EnableServeServiceKey: "true"}},
		{name: "ray.io/enable-serve-service without a serve port", spec: func(s *rayv1.RayClusterSpec) {
			s.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 8265}}
		}, ann: map[string]string{rayv1.EnableServeServiceKey: "true"}, want: "metadata.annotations[ray.io/enable-serve-service]", invalid: true},
		{name: "ray.io/enable-serve-service false", spec: func(*rayv1.RayClusterSpec) {}, ann: map[string]string{rayv1.EnableServeServiceKey: "false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(kind, got, want string) {
				t.Helper()
				if want == "" {
					if got != "" {
						t.Errorf("%s: refused %s, want accepted", kind, got)
					}
					return
				}
				prefix := want + ": Forbidden: " + raycluster.NotImplemented
				switch {
				case tc.invalid:
					prefix = want + ": " // implemented, but this spec cannot be honoured
				case tc.gate != "":
					prefix = want + ": Forbidden: requires the " + string(tc.gate) + " feature gate"
				}
				if !strings.HasPrefix(got, prefix) || (tc.gate != "" && !strings.Contains(got, " feature gate, which is off")) {
					t.Errorf("%s: %q, want a refusal of %s", kind, got, want)
				}
			}
			rc := fixture.Cluster("c", fixture.Group("g", 1))
			rc.Annotations = tc.ann
			tc.spec(&rc.Spec)
			check("RayCluster", joinErrs(raycluster.UnsupportedRayCluster(rc)), tc.want)

			// The same spec in a RayJob and a RayService is refused there,
			// under their own paths.
			under := func(prefix string) string {
				if tc.want == "" || strings.HasPrefix(tc.want, "metadata.") {
					return tc.want
				}
				return prefix + strings.TrimPrefix(tc.want, "spec")
			}
			rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "j", Annotations: tc.ann}, Spec: rayv1.RayJobSpec{RayClusterSpec: rc.Spec.DeepCopy()}}
			check("RayJob", joinErrs(rayjob.Unsupported(rj)), under("spec.rayClusterSpec"))
			rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "s", Annotations: tc.ann}, Spec: rayv1.RayServiceSpec{RayClusterSpec: *rc.Spec.DeepCopy()}}
			check("RayService", joinErrs(rayservice.Unsupported(rs)), under("spec.rayClusterConfig"))
			if tc.gate != "" {
				// With the gate on all three kinds accept it.
				on := features.MustParse(string(tc.gate) + "=true")
				check("RayCluster, gate on", joinErrs(raycluster.UnsupportedRayClusterWith(rc, raycluster.BuildConfig{Features: on})), "")
				check("RayJob, gate on", joinErrs(rayjob.UnsupportedWith(rj, raycluster.BuildConfig{Features: on})), "")
				check("RayService, gate on", joinErrs(rayservice.UnsupportedWith(rs, raycluster.BuildConfig{Features: on})), "")
			}
		})
	}

	t.Run("RayJob on a selected cluster creates none", func(t *testing.T) {
		rc := fixture.Cluster("c")
		rc.Spec.TLSOptions = &rayv1.TLSOptions{}
		rj := &rayv1.RayJob{Spec: rayv1.RayJobSpec{RayClusterSpec: &rc.Spec, ClusterSelector: map[string]string{rayv1.RayClusterLabelKey: "c"}}}
		if errs := rayjob.Unsupported(rj); len(errs) != 0 {
			t.Fatal(errs)
		}
	})
	t.Run("a template container named as a configured sidecar, in all three kinds", func(t *testing.T) {
		rc := fixture.Cluster("c", fixture.Group("g", 1))
		rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers = append(rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers,
			corev1.Container{Name: "node-agent", Image: "mine"})
		cfg := raycluster.BuildConfig{PodDefaults: kit.PodDefaults{WorkerSidecarContainers: []corev1.Container{{Name: "node-agent", Image: "x"}}}}
		rj := &rayv1.RayJob{Spec: rayv1.RayJobSpec{RayClusterSpec: rc.Spec.DeepCopy()}}
		rs := &rayv1.RayService{Spec: rayv1.RayServiceSpec{RayClusterSpec: *rc.Spec.DeepCopy()}}
		const at = ".workerGroupSpecs[0].template.spec.containers[1].name"
		for kind, got := range map[string]string{
			"spec.rayClusterSpec" + at:   joinErrs(rayjob.UnsupportedWith(rj, cfg)),
			"spec.rayClusterConfig" + at: joinErrs(rayservice.UnsupportedWith(rs, cfg)),
			"spec" + at:                  joinErrs(raycluster.UnsupportedRayClusterWith(rc, cfg)),
		} {
			if !strings.HasPrefix(got, kind+": Invalid value: \"node-agent\"") || !strings.Contains(got, "workerSidecarContainers") {
				t.Errorf("want %s refused naming workerSidecarContainers, got %q", kind, got)
			}
		}
		if got := joinErrs(raycluster.UnsupportedRayCluster(rc)); got != "" {
			t.Errorf("without the sidecar configured: %q", got)
		}
	})
	t.Run("RayService upgrade strategies", func(t *testing.T) {
		rs := &rayv1.RayService{Spec: rayv1.RayServiceSpec{RayClusterSpec: fixture.Cluster("c").Spec}}
		rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: &newCluster}
		if errs := rayservice.Unsupported(rs); len(errs) != 0 {
			t.Fatal(errs)
		}
		// NewClusterWithIncrementalUpgrade is implemented (issue 23): with
		// the gate off it behaves as KubeRay v1.6.2 does (no upgrade, a
		// Normal UpgradeSkipped event, see decide.go), so it is no refusal.
		rs.Spec.UpgradeStrategy.Type = &incremental
		if errs := rayservice.Unsupported(rs); len(errs) != 0 {
			t.Fatal(errs)
		}
		on := features.MustParse(string(features.RayServiceIncrementalUpgrade) + "=true")
		if errs := rayservice.UnsupportedWith(rs, raycluster.BuildConfig{Features: on}); len(errs) != 0 {
			t.Fatal(errs)
		}
	})
}

// joinErrs is the errors' messages, one a line; "" for none.
func joinErrs(errs field.ErrorList) string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return strings.Join(out, "\n")
}
