package deploy

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/raydar/raydar/kube/sandbox"
)

// KubeRay's Helm chart, copied unchanged from KubeRay's repository
// (testdata/README.md), and raydar's own.
const (
	kuberayChart = "testdata/kuberay-operator-v1.7.0"
	// kuberayChartTree is `git rev-parse v1.7.0:helm-chart/kuberay-operator`
	// in KubeRay's repository.
	kuberayChartTree = "2e5a42cfee75f5dfdd3ef3256a18f750c44ea838"
	// kuberayCRDsTree is `git rev-parse v1.7.0:helm-chart/kuberay-operator/crds`:
	// the chart's CRDs are left out of the copy (ray.io_rayjobs.yaml is
	// 1.4 MB, over what make lint lets git hold; helm template renders no
	// crds/ and the sandbox serves raydar's CRDs), and the tree hash counts
	// them by this id.
	kuberayCRDsTree = "a534e4acaa00d9f76e70ef846be50e2a52eb03a3"
	raydarChart     = "../../config/helm/raydar-operator"
)

// helmBin is bin/k8s/helm (hack/build-tools.sh builds it), found as the
// sandbox finds its binaries ($RAYDAR_TOOLS_DIR, else the repository's
// bin/k8s); the test skips, saying so, where it is not built (make unit
// builds no tools).
func helmBin(t *testing.T) string {
	t.Helper()
	dir, err := sandbox.FindToolsDir()
	if err != nil {
		t.Skipf("no helm: %v", err)
	}
	p := filepath.Join(dir, "helm")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no helm in %s (`make tools` or `hack/build-tools.sh helm` builds it): %v", dir, err)
	}
	return p
}

