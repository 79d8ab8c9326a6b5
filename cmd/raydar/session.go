package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/cmd/internal/operatorcmd"
	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/gauges"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/kube/inspect"
	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/raydash/addrbook"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui"
	"github.com/raydar/raydar/tui/diagnose"
)

// sessionConfig says how the TUI connects to a cluster.
type sessionConfig struct {
	// reconcile runs the embedded reconcile loop (leader-elected); without
	// it the TUI only observes through its own cache.
	reconcile bool
	// operator are the loop's options (leader election, other operators).
	operator controller.Options
	// book is the address book of a sandbox's simulated Ray heads, nil
	// for other clusters (sandboxBookFor; per context).
	book   *addrbook.Book
	logger logr.Logger
	// readOnly refuses every mutation at the choke point (kube/actions).
	readOnly bool
	// policy is the config file's guardrails (protected and read-only
	// contexts), applied to each context connected to; nil: none.
	policy *actions.Policy
	// history, when set, records what the session's cache sees (kube/history).
	history *history.Store
	// fleet: this is one context of a fleet view (several contexts in one
	// TUI). connect then never waits on the API server: the watch (and the
	// history recorder) are registered in the background, retried until the
	// API server answers, and the session reports its Health (probed every
	// few seconds), so an unreachable context delays no other's screen.
	fleet bool
	// gpuIdle is what counts as an idle GPU (--gpu-idle-below,
	// --gpu-idle-for); zero: kube/gauges' defaults.
	gpuIdle gpuIdle
}

// gpuIdle is the idle-GPU threshold of the gauges.
type gpuIdle struct {
	belowPct float64
	after    time.Duration
}

// check refuses a threshold that cannot be met, naming it.
func (g gpuIdle) check() error {
	if g.belowPct <= 0 || g.belowPct > 100 {
		return fmt.Errorf("--gpu-idle-below %g: want a utilisation above 0 and at most 100 (percent)", g.belowPct)
	}
	if g.after <= 0 {
		return fmt.Errorf("--gpu-idle-for %s: want a positive duration", g.after)
	}
	return nil
}

