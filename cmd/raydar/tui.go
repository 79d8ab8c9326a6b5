package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/cmd/internal/operatorcmd"
	"github.com/raydar/raydar/controller/batchscheduler"
	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/gauges"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/tui"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

// tuiFlags are the flags of the TUI (raydar with no sub-command, and raydar demo).
type tuiFlags struct {
	readOnly    bool
	noColor     bool
	noReconcile bool
	ignoreOther bool
	logFile     string
	// command is the view to open on (-c, k9s' habit): an alias as the
	// `:` prompt accepts it.
	command string
	// pprof is where to serve net/http/pprof ("": not at all).
	pprof string
	// featureGates are the embedded loop's, as the operator's
	// --feature-gates (a TUI may lead the election: it must reconcile as
	// the operator does).
	featureGates features.Gates
	// reconcileContexts are the contexts the embedded loop runs on
	// (--reconcile-contexts); reconcileSet says whether it was given.
	reconcileContexts []string
	reconcileSet      bool
	// batchScheduler is the embedded loop's --batch-scheduler, as the
	// operator's (nil: none).
	batchScheduler batchscheduler.Scheduler
	// skin is the built-in skin the colours start from (--skin,
	// RAYDAR_SKIN); styles is it with skin.yaml's colours (prepare).
	skin   string
	styles *styles.Styles
	// gpuIdle is what :gpus counts as idle (--gpu-idle-below, --gpu-idle-for).
	gpuIdle gpuIdle
}

func (f *tuiFlags) addTo(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.BoolVar(&f.readOnly, "readonly", false, "hide and refuse every mutating action (scale, delete workers, stop, suspend, delete); implies --no-reconcile")
	fs.BoolVar(&f.noColor, "no-color", os.Getenv("NO_COLOR") != "", "draw without colour, with ASCII glyphs (default when NO_COLOR is set)")
	skin := os.Getenv("RAYDAR_SKIN")
	if skin == "" {
		skin = styles.Builtins[0]
	}
	fs.StringVar(&f.skin, "skin", skin, "the built-in colours, dark or light (default $RAYDAR_SKIN, else dark); $XDG_CONFIG_HOME/raydar/skin.yaml changes them")
	fs.BoolVar(&f.noReconcile, "no-reconcile", false, "only observe: do not run the embedded reconcile loop")
	fs.BoolVar(&f.ignoreOther, "ignore-other-operator", false, "reconcile even while a KubeRay operator runs in the cluster")
	fs.StringVar(&f.logFile, "log-file", defaultLogFile(), "where raydar writes its log (never to the screen)")
	fs.StringVar(&f.pprof, "pprof", "", "serve Go's profiles (net/http/pprof) on this address, e.g. 127.0.0.1:6060, for measuring raydar itself")
	operatorcmd.FeatureGatesFlag(fs, &f.featureGates)
	operatorcmd.BatchSchedulerFlag(fs, &f.batchScheduler)
	fs.Float64Var(&f.gpuIdle.belowPct, "gpu-idle-below", gauges.DefaultIdleBelowPct, "a GPU under this utilisation (percent) counts as idle in :gpus")
	fs.DurationVar(&f.gpuIdle.after, "gpu-idle-for", gauges.DefaultIdleFor, "how long a GPU must stay under --gpu-idle-below to count as idle in :gpus")
	fs.StringVarP(&f.command, "command", "c", "", "open on this view, as the : prompt names it ("+viewNames()+", …)")
}

// addFleetTo adds the fleet view's flags to the TUI's command (raydar, not
// raydar demo, which has one context): --all-contexts and
// --reconcile-contexts (--context a,b is the kube flags').
func (f *tuiFlags) addFleetTo(cmd *cobra.Command, kf *kube.Flags) {
	fs := cmd.Flags()
	kf.AddFleetTo(fs)
	fs.StringSliceVar(&f.reconcileContexts, "reconcile-contexts", nil, "run the embedded reconcile loop on these contexts only (default: the one context; none when --context names several or with --all-contexts)")
}

// defaultLogFile is $XDG_STATE_HOME/raydar/raydar.log (~/.local/state/raydar/raydar.log).
func defaultLogFile() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), "raydar.log")
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "raydar", "raydar.log")
}

// openLog routes raydar's, controller-runtime's and client-go's logs to a
// file, so that nothing is ever written over the TUI.
func openLog(path string) (logr.Logger, func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return logr.Discard(), nil, fmt.Errorf("log file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return logr.Discard(), nil, fmt.Errorf("log file: %w", err)
	}
	var mu sync.Mutex
	l := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		ts := time.Now().Format("2006-01-02T15:04:05.000Z07:00")
		if prefix != "" {
			fmt.Fprintln(f, ts, prefix, args)
			return
		}
		fmt.Fprintln(f, ts, args)
	}, funcr.Options{Verbosity: 1})
	ctrllog.SetLogger(l)
	klog.SetLogger(l.WithName("client-go"))
	return l, func() { _ = f.Close() }, nil
}

// newTUIRunE is raydar's default action: the TUI on the current kube context.
func newTUIRunE(g *globals, f *tuiFlags) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if _, err := f.startView(); err != nil {
			return err
		}
		if err := f.gpuIdle.check(); err != nil {
			return err
		}
		f.reconcileSet = cmd.Flags().Changed("reconcile-contexts")
		logger, closeLog, err := openLog(f.logFile)
		if err != nil {
			return err
		}
		defer closeLog()
		if g.kube.Fleet() {
			return runFleetTUI(cmd.Context(), g.kube, f, logger)
		}
		target, err := g.kube.Resolve()
		if err != nil {
			return err
		}
		book, err := sandboxBookFor(g.kube)
		if err != nil {
			return err
		}
		policy, err := actions.LoadDefaultPolicy()
		if err != nil {
			return err
		}
		reconcile, err := f.reconciles([]string{target.ContextName})
		if err != nil {
			return err
		}
		sc := sessionConfig{reconcile: reconcile[target.ContextName], logger: logger, readOnly: f.readOnly, book: book, policy: policy, gpuIdle: f.gpuIdle}
		sc.operator.IgnoreOtherOperators = f.ignoreOther
		sc.operator.FeatureGates = f.featureGates
		sc.operator.BatchScheduler = f.batchScheduler
		return runTUI(cmd.Context(), g.kube, target, sc, f, logger)
	}
}