// helm runs bin/k8s/helm with args, failing the test on an error.
func helm(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := helmErr(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func helmErr(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(helmBin(t), args...)
	// No user configuration, cache or plugins of this machine's helm.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home+"/config", "HELM_CACHE_HOME="+home+"/cache", "HELM_DATA_HOME="+home+"/data")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return append(out, stderr.Bytes()...), err
	}
	return out, nil
}

// helmTemplate renders chart as `helm install RELEASE CHART -n NS` would
// install it (`helm template`), with extra flags (--set, -f), and decodes
// the objects.
func helmTemplate(t *testing.T, chart, release, ns string, flags ...string) []*unstructured.Unstructured {
	t.Helper()
	return decodeAll(t, helm(t, append([]string{"template", release, chart, "--namespace", ns}, flags...)...))
}

// get is find for a kind of which the chart renders one object, whatever
// its name.
func only1[T any](t *testing.T, objs []*unstructured.Unstructured, kind string) *T {
	t.Helper()
	var hits []*unstructured.Unstructured
	for _, u := range objs {
		if u.GetKind() == kind {
			hits = append(hits, u)
		}
	}
	if len(hits) != 1 {
		t.Fatalf("the chart renders %d objects of kind %s, want 1", len(hits), kind)
	}
	var v T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(hits[0].Object, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

// podSpec is what a rendered Deployment runs, as the kubelet would: the
// operator container's command line and env, and the files of the
// ConfigMaps it mounts (mount path/key -> content).
type podSpec struct {
	container corev1.Container
	files     map[string]string
}

func podSpecOf(t *testing.T, objs []*unstructured.Unstructured) podSpec {
	t.Helper()
	d := only1[appsv1.Deployment](t, objs, "Deployment")
	ps := d.Spec.Template.Spec
	if len(ps.Containers) != 1 {
		t.Fatalf("the Deployment has %d containers, want 1", len(ps.Containers))
	}
	p := podSpec{container: ps.Containers[0], files: map[string]string{}}
	cms := map[string]*corev1.ConfigMap{}
	for _, u := range objs {
		if u.GetKind() == "ConfigMap" {
			var cm corev1.ConfigMap
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cm); err != nil {
				t.Fatal(err)
			}
			cms[cm.Name] = &cm
		}
	}
	for _, m := range p.container.VolumeMounts {
		i := slices.IndexFunc(ps.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 {
			t.Fatalf("volume mount %s names no volume", m.Name)
		}
		v := ps.Volumes[i]
		switch {
		case v.ConfigMap != nil:
			cm := cms[v.ConfigMap.Name]
			if cm == nil {
				t.Fatalf("volume %s: the chart renders no ConfigMap %s", v.Name, v.ConfigMap.Name)
			}
			for k, s := range cm.Data {
				p.files[filepath.Join(m.MountPath, k)] = s
			}
		case v.EmptyDir != nil:
		default:
			t.Fatalf("volume %s: a source this test does not provide: %+v", v.Name, v.VolumeSource)
		}
	}
	return p
}

// raydarDefaults are raydar-operator's default listen addresses, read
// from its --help (the flags' defaults), which the charts' probes and
// metrics port must match.
type listenDefaults struct{ metrics, health int32 }

var (
	operatorOnce sync.Once
	operatorPath string
	operatorErr  error
	// operatorBuildDir is removed by TestMain.
	operatorBuildDir string
)

// operatorBinary builds ./cmd/raydar-operator once for the package.
func operatorBinary(t *testing.T) string {
	t.Helper()
	operatorOnce.Do(func() {
		dir, err := os.MkdirTemp("", "raydar-deploy-")
		if err != nil {
			operatorErr = err
			return
		}
		operatorBuildDir = dir
		operatorPath = filepath.Join(dir, "raydar-operator")
		cmd := exec.Command("go", "build", "-o", operatorPath, "./cmd/raydar-operator")
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			operatorErr = fmt.Errorf("go build ./cmd/raydar-operator: %v\n%s", err, out)
		}
	})
	if operatorErr != nil {
		t.Fatal(operatorErr)
	}
	return operatorPath
}

var defaultAddr = regexp.MustCompile(`--(metrics-bind-address|health-probe-bind-address) string .*\(default "[^"]*:(\d+)"\)`)

func operatorListenDefaults(t *testing.T) listenDefaults {
	t.Helper()
	out, err := exec.Command(operatorBinary(t), "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("raydar-operator --help: %v\n%s", err, out)
	}
	var d listenDefaults
	for _, m := range defaultAddr.FindAllStringSubmatch(string(out), -1) {
		var n int32
		fmt.Sscan(m[2], &n)
		if m[1] == "metrics-bind-address" {
			d.metrics = n
		} else {
			d.health = n
		}
	}
	if d.metrics == 0 || d.health == 0 {
		t.Fatalf("raydar-operator --help names no default port for --metrics-bind-address and --health-probe-bind-address:\n%s", out)
	}
	return d
}

// gitTreeHash is the git tree object id of dir's files, as `git
// rev-parse COMMIT:PATH` prints it for a directory committed with these
// files (all mode 100644, as KubeRay's chart's are), with the
// subdirectories leftOut names counted by their tree ids.
func gitTreeHash(t *testing.T, dir string, leftOut map[string]string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		name, sortKey, mode string
		id                  []byte
	}
	var es []entry
	for name, tree := range leftOut {
		id, _ := hex.DecodeString(tree)
		es = append(es, entry{name, name + "/", "40000", id})
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			id, _ := hex.DecodeString(gitTreeHash(t, p, nil))
			es = append(es, entry{e.Name(), e.Name() + "/", "40000", id})
		case e.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			info, _ := e.Info()
			mode := "100644"
			if info.Mode()&0o111 != 0 {
				mode = "100755"
			}
			h := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(b))), b...))
			es = append(es, entry{e.Name(), e.Name(), mode, h[:]})
		default:
			t.Fatalf("%s: neither a file nor a directory", p)
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].sortKey < es[j].sortKey })
	var body bytes.Buffer
	for _, e := range es {
		fmt.Fprintf(&body, "%s %s\x00", e.mode, e.name)
		body.Write(e.id)
	}
	h := sha1.Sum(append([]byte(fmt.Sprintf("tree %d\x00", body.Len())), body.Bytes()...))
	return hex.EncodeToString(h[:])
}

// TestKubeRayChartUnchanged: testdata's chart is KubeRay v1.7.0's, byte
// for byte (its git tree hash), so that what the tests below install is
// what KubeRay's users install.
func TestKubeRayChartUnchanged(t *testing.T) {
	if got := gitTreeHash(t, kuberayChart, map[string]string{"crds": kuberayCRDsTree}); got != kuberayChartTree {
		t.Errorf("%s: git tree %s, want %s (KubeRay v1.7.0's helm-chart/kuberay-operator): the copy was changed; "+
			"copy it again (testdata/README.md)", kuberayChart, got, kuberayChartTree)
	}
}

