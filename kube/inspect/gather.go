package inspect

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// DefaultCapacityTimeout bounds the wait for a dashboard's capacity.
const DefaultCapacityTimeout = 3 * time.Second

// Gatherer reads what rayapi/why needs about one object.
type Gatherer struct {
	// Client reads (a client built with rayapi/scheme's scheme.New()).
	Client client.Client
	// Logs returns the last lines of a pod container's log; nil leaves the
	// submitter's log out.
	Logs func(ctx context.Context, namespace, pod, container string, lines int64) (string, error)
	// Leases are raydar's leader election Leases, in the order raydar
	// processes pick them (e.g. raydar-system/raydar-operator, then
	// default/raydar-operator).
	Leases []types.NamespacedName
	// Capacity, when set, reads Ray's view of a cluster's capacity from its
	// dashboard; it is given CapacityTimeout (default
	// DefaultCapacityTimeout) and its failure is only a note.
	Capacity        func(ctx context.Context, rc *rayv1.RayCluster) (*dashboard.Capacity, error)
	CapacityTimeout time.Duration
	// Review, when set, asks the API server a SubjectAccessReview (a
	// clientset's SubjectAccessReviews().Create): whether a cluster's head
	// ServiceAccount may do what Ray's autoscaler needs, for clusters with
	// enableInTreeAutoscaling. Its failure (e.g. no permission to create
	// SubjectAccessReviews) is only a note.
	Review Review
	// GPUs, when set, reads Ray's own gauges of a cluster's GPUs once
	// (kube/gauges, one reading: GPUGauges.IdleFor 0), for the GPUsIdle
	// cause; given CapacityTimeout too, its failure is only a note.
	GPUs func(ctx context.Context, rc *rayv1.RayCluster, pods []*podview.Pod) (*why.GPUGauges, error)
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Report is what was gathered about one object: exactly one of Cluster,
// Job and Service is set, as Kind says.
type Report struct {
	Kind, Namespace, Name string

	Cluster *why.ClusterInput
	Job     *why.JobInput
	Service *why.ServiceInput

	// Notes say what could not be read and was left out of the diagnosis
	// ("nodes: forbidden", "logs of pod x: …").
	Notes []string
}

// Security is the security line of the report's cluster (rayapi/why
// security.go): a RayJob's or RayService's cluster when it was read, else
// the spec the object makes its cluster from.
func (r *Report) Security() why.Security {
	cluster := func(in *why.ClusterInput) *rayv1.RayCluster {
		if in == nil {
			return nil
		}
		return in.Cluster
	}
	switch {
	case r.Cluster != nil:
		return why.SecurityOf(&r.Cluster.Cluster.Spec)
	case r.Job != nil:
		return why.JobSecurity(r.Job.Job, cluster(r.Job.Cluster))
	case r.Service != nil:
		return why.ServiceSecurity(r.Service.Service, cluster(r.Service.Active))
	}
	return why.SecurityOf(nil)
}

// Causes diagnoses the report with rayapi/why.
func (r *Report) Causes() []why.Cause {
	switch {
	case r.Cluster != nil:
		return why.Cluster(*r.Cluster)
	case r.Job != nil:
		return why.Job(*r.Job)
	case r.Service != nil:
		return why.Service(*r.Service)
	}
	return nil
}

// diagnosed is the kinds rayapi/kinds says raydar why diagnoses, for
// messages: "RayCluster, RayJob or RayService".
func diagnosed() string {
	var ks []string
	for _, k := range kinds.All {
		if k.Why {
			ks = append(ks, k.Kind)
		}
	}
	if len(ks) < 2 {
		return strings.Join(ks, "")
	}
	return strings.Join(ks[:len(ks)-1], ", ") + " or " + ks[len(ks)-1]
}

// Gather reads kind (one of the diagnosed kinds of rayapi/kinds: RayCluster,
// RayJob or RayService) namespace/name and
// everything its diagnosis needs. A missing object is the API's NotFound
// error; a read that only refines the diagnosis (nodes, Events, Leases,
// logs, capacity) fails into a note.
func (g *Gatherer) Gather(ctx context.Context, kind, namespace, name string) (*Report, error) {
	s := &gathering{g: g, ctx: ctx, ns: namespace, now: time.Now()}
	if g.Now != nil {
		s.now = g.Now()
	}
	r := &Report{Kind: kind, Namespace: namespace, Name: name}
	key := client.ObjectKey{Namespace: namespace, Name: name}
	var err error
	switch kind {
	case rayv1.KindRayCluster:
		rc := &rayv1.RayCluster{}
		if err := g.Client.Get(ctx, key, rc); err != nil {
			return nil, err
		}
		r.Cluster, err = s.cluster(rc)
	case rayv1.KindRayJob:
		rj := &rayv1.RayJob{}
		if err := g.Client.Get(ctx, key, rj); err != nil {
			return nil, err
		}
		r.Job, err = s.job(rj)
	case rayv1.KindRayService:
		svc := &rayv1.RayService{}
		if err := g.Client.Get(ctx, key, svc); err != nil {
			return nil, err
		}
		r.Service, err = s.service(svc)
	default:
		return nil, fmt.Errorf("inspect: unknown kind %q (want %s)", kind, diagnosed())
	}
	if err != nil {
		return nil, err
	}
	r.Notes = s.notes
	return r, nil
}

// gathering is one Gather: the namespace-wide reads are made once and
// shared by the object and its clusters.
type gathering struct {
	g     *Gatherer
	ctx   context.Context
	ns    string
	now   time.Time
	notes []string

	events    []corev1.Event
	eventsOK  bool
	nodes     *why.Nodes
	reconcile *why.Reconciler
	// reviewFailed: a SubjectAccessReview was not answered (noted once).
	reviewFailed bool
}

func (s *gathering) note(format string, args ...any) {
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

// namespaceEvents lists the namespace's Events once.
func (s *gathering) namespaceEvents() []corev1.Event {
	if !s.eventsOK {
		s.eventsOK = true
		var l corev1.EventList
		if err := s.g.Client.List(s.ctx, &l, client.InNamespace(s.ns)); err != nil {
			s.note("events in %s: %v (left out)", s.ns, err)
		}
		s.events = l.Items
	}
	return s.events
}

// nodeList lists the nodes once; Forbidden makes them unknown.
func (s *gathering) nodeList() (why.Nodes, error) {
	if s.nodes == nil {
		var l corev1.NodeList
		n := why.Nodes{Known: true}
		switch err := s.g.Client.List(s.ctx, &l); {
		case apierrors.IsForbidden(err):
			n.Known = false
			s.note("nodes: %v (node-specific evidence left out)", err)
		case err != nil:
			return why.Nodes{}, fmt.Errorf("listing nodes: %w", err)
		}
		for i := range l.Items {
			n.List = append(n.List, &l.Items[i])
		}
		s.nodes = &n
	}
	return *s.nodes, nil
}

// reconciler reads the candidate Leases once.
func (s *gathering) reconciler() why.Reconciler {
	if s.reconcile == nil {
		r := reconciler(ReadLeases(s.ctx, s.g.Leases, func(ctx context.Context, k types.NamespacedName) (*coordinationv1.Lease, error) {
			l := &coordinationv1.Lease{}
			return l, s.g.Client.Get(ctx, k, l)
		}), s.now)
		s.reconcile = &r
	}
	return *s.reconcile
}

// ReadLeases reads each candidate leader Lease with get: a NotFound is a
// read with no Lease, any other error is kept in the read.
func ReadLeases(ctx context.Context, keys []types.NamespacedName, get func(context.Context, types.NamespacedName) (*coordinationv1.Lease, error)) []LeaseRead {
	reads := make([]LeaseRead, 0, len(keys))
	for _, k := range keys {
		l, err := get(ctx, k)
		switch {
		case err == nil:
			reads = append(reads, LeaseRead{Key: k, Lease: l})
		case apierrors.IsNotFound(err):
			reads = append(reads, LeaseRead{Key: k})
		default:
			reads = append(reads, LeaseRead{Key: k, Err: err})
		}
	}
	return reads
}

// cluster gathers a RayCluster's input.
func (s *gathering) cluster(rc *rayv1.RayCluster) (*why.ClusterInput, error) {
	var pods corev1.PodList
	if err := s.g.Client.List(s.ctx, &pods, client.InNamespace(rc.Namespace),
		client.MatchingLabels{rayv1.RayClusterLabelKey: rc.Name}); err != nil {
		return nil, fmt.Errorf("listing the pods of RayCluster %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	nodes, err := s.nodeList()
	if err != nil {
		return nil, err
	}
	in := clusterInput(rc, pods.Items, s.namespaceEvents(), nodes, s.reconciler(), s.now)
	in.Capacity = s.capacity(rc, in.Pods)
	in.AutoscalerAccess = s.autoscalerAccess(rc, in.Pods)
	in.GPUs = s.gpus(rc, in.Pods)
	return in, nil
}

// gpus reads Ray's gauges of the cluster's GPUs, bounded; nil when not
// asked, the head is not Ready, or they could not be read.
func (s *gathering) gpus(rc *rayv1.RayCluster, pods []*podview.Pod) *why.GPUGauges {
	if s.g.GPUs == nil || !headReady(pods) {
		return nil
	}
	d := s.g.CapacityTimeout
	if d <= 0 {
		d = DefaultCapacityTimeout
	}
	ctx, cancel := context.WithTimeout(s.ctx, d)
	defer cancel()
	g, err := s.g.GPUs(ctx, rc, pods)
	if err != nil {
		s.note("Ray's gauges of RayCluster %s/%s: %v (left out)", rc.Namespace, rc.Name, err)
		return nil
	}
	return g
}

// autoscalerAccess asks whether the head pod's ServiceAccount may do what
// Ray's autoscaler does with the KubeRay provider (patch the RayCluster,
// list its pods); nil when not asked (no Review, autoscaling off, no head
// pod) or the API server did not answer.
func (s *gathering) autoscalerAccess(rc *rayv1.RayCluster, pods []*podview.Pod) *why.AutoscalerAccess {
	if s.g.Review == nil || !rc.Spec.IsAutoscalingEnabled() {
		return nil
	}
	head, sa := why.HeadServiceAccount(pods)
	if head == nil || s.reviewFailed {
		return nil
	}
	acc, err := AskAutoscalerAccess(s.ctx, s.g.Review, rc.Namespace, rc.Name, sa)
	if err != nil { // not asked again for another cluster (a RayService's pending one): it would fail the same way
		s.reviewFailed = true
		s.note("%v (left out)", err)
		return nil
	}
	return acc
}

// capacity asks the dashboard, bounded; nil when not asked or it did not
// answer.
func (s *gathering) capacity(rc *rayv1.RayCluster, pods []*podview.Pod) *dashboard.Capacity {
	if s.g.Capacity == nil || !headReady(pods) {
		return nil // no dashboard to ask while the head is not Ready
	}
	d := s.g.CapacityTimeout
	if d <= 0 {
		d = DefaultCapacityTimeout
	}
	ctx, cancel := context.WithTimeout(s.ctx, d)
	defer cancel()
	c, err := s.g.Capacity(ctx, rc)
	if err != nil || c == nil {
		if err != nil {
			s.note("Ray's view of RayCluster %s/%s: %v (left out)", rc.Namespace, rc.Name, err)
		}
		return nil
	}
	raydash.Complete(c, rc, pods)
	return c
}

// clusterNamed gathers the named RayCluster's input; nil when it does not
// exist.
func (s *gathering) clusterNamed(name string) (*why.ClusterInput, error) {
	if name == "" {
		return nil, nil
	}
	rc := &rayv1.RayCluster{}
	switch err := s.g.Client.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: name}, rc); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading RayCluster %s/%s: %w", s.ns, name, err)
	}
	return s.cluster(rc)
}

// job gathers a RayJob's input.
func (s *gathering) job(rj *rayv1.RayJob) (*why.JobInput, error) {
	in := &why.JobInput{Job: rj, Reconciler: s.reconciler(), Now: s.now}
	var err error
	if in.Cluster, err = s.clusterNamed(rj.ClusterName()); err != nil {
		return nil, err
	}
	if in.Submitters, in.SubmitterLog, err = s.submitter(rj); err != nil {
		return nil, err
	}
	in.Events = eventsAbout(s.namespaceEvents(), rj.UID)
	return in, nil
}

// submitter reads the pods of the RayJob's submitter Job (named after the
// RayJob, owned by it) and the last log lines of the newest failed one.
func (s *gathering) submitter(rj *rayv1.RayJob) ([]*podview.Pod, []string, error) {
	job := &batchv1.Job{}
	switch err := s.g.Client.Get(s.ctx, client.ObjectKey{Namespace: rj.Namespace, Name: rj.Name}, job); {
	case apierrors.IsNotFound(err):
		return nil, nil, nil
	case apierrors.IsForbidden(err):
		s.note("submitter Job %s/%s: %v (left out)", rj.Namespace, rj.Name, err)
		return nil, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("reading the submitter Job %s/%s: %w", rj.Namespace, rj.Name, err)
	}
	if !ownedBy(job, rj.UID) {
		return nil, nil, nil
	}
	var pods corev1.PodList
	if err := s.g.Client.List(s.ctx, &pods, client.InNamespace(rj.Namespace),
		client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
		return nil, nil, fmt.Errorf("listing the pods of the submitter Job %s/%s: %w", rj.Namespace, rj.Name, err)
	}
	ps := submitterPods(job, pods.Items)
	failed := newestFailed(ps)
	if failed == nil || s.g.Logs == nil {
		return ps, nil, nil
	}
	container := ""
	if len(failed.Spec.Containers) > 0 {
		container = failed.Spec.Containers[0].Name
	}
	log, err := s.g.Logs(s.ctx, failed.Namespace, failed.Name, container, LogLines)
	if err != nil {
		s.note("log of submitter pod %s: %v (left out)", failed.Name, err)
		return ps, nil, nil
	}
	return ps, tail(log, LogLines), nil
}

// service gathers a RayService's input.
func (s *gathering) service(svc *rayv1.RayService) (*why.ServiceInput, error) {
	in := &why.ServiceInput{Service: svc, Reconciler: s.reconciler(), Now: s.now}
	var err error
	if in.Active, err = s.clusterNamed(svc.Status.ActiveServiceStatus.RayClusterName); err != nil {
		return nil, err
	}
	if in.Pending, err = s.clusterNamed(svc.Status.PendingServiceStatus.RayClusterName); err != nil {
		return nil, err
	}
	in.Events = eventsAbout(s.namespaceEvents(), svc.UID)
	get := func(ctx context.Context, obj client.Object) error {
		return s.g.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	}
	list := func(ctx context.Context, l client.ObjectList) error { return s.g.Client.List(ctx, l) }
	var notes []string
	in.Gateway, notes = ReadGateway(s.ctx, get, list, svc)
	s.notes = append(s.notes, notes...)
	return in, nil
}
