package operatorcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/natefinch/lumberjack.v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/controller/batchscheduler"
	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/kube/raydash/addrbook"
	"github.com/raydar/raydar/rayapi/kinds"
)

// Long is the help text of the operator command.
var Long = "Run raydar's reconcile loop for " + reconciled + "\nwithout the terminal UI." + `

Several raydar processes (operators and TUIs) may run against one cluster: they
elect one leader on a Lease and only the leader reconciles. While a KubeRay
operator runs in the cluster raydar leaves its RayClusters alone unless
--ignore-other-operator is given; clusters with spec.managedBy: raydar.io/raydar
are always reconciled.`

// reconciled is the kinds the loop reconciles, from rayapi/kinds:
// "RayClusters, RayJobs, RayServices and RayCronJobs".
var reconciled = func() string {
	ps := make([]string, len(kinds.Ray))
	for i, k := range kinds.Ray {
		ps[i] = k.Plural
	}
	return strings.Join(ps[:len(ps)-1], ", ") + " and " + ps[len(ps)-1]
}()

// podNamespaceFile holds the namespace of the pod raydar runs in (every
// pod with a ServiceAccount token has it).
const podNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// New is the operator command: use is its name ("operator" under raydar,
// "raydar-operator" as a binary of its own), kf the kubectl flags it
// connects with (registered by the caller: raydar's are persistent flags of
// its root).
func New(use string, kf *kube.Flags) *cobra.Command {
	var (
		kr          kubeRay
		o           controller.Options
		noElect     bool
		historyFile string
	)
	cmd := &cobra.Command{
		Use:   use,
		Short: "Run the reconcile loop for " + reconciled + " headless (leader-elected)",
		Long:  Long,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			notes, err := kr.resolve(cmd.Flags(), &o, &noElect, os.Getenv)
			if err != nil {
				return err
			}
			target, err := kf.Resolve()
			if err != nil {
				return err
			}
			TuneGC(os.Getenv)
			logger, closeLog, err := newLogger(cmd.ErrOrStderr(), kr.verbosity, kr.logStdoutEncoder, kr.logFile, kr.logFileEncoder)
			if err != nil {
				return err
			}
			defer closeLog()
			for _, n := range notes {
				logger.Info(n)
			}
			ctrllog.SetLogger(logger)
			o.Logger = logger
			o.DisableLeaderElection = noElect
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if !noElect {
				ns, why, err := leaseNamespaceFor(ctx, target, o.LeaderElectionNamespace, inPodNamespace())
				if err != nil {
					return err
				}
				o.LeaderElectionNamespace = ns
				if why != "" {
					logger.Info(why)
				}
			}
			book, err := SandboxBook(*kf)
			if err != nil {
				return err
			}
			if book != nil {
				logger.Info("the cluster is a raydar sandbox: reaching its simulated Ray heads through its address book", "addressBook", book.Path())
				if o.UseKubernetesProxy {
					// Its heads answer on loopback only, not behind the API server.
					logger.Info("--use-kubernetes-proxy is not used on a raydar sandbox: its simulated heads are reached through the address book")
				}
			}
			store := history.OpenOrMemory(historyFile, logger)
			defer store.Close()
			o.Authors = history.NewAuthors()
			op, err := newLoopWaiting(ctx, target.Config, o, book, logger)
			if errors.Is(err, syscall.EADDRINUSE) {
				return fmt.Errorf("%w (another operator on this machine? --health-probe-bind-address and --metrics-bind-address move its ports, \"0\" turns them off)", err)
			}
			if err != nil {
				return err
			}
			rec, err := history.StartRecorder(ctx, store, target.Server, o.Authors, op.Cache(), logger)
			if err != nil {
				return err
			}
			defer rec.Close()
			l := op.Leader()
			logger.Info("starting raydar operator", "server", target.Server, "identity", l.Identity,
				"lease", l.Lease, "leaderElection", l.Enabled, "featureGates", o.FeatureGates.Effective(),
				"batchScheduler", op.BatchScheduler())
			if err := op.Start(ctx); err != nil && ctx.Err() == nil {
				return fmt.Errorf("operator stopped: %w", err)
			}
			return nil
		},
	}
	bindSettings(cmd.Flags(), &o, &noElect, &kr)
	cmd.Flags().StringVar(&historyFile, "history-file", history.DefaultPathOrEmpty(), `this process's record of what happened to Ray objects (raydar history); "" keeps it in memory`)
	return cmd
}

