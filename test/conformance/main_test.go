package conformance

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/certsim"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
)

// One sandbox for the package: KubeRay reconciles the kr-NN namespaces,
// raydar the rd-NN ones, manifest NN in both.
var env *suite

type suite struct {
	sb     *sandbox.Sandbox
	kc     kubernetes.Interface
	dyn    dynamic.Interface
	corpus []Manifest
	sim    *headsim.Sim
	// gates are gatesEnv's, turned on in both operators (none in make test).
	gates features.Gates
	// kinds are the kinds compared: compared, plus cert-manager's Issuers
	// and Certificates when both operators run mTLS.
	kinds []comparedKind
	// certs plays cert-manager when both operators run with
	// RayClusterMTLS on (gatesEnv), nil otherwise.
	certs *certsim.Sim
	proxy *HeadProxy
	// kuberay are the KubeRay processes started (killed at the end).
	kuberay []*exec.Cmd
	logs    []string
	// raydar are the cancel functions of raydar loops started.
	raydar []context.CancelFunc
}

// Namespaces of the takeover tests: objects created and settled by one
// operator, then reconciled by the other.
const (
	takeoverFromKubeRay = "tk-from-kuberay"
	takeoverFromRaydar  = "tk-from-raydar"
)

func (s *suite) kubeRayNS(i int) string { return fmt.Sprintf("kr-%02d", i) }
func (s *suite) raydarNS(i int) string  { return fmt.Sprintf("rd-%02d", i) }

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	ctrllog.SetLogger(logr.Discard())
	s, err := startSuite(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance: ", err)
		if s != nil {
			s.stop()
		}
		os.Exit(1)
	}
	env = s
	code := m.Run()
	if code != 0 {
		for _, l := range s.logs {
			fmt.Fprintln(os.Stderr, "conformance: KubeRay's log is", l, "(kept)")
		}
	} else {
		for _, l := range s.logs {
			_ = os.Remove(l)
		}
	}
	s.stop()
	os.Exit(code)
}

// The suite compares raydar with KubeRay v1.6.2, the newest release the
// module proxy serves (`make tools` builds it). Three variables point it at
// another KubeRay instead, for a comparison by hand against one built from
// its source (v1.7.0's, read with the fetch tool; `make conformance-source`):
//   - oracleBinEnv: that KubeRay operator binary;
//   - oracleSamplesEnv: its samples directory (config/samples), read
//     instead of v1.6.2's as "samples/<path>";
//   - gatesEnv: feature gates turned on in both operators
//     ("RayClusterNetworkPolicy=true,…"), on top of kubeRayFeatureGates.
//
// Narrow the corpus with manifestsEnv to the samples that other KubeRay is
// compared on: the intended differences are written against v1.6.2, so
// the full corpus reports v1.6.2-only behaviour as differences.
const (
	oracleBinEnv     = "CONFORMANCE_KUBERAY_OPERATOR"
	oracleSamplesEnv = "CONFORMANCE_KUBERAY_SAMPLES"
	gatesEnv         = "CONFORMANCE_FEATURE_GATES"
)

// loadCorpus is KubeRay's samples and raydar's own manifests.
func loadCorpus() ([]Manifest, error) {
	dir, err := KubeRayModuleDir()
	if err != nil {
		return nil, err
	}
	samples, err := LoadSamples(dir)
	if d := os.Getenv(oracleSamplesEnv); d != "" {
		samples, err = LoadDir(d, "samples/")
	}
	if err != nil {
		return nil, err
	}
	own, err := LoadDir("testdata", "raydar/")
	if err != nil {
		return nil, err
	}
	only, err := manifestFilter()
	if err != nil {
		return nil, err
	}
	var out []Manifest
	for _, m := range append(samples, own...) {
		if m.HasRayObject() && (only == nil || only.MatchString(m.Name)) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no manifest of the corpus matches %s=%q", manifestsEnv, os.Getenv(manifestsEnv))
	}
	return out, nil
}

// manifestsEnv narrows the corpus to the manifests whose names
// ("samples/ray-job.sample.yaml", "raydar/rayjob-failing.yaml") match a
// regular expression, for iterating on a few. Intended entries that match
// nothing are then not reported (they may belong to manifests left out).
const manifestsEnv = "CONFORMANCE_MANIFESTS"

// manifestFilter is the regular expression of manifestsEnv, nil when unset.
func manifestFilter() (*regexp.Regexp, error) {
	v := os.Getenv(manifestsEnv)
	if v == "" {
		return nil, nil
	}
	re, err := regexp.Compile(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", manifestsEnv, err)
	}
	return re, nil
}

