package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// NodePoolLabel is set on every fake node to the NamePrefix of its pool.
const NodePoolLabel = "sandbox.raydar.io/pool"

// Annotation that marks the nodes kwok manages (see kwokArgs).
const (
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	kwokNodeValue      = "fake"
)

// Component names; each one logs to <StateDir>/<name>.log.
const (
	Etcd              = "etcd"
	APIServer         = "kube-apiserver"
	Scheduler         = "kube-scheduler"
	ControllerManager = "kube-controller-manager"
	Kwok              = "kwok"
)

// Options say what to start. The zero value starts etcd and kube-apiserver
// only; Full returns everything.
type Options struct {
	// ToolsDir holds the binaries (etcd, kube-apiserver, …). Default:
	// $RAYDAR_TOOLS_DIR, else the repository's bin/k8s found by walking up from
	// the working directory and from the executable's directory.
	ToolsDir string
	// StateDir receives the logs of every component (etcd.log,
	// kube-apiserver.log, …), certificates, etcd's data and the admin
	// kubeconfig. Default: a new temporary directory, removed by Stop. A
	// given directory is kept; it must be empty, or hold a previous sandbox's
	// state (which is wiped), and not be in use by a running sandbox.
	StateDir string
	// ContextName names the context, cluster and user (ContextName-admin)
	// of the admin kubeconfig and the context and cluster of
	// WriteTokenKubeconfig's; default DefaultContextName. Two sandboxes
	// whose kubeconfigs are merged need distinct names (contextname.go).
	ContextName string
	// Kubernetes is the control plane's version: "" for the default
	// (1.37), or Kubernetes136, which serves KubeRay's KubernetesWAS API
	// (scheduling.k8s.io/v1alpha2 Workloads and PodGroups, gang-scheduled
	// by its kube-scheduler).
	Kubernetes string

	// Scheduler runs kube-scheduler.
	Scheduler bool
	// ControllerManager runs kube-controller-manager with the garbage
	// collector and the namespace, job, serviceaccount, endpoints,
	// endpointslice and clusterrole-aggregation controllers.
	ControllerManager bool
	// Kwok runs kwok, which makes Nodes Ready and moves pods bound to them
	// through their phases (see stages.yaml).
	Kwok bool
	// Nodes are the fake nodes to create; they need Kwok.
	Nodes []NodePool
	// RayCLI is the argv of the program that answers `ray …` in an exec
	// into a simulated Ray container (kwokexec.go), the words after `ray`
	// appended: `raydar sandbox` and `raydar demo` give their own
	// executable and "sandbox", "ray". Without it `ray` there says that
	// this sandbox simulates none. Needs Kwok.
	RayCLI []string

	// CRDs are multi-document YAML streams of CustomResourceDefinitions;
	// Start installs them and waits until they are Established.
	CRDs [][]byte

	// Audit makes the API server write an audit log, <StateDir>/audit.log:
	// every request at the Metadata level (who, what, response code; never
	// a body). Read it with AuditEvents. RBAC and ServiceAccount tokens are
	// always on (auth.go).
	Audit bool

	// StartTimeout bounds Start (in addition to its context). Default 3m:
	// the machines this runs on are often small and busy.
	StartTimeout time.Duration
	// Logf, when set, receives one line per start-up step.
	Logf func(format string, args ...any)
}

// NodePool is a group of identical fake nodes.
type NodePool struct {
	// Count is the number of nodes.
	Count int
	// NamePrefix names the nodes <NamePrefix>-0, <NamePrefix>-1, …; default
	// "kwok-node" for the first pool and "kwok-pool<i>" for the others.
	NamePrefix string
	// CPU and Memory are the capacity of each node as quantities; default
	// "16" and "64Gi".
	CPU, Memory string
	// GPU is the node's nvidia.com/gpu capacity.
	GPU int
	// Pods is how many pods each node takes; default 110 (the kubelet's),
	// at most 254 (a node's pod CIDR is a /24).
	Pods int
	// Labels are added to the node's labels.
	Labels map[string]string
}

// Full is everything a demo or an end-to-end test needs: scheduler,
// controller-manager, kwok, three CPU nodes and one GPU node. Callers add CRDs.
func Full() Options {
	return Options{
		Scheduler:         true,
		ControllerManager: true,
		Kwok:              true,
		Nodes: []NodePool{
			{Count: 3, NamePrefix: "kwok-node", CPU: "16", Memory: "64Gi"},
			{Count: 1, NamePrefix: "kwok-gpu-node", CPU: "16", Memory: "64Gi", GPU: 4},
		},
	}
}

