package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/tui"
)

// One context of a fleet view (raydar --context a,b, --all-contexts) is
// connected, watched and recovered on its own: connect returns at once,
// watchLater registers the watch when the API server answers, and probe
// says, every few seconds, whether it still does (the header's state and
// the stale rows).

// fleetRetry bounds the wait between two attempts to register the watch
// of a context whose API server did not answer.
const (
	fleetRetryMin = time.Second
	fleetRetryMax = 30 * time.Second
	// probeEvery is how often a fleet context's API server is asked for
	// its version; probeTimeout how long an answer may take.
	probeEvery   = 5 * time.Second
	probeTimeout = 4 * time.Second
)

// watchLater registers the TUI's watch (and the history recorder) on the
// session's informers, again and again until the API server answers.
func (s *session) watchLater(ctx context.Context, informers cache.Cache, authors *history.Authors, sc sessionConfig) {
	wait := fleetRetryMin
	for {
		err := s.src.Watch(ctx, informers)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		s.lost(err)
		sc.logger.Info("watching failed; retrying", "context", s.target.ContextName, "in", wait.String(), "error", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, fleetRetryMax)
	}
	if sc.history != nil {
		r, err := history.StartRecorder(ctx, sc.history, s.target.Server, authors, informers, sc.logger)
		if err != nil {
			sc.logger.Error(err, "recording history", "context", s.target.ContextName)
			return
		}
		s.recorder.Store(r)
	}
}

// probe asks the API server its version every probeEvery: an error is
// the context's Health until an answer comes.
func (s *session) probe(ctx context.Context, t *kube.Target) {
	cfg := rest.CopyConfig(t.Config)
	cfg.Timeout = probeTimeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		s.lost(err)
		return
	}
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		if _, err := cs.Discovery().ServerVersion(); err != nil {
			if ctx.Err() != nil {
				return
			}
			s.lost(err)
		} else {
			s.health.Store(nil)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// lost records err as the session's Health, keeping when it was first
// lost.
func (s *session) lost(err error) {
	h := tui.Health{Err: healthWords(err), Since: time.Now()}
	if old := s.health.Load(); old != nil {
		h.Since = old.Since
	}
	s.health.Store(&h)
}

// Health is the session's connection state (the TUI reads it on ticks).
func (s *session) Health() tui.Health {
	if h := s.health.Load(); h != nil {
		return *h
	}
	return tui.Health{}
}

// healthWords says why an API server is out of reach in the header's few
// words.
func healthWords(err error) string {
	var ne net.Error
	switch {
	case apierrors.IsUnauthorized(err):
		return "unauthorized"
	case apierrors.IsForbidden(err):
		return "forbidden"
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	case strings.Contains(err.Error(), "no such host"):
		return "no such host"
	}
	return shortErr(err)
}

// reconciles says on which of the open contexts the embedded loop runs:
// the one context unless --no-reconcile or --readonly; with several, none
// unless --reconcile-contexts names them (a fleet view never starts
// reconciling a context nobody asked for). A name that is not open, and
// --reconcile-contexts with --no-reconcile or --readonly, are errors: a
// flag is never accepted and ignored.
func (f *tuiFlags) reconciles(open []string) (map[string]bool, error) {
	out := map[string]bool{}
	if !f.reconcileSet {
		if len(open) == 1 && !f.noReconcile && !f.readOnly {
			out[open[0]] = true
		}
		return out, nil
	}
	switch {
	case f.readOnly:
		return nil, errors.New("--reconcile-contexts with --readonly: a read-only TUI runs no reconcile loop")
	case f.noReconcile:
		return nil, errors.New("--reconcile-contexts with --no-reconcile: give one of them")
	}
	for _, n := range f.reconcileContexts {
		n = strings.TrimSpace(n)
		if !slices.Contains(open, n) {
			return nil, fmt.Errorf("--reconcile-contexts: context %q is not open (open: %s)", n, strings.Join(open, ", "))
		}
		out[n] = true
	}
	return out, nil
}

// withConfigContexts narrows --all-contexts to the config file's contexts
// list (all of the kubeconfig's without one).
func withConfigContexts(f kube.Flags, p *actions.Policy) kube.Flags {
	if p != nil {
		f.ContextPatterns, f.ContextPatternsFrom = p.Contexts, p.Path
	}
	return f
}

// runFleetTUI is the TUI on several contexts at once (--context a,b,
// --all-contexts): one session per context, connected concurrently, each
// watched and recovered on its own; the embedded loop only where
// --reconcile-contexts asks.
func runFleetTUI(ctx context.Context, flags kube.Flags, f *tuiFlags, logger logr.Logger) error {
	policy, err := actions.LoadDefaultPolicy()
	if err != nil {
		return err
	}
	flags = withConfigContexts(flags, policy)
	targets, err := flags.ResolveAll()
	if err != nil {
		return err
	}
	start, km, stop, err := f.prepare(logger)
	if err != nil {
		return err
	}
	defer stop()
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.ContextName
	}
	reconcile, err := f.reconciles(names)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hist := history.OpenOrMemory(history.DefaultPathOrEmpty(), logger) // one store for every context
	defer hist.Close()
	base := sessionConfig{logger: logger, readOnly: f.readOnly, policy: policy, history: hist, fleet: true, gpuIdle: f.gpuIdle}
	base.operator.IgnoreOtherOperators = f.ignoreOther
	base.operator.FeatureGates = f.featureGates
	base.operator.BatchScheduler = f.batchScheduler
	sessions := make([]*session, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			one := flags
			one.Context, one.AllContexts = t.ContextName, false
			sc := base
			sc.reconcile = reconcile[t.ContextName]
			if sc.book, errs[i] = sandboxBookFor(one); errs[i] != nil {
				return
			}
			sessions[i], errs[i] = connect(ctx, t, sc)
		}()
	}
	wg.Wait()
	defer func() {
		for _, s := range sessions {
			if s != nil {
				s.Close()
			}
		}
	}()
	members := make([]tui.FleetMember, len(targets))
	for i, t := range targets {
		if errs[i] != nil {
			return fmt.Errorf("context %s: %w", t.ContextName, errs[i])
		}
		ns := t.Namespace
		if flags.AllNamespaces {
			ns = ""
		}
		members[i] = tui.FleetMember{Session: sessions[i].Session(ns)}
	}
	return f.runApp(tui.Options{Fleet: members, Actions: tui.DefaultActions(tui.ActionDeps{})}, start, km, logger,
		"contexts", strings.Join(names, ","), "reconcile", fmt.Sprint(reconcile))
}

// podsKnownMapper is the REST mapper of a fleet context's cache: the
// usual one, which asks the API server's discovery when a kind is first
// used, but which knows without asking that pods are core/v1 and
// namespaced (the cache asks when it is made, for its pod options).
func podsKnownMapper(cfg *rest.Config) (meta.RESTMapper, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	m, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, err
	}
	return podsKnown{m}, nil
}

type podsKnown struct{ meta.RESTMapper }

var podGK = schema.GroupKind{Kind: "Pod"}

func (m podsKnown) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if gk == podGK && (len(versions) == 0 || versions[0] == "v1") {
		return &meta.RESTMapping{
			Resource:         schema.GroupVersionResource{Version: "v1", Resource: "pods"},
			GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Scope:            meta.RESTScopeNamespace,
		}, nil
	}
	return m.RESTMapper.RESTMapping(gk, versions...)
}
