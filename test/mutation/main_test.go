package mutation

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/test/conformance"
)

// One sandbox for the package: an API server with raydar's CRDs (no
// scheduler or kubelets: pods that are created stay Pending, which is all
// the outcomes need) and raydar's operator on every namespace, in-process.
var env *suite

type suite struct {
	sb     *sandbox.Sandbox
	kc     kubernetes.Interface
	dyn    dynamic.Interface
	corpus []conformance.Manifest
	log    *panicLog
	// opDone is closed when the operator's Start returns (it must not
	// before the end: that is a crash).
	opDone chan struct{}
	opErr  error
	cancel context.CancelFunc
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	ctrllog.SetLogger(logr.Discard())
	s, err := startSuite()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutation:", err)
		if s != nil {
			s.stop()
		}
		os.Exit(1)
	}
	env = s
	code := m.Run()
	s.stop()
	os.Exit(code)
}

// loadCorpus is the conformance corpus: KubeRay's samples and raydar's own
// manifests (test/conformance/testdata), those with a Ray object.
func loadCorpus() ([]conformance.Manifest, error) {
	dir, err := conformance.KubeRayModuleDir()
	if err != nil {
		return nil, err
	}
	samples, err := conformance.LoadSamples(dir)
	if err != nil {
		return nil, err
	}
	own, err := conformance.LoadDir("../conformance/testdata", "raydar/")
	if err != nil {
		return nil, err
	}
	var out []conformance.Manifest
	for _, m := range append(samples, own...) {
		if m.HasRayObject() {
			out = append(out, m)
		}
	}
	return out, nil
}

func startSuite() (*suite, error) {
	corpus, err := loadCorpus()
	if err != nil {
		return nil, err
	}
	sb, err := sandbox.Start(context.Background(), sandbox.Options{CRDs: [][]byte{crds.YAML()}, StartTimeout: 5 * time.Minute})
	if err != nil {
		return nil, fmt.Errorf("starting the sandbox: %w", err)
	}
	s := &suite{sb: sb, kc: sb.Clientset(), corpus: corpus, log: &panicLog{}, opDone: make(chan struct{})}
	if s.dyn, err = dynamic.NewForConfig(sb.Config); err != nil {
		return s, err
	}
	op, err := controller.New(sb.Config, controller.Options{
		DisableLeaderElection: true,
		IgnoreOtherOperators:  true,
		MetricsBindAddress:    "0",
		StatusCoalesceWindow:  200 * time.Millisecond,
		Logger:                s.log.logger(),
	})
	if err != nil {
		return s, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { defer close(s.opDone); s.opErr = op.Start(ctx) }()
	return s, nil
}

func (s *suite) stop() {
	if s.cancel != nil {
		s.cancel()
		<-s.opDone
	}
	if s.sb != nil {
		if err := s.sb.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "mutation: stopping the sandbox:", err)
		}
	}
}

// panicLog is the operator's logger: it keeps the lines that report a
// panic (controller-runtime logs "Observed a panic" when it recovers one).
type panicLog struct {
	mu     sync.Mutex
	panics []string
	lines  int
}

func (p *panicLog) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.lines++
		if l := prefix + " " + args; strings.Contains(strings.ToLower(l), "panic") {
			p.panics = append(p.panics, l)
		}
		if os.Getenv("RAYDAR_TEST_LOG") != "" {
			fmt.Fprintln(os.Stderr, prefix, args)
		}
	}, funcr.Options{Verbosity: 1})
}

func (p *panicLog) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.panics...)
}

// firstLines shortens a long message for a report.
func firstLines(s string) string {
	var b bytes.Buffer
	b.WriteString(s)
	if b.Len() > 400 {
		return s[:400] + "…"
	}
	return s
}