// Sandbox is a running control plane. Stop it when done.
type Sandbox struct {
	// Config is an admin (system:masters) client configuration with raised
	// QPS and Burst; copy it with rest.CopyConfig before changing it.
	Config *rest.Config
	// KubeconfigPath is an admin kubeconfig file usable by kubectl; its
	// context is ContextName.
	KubeconfigPath string
	// ContextName is the kubeconfig context of KubeconfigPath and of
	// WriteTokenKubeconfig's files (Options.ContextName).
	ContextName string
	// StateDir holds logs, certificates and etcd's data.
	StateDir string
	// ToolsDir is where the binaries came from.
	ToolsDir string

	opts      Options
	ownsState bool
	lock      *os.File
	spawner   *spawner
	env       *envtest.Environment
	envLogs   []*os.File
	procs     []*process
	clients   *kubernetes.Clientset
	crdClient *apiextensionsclient.Clientset
	configs   *configChecker // with Kwok: the kubelet's ConfigMap/Secret check
	// kubeletPort is kwok's kubelet server's port (kwokserver.go).
	kubeletPort int

	mu        sync.Mutex
	nodes     []string
	nodeIndex int // nodes created so far; picks addresses
	pools     int // node pools created so far; picks default names

	stopOnce sync.Once
	stopErr  error
}

// Start starts a sandbox and returns when every requested component works:
// the apiserver is healthy, CRDs are Established, nodes are Ready, a probe pod
// has been scheduled (and run, with kwok), and the garbage collector has
// removed a probe object. On error everything started is stopped again.
// The processes outlive ctx; only Stop ends them.
//
// envtest logs through controller-runtime's global logger: a binary that has
// not called sigs.k8s.io/controller-runtime/pkg/log.SetLogger gets a warning
// from controller-runtime 30 seconds after its start.
func Start(ctx context.Context, opts Options) (sb *Sandbox, err error) {
	begin := time.Now()
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := platformCheck(); err != nil {
		return nil, err
	}
	if err := exclusiveCheck(); err != nil {
		return nil, err
	}
	if err := checkBinaries(o.ToolsDir, requiredBinaries(&o)); err != nil {
		return nil, err
	}
	crdStreams := o.CRDs
	if o.Kwok {
		crdStreams = append(append([][]byte(nil), o.CRDs...), kwokPortForwardCRD, kwokExecCRD) // kwokserver.go, kwokexec.go
	}
	crds, err := ParseCRDs(crdStreams...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()

	s := &Sandbox{opts: o, ToolsDir: o.ToolsDir, ContextName: o.ContextName, pools: len(o.Nodes)}
	if err := s.prepareStateDir(o.StateDir); err != nil {
		return nil, err
	}
	s.spawner = newSpawner()
	defer func() {
		if err != nil {
			// Keep the logs of a failed start for the post-mortem.
			s.ownsState = false
			if stopErr := s.Stop(); stopErr != nil {
				err = fmt.Errorf("%w (and stopping: %v)", err, stopErr)
			}
			err = fmt.Errorf("%w (logs kept in %s)", err, s.StateDir)
			sb = nil
		}
	}()

	if err := s.startAPIServer(ctx); err != nil {
		return nil, err
	}
	s.logf("apiserver ready at %s (%s)", s.Config.Host, since(begin))

	if err := s.startComponents(); err != nil {
		return nil, err
	}
	if o.Kwok {
		if s.configs, err = startConfigChecker(ctx, s.clients, s.logf); err != nil {
			return nil, err
		}
	}

	// Independent waits run side by side; each fails fast if a child dies,
	// and the first failure cancels the others.
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	run := func(f func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := f(wctx)
			if err == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if len(errs) == 0 || !errors.Is(err, context.Canceled) {
				errs = append(errs, err)
			}
			wcancel()
		}()
	}
	run(func(ctx context.Context) error { return s.InstallCRDs(ctx, crds...) })
	run(func(ctx context.Context) error {
		for _, pool := range o.Nodes {
			if _, err := s.addNodes(ctx, pool); err != nil {
				return err
			}
		}
		return s.probeScheduling(ctx)
	})
	run(s.probeControllerManager)
	wg.Wait()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s.logf("sandbox ready in %s; logs in %s", since(begin), s.StateDir)
	return s, nil
}