func startSuite(ctx context.Context) (*suite, error) {
	corpus, err := loadCorpus()
	if err != nil {
		return nil, err
	}
	opts := sandbox.Full()
	opts.Nodes = nil
	opts.CRDs = [][]byte{crds.YAML()}
	opts.StartTimeout = 5 * time.Minute
	sb, err := sandbox.Start(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("starting the sandbox: %w", err)
	}
	s := &suite{sb: sb, kc: sb.Clientset(), corpus: corpus, kinds: compared}
	if s.gates, err = features.Parse(os.Getenv(gatesEnv)); err != nil {
		return s, fmt.Errorf("%s: %w", gatesEnv, err)
	}
	if s.dyn, err = dynamic.NewForConfig(sb.Config); err != nil {
		return s, err
	}
	if err := s.addNodes(ctx); err != nil {
		return s, err
	}
	var krNS, rdNS []string
	for i := range corpus {
		krNS = append(krNS, s.kubeRayNS(i))
		rdNS = append(rdNS, s.raydarNS(i))
	}
	for _, ns := range append(append([]string{takeoverFromKubeRay, takeoverFromRaydar}, krNS...), rdNS...) {
		if _, err := s.kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return s, err
		}
	}
	if s.sim, err = headsim.Start(ctx, headsim.Options{Config: sb.Config, SetPodPhase: sb.SetPodPhase, EndContainer: sb.EndContainer}); err != nil {
		return s, fmt.Errorf("simulated heads: %w", err)
	}
	if err := s.startCertManager(ctx); err != nil {
		return s, err
	}
	s.proxy = &HeadProxy{Clientset: s.kc, Heads: s.sim}
	if err := s.proxy.Start(); err != nil {
		return s, err
	}
	if _, err := s.startKubeRay(append(krNS, takeoverFromKubeRay)); err != nil {
		return s, err
	}
	if _, err := s.startRaydar(append(rdNS, takeoverFromRaydar), false); err != nil {
		return s, err
	}
	return s, nil
}

// startCertManager installs cert-manager's CRDs and starts its stand-in
// (kube/sandbox/certsim) when gatesEnv turns RayClusterMTLS on, before
// either operator starts: KubeRay v1.7.0 looks for cert-manager once, at
// start-up. With the gate off (make test) neither operator may use it.
func (s *suite) startCertManager(ctx context.Context) error {
	if !s.gates.Enabled(features.RayClusterMTLS) {
		return nil
	}
	crds, err := certsim.CRDObjects(s.sb.ToolsDir)
	if err != nil {
		return err
	}
	if err := s.sb.InstallCRDs(ctx, crds...); err != nil {
		return fmt.Errorf("cert-manager's CRDs: %w", err)
	}
	if s.certs, err = certsim.Start(ctx, certsim.Options{Config: s.sb.Config}); err != nil {
		return err
	}
	// Both operators make Issuers and Certificates: compare them too.
	s.kinds = append(slices.Clone(compared),
		comparedKind{schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "issuers"}, "Issuer"},
		comparedKind{schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}, "Certificate"})
	return nil
}

// addNodes adds large fake nodes (and a few with GPUs) and lifts the taints
// new nodes get (the sandbox runs no node-lifecycle controller).
func (s *suite) addNodes(ctx context.Context) error {
	pools := []sandbox.NodePool{
		{Count: 16, NamePrefix: "cpu", CPU: "128", Memory: "512Gi"},
		// Large GPU nodes: both sides of the corpus ask for 60 GPUs at once,
		// deepseek's workers 8 per pod, the rest 1-4 per pod. The scheduler
		// spreads pods (least allocated first), so on 8-GPU nodes the small
		// GPU pods took a few GPUs of every node and whichever operator
		// created its 8-GPU workers last kept them Pending (failed runs: KubeRay's
		// deepseek workers Pending, raydar's verl head) — order, not capacity.
		// 64 GPUs a node leave room for an 8-GPU pod on every node.
		// Memory likewise: deepseek's workers ask 500Gi each (two a side),
		// and with 512Gi nodes any other pod the scheduler spread onto a GPU
		// node kept that node from holding one (a run of 2026-12-02:
		// KubeRay's second deepseek worker Pending, raydar's Running, 6
		// differences that were order, not behaviour). 4Ti a node holds
		// every deepseek worker of both sides beside the rest.
		{Count: 4, NamePrefix: "gpu", CPU: "256", Memory: "4Ti", GPU: 64},
	}
	for _, p := range pools {
		names, err := s.sb.AddNodes(ctx, p)
		if err != nil {
			return err
		}
		for _, n := range names {
			if _, err := s.kc.CoreV1().Nodes().Patch(ctx, n, types.MergePatchType, []byte(`{"spec":{"taints":null}}`), metav1.PatchOptions{}); err != nil {
				return err
			}
		}
	}
	return nil
}

