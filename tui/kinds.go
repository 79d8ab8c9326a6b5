package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/watch"
	kdesc "github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/pages/cluster"
	"github.com/raydar/raydar/tui/pages/describe"
	"github.com/raydar/raydar/tui/pages/job"
	"github.com/raydar/raydar/tui/pages/raylogs"
	"github.com/raydar/raydar/tui/pages/service"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/table"
)

// The registry's entries: per kind a kind literal (views, help, actions,
// store kind, lifecycle) and its def function (columns with their cells,
// drill-down, describe fields). What the kind is — its title, every name
// the `:` prompt and -c take, whether it is suspended — is its descriptor
// in rayapi/kinds, which the CLI reads too. See the package doc for what
// else adding a kind takes.

// names are the `:` commands of a kind: every name its descriptor knows, the
// one the help shows first.
func names(k *kdesc.Kind) string { return strings.Join(k.Names, " ") }

// suspendedBy reads spec.suspend as the kind's descriptor says.
func suspendedBy[V client.Object](k *kdesc.Kind) func(V) bool {
	return func(v V) bool { return k.Suspend.Suspended(v) }
}

// kinds returns the registry of the kinds the TUI shows, in the order of
// the help's Commands.
func kinds() registry {
	return registry{kinds: []kind{rayClusters(), rayJobs(), rayServices(), rayCronJobs(), rayPods()}}
}

func rayClusters() kind {
	return kind{
		list: ClustersView, detail: ClusterDetailView, title: kdesc.RayCluster.Plural, help: "RayClusters",
		aliases: names(kdesc.RayCluster), watch: watch.RayCluster, lifecycle: actions.KindRayCluster,
		listActions:   "describe suspend delete port-forward",
		detailActions: "scale delete-workers describe logs suspend port-forward",
		typed:         defOf[*rayv1.RayCluster](clusterDef),
	}
}

func clusterDef() def[*rayv1.RayCluster] {
	return def[*rayv1.RayCluster]{
		columns: func() []column[*rayv1.RayCluster] {
			return []column[*rayv1.RayCluster]{
				nameCol[*rayv1.RayCluster](), nsCol[*rayv1.RayCluster](),
				{Column: table.Column{Title: "WORKERS", Width: 7, Right: true}, cell: func(rc *rayv1.RayCluster) string {
					return format.ClusterWorkers(rc)
				}},
				{Column: table.Column{Title: "CPUS", Width: 5, Right: true, Drop: 2}, cell: func(rc *rayv1.RayCluster) string { return format.Qty(rc.Status.DesiredCPU) }},
				{Column: table.Column{Title: "MEMORY", Width: 7, Right: true, Drop: 4}, cell: func(rc *rayv1.RayCluster) string { return format.Qty(rc.Status.DesiredMemory) }},
				{Column: table.Column{Title: "GPUS", Width: 4, Right: true, Drop: 3}, cell: func(rc *rayv1.RayCluster) string { return format.Qty(rc.Status.DesiredGPU) }},
				{Column: table.Column{Title: "STATUS", Width: 12, Sort: table.ByStatus}, cell: format.ClusterStatus},
				ageCol[*rayv1.RayCluster](),
				whyCol[*rayv1.RayCluster](18, 14),
			}
		},
		meta:      func(rc *rayv1.RayCluster) table.Meta { return format.ObjMeta(rc, format.ClusterStatus(rc)) },
		open:      func(e *host.Env, rc *rayv1.RayCluster) host.Page { return cluster.NewDetail(e, rc) },
		suspended: suspendedBy[*rayv1.RayCluster](kdesc.RayCluster),
		describe:  describe.Cluster,
	}
}

func rayJobs() kind {
	return kind{
		list: JobsView, detail: JobDetailView, title: kdesc.RayJob.Plural, help: "RayJobs",
		aliases: names(kdesc.RayJob), watch: watch.RayJob, lifecycle: actions.KindRayJob,
		listActions:   "describe stop-job suspend delete",
		detailActions: "describe stop-job suspend delete",
		typed:         defOf[*rayv1.RayJob](jobDef),
	}
}