// bindSettings registers the flags that set o (noElect: raydar's
// --no-leader-election), raydar's names and KubeRay's (kr; resolved after
// parsing by kr.resolve).
func bindSettings(f *pflag.FlagSet, o *controller.Options, noElect *bool, kr *kubeRay) {
	f.BoolVar(noElect, "no-leader-election", false, "reconcile without electing a leader (only when no other raydar runs)")
	f.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease (default: the pod's namespace in a cluster, else "+controller.DefaultLeaderElectionNamespace+" when it exists, else default, as the TUI picks)")
	f.StringVar(&o.LeaderElectionID, "leader-election-id", controller.DefaultLeaderElectionID, "name of the leader election Lease")
	f.StringVar(&o.Identity, "identity", "", "identity in the leader election (default <hostname>_<random>)")
	f.StringVar(&o.MetricsBindAddress, "metrics-bind-address", ":8080", `address of the Prometheus metrics endpoint ("0" turns it off)`)
	f.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":8081", `address of /healthz and /readyz ("0" turns them off)`)
	f.StringVar(&o.PprofBindAddress, "pprof-bind-address", "0", `address of Go's /debug/pprof profiles ("0" turns it off)`)
	f.IntVar(&o.Concurrency, "concurrency", controller.DefaultConcurrency, "objects of each kind (RayClusters, RayJobs, RayServices, RayCronJobs) reconciled at once, as KubeRay's --reconcile-concurrency")
	f.StringSliceVar(&o.Namespaces, "watch-namespaces", nil, "reconcile only these namespaces (default all)")
	f.BoolVar(&o.IgnoreOtherOperators, "ignore-other-operator", false, "reconcile even while a KubeRay operator runs in the cluster")
	f.DurationVar(&o.StatusCoalesceWindow, "status-coalesce", controller.DefaultStatusCoalesceWindow, "hold non-urgent status changes this long to write them once (negative: write at once)")
	f.Float32Var(&o.QPS, "kube-api-qps", controller.DefaultQPS, "requests per second to the API server")
	f.IntVar(&o.Burst, "kube-api-burst", controller.DefaultBurst, "burst of requests to the API server")
	FeatureGatesFlag(f, &o.FeatureGates)
	BatchSchedulerFlag(f, &o.BatchScheduler)
	kr.register(f, o)
}

// GCPercent is the operator's GOGC. Its live heap is small (10–13 MiB at
// 100 RayClusters: the caches) and what it allocates is short-lived
// (objects read, built and written by up to --concurrency reconciles at
// once), so at Go's 100 % the heap between collections is mostly that
// garbage. Collecting at 50 % growth keeps the peak RSS near KubeRay's or
// below at the price of more collector CPU, of which the operator spends
// less than half of KubeRay's (docs/benchmarks.md, issue 27). GOGC in the
// environment wins. GOMEMLIMIT does not turn it off: the Deployment sets
// it from the container's memory limit (config/manager), a ceiling the
// collector keeps under as well, not a pace.
const GCPercent = 50

// TuneGC sets GCPercent unless getenv gives GOGC.
func TuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
}

// FeatureGatesFlag registers --feature-gates on f, into g: KubeRay's gate
// names and defaults, a refused gate an error when the flags are parsed
// (before anything connects). The operator command and the TUI (its
// embedded loop) register the one flag, so that every raydar that may
// lead the election reconciles alike.
func FeatureGatesFlag(f *pflag.FlagSet, g *features.Gates) {
	f.Var(g, "feature-gates", features.Usage())
}

// BatchSchedulerFlag registers --batch-scheduler on f, into s: KubeRay's
// flag of the same name, a scheduler raydar does not implement an error
// when the flags are parsed. The operator command and the TUI (its
// embedded loop) register the one flag, as --feature-gates.
func BatchSchedulerFlag(f *pflag.FlagSet, s *batchscheduler.Scheduler) {
	f.Var(&schedulerFlag{s}, "batch-scheduler", batchscheduler.Usage())
}