// withDefaults validates the options and fills in defaults.
func (o Options) withDefaults() (Options, error) {
	if o.ToolsDir == "" {
		d, err := FindToolsDir()
		if err != nil {
			return o, err
		}
		o.ToolsDir = d
	}
	d, err := filepath.Abs(o.ToolsDir)
	if err != nil {
		return o, err
	}
	o.ToolsDir = d
	if o.Kubernetes != "" && o.Kubernetes != Kubernetes136 && o.Kubernetes != "1.37" {
		return o, fmt.Errorf("sandbox: Kubernetes %q: the sandbox runs 1.37 (the default) or %s", o.Kubernetes, Kubernetes136)
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 3 * time.Minute
	}
	if o.ContextName == "" {
		o.ContextName = DefaultContextName
	}
	if err := CheckContextName(o.ContextName); err != nil {
		return o, err
	}
	if len(o.Nodes) > 0 && !o.Kwok {
		return o, errors.New("sandbox: Nodes need Kwok (nobody would make them Ready)")
	}
	if len(o.RayCLI) > 0 && !o.Kwok {
		return o, errors.New("sandbox: RayCLI needs Kwok (nobody would exec into a pod)")
	}
	o.Nodes = append([]NodePool(nil), o.Nodes...)
	seen := map[string]bool{}
	for i := range o.Nodes {
		p := &o.Nodes[i]
		if err := p.normalize(i); err != nil {
			return o, err
		}
		if seen[p.NamePrefix] {
			return o, fmt.Errorf("sandbox: two node pools named %q", p.NamePrefix)
		}
		seen[p.NamePrefix] = true
	}
	return o, nil
}

func (s *Sandbox) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }

// LogPath returns the log file of a component (Etcd, APIServer, …).
func (s *Sandbox) LogPath(component string) string {
	return filepath.Join(s.StateDir, component+".log")
}

// Nodes returns the names of the fake nodes.
func (s *Sandbox) Nodes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.nodes...)
}

// Clientset returns the admin clientset the sandbox uses itself.
func (s *Sandbox) Clientset() kubernetes.Interface { return s.clients }

// prepareStateDir creates or claims the state directory and locks it.
func (s *Sandbox) prepareStateDir(dir string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "raydar-sandbox-")
		if err != nil {
			return fmt.Errorf("sandbox: state dir: %w", err)
		}
		s.ownsState = true
		dir = d
	} else {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		dir = abs
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("sandbox: state dir: %w", err)
		}
	}
	s.StateDir = dir
	lockPath := filepath.Join(dir, lockName)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("sandbox: state dir: %w", err)
	}
	_, statErr := os.Stat(lockPath)
	if ours := statErr == nil; !ours && len(entries) > 0 {
		return fmt.Errorf("sandbox: state dir %s is not empty and was not made by a sandbox (found %s)", dir, entries[0].Name())
	}
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("sandbox: state dir: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return fmt.Errorf("sandbox: state dir %s is in use by another sandbox: %w", dir, err)
	}
	// A previous sandbox's state: certificates and etcd data cannot be reused
	// (envtest would not know the CA), so start afresh.
	for _, e := range entries {
		if e.Name() == lockName {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			f.Close()
			return fmt.Errorf("sandbox: clearing the previous sandbox's state: %w", err)
		}
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "raydar sandbox state directory; locked by pid %d while running\n", os.Getpid())
	s.lock = f
	return nil
}

// lockName is the file that marks and locks a state directory.
const lockName = ".raydar-sandbox.lock"

