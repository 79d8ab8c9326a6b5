package headsim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox/autoscaler"
	"github.com/raydar/raydar/kube/sandbox/rayhead"
	"github.com/raydar/raydar/kube/sandbox/refusable"
	"github.com/raydar/raydar/kube/sandbox/simkit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// DefaultPollInterval is how often a stand-in submitter re-checks what it
// waits for (the dashboard, its pod, its Ray job).
const DefaultPollInterval = 250 * time.Millisecond

// Options configure a Sim.
type Options struct {
	// Config is the API server connection; used to build Clientset and
	// Client when they are nil.
	Config *rest.Config
	// Clientset watches pods and Jobs and reads Services and Secrets; for
	// clusters with Kubernetes token auth it creates TokenReviews and
	// SubjectAccessReviews (k8sauth.go).
	Clientset kubernetes.Interface
	// Client reads RayClusters and RayJobs.
	Client client.Client
	// Namespace restricts the Sim to one namespace; "" watches all.
	Namespace string
	// Head is the template of every simulated head's options; Token is
	// set per cluster from its auth Secret, Authorize for clusters with
	// Kubernetes token auth.
	Head rayhead.Options
	// SetPodPhase ends a pod Succeeded or Failed (the sandbox's
	// Sandbox.SetPodPhase). Without it the K8sJobMode stand-in submits but
	// leaves the submitter pod running.
	SetPodPhase func(ctx context.Context, namespace, name string, phase corev1.PodPhase) error
	// EndContainer shows one container of a Running pod terminated with an
	// exit code, the others running (the sandbox's Sandbox.EndContainer):
	// how a SidecarMode submitter's end shows in its head pod. Without it
	// the sidecar's exit is only logged.
	EndContainer func(ctx context.Context, namespace, pod, container string, code int) error
	// PollInterval: see DefaultPollInterval.
	PollInterval time.Duration
	// Logf receives one line per head start/stop and stand-in action.
	Logf func(format string, args ...any)
	// AddressBook, when set, is a file the Sim keeps up to date with every
	// head's dashboard and Serve proxy URL (kube/raydash/addrbook), for
	// raydar processes other than this one. Close empties it.
	AddressBook string
	// Autoscaler, when set, runs Ray's in-tree autoscaler
	// (kube/sandbox/autoscaler) beside every head whose RayCluster has
	// enableInTreeAutoscaling: true, as the head pod's autoscaler sidecar
	// would. It needs Config (it writes as the head's ServiceAccount). Off
	// (nil), replicas change only when someone writes them.
	Autoscaler *AutoscalerOptions
}

// AutoscalerOptions configure the simulated autoscalers.
type AutoscalerOptions struct {
	// Interval between two decisions (default autoscaler.DefaultInterval,
	// Ray's 5 s).
	Interval time.Duration
}

// Sim runs simulated heads for the Ready head pods it sees. Create it with
// Start; Close it when done.
type Sim struct {
	opts    Options
	cs      kubernetes.Interface
	cl      client.Client
	pods    toolscache.SharedIndexInformer
	rayPods toolscache.SharedIndexInformer // every pod of a RayCluster (nodes.go)
	jobs    toolscache.SharedIndexInformer

	headQ  *simkit.Queue
	subQ   *simkit.Queue
	nodesQ *simkit.Queue // "namespace/cluster" whose Ray nodes changed

	// loop runs the watches, the queues' workers and what runs beside a
	// head (its SidecarMode submitter, its autoscaler) or in a submitter
	// pod; Close stops it.
	loop *simkit.Loop

	mu       sync.Mutex
	closed   bool
	byPod    map[string]*head                 // pod namespace/name → its head
	byClust  map[types.NamespacedName]*head   // cluster → its current head
	calls    map[types.NamespacedName]*counts // cluster → requests seen, over all its heads
	refusing map[types.NamespacedName]bool
	early    map[string]*earlyFront // head pod namespace/name → its dashboard before Ready (early.go)
	subs     map[string]*submitter  // submitter Job namespace/name → stand-in state
	logs     map[string]*podLog     // namespace/pod → its stand-in submitter's output
	closing  sync.WaitGroup         // heads being closed

	bookMu sync.Mutex // serialises address book writes
}