// schedulerFlag sets *s from a --batch-scheduler value.
type schedulerFlag struct{ s *batchscheduler.Scheduler }

func (f *schedulerFlag) String() string {
	if f.s == nil {
		return ""
	}
	return batchscheduler.NameOf(*f.s)
}
func (f *schedulerFlag) Set(v string) error {
	s, err := batchscheduler.New(v)
	if err != nil {
		return err
	}
	*f.s = s
	return nil
}
func (*schedulerFlag) Type() string { return "name" }

// NewLoop builds the reconcile loop for all kinds with o, reaching the
// sandbox's simulated heads through book when it is not nil (else service
// DNS in a pod, the API server's proxies outside). Start it with
// Operator.Start.
func NewLoop(cfg *rest.Config, o controller.Options, book *addrbook.Book) (*controller.Operator, error) {
	// One process may run several loops one after another (the TUI's
	// :ctx builds one per context; tests run the operator in-process more
	// than once), and controller-runtime refuses a controller name it has
	// seen before in the process, even once that controller stopped.
	o.SkipControllerNameValidation = true
	if book != nil {
		o.AddressBook = book
	}
	return controller.New(cfg, o)
}

// apiStartWait bounds how long the operator waits at start for an API
// server that answers with a transient error (restarting, its etcd down,
// overloaded) before it gives up.
const apiStartWait = 2 * time.Minute

// newLoopWaiting is NewLoop, tried again with a back-off (0.5 s doubling
// to 8 s, for apiStartWait) while the API server answers with a transient
// error: an operator started while the API server restarts waits for it
// instead of exiting (the fault suite saw one exit during an etcd
// restart). Other errors (refused credentials, a port in use, bad
// options) end it at once.
func newLoopWaiting(ctx context.Context, cfg *rest.Config, o controller.Options, book *addrbook.Book, logger logr.Logger) (*controller.Operator, error) {
	deadline := time.Now().Add(apiStartWait)
	delay := 500 * time.Millisecond
	for {
		op, err := NewLoop(cfg, o, book)
		if err == nil || !kube.TransientAPIError(err) || time.Now().Add(delay).After(deadline) {
			return op, err
		}
		logger.Info("the API server is not answering; trying again", "in", delay.String(), "error", err.Error())
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 8*time.Second)
	}
}

// NewLogger logs one line per entry to w (the command's stderr), as text
// (KubeRay's "console" encoder).
func NewLogger(w io.Writer, v int) logr.Logger {
	return logr.New(newSink(w, v, "console"))
}

// newSink is one line per entry to w, encoded as "console" (a timestamp,
// the logger's name, then key="value" pairs) or "json" (one object a line,
// with "ts", "level", "logger", "msg", as KubeRay's zap encoder writes).
func newSink(w io.Writer, v int, encoder string) logr.LogSink {
	var mu sync.Mutex
	opts := funcr.Options{Verbosity: v}
	if encoder == "json" {
		opts.LogTimestamp, opts.TimestampFormat = true, "2006-01-02T15:04:05.000Z07:00"
		return funcr.NewJSON(func(obj string) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(w, obj)
		}, opts).GetSink()
	}
	return funcr.New(func(prefix, args string) {
		ts := time.Now().Format("2006-01-02T15:04:05.000Z07:00")
		mu.Lock()
		defer mu.Unlock()
		if prefix != "" {
			fmt.Fprintln(w, ts, prefix, args)
			return
		}
		fmt.Fprintln(w, ts, args)
	}, opts).GetSink()
}

// newLogger is the operator's logger: to w in stdoutEncoder's format and,
// with file, to that file as well in fileEncoder's, rotated as KubeRay
// rotates it (lumberjack: 500 MB a file, 10 files, 30 days; main.go:149-156).
// The returned function closes the file. The encoders were checked with
// the flags or the config file (kubeRay.resolve).
func newLogger(w io.Writer, v int, stdoutEncoder, file, fileEncoder string) (logr.Logger, func(), error) {
	sink := newSink(w, v, stdoutEncoder)
	if file == "" {
		return logr.New(sink), func() {}, nil
	}
	f := &lumberjack.Logger{Filename: file, MaxSize: 500, MaxBackups: 10, MaxAge: 30}
	if _, err := f.Write(nil); err != nil {
		return logr.Logger{}, nil, fmt.Errorf("--log-file-path %s: %w", file, err)
	}
	return logr.New(teeSink{sink, newSink(f, v, fileEncoder)}), func() { _ = f.Close() }, nil
}