func jobDef() def[*rayv1.RayJob] {
	return def[*rayv1.RayJob]{
		columns: func() []column[*rayv1.RayJob] {
			return []column[*rayv1.RayJob]{
				nameCol[*rayv1.RayJob](), nsCol[*rayv1.RayJob](),
				{Column: table.Column{Title: "STATUS", Width: 9, Sort: table.ByStatus}, cell: format.JobStatus},
				{Column: table.Column{Title: "DEPLOYMENT", Width: 10}, cell: format.JobDeployment},
				{Column: table.Column{Title: "CLUSTER", Width: 18, Grow: true, Min: 10, Drop: 1}, cell: func(j *rayv1.RayJob) string { return format.OrNone(j.Status.RayClusterName) }},
				{Column: table.Column{Title: "START", Width: 5, Right: true, Drop: 4}, live: func(j *rayv1.RayJob, now time.Time) string { return format.MetaAge(now, j.Status.StartTime) }},
				{Column: table.Column{Title: "END", Width: 5, Right: true, Drop: 3}, live: func(j *rayv1.RayJob, now time.Time) string { return format.MetaAge(now, j.Status.EndTime) }},
				{Column: table.Column{Title: "DURATION", Width: 8, Right: true}, live: func(j *rayv1.RayJob, now time.Time) string { return format.JobDuration(now, j) }},
				{Column: table.Column{Title: "AGE", Width: 5, Right: true, Sort: table.ByAge, Drop: 2}, live: func(j *rayv1.RayJob, now time.Time) string { return format.Age(now, j.CreationTimestamp.Time) }},
				whyCol[*rayv1.RayJob](15, 12),
			}
		},
		meta: func(j *rayv1.RayJob) table.Meta {
			m := format.ObjMeta(j, string(j.Status.JobStatus))
			m.Class = styles.ClassOf(string(j.Status.JobDeploymentStatus))
			if m.Class == styles.Neutral || m.Class == styles.OK {
				if c := styles.ClassOf(string(j.Status.JobStatus)); c != styles.Neutral {
					m.Class = c
				}
			}
			return m
		},
		open:      func(e *host.Env, j *rayv1.RayJob) host.Page { return job.NewDetail(e, j) },
		suspended: suspendedBy[*rayv1.RayJob](kdesc.RayJob),
		describe:  describe.Job,
	}
}

func rayServices() kind {
	return kind{
		list: ServicesView, detail: ServiceDetailView, title: kdesc.RayService.Plural, help: "RayServices",
		aliases: names(kdesc.RayService), watch: watch.RayService, lifecycle: actions.KindRayService,
		listActions:   "describe suspend delete",
		detailActions: "describe suspend delete",
		typed:         defOf[*rayv1.RayService](serviceDef),
	}
}

func serviceDef() def[*rayv1.RayService] {
	return def[*rayv1.RayService]{
		columns: func() []column[*rayv1.RayService] {
			return []column[*rayv1.RayService]{
				nameCol[*rayv1.RayService](), nsCol[*rayv1.RayService](),
				{Column: table.Column{Title: "STATUS", Width: 11, Sort: table.ByStatus}, cell: format.ServiceStatus},
				{Column: table.Column{Title: "ACTIVE", Width: 18, Grow: true, Min: 10}, cell: func(s *rayv1.RayService) string { return format.OrNone(s.Status.ActiveServiceStatus.RayClusterName) }},
				{Column: table.Column{Title: "PENDING", Width: 18, Grow: true, Min: 8, Drop: 2}, cell: func(s *rayv1.RayService) string { return format.OrNone(s.Status.PendingServiceStatus.RayClusterName) }},
				{Column: table.Column{Title: "APPS", Width: 4, Right: true}, cell: func(s *rayv1.RayService) string {
					r, t := format.AppsReady(s.Status.ActiveServiceStatus)
					return fmt.Sprintf("%d/%d", r, t)
				}},
				{Column: table.Column{Title: "ENDPOINTS", Width: 9, Right: true, Drop: 1}, cell: func(s *rayv1.RayService) string { return fmt.Sprint(s.Status.NumServeEndpoints) }},
				ageCol[*rayv1.RayService](),
				whyCol[*rayv1.RayService](12, 10),
			}
		},
		meta:      func(s *rayv1.RayService) table.Meta { return format.ObjMeta(s, format.ServiceStatus(s)) },
		open:      func(e *host.Env, s *rayv1.RayService) host.Page { return service.NewDetail(e, s) },
		suspended: suspendedBy[*rayv1.RayService](kdesc.RayService),
		describe:  describe.Service,
	}
}

// rayCronJobs are the RayCronJobs; Enter opens one with the RayJobs it
// created.
func rayCronJobs() kind {
	return kind{
		list: CronJobsView, detail: CronJobDetailView, title: kdesc.RayCronJob.Plural, help: "RayCronJobs",
		aliases: names(kdesc.RayCronJob), watch: watch.RayCronJob, lifecycle: actions.KindRayCronJob,
		listActions:   "describe trigger suspend delete",
		detailActions: "describe trigger suspend delete",
		typed:         defOf[*rayv1.RayCronJob](cronJobDef),
	}
}