// head is one simulated head for one head pod.
type head struct {
	uid     types.UID
	pod     string // namespace/name
	cluster types.NamespacedName
	h       *rayhead.Head
	front   *refusable.Server
	token   string // the Ray auth token the head requires, "" for none
	// cancel stops what runs in the head pod's other containers (the
	// SidecarMode submitter, the autoscaler) when the head closes.
	cancel context.CancelFunc
	// as is the cluster's autoscaler, nil when it has none.
	as *autoscaler.Driver
}

var _ raydash.AddressBook = (*Sim)(nil)

// Start starts watching and returns once the watches have synced.
func Start(ctx context.Context, opts Options) (*Sim, error) {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Clientset == nil || opts.Client == nil {
		if opts.Config == nil {
			return nil, errors.New("headsim: need a rest.Config, or a Clientset and a Client")
		}
		c, err := simkit.NewClients(opts.Config, "headsim", nil)
		if err != nil {
			return nil, err
		}
		if opts.Clientset == nil {
			opts.Clientset = c.Kube
		}
		if opts.Client == nil {
			opts.Client = c.Client
		}
	}
	loop := simkit.NewLoop(context.Background(), "headsim", opts.Logf)
	s := &Sim{
		opts: opts, cs: opts.Clientset, cl: opts.Client, loop: loop,
		headQ: loop.NewQueue(), subQ: loop.NewQueue(), nodesQ: loop.NewQueue(),
		byPod: map[string]*head{}, byClust: map[types.NamespacedName]*head{},
		calls: map[types.NamespacedName]*counts{}, refusing: map[types.NamespacedName]bool{},
		early: map[string]*earlyFront{},
		subs:  map[string]*submitter{}, logs: map[string]*podLog{},
	}
	s.pods = coreinformers.NewFilteredPodInformer(opts.Clientset, opts.Namespace, 0, toolscache.Indexers{}, func(lo *metav1.ListOptions) {
		lo.LabelSelector = rayv1.RayNodeTypeLabelKey + "=" + string(rayv1.HeadNode)
	})
	s.jobs = newSubmitterJobInformer(opts.Clientset, opts.Namespace)
	s.rayPods = newRayPodInformer(opts.Clientset, opts.Namespace)
	if _, err := s.pods.AddEventHandler(s.headQ.Handler()); err != nil {
		return nil, err
	}
	if _, err := s.jobs.AddEventHandler(s.subQ.Handler()); err != nil {
		return nil, err
	}
	if _, err := s.rayPods.AddEventHandler(simkit.OnEvent(func(obj any) {
		if key, ok := clusterKeyOf(obj); ok {
			s.nodesQ.Add(key)
		}
	})); err != nil {
		return nil, err
	}
	if !loop.Watch(ctx, s.pods, s.jobs, s.rayPods) {
		s.Close()
		return nil, errors.New("headsim: watches did not sync")
	}
	if err := s.publish(); err != nil {
		s.Close()
		return nil, err
	}
	loop.Work(s.headQ, 2, s.syncHeadPod)
	loop.Work(s.subQ, 2, s.syncSubmitter)
	loop.Work(s.nodesQ, 1, s.syncNodes)
	return s, nil
}

// Close stops watching and closes every head (stopping its jobs). It is safe
// to call more than once.
func (s *Sim) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.closing.Wait()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.loop.Stop()

	s.mu.Lock()
	heads := make([]*head, 0, len(s.byPod))
	for k, h := range s.byPod {
		heads = append(heads, h)
		delete(s.byPod, k)
		if s.byClust[h.cluster] == h {
			delete(s.byClust, h.cluster)
		}
	}
	for k, e := range s.early {
		e.front.Close()
		delete(s.early, k)
	}
	s.mu.Unlock()
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for _, h := range heads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.front.Close()
			if err := h.h.Close(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	s.closing.Wait()
	errs = append(errs, s.publish())
	return errors.Join(errs...)
}

