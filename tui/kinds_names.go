package tui

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
)

// The short names the registry's entries (kinds.go) are written in: the
// page plumbing is tui/host's and the words tui/format's. They go when the
// entries move beside their pages.

type (
	env  = host.Env
	page = host.Page
)

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