// session is one live connection: a cache (the reconcile loop's when it is
// embedded), the bridge that feeds the TUI from it, and the role shown in
// the header. Close stops all of it.
type session struct {
	target     *kube.Target
	cs         kubernetes.Interface // the session's typed client (Leases, access reviews, pod logs)
	op         *controller.Operator // nil when observing only
	reader     client.Reader        // reads from the cache
	dashboards raydash.Resolver
	capacity   *raydash.CapacityPoller // Ray's view of the cluster whose detail page is open
	gauges     *gauges.Poller          // Ray's own gauges of the clusters on screen
	src        *watch.Source
	role       atomic.Pointer[string]
	deps       *tui.ActionDeps
	// recorder records what the cache sees, with sessionConfig.history:
	// made by connect, or for a fleet session once its API server answers
	// (nil until then).
	recorder atomic.Pointer[history.Recorder]
	// health is a fleet session's connection state (nil: fine).
	health   atomic.Pointer[tui.Health]
	forwards *portforward.Manager // shift-f's forwards; they end with the session
	// review asks SubjectAccessReviews: the TUI asks, as raydar why does,
	// whether the autoscalers of the clusters on screen may do their work.
	review inspect.Review

	// fleet and history: sessionConfig's.
	fleet, history bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// connect starts a session on target. The returned session is running;
// Close stops it.
func connect(parent context.Context, t *kube.Target, sc sessionConfig) (*session, error) {
	// A context the config file makes read-only is as --readonly: no
	// embedded loop either (it would write).
	if g := sc.guard(t); g.ReadOnly && !sc.readOnly {
		sc.reconcile = false
	}
	ctx, cancel := context.WithCancel(parent)
	cs, err := kubernetes.NewForConfig(t.Config)
	if err != nil {
		cancel()
		return nil, err
	}
	s := &session{target: t, cs: cs, src: watch.NewSource(watch.DefaultWindow), cancel: cancel, fleet: sc.fleet, history: sc.history != nil}
	var informers cache.Cache
	authors := history.NewAuthors()
	if sc.reconcile {
		o := sc.operator
		o.Logger = sc.logger
		o.Authors = authors
		if o.LeaderElectionNamespace == "" && !o.DisableLeaderElection {
			o.LeaderElectionNamespace = operatorcmd.MeetingLeaseNamespace(ctx, t)
		}
		op, err := newReconcileLoop(t.Config, loopConfig{operator: o, book: sc.book})
		if err != nil {
			cancel()
			return nil, err
		}
		s.op, informers, s.reader = op, op.Cache(), op.Client()
		s.setRole("starting")
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := op.Start(ctx); err != nil && ctx.Err() == nil {
				sc.logger.Error(err, "reconcile loop stopped")
				s.setRole("observer (reconcile loop stopped: " + shortErr(err) + ")")
				return
			}
		}()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.followRole(ctx)
		}()
	} else {
		// Pods are cached trimmed to what the TUI reads (watch.SlimPod:
		// most of a KubeRay pod's bytes are env, scripts, probes and
		// volumes); describe GETs a pod whole for its YAML (session.get).
		// The Ray kinds' cluster specs share what repeats from one to the
		// next (watch.CompactRay: resource lists, containers, maps).
		co := cache.Options{
			Scheme:           scheme.New(),
			DefaultTransform: authors.Keep(watch.CompactRay),
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Pod{}: {Label: rayv1.RayPodSelector(), Transform: authors.Keep(watch.SlimPod)},
			},
		}
		if sc.fleet {
			// The cache asks whether pods are namespaced when it is made:
			// a fleet's context must not need its API server for that.
			if co.Mapper, err = podsKnownMapper(t.Config); err != nil {
				cancel()
				return nil, err
			}
		}
		// ... and arrive trimmed: the wire filter drops from the pods'
		// protobuf what SlimPod would drop after decoding, so launch does
		// not decode (and collect) ~10 KB a pod to keep ~3 KB.
		cfg := rest.CopyConfig(t.Config)
		cfg.Wrap(watch.SlimPodWire)
		c, err := cache.New(cfg, co)
		if err != nil {
			cancel()
			return nil, err
		}
		informers, s.reader = c, c
		s.setRole(diagnose.LoopOff)
		s.wg.Add(2)
		go func() {
			defer s.wg.Done()
			if err := c.Start(ctx); err != nil && ctx.Err() == nil {
				sc.logger.Error(err, "cache stopped")
			}
		}()
		go func() {
			defer s.wg.Done()
			s.followLeases(ctx)
		}()
	}
	dash, err := newDashboards(t.Config, sc.book, raydash.SecretsFromReader(s.reader))
	if err != nil {
		cancel()
		s.wg.Wait()
		return nil, err
	}
	s.dashboards = dash
	if s.capacity, err = newCapacityPoller(ctx, dash, s.reader); err != nil {
		cancel()
		s.wg.Wait()
		return nil, err
	}
	if s.gauges, err = newGaugePoller(ctx, cs, sc.book, s.reader, sc.gpuIdle); err != nil {
		cancel()
		s.wg.Wait()
		s.capacity.Close()
		return nil, err
	}
	if err := s.setupActions(t, sc); err != nil {
		s.Close()
		return nil, err
	}
	if sc.history != nil && !sc.fleet {
		r, err := history.StartRecorder(ctx, sc.history, t.Server, authors, informers, sc.logger)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("recording history: %w", err)
		}
		s.recorder.Store(r)
	}
	if s.forwards, err = portforward.NewManager(portforward.Options{Config: t.Config}); err != nil {
		s.Close()
		return nil, err
	}
	s.src.SetNodeAccess(watch.NodeAccessFor(t.Config)) // nodes for the diagnosis, when the user may list them
	if sc.fleet {
		s.wg.Add(2)
		go func() {
			defer s.wg.Done()
			s.watchLater(ctx, informers, authors, sc)
		}()
		go func() {
			defer s.wg.Done()
			s.probe(ctx, t)
		}()
	} else if err := s.src.Watch(ctx, informers); err != nil {
		s.Close()
		return nil, fmt.Errorf("watching: %w", err)
	}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		logKindsSynced(ctx, sc.logger, s.src)
	}()
	go func() {
		defer s.wg.Done()
		start := time.Now()
		if err := s.src.WaitSynced(ctx); err == nil {
			// test/e2e/bench (make bench-e2e) reads this line: first render is measured from it.
			sc.logger.Info("cache synced", "after", time.Since(start).String())
		}
	}()
	return s, nil
}