// startAPIServer starts etcd and kube-apiserver through envtest and writes
// the admin kubeconfig.
func (s *Sandbox) startAPIServer(ctx context.Context) error {
	binDir := filepath.Join(s.StateDir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	etcdPath, err := wrapBinary(binDir, binEtcd, filepath.Join(s.ToolsDir, binEtcd))
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	apiPath, err := wrapBinary(binDir, binAPIServer, filepath.Join(s.ToolsDir, s.opts.binPath(binAPIServer)))
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	etcdLog, err := os.OpenFile(s.LogPath(Etcd), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	apiLog, err := os.OpenFile(s.LogPath(APIServer), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		etcdLog.Close()
		return err
	}
	s.envLogs = []*os.File{etcdLog, apiLog}

	startTimeout := time.Minute
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < startTimeout {
		startTimeout = max(time.Until(dl), time.Second)
	}
	useExisting := false
	env := &envtest.Environment{
		UseExistingCluster:       &useExisting,
		BinaryAssetsDirectory:    s.ToolsDir,
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  stopGrace,
		ControlPlane: envtest.ControlPlane{
			Etcd: &envtest.Etcd{
				Path:    etcdPath,
				DataDir: filepath.Join(s.StateDir, "etcd"),
				Out:     etcdLog,
				Err:     etcdLog,
			},
			APIServer: &envtest.APIServer{
				Path:    apiPath,
				CertDir: filepath.Join(s.StateDir, "pki"),
				Out:     apiLog,
				Err:     apiLog,
			},
			// Never run; set so that envtest does not search for it.
			KubectlPath: filepath.Join(s.ToolsDir, "kubectl"),
		},
	}
	for _, d := range []string{env.ControlPlane.Etcd.DataDir, env.ControlPlane.APIServer.CertDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	// envtest's default service range is a /24: a few hundred Ray clusters
	// would exhaust it.
	env.ControlPlane.APIServer.Configure().Set("service-cluster-ip-range", serviceCIDR)
	// ServiceAccount (envtest's choice): pods need no ServiceAccount object
	// and get no token volume. TaintNodesByCondition would give every new
	// node a not-ready taint that only the node-lifecycle controller removes,
	// and that controller would mark kwok's heartbeat-less nodes NotReady.
	env.ControlPlane.APIServer.Configure().Set("disable-admission-plugins", "ServiceAccount,TaintNodesByCondition")
	// kwok's kubelet server, at each fake node's InternalDNS (kwokserver.go).
	env.ControlPlane.APIServer.Configure().Set("kubelet-preferred-address-types", string(kubeletAddressType)+",InternalIP,Hostname")
	// Stop must not wait on clients. On SIGTERM kube-apiserver stops
	// listening and then waits, up to its request timeout (a minute), for
	// every open connection to go idle, and a connection that carries a
	// watch (kubectl get -w, a raydar TUI, an informer not yet stopped)
	// never does. Instead: end every watch as soon as the server stops
	// taking requests (a client sees its watch end and cannot reconnect),
	// and give the HTTP server 2 seconds to close once the in-flight
	// requests have drained (new ones get 429 and Retry-After meanwhile).
	env.ControlPlane.APIServer.Configure().Set("shutdown-watch-termination-grace-period", "2s")
	env.ControlPlane.APIServer.Configure().Set("shutdown-send-retry-after", "true")
	if s.opts.Kubernetes == Kubernetes136 {
		// KubeRay's docs/guidance/kubernetes-was.md prerequisites.
		env.ControlPlane.APIServer.Configure().Set("runtime-config", "scheduling.k8s.io/v1alpha2=true")
		env.ControlPlane.APIServer.Configure().Set("feature-gates", "GenericWorkload=true")
	}
	if err := s.configureAuth(env); err != nil {
		return err
	}
	s.env = env

	var cfg *rest.Config
	if err := s.spawner.do(func() error {
		var err error
		cfg, err = env.Start()
		return err
	}); err != nil {
		return fmt.Errorf("sandbox: starting etcd and kube-apiserver: %w\n%s:\n%s\n%s:\n%s", err,
			s.LogPath(APIServer), tailFile(s.LogPath(APIServer), 10), s.LogPath(Etcd), tailFile(s.LogPath(Etcd), 5))
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 1000, 2000
	s.Config = cfg

	s.KubeconfigPath = filepath.Join(s.StateDir, "kubeconfig")
	if err := writeKubeconfig(s.KubeconfigPath, s.ContextName, cfg); err != nil {
		return err
	}
	if s.clients, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if s.crdClient, err = apiextensionsclient.NewForConfig(cfg); err != nil {
		return err
	}
	return nil
}

// serviceCIDR is the apiserver's service IP range.
const serviceCIDR = "10.96.0.0/16"

// startComponents starts kube-scheduler, kube-controller-manager and kwok as
// requested.
func (s *Sandbox) startComponents() error {
	type comp struct {
		name string
		args []string
		env  []string
		// restarts: how often an exit of its own is started again.
		restarts int
	}
	var comps []comp
	if s.opts.Scheduler {
		comps = append(comps, comp{name: Scheduler, args: append([]string{
			"--kubeconfig=" + s.KubeconfigPath,
			"--leader-elect=false",
			"--secure-port=0",
			// The default 50 requests/s caps binding at 50 pods/s, which
			// would make the scheduler, not the operator under test, the
			// bottleneck of every bring-up.
			"--kube-api-qps=500",
			"--kube-api-burst=1000",
		}, s.was("--feature-gates=GenericWorkload=true,GangScheduling=true")...)})
	}
	if s.opts.ControllerManager {
		ctrls := controllers
		if s.opts.Kubernetes == Kubernetes136 {
			// Keeps a PodGroup while pods name it (its finalizer).
			ctrls += ",podgroup-protection-controller"
		}
		comps = append(comps, comp{name: ControllerManager, args: append([]string{
			"--kubeconfig=" + s.KubeconfigPath,
			"--leader-elect=false",
			"--secure-port=0",
			"--use-service-account-credentials=false",
			"--controllers=" + ctrls,
			"--kube-api-qps=200",
			"--kube-api-burst=400",
		}, s.was("--feature-gates=GenericWorkload=true")...)})
	}
	if s.opts.Kwok {
		kwokDir := filepath.Join(s.StateDir, "kwok")
		if err := os.MkdirAll(kwokDir, 0o755); err != nil {
			return err
		}
		stagesPath := filepath.Join(kwokDir, "stages.yaml")
		if err := os.WriteFile(stagesPath, stagesYAML, 0o644); err != nil {
			return err
		}
		port, err := freePort()
		if err != nil {
			return err
		}
		s.kubeletPort = port
		execEnv, err := s.writeExecBin() // kwokexec.go
		if err != nil {
			return err
		}
		comps = append(comps, comp{name: Kwok, args: append([]string{
			"--kubeconfig=" + s.KubeconfigPath,
			"--config=" + stagesPath,
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=" + kwokNodeValue,
			"--node-lease-duration-seconds=0",
			"--cidr=" + defaultPodCIDR,
			"--node-ip=" + defaultNodeIP,
		}, kwokServerArgs(port)...),
			// kwok would also read ~/.kwok/kwok.yaml; keep it to ours.
			env: append([]string{"KWOK_WORKDIR=" + kwokDir}, execEnv...),
			// kwok v0.8.0 builds each stage's CEL environment lazily, from
			// its node and pod controllers at once, and easycel v0.6.0 (its
			// dependency) writes package-level maps unguarded
			// (native_struct.go structFieldMap, structFields): a CI run saw
			// kwok die at start (exit status 2, its stack in
			// cel.NewEnvironment under the node controller's Stage.init).
			// kwok keeps no state of its own (the API server holds it
			// all), so it is started again.
			restarts: 3,
		})
	}
	for _, c := range comps {
		p, err := startProcess(s.spawner, c.name, filepath.Join(s.ToolsDir, s.opts.binPath(c.name)), s.LogPath(c.name), s.StateDir, c.args, c.env, c.restarts, s.logf)
		if err != nil {
			return err
		}
		s.procs = append(s.procs, p)
		s.logf("started %s (pid %d)", c.name, p.pid())
	}
	return nil
}

// was is args on a Kubernetes136 plane, nothing on the default one.
func (s *Sandbox) was(args ...string) []string {
	if s.opts.Kubernetes == Kubernetes136 {
		return args
	}
	return nil
}

// controllers run by kube-controller-manager: garbage collection of owned
// objects, namespace deletion, Jobs (RayJob submitters), default service
// accounts, Endpoints/EndpointSlices (Serve endpoints of a RayService), and
// ClusterRole aggregation (the rules of view, edit and admin, which are
// empty without it).
const controllers = "garbage-collector-controller,namespace-controller,job-controller," +
	"serviceaccount-controller,endpoints-controller,endpointslice-controller," +
	"clusterrole-aggregation-controller"

// deadChild returns an error naming a child that has exited.
func (s *Sandbox) deadChild() error {
	for _, p := range s.procs {
		if err := p.exited(); err != nil {
			return err
		}
	}
	return nil
}
