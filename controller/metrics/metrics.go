// Package metrics owns KubeRay's kuberay_* operator metrics, as KubeRay
// v1.7.0 defines them (ray-operator/controllers/ray/metrics): the same
// names, types, labels and meaning, served on the operator's metrics
// address beside controller-runtime's and client-go's series when
// controller.Options.EnableMetrics is set (KubeRay's --enable-metrics).
//
// As in KubeRay, the info and condition gauges are collected from the
// cache at each scrape, so a deleted object's series go with it; the two
// duration gauges are set when a status transition is seen and deleted
// with their object (DeleteRayClusterMetrics, DeleteRayJobMetrics). KubeRay
// sets them in its reconcile, comparing the status it read with the one it
// writes (raycluster_controller.go:2380-2398, rayjob_controller.go:460-506);
// raydar compares the cached status before and after each write, which is
// the same transition, seen once per operator process.
package metrics

import (
	"context"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Metrics is the kuberay_* collector of one operator.
type Metrics struct {
	reader client.Reader
	log    logr.Logger
	now    func() time.Time

	clusterProvisioned *prometheus.GaugeVec // kuberay_cluster_provisioned_duration_seconds
	jobDuration        *prometheus.GaugeVec // kuberay_job_execution_duration_seconds

	clusterInfo, clusterProvisionedCond       *prometheus.Desc
	jobInfo, jobDeploymentStatus              *prometheus.Desc
	serviceInfo, serviceReady, serviceUpgrade *prometheus.Desc
}

// New returns the collector reading Ray objects from r (the manager's
// cache).
func New(r client.Reader, log logr.Logger) *Metrics {
	return &Metrics{
		reader: r, log: log, now: time.Now,
		clusterProvisioned: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kuberay_cluster_provisioned_duration_seconds",
			Help: "The time, in seconds, when a RayCluster's `RayClusterProvisioned` status transitions from false (or unset) to true",
		}, []string{"name", "namespace", "uid"}),
		jobDuration: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kuberay_job_execution_duration_seconds",
			Help: "Duration from when the RayJob CR’s JobDeploymentStatus transitions from Initializing to either the Retrying state or a terminal state, such as Complete or Failed. The Retrying state indicates that the CR previously failed and that spec.backoffLimit is enabled.",
		}, []string{"name", "namespace", "uid", "job_deployment_status", "retry_count"}),
		clusterInfo: prometheus.NewDesc("kuberay_cluster_info", "Metadata information about RayCluster custom resources",
			[]string{"name", "namespace", "uid", "owner_kind"}, nil),
		clusterProvisionedCond: prometheus.NewDesc("kuberay_cluster_condition_provisioned", "Indicates whether the RayCluster is provisioned",
			[]string{"name", "namespace", "uid", "condition"}, nil),
		jobInfo: prometheus.NewDesc("kuberay_job_info", "Metadata information about RayJob custom resources",
			[]string{"name", "namespace", "uid"}, nil),
		jobDeploymentStatus: prometheus.NewDesc("kuberay_job_deployment_status", "The RayJob's current deployment status",
			[]string{"name", "namespace", "uid", "deployment_status"}, nil),
		serviceInfo: prometheus.NewDesc("kuberay_service_info", "Metadata information about RayService custom resources",
			[]string{"name", "namespace", "uid"}, nil),
		serviceReady: prometheus.NewDesc("kuberay_service_condition_ready",
			"Describes whether the RayService is ready. Ready means users can send requests to the underlying cluster and the number of serve endpoints is greater than 0.",
			[]string{"name", "namespace", "uid", "condition"}, nil),
		serviceUpgrade: prometheus.NewDesc("kuberay_service_condition_upgrade_in_progress",
			"Describes whether the RayService is performing a zero-downtime upgrade.",
			[]string{"name", "namespace", "uid", "condition"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.clusterProvisioned.Describe(ch)
	m.jobDuration.Describe(ch)
	for _, d := range []*prometheus.Desc{m.clusterInfo, m.clusterProvisionedCond, m.jobInfo, m.jobDeploymentStatus, m.serviceInfo, m.serviceReady, m.serviceUpgrade} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: the duration gauges, and the
// info and condition gauges of every Ray object in the cache.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.clusterProvisioned.Collect(ch)
	m.jobDuration.Collect(ch)
	ctx := context.Background()
	gauge := func(d *prometheus.Desc, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, 1, labels...)
	}
	var clusters rayv1.RayClusterList
	if err := m.reader.List(ctx, &clusters); err != nil {
		m.log.Error(err, "kuberay_* metrics: listing RayClusters")
	}
	for i := range clusters.Items {
		c := &clusters.Items[i]
		owner := "None"
		if v, ok := c.Labels[rayv1.RayOriginatedFromCRDLabelKey]; ok {
			owner = v
		}
		gauge(m.clusterInfo, c.Name, c.Namespace, string(c.UID), owner)
		gauge(m.clusterProvisionedCond, c.Name, c.Namespace, string(c.UID),
			strconv.FormatBool(meta.IsStatusConditionTrue(c.Status.Conditions, string(rayv1.RayClusterProvisioned))))
	}
	var jobs rayv1.RayJobList
	if err := m.reader.List(ctx, &jobs); err != nil {
		m.log.Error(err, "kuberay_* metrics: listing RayJobs")
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		gauge(m.jobInfo, j.Name, j.Namespace, string(j.UID))
		gauge(m.jobDeploymentStatus, j.Name, j.Namespace, string(j.UID), string(j.Status.JobDeploymentStatus))
	}
	var services rayv1.RayServiceList
	if err := m.reader.List(ctx, &services); err != nil {
		m.log.Error(err, "kuberay_* metrics: listing RayServices")
	}
	for i := range services.Items {
		s := &services.Items[i]
		gauge(m.serviceInfo, s.Name, s.Namespace, string(s.UID))
		gauge(m.serviceReady, s.Name, s.Namespace, string(s.UID),
			strconv.FormatBool(meta.IsStatusConditionTrue(s.Status.Conditions, string(rayv1.RayServiceReady))))
		gauge(m.serviceUpgrade, s.Name, s.Namespace, string(s.UID),
			strconv.FormatBool(meta.IsStatusConditionTrue(s.Status.Conditions, string(rayv1.UpgradeInProgress))))
	}
}

