package raycluster

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// teamDefaults is a team's configuration: a log shipper on heads, a node
// agent on workers, two default envs (one a user's container sets too),
// a label and an annotation (one the template sets too).
func teamDefaults() kit.PodDefaults {
	return kit.PodDefaults{
		HeadSidecarContainers:   []corev1.Container{{Name: "log-shipper", Image: "fluent-bit"}},
		WorkerSidecarContainers: []corev1.Container{{Name: "node-agent", Image: "busybox"}, {Name: "gpu-exporter", Image: "dcgm"}},
		DefaultContainerEnvs:    []corev1.EnvVar{{Name: "TEAM", Value: "ml"}, {Name: "USER_FIRST", Value: "default"}},
		DefaultPodLabels:        map[string]string{"team": "ml", "ray.io/node-type": "default", "app": "default"},
		DefaultPodAnnotations:   map[string]string{"owner": "ml-platform", "note": "default"},
	}
}

func containerNames(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func envNames(es []corev1.EnvVar) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func TestPodDefaultsShapePodsAsKubeRay(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("g", 1))
	rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
	for _, tp := range []*corev1.PodTemplateSpec{&rc.Spec.HeadGroupSpec.Template, &rc.Spec.WorkerGroupSpecs[0].Template} {
		tp.Labels = map[string]string{"app": "mine"}
		tp.Annotations = map[string]string{"note": "mine"}
		tp.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "USER_FIRST", Value: "1"}}
	}
	cfg := DefaultBuildConfig()
	cfg.PodDefaults = teamDefaults()
	head := BuildPod(rc, PodBuild{Name: "c-head-x", Head: true}, "h", cfg)
	worker := BuildPod(rc, PodBuild{Name: "c-g-worker-x", Group: &rc.Spec.WorkerGroupSpecs[0]}, "h", cfg)

	// Sidecars after the template's containers and the autoscaler.
	if got, want := containerNames(head.Spec.Containers), []string{"ray", rayv1.AutoscalerContainerName, "log-shipper"}; !slices.Equal(got, want) {
		t.Errorf("head containers %v, want %v", got, want)
	}
	if got := containerNames(worker.Spec.Containers); len(got) != 3 || got[1] != "node-agent" || got[2] != "gpu-exporter" {
		t.Errorf("worker containers %v, want the Ray container, node-agent, gpu-exporter", got)
	}
	for _, p := range []*corev1.Pod{head, worker} {
		ray := p.Spec.Containers[rayv1.RayContainerIndex]
		names := envNames(ray.Env)
		// Default envs right after the user's (and the injected) ones,
		// before the env KubeRay generates; the user's value wins.
		i := slices.Index(names, "TEAM")
		if i < 0 || names[0] != "USER_FIRST" || slices.Index(names, envClusterName) < i {
			t.Errorf("%s: Ray container env %v: want USER_FIRST first and TEAM before %s", p.Name, names, envClusterName)
		}
		if n := strings.Count(strings.Join(names, " ")+" ", "USER_FIRST "); n != 1 || ray.Env[0].Value != "1" {
			t.Errorf("%s: USER_FIRST %d times, first value %q: the user's value must win", p.Name, n, ray.Env[0].Value)
		}
		for _, c := range p.Spec.Containers[1:] {
			if envExists(c.Env, "TEAM") {
				t.Errorf("%s: container %s got the default env; KubeRay gives it to the Ray container only", p.Name, c.Name)
			}
		}
		if p.Labels["team"] != "ml" || p.Labels["app"] != "mine" || p.Labels[rayv1.RayNodeTypeLabelKey] == "default" {
			t.Errorf("%s: labels %v: want team=ml added, the template's app and raydar's node type kept", p.Name, p.Labels)
		}
		if p.Annotations["owner"] != "ml-platform" || p.Annotations["note"] != "mine" {
			t.Errorf("%s: annotations %v: want owner added and the template's note kept", p.Name, p.Annotations)
		}
	}
	// The cluster's own spec is not changed by building.
	if len(rc.Spec.HeadGroupSpec.Template.Spec.Containers) != 1 {
		t.Error("building a pod changed the RayCluster's template")
	}
}