func cronJobDef() def[*rayv1.RayCronJob] {
	return def[*rayv1.RayCronJob]{
		columns: func() []column[*rayv1.RayCronJob] {
			ticks := format.CronTicks{}
			return []column[*rayv1.RayCronJob]{
				nameCol[*rayv1.RayCronJob](), nsCol[*rayv1.RayCronJob](),
				{Column: table.Column{Title: "SCHEDULE", Width: 12}, cell: func(c *rayv1.RayCronJob) string { return c.Spec.Schedule }},
				{Column: table.Column{Title: "IN WORDS", Width: 48, Grow: true, Min: 16, Drop: 1}, cell: format.CronWords},
				{Column: table.Column{Title: "SUSPEND", Width: 7, Drop: 2}, cell: func(c *rayv1.RayCronJob) string { return fmt.Sprint(c.Spec.IsSuspended()) }},
				{Column: table.Column{Title: "LAST SCHEDULE", Width: 13, Right: true, Drop: 4}, live: func(c *rayv1.RayCronJob, now time.Time) string {
					return format.MetaAge(now, c.Status.LastScheduleTime)
				}},
				{Column: table.Column{Title: "NEXT RUN", Width: 9, Right: true}, live: ticks.Countdown},
				{Column: table.Column{Title: "JOBS", Width: 4, Right: true}, count: func(_ *rayv1.RayCronJob, n int) string { return fmt.Sprint(n) }},
				{Column: table.Column{Title: "STATUS", Width: 17, Sort: table.ByStatus}, cell: format.CronStatus},
				{Column: table.Column{Title: "AGE", Width: 5, Right: true, Sort: table.ByAge, Drop: 3}, live: func(c *rayv1.RayCronJob, now time.Time) string {
					return format.Age(now, c.CreationTimestamp.Time)
				}},
			}
		},
		meta:      func(c *rayv1.RayCronJob) table.Meta { return format.ObjMeta(c, format.CronStatus(c)) },
		open:      func(e *host.Env, c *rayv1.RayCronJob) host.Page { return newCronJobDetail(e, c) },
		suspended: suspendedBy[*rayv1.RayCronJob](kdesc.RayCronJob),
		describe:  describe.CronJob,
		children:  &children{watch: watch.RayJob, label: rayv1.RayCronJobNameLabelKey},
	}
}

// rayPods are the Ray pods; Enter opens the pod's RayCluster, L the Ray log
// files of the pod's Ray node.
func rayPods() kind {
	return kind{
		list: PodsView, title: kdesc.Pod.Plural, help: "Ray pods",
		aliases: names(kdesc.Pod), watch: watch.Pod,
		listActions: "describe logs port-forward",
		typed:       defOf[*corev1.Pod](podDef),
	}
}

func podDef() def[*corev1.Pod] {
	return def[*corev1.Pod]{
		columns: func() []column[*corev1.Pod] {
			return []column[*corev1.Pod]{
				{Column: table.Column{Title: "NAME", Width: 30, Grow: true, Min: 22, Sort: table.ByName}, cell: func(p *corev1.Pod) string { return p.Name }},
				nsCol[*corev1.Pod](),
				{Column: table.Column{Title: "CLUSTER", Width: 14, Grow: true, Min: 8, Drop: 1}, cell: func(p *corev1.Pod) string { return format.OrNone(p.Labels[rayv1.RayClusterLabelKey]) }},
				{Column: table.Column{Title: "GROUP", Width: 10, Drop: 3}, cell: func(p *corev1.Pod) string { return format.OrNone(p.Labels[rayv1.RayNodeGroupLabelKey]) }},
				{Column: table.Column{Title: "TYPE", Width: 6, Drop: 4}, cell: func(p *corev1.Pod) string { return format.OrNone(p.Labels[rayv1.RayNodeTypeLabelKey]) }},
				{Column: table.Column{Title: "PHASE", Width: 11, Sort: table.ByStatus}, cell: format.PodStatus},
				{Column: table.Column{Title: "READY", Width: 5, Right: true}, cell: func(p *corev1.Pod) string { r, _ := format.PodReady(p); return r }},
				{Column: table.Column{Title: "RESTARTS", Width: 8, Right: true, Drop: 2}, cell: func(p *corev1.Pod) string { _, n := format.PodReady(p); return fmt.Sprint(n) }},
				{Column: table.Column{Title: "IP", Width: 15, Drop: 6}, cell: func(p *corev1.Pod) string { return format.OrNone(p.Status.PodIP) }},
				{Column: table.Column{Title: "NODE", Width: 14, Grow: true, Min: 8, Drop: 7}, cell: func(p *corev1.Pod) string { return format.OrNone(p.Spec.NodeName) }},
				ageCol[*corev1.Pod](),
			}
		},
		meta: func(p *corev1.Pod) table.Meta { return format.ObjMeta(p, format.PodStatus(p)) },
		open: func(e *host.Env, p *corev1.Pod) host.Page {
			o, ok := e.Store.Find(watch.RayCluster, p.Namespace, p.Labels[rayv1.RayClusterLabelKey])
			if !ok {
				return nil
			}
			return cluster.NewDetail(e, o.(*rayv1.RayCluster))
		},
		describe: describe.Pod,
		keys: []rowKey[*corev1.Pod]{
			{binding: func(km *keys.KeyMap) key.Binding { return km.RayLogs }, run: raylogs.PodKey},
		},
	}
}