// kubeRayFeatureGates are KubeRay v1.7.0's default feature gates
// (ray-operator/pkg/features/features.go: RayClusterStatusConditions,
// RayJobDeletionPolicy, RayMultiHostIndexing and RayServiceIncrementalUpgrade
// are beta and on; v1.6.2 has the last one alpha and off) plus RayCronJob, so
// RayCronJobs are compared with a running KubeRay. Only gates v1.6.2 knows:
// v1.7.0's other gates (SidecarSubmitterRestart, RayClusterNetworkPolicy,
// GCSFaultToleranceEmbeddedStorage, RayClusterMTLS, RayClusterHistoryServer,
// KubernetesWAS) are alpha and off there, and v1.6.2's AsyncJobInfoQuery
// (alpha, off) is gone from v1.7.0.
const kubeRayFeatureGates = "RayClusterStatusConditions=true,RayJobDeletionPolicy=true,RayMultiHostIndexing=true,RayServiceIncrementalUpgrade=true,RayCronJob=true"

// passNamespaces names and creates the namespaces of a pass of its own
// over n manifests: kr-<tag>NN for KubeRay's side, rd-<tag>NN for raydar's.
func (s *suite) passNamespaces(t *testing.T, tag string, n int) (krNS, rdNS func(int) string, kr, rd []string) {
	t.Helper()
	krNS = func(i int) string { return fmt.Sprintf("kr-%s%02d", tag, i) }
	rdNS = func(i int) string { return fmt.Sprintf("rd-%s%02d", tag, i) }
	for i := range n {
		kr, rd = append(kr, krNS(i)), append(rd, rdNS(i))
	}
	for _, ns := range append(slices.Clone(kr), rd...) {
		if _, err := s.kc.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return krNS, rdNS, kr, rd
}

// manifestsNamed are the corpus's manifests of those names, in the
// corpus's order.
func (s *suite) manifestsNamed(names []string) []Manifest {
	var out []Manifest
	for _, m := range s.corpus {
		if slices.Contains(names, m.Name) {
			out = append(out, m)
		}
	}
	return out
}

// startKubeRay runs the real KubeRay operator on the given namespaces with
// kubeRayFeatureGates, and extra flags.
func (s *suite) startKubeRay(namespaces []string, extra ...string) (*exec.Cmd, error) {
	bin := filepath.Join(s.sb.ToolsDir, "kuberay-operator")
	if b := os.Getenv(oracleBinEnv); b != "" {
		bin = b
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("KubeRay's operator is not built (%v): run `make tools`", err)
	}
	logf, err := os.CreateTemp("", "conformance-kuberay-*.log")
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	s.logs = append(s.logs, logf.Name())
	proxyURL := s.proxy.URL()
	cmd := exec.Command(bin, append([]string{
		"--watch-namespace=" + strings.Join(namespaces, ","),
		"--enable-leader-election=false",
		"--metrics-addr=0",
		"--health-probe-bind-address=0",
		"--reconcile-concurrency=4",
		"--feature-gates=" + strings.Join(slices.DeleteFunc([]string{kubeRayFeatureGates, os.Getenv(gatesEnv)}, func(g string) bool { return g == "" }), ","),
	}, extra...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.sb.KubeconfigPath, "HTTP_PROXY="+proxyURL, "http_proxy="+proxyURL, "NO_PROXY=", "no_proxy=")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting KubeRay: %w", err)
	}
	s.kuberay = append(s.kuberay, cmd)
	return cmd, nil
}

// stopKubeRay kills one KubeRay process and waits for it.
func stopKubeRay(cmd *exec.Cmd) {
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// startRaydar runs raydar's loop for all three kinds on the rd namespaces,
// reaching dashboards and Serve proxies through headsim's address book.
// The returned function stops it and waits until it has. another says
// that a raydar loop already runs in this process (controller names are
// then not checked for uniqueness); mods change its options.
func (s *suite) startRaydar(namespaces []string, another bool, mods ...func(*controller.Options)) (stop func(), err error) {
	dash, err := raydash.New(raydash.Options{AddressBook: s.sim, Secrets: raydash.SecretsFromClientset(s.kc), HeadServiceName: controller.HeadServiceName})
	if err != nil {
		return nil, err
	}
	opts := controller.Options{
		FeatureGates:                 s.gates,
		DisableLeaderElection:        true,
		Namespaces:                   namespaces,
		IgnoreOtherOperators:         true,
		MetricsBindAddress:           "0",
		Logger:                       logr.Discard(),
		SkipControllerNameValidation: another,
		Dashboards:                   dash,
		ServeProxyChecker:            controller.ServeProxyCheckerFromAddressBook(s.sim),
	}
	for _, m := range mods {
		m(&opts)
	}
	op, err := controller.New(s.sb.Config, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = op.Start(ctx) }()
	stop = func() { cancel(); <-done }
	s.raydar = append(s.raydar, stop)
	return stop, nil
}

func (s *suite) stop() {
	for _, cmd := range s.kuberay {
		if cmd.ProcessState == nil {
			stopKubeRay(cmd)
		}
	}
	for _, stop := range s.raydar {
		stop()
	}
	if s.certs != nil {
		s.certs.Close()
	}
	if s.sim != nil {
		_ = s.sim.Close()
	}
	if s.proxy != nil {
		_ = s.proxy.Close()
	}
	if s.sb != nil {
		_ = s.sb.Stop()
	}
}