// teeSink sends every entry to both sinks.
type teeSink struct{ a, b logr.LogSink }

func (t teeSink) Init(info logr.RuntimeInfo) { t.a.Init(info); t.b.Init(info) }
func (t teeSink) Enabled(level int) bool     { return t.a.Enabled(level) || t.b.Enabled(level) }
func (t teeSink) Info(level int, msg string, kv ...any) {
	if t.a.Enabled(level) {
		t.a.Info(level, msg, kv...)
	}
	if t.b.Enabled(level) {
		t.b.Info(level, msg, kv...)
	}
}
func (t teeSink) Error(err error, msg string, kv ...any) {
	t.a.Error(err, msg, kv...)
	t.b.Error(err, msg, kv...)
}
func (t teeSink) WithValues(kv ...any) logr.LogSink {
	return teeSink{t.a.WithValues(kv...), t.b.WithValues(kv...)}
}
func (t teeSink) WithName(name string) logr.LogSink {
	return teeSink{t.a.WithName(name), t.b.WithName(name)}
}

// SandboxBook returns the address book of the simulated Ray heads when the
// flags' context is a raydar sandbox (`raydar sandbox`, `raydar demo`:
// their kubeconfig records the book, kube/raydash/addrbook), nil for any
// other cluster. Every raydar that reaches dashboards (the operator, the
// TUI and its embedded loop, `raydar stop --direct`) asks this, so one
// mechanism serves the sandbox's heads to all of them.
func SandboxBook(f kube.Flags) (*addrbook.Book, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.Kubeconfig != "" {
		rules.ExplicitPath = f.Kubeconfig
	}
	kc, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	path, ok, err := addrbook.FromKubeconfig(kc, f.Context)
	if err != nil || !ok {
		return nil, err
	}
	return addrbook.Open(path), nil
}

// inPodNamespace is the namespace of the pod this process runs in, "" out
// of a cluster.
func inPodNamespace() string {
	b, err := os.ReadFile(podNamespaceFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// MeetingLeaseNamespace is where TUIs and operators out of a cluster meet
// for the leader election: raydar-system when it exists, else default.
func MeetingLeaseNamespace(ctx context.Context, t *kube.Target) string {
	cs, err := kubernetes.NewForConfig(t.Config)
	if err != nil {
		return "default"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Get(ctx, controller.DefaultLeaderElectionNamespace, metav1.GetOptions{}); err == nil {
		return controller.DefaultLeaderElectionNamespace
	}
	return "default"
}

// leaseNamespaceFor picks the namespace of the leader election Lease:
// the flag's when given (refused at once when that namespace does not
// exist: the election would retry forever), else the pod's own namespace in
// a cluster, else what every TUI picks (MeetingLeaseNamespace), so that
// operators and TUIs meet on one Lease. why says what was picked when it
// was not asked for.
func leaseNamespaceFor(ctx context.Context, t *kube.Target, flag, podNamespace string) (ns, why string, err error) {
	switch {
	case flag != "":
		cs, err := kubernetes.NewForConfig(t.Config)
		if err != nil {
			return "", "", err
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		// Only a definite NotFound refuses: a caller without the right
		// to read namespaces may still write Leases in this one.
		if _, err := cs.CoreV1().Namespaces().Get(ctx, flag, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return "", "", fmt.Errorf("the leader election namespace %q does not exist on %s: create it (kubectl create namespace %s), "+
				"or pass --leader-election-namespace with an existing namespace (e.g. default)", flag, t.Server, flag)
		}
		return flag, "", nil
	case podNamespace != "":
		return podNamespace, "leader election Lease in the pod's namespace " + podNamespace, nil
	}
	ns = MeetingLeaseNamespace(ctx, t)
	if ns == controller.DefaultLeaderElectionNamespace {
		return ns, "leader election Lease in namespace " + ns, nil
	}
	return ns, fmt.Sprintf("leader election Lease in namespace %s (namespace %s does not exist; TUIs on this cluster pick the same)",
		ns, controller.DefaultLeaderElectionNamespace), nil
}