// DashboardURL is the base URL of the dashboard of the RayCluster
// namespace/name, while it has a Ready head pod (raydash.AddressBook), or
// a head pod held not Ready by sandbox.NotReadyAnnotation (its dashboard
// then answers 503 and counts: early.go).
func (s *Sim) DashboardURL(namespace, name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := types.NamespacedName{Namespace: namespace, Name: name}
	if h, ok := s.byClust[key]; ok {
		return h.front.URL(), true
	}
	for _, e := range s.early {
		if e.cluster == key {
			return e.front.URL(), true
		}
	}
	return "", false
}

// ServeProxyURL is the base URL of the Serve proxy of the RayCluster
// namespace/name, while it has a Ready head pod. The simulated head's proxy
// stands for every pod's (Serve's proxy_location EveryNode); the RayService
// reconciler's ServeProxyCheckerFromAddressBook uses it.
func (s *Sim) ServeProxyURL(namespace, name string) (string, bool) {
	if h := s.Head(namespace, name); h != nil {
		return h.ProxyURL(), true
	}
	return "", false
}

// MetricsURL is where the simulated Ray nodes of the RayCluster
// namespace/name serve their metrics (rayhead's MetricsPath), for
// kube/gauges.BookFetcher; the head's own listener, not the counting front.
func (s *Sim) MetricsURL(namespace, name string) (string, bool) {
	if h := s.Head(namespace, name); h != nil {
		return h.MetricsURL(), true
	}
	return "", false
}

// Head returns the simulated head of the RayCluster namespace/name, nil
// while it has none. Use it for fault switches (SetHTTP500, SetLatency).
func (s *Sim) Head(namespace, name string) *rayhead.Head {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.byClust[types.NamespacedName{Namespace: namespace, Name: name}]; ok {
		return h.h
	}
	return nil
}

// AutoscalerStatus is what the simulated autoscaler of the RayCluster
// namespace/name saw and did last; false while the cluster has no head or
// its head no autoscaler (Options.Autoscaler off, enableInTreeAutoscaling
// not true when the head started).
func (s *Sim) AutoscalerStatus(namespace, name string) (autoscaler.Status, bool) {
	s.mu.Lock()
	h, ok := s.byClust[types.NamespacedName{Namespace: namespace, Name: name}]
	s.mu.Unlock()
	if !ok || h.as == nil {
		return autoscaler.Status{}, false
	}
	return h.as.Status(), true
}

// SetRefuse makes the dashboard of the RayCluster namespace/name refuse
// connections (on=true) or accept them again, for its current head and any
// later one. The head and its jobs keep running.
func (s *Sim) SetRefuse(namespace, name string, on bool) error {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	s.mu.Lock()
	s.refusing[key] = on
	h := s.byClust[key]
	s.mu.Unlock()
	if h == nil {
		return nil
	}
	if err := h.front.SetRefuse(on); err != nil {
		return fmt.Errorf("headsim: %w", err)
	}
	return nil
}

// Calls counts the requests the dashboard of the RayCluster namespace/name
// received with this method and path (e.g. "POST",
// "/api/jobs/<id>/stop"), over every head the cluster had. Requests refused
// at the connection (SetRefuse, no head) are not counted.
func (s *Sim) Calls(namespace, name, method, path string) int {
	c := s.counts(types.NamespacedName{Namespace: namespace, Name: name})
	return c.get(method + " " + path)
}

// AllCalls returns every "METHOD path" the cluster's dashboard received, with
// its count (for failure messages).
func (s *Sim) AllCalls(namespace, name string) map[string]int {
	return s.counts(types.NamespacedName{Namespace: namespace, Name: name}).snapshot()
}

// Clusters lists the clusters that have a head now, "namespace/name", sorted.
func (s *Sim) Clusters() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.byClust))
	for k := range s.byClust {
		out = append(out, k.String())
	}
	sort.Strings(out)
	return out
}

func (s *Sim) counts(key types.NamespacedName) *counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.calls[key]
	if !ok {
		c = &counts{m: map[string]int{}}
		s.calls[key] = c
	}
	return c
}