// logKindsSynced writes a debug line as each kind's informer delivers its
// initial list ("kind synced", with the time since the watch began): where
// a slow launch's seconds go. It reads src.Unsynced every 10 ms until
// nothing is pending; a debug aid, not a synchronisation.
func logKindsSynced(ctx context.Context, logger logr.Logger, src *watch.Source) {
	start := time.Now()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	var pending map[string]bool
	for {
		done := src.Synced() // first: once it is true, Unsynced names nothing
		now := src.Unsynced()
		if pending == nil && now != nil {
			pending = map[string]bool{}
			for _, k := range now {
				pending[k] = true
			}
		}
		still := map[string]bool{}
		for _, k := range now {
			still[k] = true
		}
		for k := range pending {
			if !still[k] {
				logger.V(1).Info("kind synced", "kind", k, "after", time.Since(start).String())
				delete(pending, k)
			}
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *session) setRole(r string) { s.role.Store(&r) }

// Role is read by the TUI on every tick: an atomic load.
func (s *session) Role() string {
	if p := s.role.Load(); p != nil {
		return *p
	}
	return ""
}

// followRole turns the loop's leader and other-operator state into the
// header's words, once a second.
func (s *session) followRole(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		s.setRole(describeRole(s.op.Leader(), s.op.OtherOperator(), time.Now()))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// describeRole says who reconciles, in the header's words.
func describeRole(l controller.LeaderStatus, other controller.OtherOperator, now time.Time) string {
	if other.Detected && !other.Ignored {
		return "another operator: KubeRay (" + strings.Join(other.Pods, ", ") + ")"
	}
	switch {
	case !l.Enabled || l.IsLeader:
		return "leader"
	case l.Holder != "" && !l.Expired(now):
		return "observer (leader: " + l.Holder + ")"
	}
	return "observer (electing)"
}

// leasePollEvery is how often a session without its loop reads raydar's
// leader election Leases: a Lease runs out 15 s after its last renewal,
// so a lost leader shows within 20 s. While they cannot be read (no right
// to, an API server away) the reads back off to leasePollMax.
const (
	leasePollEvery = 5 * time.Second
	leasePollMax   = time.Minute
)

// followLeases says, while this session's loop is off, who reconciles:
// raydar's leader election Leases (whyLeases) read every leasePollEvery,
// so that a RayCluster no operator reconciles says so (rayapi/why
// NotReconciled) instead of an empty WHY. A read that fails keeps the
// last answer (a blip must not recompute every diagnosis twice); Leases
// this user may not read leave it unknown, as before.
func (s *session) followLeases(ctx context.Context) {
	get := func(ctx context.Context, k types.NamespacedName) (*coordinationv1.Lease, error) {
		return s.cs.CoordinationV1().Leases(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
	}
	wait := leasePollEvery
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, leasePollEvery)
		reads := inspect.ReadLeases(rctx, whyLeases(), get)
		cancel()
		if ctx.Err() != nil {
			return
		}
		l, holder := inspect.Leader(reads, time.Now())
		if l != inspect.LeadershipUnknown {
			s.setRole(diagnose.LoopOffRole(l, holder))
		}
		wait = nextLeasePoll(wait, l)
		t.Reset(wait)
	}
}

// nextLeasePoll is the wait before the next read of the Leases after one
// that answered l: leasePollEvery after an answer, doubling up to
// leasePollMax while they cannot be read.
func nextLeasePoll(prev time.Duration, l inspect.Leadership) time.Duration {
	if l != inspect.LeadershipUnknown {
		return leasePollEvery
	}
	return min(2*prev, leasePollMax)
}

// recorderHistory is a session's history: its recorder's, nothing before a
// fleet session's API server answered.
type recorderHistory struct{ s *session }

func (h recorderHistory) Version(ref history.Ref) uint64 {
	if r := h.s.recorder.Load(); r != nil {
		return r.Version(ref)
	}
	return 0
}

func (h recorderHistory) Entries(ref history.Ref) ([]history.Entry, error) {
	if r := h.s.recorder.Load(); r != nil {
		return r.Entries(ref)
	}
	return nil, nil
}

func (h recorderHistory) Note() string {
	if r := h.s.recorder.Load(); r != nil {
		return r.Note()
	}
	return ""
}

// Session is what the TUI needs of this connection.
func (s *session) Session(namespace string) tui.Session {
	var hist tui.HistorySource
	if s.history {
		hist = recorderHistory{s}
	}
	var health func() tui.Health
	if s.fleet {
		health = s.Health
	}
	return tui.Session{
		History:   hist,
		Context:   s.target.ContextName,
		Server:    s.target.Server,
		Namespace: namespace,
		Feed:      s.src,
		Synced:    s.src.Synced,
		Unsynced:  s.src.Unsynced,
		Role:      s.Role,
		Logs:      tui.JobLogsFunc(s.jobLogs),
		Capacity:  s.capacity,
		Gauges:    s.gauges,
		RayLogs:   &raydash.RayLogs{Resolver: s.dashboards, Cluster: clusterFrom(context.Background(), s.reader)}, // the cache: no I/O
		Deps:      s.deps,
		Get:       s.get,
		Forwards:  s.forwards,
		Review:    s.review,
		Health:    health,
	}
}

// get reads an object whole from the API server (describe's YAML of a pod
// the cache keeps trimmed).
func (s *session) get(ctx context.Context, obj client.Object) (client.Object, error) {
	if s.deps == nil || s.deps.Actions == nil {
		return nil, errors.New("no API client in this session")
	}
	full := obj.DeepCopyObject().(client.Object)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.deps.Actions.Client().Get(ctx, client.ObjectKeyFromObject(obj), full); err != nil {
		return nil, err
	}
	full.SetManagedFields(nil)
	return full, nil
}

// guard is the Actions options of t's context: --readonly, and the config
// file's read-only and protected contexts.
func (sc sessionConfig) guard(t *kube.Target) actions.Options {
	o := actions.Options{ReadOnly: sc.readOnly, Context: t.ContextName, Unsupported: unsupportedUnder(sc.operator.FeatureGates)}
	sc.policy.Apply(t.ContextName, &o)
	return o
}

// setupActions builds the session's action dependencies: every mutation
// goes through kube/actions (read-only gate, Events, audit log).
func (s *session) setupActions(t *kube.Target, sc sessionConfig) error {
	opts := sc.guard(t)
	opts.JobStopper = &actions.DashboardStopper{Reader: s.reader, Resolver: s.dashboards}
	acts, err := actions.NewForTarget(t, opts)
	if err != nil {
		return err
	}
	cs := s.cs
	s.review = func(ctx context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
		return cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	}
	s.deps = &tui.ActionDeps{
		Context:       t.ContextName,
		Actions:       acts,
		PodLogs:       podLogStreams(cs),
		OtherOperator: s.otherOperatorReconciles,
	}
	return nil
}

// podLogTailLines is how much history a pod log view starts with.
const podLogTailLines = 1000

// podLogStreams streams a container's logs through the API server: the current
// instance's, or with Previous the one before its last restart (kubectl
// logs --previous), the last podLogTailLines lines first.
func podLogStreams(cs kubernetes.Interface) tui.PodLogs {
	return tui.PodLogsFunc(func(ctx context.Context, ns, pod string, o tui.LogOptions) (io.ReadCloser, error) {
		tail := int64(podLogTailLines)
		opts := &corev1.PodLogOptions{Container: o.Container, Follow: o.Follow, Previous: o.Previous, TailLines: &tail}
		return cs.CoreV1().Pods(ns).GetLogs(pod, opts).Stream(ctx)
	})
}

// otherOperatorReconciles says whether a KubeRay operator, not raydar,
// reconciles obj: a stop request must then go to the dashboard directly.
// Called from the TUI's Update: reads only in-memory state.
func (s *session) otherOperatorReconciles(obj client.Object) bool {
	if s.op == nil {
		return false
	}
	other := s.op.OtherOperator()
	if !other.Detected || other.Ignored {
		return false
	}
	if j, ok := obj.(*rayv1.RayJob); ok {
		return !rayv1.IsManagedBy(j.Spec.ManagedBy, rayv1.ManagedByRaydar)
	}
	return true
}

// jobLogs fetches a RayJob's Ray job logs from its cluster's dashboard.
func (s *session) jobLogs(ctx context.Context, ns, name string) (string, error) {
	dc, job, err := raydash.ClientForRayJob(ctx, s.reader, s.dashboards, ns, name)
	if err != nil {
		return "", err
	}
	if job.Status.JobId == "" {
		return "", fmt.Errorf("RayJob %s has no Ray job yet (deployment status %q)", name, job.Status.JobDeploymentStatus)
	}
	return dc.GetJobLogs(ctx, job.Status.JobId)
}

// Close stops the session's loop, cache and bridge and waits for them.
func (s *session) Close() {
	s.cancel()
	s.wg.Wait()
	s.capacity.Close()
	s.gauges.Close()
	if r := s.recorder.Load(); r != nil {
		r.Close()
	}
	if s.forwards != nil {
		s.forwards.Close()
	}
}

// newCapacityPoller reads Ray's capacity of the clusters the TUI looks at,
// finding them and their pods in the session's cache.
func newCapacityPoller(ctx context.Context, dash raydash.Resolver, reader client.Reader) (*raydash.CapacityPoller, error) {
	return raydash.NewCapacityPoller(raydash.CapacityOptions{
		Resolver: dash,
		Cluster:  clusterFrom(ctx, reader),
		Pods: func(ns, name string) ([]*podview.Pod, error) {
			var l corev1.PodList
			if err := reader.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{rayv1.RayClusterLabelKey: name}); err != nil {
				return nil, err
			}
			out := make([]*podview.Pod, len(l.Items))
			for i := range l.Items {
				out[i] = podview.Of(&l.Items[i])
			}
			return out, nil
		},
	})
}

// newGaugePoller reads Ray's gauges of the clusters the TUI shows: through
// the sandbox's simulated nodes when there is a book, else the API server's
// pod proxy; the pods come from the session's cache.
func newGaugePoller(ctx context.Context, cs kubernetes.Interface, book *addrbook.Book, reader client.Reader, idle gpuIdle) (*gauges.Poller, error) {
	var f gauges.Fetcher = gauges.PodProxy{Client: cs}
	if book != nil {
		f = gauges.BookFetcher{Book: book}
	}
	return gauges.NewPoller(gauges.Options{
		Fetcher: f, IdleBelowPct: idle.belowPct, IdleFor: idle.after,
		Pods: func(ns, name string) ([]*podview.Pod, error) {
			var l corev1.PodList
			if err := reader.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{rayv1.RayClusterLabelKey: name}); err != nil {
				return nil, err
			}
			out := make([]*podview.Pod, len(l.Items))
			for i := range l.Items {
				out[i] = podview.Of(&l.Items[i])
			}
			return out, nil
		},
	})
}

func shortErr(err error) string {
	msg := err.Error()
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		msg = st.Status().Message
	}
	if len(msg) > 80 {
		msg = msg[:77] + "..."
	}
	return msg
}
