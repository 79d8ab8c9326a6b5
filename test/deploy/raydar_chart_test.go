package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// raydarAllValues turns on every option of raydar's chart.
const raydarAllValues = "testdata/raydar-all-values.yaml"

// TestRaydarChartLint: `helm lint --strict` passes raydar's chart, with
// its defaults and with every option on.
func TestRaydarChartLint(t *testing.T) {
	for _, flags := range [][]string{nil, {"-f", raydarAllValues}} {
		out := helm(t, append([]string{"lint", "--strict", raydarChart}, flags...)...)
		if strings.Contains(string(out), "[WARNING]") || strings.Contains(string(out), "[ERROR]") {
			t.Errorf("helm lint --strict %s %v:\n%s", raydarChart, flags, out)
		}
	}
}

// TestRaydarChartRender renders raydar's chart as `helm install raydar
// config/helm/raydar-operator -n raydar-system` installs it: the objects
// config/default makes (but the Namespace, which --create-namespace
// makes), the Deployment least-privileged and probed on what
// raydar-operator serves, the RBAC equal to config/rbac/role.yaml, the
// CRDs those of rayapi/crds/bases.
func TestRaydarChartRender(t *testing.T) {
	objs := helmTemplate(t, raydarChart, "raydar", namespace, "--include-crds")
	var got []string
	for _, u := range objs {
		got = append(got, u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName())
	}
	want := []string{
		"ServiceAccount raydar-system/raydar-operator",
		"Role raydar-system/raydar-operator",
		"ClusterRole /raydar-operator",
		"ClusterRole /raydar-operator-aggregate-to-view",
		"ClusterRole /raydar-operator-aggregate-to-edit",
		"RoleBinding raydar-system/raydar-operator",
		"ClusterRoleBinding /raydar-operator",
		"Deployment raydar-system/raydar-operator",
		"Service raydar-system/raydar-operator",
		"CustomResourceDefinition /rayclusters.ray.io",
		"CustomResourceDefinition /rayjobs.ray.io",
		"CustomResourceDefinition /rayservices.ray.io",
		"CustomResourceDefinition /raycronjobs.ray.io",
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects of raydar's chart (-want +got):\n%s", diff)
	}
	d := find[appsv1.Deployment](t, objs, "Deployment", operatorName)
	checkDeployment(t, d, "raydar:dev")
	checkServedPorts(t, d.Spec.Template.Spec.Containers[0], operatorListenDefaults(t))

	cr, role := generatedRBAC(t)
	checkRBAC(t,
		find[rbacv1.ClusterRole](t, objs, "ClusterRole", operatorName),
		find[rbacv1.Role](t, objs, "Role", operatorName),
		find[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding", operatorName),
		find[rbacv1.RoleBinding](t, objs, "RoleBinding", operatorName),
		cr, role)
	// The aggregated ClusterRoles are config/rbac's.
	def := render(t, nil)
	for _, n := range []string{"aggregate-to-view", "aggregate-to-edit"} {
		w := find[rbacv1.ClusterRole](t, def, "ClusterRole", "raydar-"+n)
		g := find[rbacv1.ClusterRole](t, objs, "ClusterRole", operatorName+"-"+n)
		if diff := cmp.Diff(w.Rules, g.Rules); diff != "" {
			t.Errorf("ClusterRole %s rules differ from config/rbac's (-want +got):\n%s", g.Name, diff)
		}
		for k, v := range w.Labels {
			if strings.HasPrefix(k, "rbac.authorization.k8s.io/") && g.Labels[k] != v {
				t.Errorf("ClusterRole %s: label %s=%q, want %q (config/rbac's)", g.Name, k, g.Labels[k], v)
			}
		}
	}
	// The CRDs are rayapi/crds/bases' (crds/ holds links to them).
	sameFiles(t, filepath.Join(raydarChart, "crds"), "../../rayapi/crds/bases")
	for _, u := range objs {
		if u.GetKind() == "CustomResourceDefinition" {
			b, err := os.ReadFile(filepath.Join("../../rayapi/crds/bases", "ray.io_"+strings.TrimSuffix(u.GetName(), ".ray.io")+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			w := decodeAll(t, b)
			if len(w) != 1 || !cmp.Equal(w[0].Object, u.Object) {
				t.Errorf("CRD %s as the chart installs it differs from rayapi/crds/bases", u.GetName())
			}
		}
	}
	// The metrics Service targets the metrics port.
	svc := find[corev1.Service](t, objs, "Service", operatorName)
	if p := svc.Spec.Ports; len(p) != 1 || p[0].TargetPort.StrVal != "metrics" {
		t.Errorf("Service ports %+v, want one targeting the container port metrics", p)
	}
}

// TestRaydarChartValues renders raydar's chart with every option on: each
// reaches the Deployment (as flags or in the config file), the
// ServiceMonitor scrapes the metrics port; and a value the chart does not
// have (KubeRay's logging, say) is refused, naming it.
func TestRaydarChartValues(t *testing.T) {
	objs := helmTemplate(t, raydarChart, "raydar", "raydar-system", "-f", raydarAllValues)
	p := podSpecOf(t, objs)
	c := p.container
	if c.Image != "registry.example.com/raydar:v0.1.0" {
		t.Errorf("image %q", c.Image)
	}
	cfg := p.files[configArg(c.Args)]
	for _, want := range []string{"reconcileConcurrency: 8", "qps: 50.5", "burst: 120", `watchNamespace: "raydar-watched,raydar-watched-too"`,
		`batchScheduler: "yunikorn"`, "name: head-log-shipper", "name: worker-log-shipper", "name: RAY_enable_open_telemetry",
		"example.com/scrape: \"true\"", "example.com/cost-center: ml", "enableLeaderElection: true",
		"useKubernetesProxy: true", "enableMetrics: true"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("the config file (--config %s) has no %q:\n%s", configArg(c.Args), want, cfg)
		}
	}
	if !slices.Contains(c.Args, "--feature-gates=RayCronJob=true,RayClusterNetworkPolicy=true") {
		t.Errorf("args %q: no --feature-gates from featureGates", c.Args)
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "CLUSTER_DOMAIN" }) {
		t.Errorf("env %v: no CLUSTER_DOMAIN from env", c.Env)
	}
	asFlags := podSpecOf(t, helmTemplate(t, raydarChart, "raydar", "raydar-system", "-f", raydarAllValues, "--set", "configuration.enabled=false")).container.Args
	for _, want := range []string{"--use-kubernetes-proxy", "--enable-metrics"} {
		if !slices.Contains(asFlags, want) {
			t.Errorf("every option as flags: args %q have no %s", asFlags, want)
		}
	}
	sm := only1[unstructured.Unstructured](t, objs, "ServiceMonitor")
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 || eps[0].(map[string]any)["port"] != "metrics" || sm.GetLabels()["release"] != "prometheus" {
		t.Errorf("ServiceMonitor %v: want one endpoint on port metrics and the label release: prometheus", sm.Object)
	}
	checkServedPorts(t, c, operatorListenDefaults(t))

	for set, name := range map[string]string{"logging.stdoutEncoder=json": "logging", "batchScheduler.enabled=true": "enabled", "singleNamespaceInstall=true": "singleNamespaceInstall"} {
		out, err := helmErr(t, "template", "raydar", raydarChart, "--set", set)
		if err == nil || !strings.Contains(string(out), "additional properties '"+name+"' not allowed") {
			t.Errorf("helm template --set %s: %v, want it refused naming %s:\n%s", set, err, name, out)
		}
	}
}

// TestRaydarChartRunsRaydar installs raydar's chart in the sandbox (its
// own names, beside config/default's) with its defaults, with every
// option on as flags and with every option on in the config file, and runs raydar-operator as each Deployment's container
// (runChart).
func TestRaydarChartRunsRaydar(t *testing.T) {
	needSandbox(t)
	names := []string{"--set", "fullnameOverride=raydar-helm"}
	t.Run("defaults", func(t *testing.T) {
		objs := helmTemplate(t, raydarChart, "raydar", "raydar-helm", names...)
		runChart(t, objs, chartRun{ns: "raydar-defaults", kuberayMetrics: true})
	})
	t.Run("every option as flags", func(t *testing.T) {
		objs := helmTemplate(t, raydarChart, "raydar", "raydar-helm", append(slices.Clone(names), "-f", raydarAllValues, "--set", "configuration.enabled=false")...)
		runChart(t, objs, chartRun{
			ns: "raydar-watched", unwatched: "raydar-unwatched", batchScheduler: "yunikorn", kuberayMetrics: true,
			checkHead: func(t *testing.T, head *corev1.Pod) {
				if head.Spec.SchedulerName != "yunikorn" {
					t.Errorf("head schedulerName %q, want yunikorn (batchScheduler.name)", head.Spec.SchedulerName)
				}
			},
		})
	})
	t.Run("every option", func(t *testing.T) {
		objs := helmTemplate(t, raydarChart, "raydar", "raydar-helm", append(slices.Clone(names), "-f", raydarAllValues)...)
		runChart(t, objs, chartRun{
			ns: "raydar-watched", unwatched: "raydar-unwatched", batchScheduler: "yunikorn", kuberayMetrics: true,
			checkHead: checkPodDefaults,
		})
	})
}

// checkPodDefaults wants on a head pod what the all-values files'
// configuration and batchScheduler say.
func checkPodDefaults(t *testing.T, head *corev1.Pod) {
	t.Helper()
	var names []string
	for _, c := range head.Spec.Containers {
		names = append(names, c.Name)
	}
	if !slices.Contains(names, "head-log-shipper") {
		t.Errorf("head pod containers %v: no headSidecarContainers' head-log-shipper", names)
	}
	ray := head.Spec.Containers[0]
	if !slices.ContainsFunc(ray.Env, func(e corev1.EnvVar) bool { return e.Name == "RAY_enable_open_telemetry" && e.Value == "true" }) {
		t.Errorf("the head's Ray container has no defaultContainerEnvs' RAY_enable_open_telemetry=true: %v", ray.Env)
	}
	if head.Labels["example.com/cost-center"] != "ml" || head.Annotations["example.com/scrape"] != "true" {
		t.Errorf("head labels %v annotations %v: no defaultPodLabels/defaultPodAnnotations", head.Labels, head.Annotations)
	}
	if head.Spec.SchedulerName != "yunikorn" {
		t.Errorf("head schedulerName %q, want yunikorn (batchScheduler.name)", head.Spec.SchedulerName)
	}
}