// startView is the view -c names (ClustersView when -c is not given).
func (f *tuiFlags) startView() (tui.ViewKind, error) {
	if f.command == "" {
		return tui.ClustersView, nil
	}
	v, err := tui.StartViewByName(f.command)
	if err != nil {
		return "", fmt.Errorf("-c: %w", err)
	}
	return v, nil
}

// runTUI connects, runs the TUI until the user quits, and stops everything.
func runTUI(ctx context.Context, flags kube.Flags, target *kube.Target, sc sessionConfig, f *tuiFlags, logger logr.Logger) error {
	start, km, stop, err := f.prepare(logger)
	if err != nil {
		return err
	}
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if sc.history == nil {
		sc.history = history.OpenOrMemory(history.DefaultPathOrEmpty(), logger) // one store for every :ctx session
		defer sc.history.Close()
	}
	b := &backend{parent: ctx, flags: flags, sc: sc, allNamespaces: flags.AllNamespaces}
	s, err := connect(ctx, target, sc)
	if err != nil {
		return err
	}
	b.cur = s
	defer b.close()

	opts := tui.Options{
		Actions: tui.DefaultActions(*s.deps),
		Session: s.Session(b.namespace(target)),
		Backend: b,
	}
	return f.runApp(opts, start, km, logger, "context", target.ContextName, "server", target.Server)
}

// prepare is what every TUI does before it connects: the view -c names,
// the key map (a bad keys.yaml is an error before anything connects),
// --pprof and the collector's pace; stop ends --pprof.
func (f *tuiFlags) prepare(logger logr.Logger) (start tui.ViewKind, km *keys.KeyMap, stop func(), err error) {
	if start, err = f.startView(); err != nil {
		return "", nil, nil, err
	}
	if km, err = keys.LoadDefault(); err != nil {
		return "", nil, nil, err
	}
	if f.styles, err = styles.LoadDefault(f.skin); err != nil { // a bad skin.yaml too
		return "", nil, nil, err
	}
	stop = func() {}
	if f.pprof != "" {
		if stop, err = servePprof(f.pprof, logger); err != nil {
			return "", nil, nil, err
		}
	}
	tuneGC(os.Getenv)
	return start, km, stop, nil
}

// runApp runs the TUI on opts (its connection) with the flags' options
// until the user quits; kv are what the log line says of the connection.
func (f *tuiFlags) runApp(opts tui.Options, start tui.ViewKind, km *keys.KeyMap, logger logr.Logger, kv ...any) error {
	opts.Keys, opts.NoColor, opts.ReadOnly, opts.StartView = km, f.noColor, f.readOnly, start
	opts.Styles = f.styles
	if !term.IsTerminal(int(os.Stdout.Fd())) {
		opts.NoClipboard = "the output is not a terminal"
	}
	opts.Logf = func(format string, args ...any) {
		logger.Info(fmt.Sprintf(format, args...))
	}
	app, err := tui.New(opts)
	if err != nil {
		return err
	}
	logger.Info("TUI started", append(kv, "readonly", f.readOnly)...)
	_, err = tea.NewProgram(app, tui.ProgramOptions(opts)...).Run()
	return err
}

// tuiGCPercent is the TUI's GOGC. Its heap is mostly the cache, long-lived
// objects, and it allocates little once synced: collecting at 25 % growth
// instead of Go's 100 % keeps the peak RSS near the live heap (10,000 Ray
// pods: 68 MB live) for a few more collections while the initial list
// streams in. GOGC or GOMEMLIMIT in the environment win.
const tuiGCPercent = 25

func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" && getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(tuiGCPercent)
	}
}

// backend switches kube contexts for the TUI (:ctx NAME): a new session
// replaces the old one, which is stopped.
type backend struct {
	parent        context.Context
	flags         kube.Flags
	sc            sessionConfig
	allNamespaces bool

	mu  sync.Mutex
	cur *session
}

func (b *backend) namespace(t *kube.Target) string {
	if b.allNamespaces {
		return ""
	}
	return t.Namespace
}

// Contexts lists the kubeconfig's contexts.
func (b *backend) Contexts() ([]string, error) { return b.flags.Contexts() }

// Switch connects to another context.
func (b *backend) Switch(_ context.Context, name string) (tui.Session, error) {
	fl := b.flags
	fl.Context = name
	t, err := fl.Resolve()
	if err != nil {
		return tui.Session{}, err
	}
	sc := b.sc
	if sc.book, err = sandboxBookFor(fl); err != nil {
		return tui.Session{}, err
	}
	s, err := connect(b.parent, t, sc)
	if err != nil {
		return tui.Session{}, err
	}
	b.mu.Lock()
	old := b.cur
	b.cur = s
	b.mu.Unlock()
	if old != nil {
		go old.Close()
	}
	return s.Session(b.namespace(t)), nil
}

func (b *backend) close() {
	b.mu.Lock()
	s := b.cur
	b.cur = nil
	b.mu.Unlock()
	if s != nil {
		s.Close()
	}
}