// ClusterChanged sets kuberay_cluster_provisioned_duration_seconds when
// RayClusterProvisioned turns true: the time since the cluster was created
// (KubeRay's emitRayClusterProvisionedDuration).
func (m *Metrics) ClusterChanged(old, cur *rayv1.RayCluster) {
	if !meta.IsStatusConditionTrue(old.Status.Conditions, string(rayv1.RayClusterProvisioned)) &&
		meta.IsStatusConditionTrue(cur.Status.Conditions, string(rayv1.RayClusterProvisioned)) {
		m.clusterProvisioned.WithLabelValues(cur.Name, cur.Namespace, string(cur.UID)).Set(m.now().Sub(cur.CreationTimestamp.Time).Seconds())
	}
}

// JobChanged sets kuberay_job_execution_duration_seconds when a RayJob's
// deployment status leaves a non-terminal state for a terminal one or
// Retrying: the time since its job started, retry_count the failures
// before (KubeRay's emitRayJobExecutionDuration, rayjob_controller.go:491-506,
// which also fires on a pass that leaves Retrying as it was; a transition
// is a change here).
func (m *Metrics) JobChanged(old, cur *rayv1.RayJob) {
	if old.Status.JobDeploymentStatus == cur.Status.JobDeploymentStatus || rayv1.IsJobDeploymentTerminal(old.Status.JobDeploymentStatus) ||
		!rayv1.IsJobDeploymentTerminal(cur.Status.JobDeploymentStatus) && cur.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRetrying {
		return
	}
	retries := 0
	if old.Status.Failed != nil {
		retries = int(*old.Status.Failed)
	}
	start := cur.CreationTimestamp.Time
	if cur.Status.StartTime != nil {
		start = cur.Status.StartTime.Time
	}
	m.jobDuration.WithLabelValues(cur.Name, cur.Namespace, string(cur.UID), string(cur.Status.JobDeploymentStatus), strconv.Itoa(retries)).
		Set(m.now().Sub(start).Seconds())
}

// Forget deletes the duration series of a deleted RayCluster or RayJob
// (KubeRay's DeleteRayClusterMetrics, DeleteRayJobMetrics).
func (m *Metrics) Forget(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	switch o := obj.(type) {
	case *rayv1.RayCluster:
		m.clusterProvisioned.DeletePartialMatch(prometheus.Labels{"name": o.Name, "namespace": o.Namespace})
	case *rayv1.RayJob:
		m.jobDuration.DeletePartialMatch(prometheus.Labels{"name": o.Name, "namespace": o.Namespace})
	}
}

// Handlers are the informer handlers that feed the duration gauges: add
// them to the RayCluster and RayJob informers.
func (m *Metrics) Handlers() toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) {
			switch o := old.(type) {
			case *rayv1.RayCluster:
				if c, ok := cur.(*rayv1.RayCluster); ok {
					m.ClusterChanged(o, c)
				}
			case *rayv1.RayJob:
				if c, ok := cur.(*rayv1.RayJob); ok {
					m.JobChanged(o, c)
				}
			}
		},
		DeleteFunc: m.Forget,
	}
}

// Registerer is where the collector is registered: controller-runtime's
// metrics.Registry, which the manager serves on the metrics address.
type Registerer interface {
	Register(prometheus.Collector) error
	Unregister(prometheus.Collector) bool
}

// InformerSource gives the cache's informers (cache.Cache).
type InformerSource interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// Runnable serves m on Reg and feeds it from Src's RayCluster and RayJob
// informers while the manager runs, on every replica (the leader or not,
// as KubeRay's collectors read the cache on each). Start blocks until ctx
// is done, then unregisters m, so a process that runs several operators
// one after another serves the running one's.
type Runnable struct {
	M   *Metrics
	Reg Registerer
	Src InformerSource
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: false.
func (Runnable) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable.
func (r Runnable) Start(ctx context.Context) error {
	for _, obj := range []client.Object{&rayv1.RayCluster{}, &rayv1.RayJob{}} {
		inf, err := r.Src.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			return err
		}
		h, err := inf.AddEventHandler(r.M.Handlers())
		if err != nil {
			return err
		}
		defer func() { _ = inf.RemoveEventHandler(h) }()
	}
	if err := r.Reg.Register(r.M); err != nil {
		// Another operator of this process serves them (tests).
		r.M.log.Error(err, "kuberay_* metrics not registered")
		<-ctx.Done()
		return nil
	}
	defer r.Reg.Unregister(r.M)
	<-ctx.Done()
	return nil
}
