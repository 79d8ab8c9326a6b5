package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/pages/cluster"
	"github.com/raydar/raydar/tui/pages/describe"
	"github.com/raydar/raydar/tui/pages/forwards"
	"github.com/raydar/raydar/tui/pages/job"
	"github.com/raydar/raydar/tui/pages/raylogs"
	"github.com/raydar/raydar/tui/pages/service"
	"github.com/raydar/raydar/tui/table"
)

// The short names the registry's entries (kinds.go) are written in: the
// page plumbing is tui/host's and the words tui/format's. They go when the
// entries move beside their pages.

type (
	env       = host.Env
	page      = host.Page
	cronTicks = format.CronTicks
)

func objMeta(o client.Object, status string) table.Meta      { return format.ObjMeta(o, status) }
func age(now, t time.Time) string                            { return format.Age(now, t) }
func metaAge(now time.Time, t *metav1.Time) string           { return format.MetaAge(now, t) }
func qty(q resource.Quantity) string                         { return format.Qty(q) }
func orNone(s string) string                                 { return format.OrNone(s) }
func clusterStatus(rc *rayv1.RayCluster) string              { return format.ClusterStatus(rc) }
func clusterWorkers(rc *rayv1.RayCluster) string             { return format.ClusterWorkers(rc) }
func serviceStatus(s *rayv1.RayService) string               { return format.ServiceStatus(s) }
func appsReady(st rayv1.RayServiceStatus) (ready, total int) { return format.AppsReady(st) }
func podStatus(p *corev1.Pod) string                         { return format.PodStatus(p) }
func podReady(p *corev1.Pod) (string, int32)                 { return format.PodReady(p) }
func jobStatus(j *rayv1.RayJob) string                       { return format.JobStatus(j) }
func jobDeployment(j *rayv1.RayJob) string                   { return format.JobDeployment(j) }
func jobDuration(now time.Time, j *rayv1.RayJob) string      { return format.JobDuration(now, j) }
func cronStatus(c *rayv1.RayCronJob) string                  { return format.CronStatus(c) }
func cronWords(c *rayv1.RayCronJob) string                   { return format.CronWords(c) }

// The pages the entries (and the `:forwards` command) open, and the
// describe fields they add: tui/pages'.

func newClusterDetail(e *env, rc *rayv1.RayCluster) page { return cluster.NewDetail(e, rc) }
func newJobDetail(e *env, j *rayv1.RayJob) page          { return job.NewDetail(e, j) }
func newServiceDetail(e *env, s *rayv1.RayService) page  { return service.NewDetail(e, s) }
func newForwardsPage(e *env) page                        { return forwards.NewPage(e) }
func podRayLogsKey(p *corev1.Pod) tea.Cmd                { return raylogs.PodKey(p) }

func describeCluster(d *format.Describer, x *rayv1.RayCluster) { describe.Cluster(d, x) }
func describeJob(d *format.Describer, x *rayv1.RayJob)         { describe.Job(d, x) }
func describeService(d *format.Describer, x *rayv1.RayService) { describe.Service(d, x) }
func describeCronJob(d *format.Describer, x *rayv1.RayCronJob) { describe.CronJob(d, x) }
func describePod(d *format.Describer, x *corev1.Pod)           { describe.Pod(d, x) }