func TestPodDefaultsValidate(t *testing.T) {
	ok := teamDefaults()
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid defaults refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		mod  func(*kit.PodDefaults)
		want string
	}{
		{"two sidecars of one name", func(d *kit.PodDefaults) {
			d.WorkerSidecarContainers = append(d.WorkerSidecarContainers, corev1.Container{Name: "node-agent", Image: "x"})
		}, `workerSidecarContainers[2]: a second sidecar named "node-agent"`},
		{"the autoscaler's name", func(d *kit.PodDefaults) { d.HeadSidecarContainers[0].Name = "autoscaler" }, `headSidecarContainers[0]: name "autoscaler" is the container raydar adds itself`},
		{"the GCS wait's name (an init container)", func(d *kit.PodDefaults) { d.WorkerSidecarContainers[0].Name = "wait-gcs-ready" }, `workerSidecarContainers[0]: name "wait-gcs-ready" is the container raydar adds itself`},
		{"the TLS wait's name (an init container)", func(d *kit.PodDefaults) { d.HeadSidecarContainers[0].Name = "wait-for-tls-ip-san" }, `headSidecarContainers[0]: name "wait-for-tls-ip-san" is the container raydar adds itself`},
		{"no image", func(d *kit.PodDefaults) { d.HeadSidecarContainers[0].Image = "" }, "headSidecarContainers[0] (log-shipper): no image"},
		{"bad name", func(d *kit.PodDefaults) { d.HeadSidecarContainers[0].Name = "Log_Shipper" }, `headSidecarContainers[0]: name "Log_Shipper"`},
		{"bad env", func(d *kit.PodDefaults) { d.DefaultContainerEnvs[0].Name = "1=X" }, `defaultContainerEnvs[0]: name "1=X"`},
		{"bad label", func(d *kit.PodDefaults) { d.DefaultPodLabels["team"] = "a b" }, `defaultPodLabels[team]: value "a b"`},
	} {
		d := teamDefaults()
		tc.mod(&d)
		if err := d.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// A template container named as a sidecar refuses the object, naming the
// container; no pod is planned.
func TestSidecarConflictRefusesTheCluster(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("g", 1))
	rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers = append(rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers,
		corev1.Container{Name: "node-agent", Image: "mine"})
	errs := SidecarConflicts(&rc.Spec, field.NewPath("spec"), teamDefaults())
	if len(errs) != 1 || errs[0].Field != "spec.workerGroupSpecs[0].template.spec.containers[1].name" || !strings.Contains(errs[0].Error(), "workerSidecarContainers") {
		t.Fatalf("conflicts %v, want the worker template's node-agent named", errs)
	}
	// An init container of the template shares the containers' names.
	withInit := fixture.Cluster("c", fixture.Group("g", 1))
	withInit.Spec.HeadGroupSpec.Template.Spec.InitContainers = []corev1.Container{{Name: "log-shipper", Image: "mine"}}
	if errs := SidecarConflicts(&withInit.Spec, field.NewPath("spec"), teamDefaults()); len(errs) != 1 ||
		errs[0].Field != "spec.headGroupSpec.template.spec.initContainers[0].name" {
		t.Fatalf("init container conflicts %v, want the head's log-shipper init container named", errs)
	}
	if errs := SidecarConflicts(&rc.Spec, field.NewPath("spec"), kit.PodDefaults{}); len(errs) != 0 {
		t.Errorf("no sidecars configured, conflicts %v", errs)
	}
	// The pass plans no pod and says why, on the object.
	o := obsOf(rc, nil)
	o.Config.PodDefaults = teamDefaults()
	p := decide(o)
	if len(p.CreatePods) != 0 {
		t.Fatalf("a conflicting cluster planned %d pods", len(p.CreatePods))
	}
	c := condOf(p.Status, rayv1.RayClusterReplicaFailure)
	if c == nil || c.Reason != ReasonValidationFailed || !strings.Contains(c.Message, "containers[1].name") {
		t.Fatalf("ReplicaFailure = %+v", c)
	}
	if len(p.Events) != 1 || p.Events[0].Type != corev1.EventTypeWarning || !strings.Contains(p.Events[0].Message, "node-agent") {
		t.Fatalf("events = %+v", p.Events)
	}
}