// kuberayImage are the only values a KubeRay user changes to install
// raydar's operator with KubeRay's chart: the image and the path of its
// binary (docs/deploy.md).
var kuberayImage = []string{"--set", "image.repository=registry.example.com/raydar", "--set", "image.tag=v0.1.0", "--set", "operatorCommand=/raydar-operator"}

// kuberayAllValues is a values file turning on every option of KubeRay
// v1.7.0's chart that changes what the operator runs with.
const kuberayAllValues = "testdata/kuberay-all-values.yaml"

// TestKubeRayChartRender renders KubeRay's chart with raydar's image, with
// its defaults and with every option on, and checks what the cluster
// would run: raydar's image and binary, probes and the metrics port on
// the ports raydar-operator serves by default, and (with
// configuration.enabled) a config file mounted where the command line
// says.
func TestKubeRayChartRender(t *testing.T) {
	def := operatorListenDefaults(t)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"defaults", kuberayImage},
		{"every option", append(slices.Clone(kuberayImage), "-f", kuberayAllValues)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := helmTemplate(t, kuberayChart, "kuberay", "kuberay-system", tc.flags...)
			p := podSpecOf(t, objs)
			c := p.container
			if c.Image != "registry.example.com/raydar:v0.1.0" || !slices.Equal(c.Command, []string{"/raydar-operator"}) {
				t.Errorf("image %q command %q, want registry.example.com/raydar:v0.1.0 and [/raydar-operator]", c.Image, c.Command)
			}
			checkServedPorts(t, c, def)
			if cfg := configArg(c.Args); cfg != "" {
				if _, ok := p.files[cfg]; !ok {
					t.Errorf("--config %s: no ConfigMap key mounted there (mounted: %v)", cfg, slices.Sorted(maps.Keys(p.files)))
				}
			} else if tc.name == "every option" {
				t.Errorf("with configuration.enabled the args %q have no --config", c.Args)
			}
			if tc.name == "every option" {
				only1[unstructured.Unstructured](t, objs, "ServiceMonitor")
			}
		})
	}
}

// checkServedPorts wants the container's probes and its metrics port on
// what raydar-operator serves with its default addresses: /metrics on
// the metrics port, /healthz and /readyz on the health port.
func checkServedPorts(t *testing.T, c corev1.Container, def listenDefaults) {
	t.Helper()
	named := map[string]int32{}
	for _, p := range c.Ports {
		named[p.Name] = p.ContainerPort
	}
	served := map[int32][]string{def.metrics: {"/metrics"}, def.health: {"/healthz", "/readyz"}}
	// Flags in the args move them.
	for _, a := range c.Args {
		for flag, dflt := range map[string]int32{metricsFlag: def.metrics, healthFlag: def.health} {
			if v, ok := strings.CutPrefix(a, flag+"="); ok {
				paths := served[dflt]
				delete(served, dflt)
				_, port, _ := strings.Cut(v, ":")
				var n int32
				fmt.Sscan(port, &n)
				served[n] = paths
			}
		}
	}
	for what, pr := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if pr == nil || pr.HTTPGet == nil {
			t.Errorf("no HTTP %s probe", what)
			continue
		}
		port := pr.HTTPGet.Port.IntVal
		if s := pr.HTTPGet.Port.StrVal; s != "" {
			port = named[s]
		}
		if !slices.Contains(served[port], pr.HTTPGet.Path) {
			t.Errorf("%s probe GET %s on port %s (%d): raydar-operator serves %v there", what, pr.HTTPGet.Path, pr.HTTPGet.Port.String(), port, served[port])
		}
	}
	metricsPorts := 0
	for _, p := range c.Ports {
		if slices.Contains(served[p.ContainerPort], "/metrics") {
			metricsPorts++
		}
	}
	if metricsPorts == 0 {
		t.Errorf("no container port is raydar-operator's metrics port (ports %+v, served %v)", c.Ports, served)
	}
}

// configArg is the path of a --config argument ("--config PATH" or
// "--config=PATH"), "" without one.
func configArg(args []string) string {
	for i, a := range args {
		if a == "--config" && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			return v
		}
	}
	return ""
}

// sameFiles wants every file under dir equal to the file of that name
// under want.
func sameFiles(t *testing.T, dir, want string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(want, p)
		w, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: no %s (a copy of %s)", dir, rel, p)
			return nil
		}
		if !bytes.Equal(got, w) {
			t.Errorf("%s differs from %s: copy it again", filepath.Join(dir, rel), p)
		}
		n++
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no files under %s", want)
	}
}
