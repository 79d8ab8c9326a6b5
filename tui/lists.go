package tui

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/table"
)

var (
	sortName   = table.SortCol(table.ByName)
	sortAge    = table.SortCol(table.ByAge)
	sortStatus = table.SortCol(table.ByStatus)
)

func objMeta(o client.Object, status string) table.Meta {
	return table.Meta{
		Namespace: o.GetNamespace(),
		Name:      o.GetName(),
		Created:   o.GetCreationTimestamp().Time,
		Status:    status,
		Class:     styles.ClassOf(status),
		Labels:    o.GetLabels(),
	}
}

func nameCol() table.Column {
	return table.Column{Title: "NAME", Width: 24, Grow: true, Min: 14, Sort: sortName}
}

func nsCol() table.Column {
	return table.Column{Title: "NAMESPACE", Width: 12, Namespace: true}
}

func ageCol() table.Column {
	return table.Column{Title: "AGE", Width: 5, Right: true, Sort: sortAge}
}

// newClustersPage lists RayClusters.
func newClustersPage(e *env) page {
	spec := table.Spec[*rayv1.RayCluster]{
		Columns: []table.Column{
			nameCol(), nsCol(),
			{Title: "WORKERS", Width: 7, Right: true},
			{Title: "CPUS", Width: 5, Right: true, Drop: 2},
			{Title: "MEMORY", Width: 7, Right: true, Drop: 4},
			{Title: "GPUS", Width: 4, Right: true, Drop: 3},
			{Title: "STATUS", Width: 12, Sort: sortStatus},
			ageCol(),
		},
		Meta: func(rc *rayv1.RayCluster) table.Meta { return objMeta(rc, clusterStatus(rc)) },
		Cells: func(rc *rayv1.RayCluster) []string {
			s := rc.Status
			return []string{
				rc.Name, rc.Namespace,
				clusterWorkers(rc),
				qty(s.DesiredCPU), qty(s.DesiredMemory), qty(s.DesiredGPU),
				clusterStatus(rc), "",
			}
		},
		Live: func(rc *rayv1.RayCluster, now time.Time, c []string) {
			c[7] = age(now, rc.CreationTimestamp.Time)
		},
	}
	return newListPage(e, ClustersView, watch.RayCluster, "RayClusters", spec, func(rc *rayv1.RayCluster) page {
		return newClusterDetail(e, rc)
	})
}

// newJobsPage lists RayJobs.
func newJobsPage(e *env) page {
	spec := table.Spec[*rayv1.RayJob]{
		Columns: []table.Column{
			nameCol(), nsCol(),
			{Title: "STATUS", Width: 9, Sort: sortStatus},
			{Title: "DEPLOYMENT", Width: 10},
			{Title: "CLUSTER", Width: 18, Grow: true, Min: 10, Drop: 1},
			{Title: "START", Width: 5, Right: true, Drop: 4},
			{Title: "END", Width: 5, Right: true, Drop: 3},
			{Title: "DURATION", Width: 8, Right: true},
			{Title: "AGE", Width: 5, Right: true, Sort: sortAge, Drop: 2},
		},
		Meta: func(j *rayv1.RayJob) table.Meta {
			m := objMeta(j, string(j.Status.JobStatus))
			m.Class = styles.ClassOf(string(j.Status.JobDeploymentStatus))
			if m.Class == styles.Neutral || m.Class == styles.OK {
				if c := styles.ClassOf(string(j.Status.JobStatus)); c != styles.Neutral {
					m.Class = c
				}
			}
			return m
		},
		Cells: func(j *rayv1.RayJob) []string {
			return []string{
				j.Name, j.Namespace, orNone(string(j.Status.JobStatus)), orNone(string(j.Status.JobDeploymentStatus)),
				orNone(j.Status.RayClusterName), "", "", "", "",
			}
		},
		Live: func(j *rayv1.RayJob, now time.Time, c []string) {
			c[5] = metaAge(now, j.Status.StartTime)
			c[6] = metaAge(now, j.Status.EndTime)
			c[7] = jobDuration(now, j)
			c[8] = age(now, j.CreationTimestamp.Time)
		},
	}
	return newListPage(e, JobsView, watch.RayJob, "RayJobs", spec, func(j *rayv1.RayJob) page {
		return newJobDetail(e, j)
	})
}

// newServicesPage lists RayServices.
func newServicesPage(e *env) page {
	spec := table.Spec[*rayv1.RayService]{
		Columns: []table.Column{
			nameCol(), nsCol(),
			{Title: "STATUS", Width: 11, Sort: sortStatus},
			{Title: "ACTIVE", Width: 18, Grow: true, Min: 10},
			{Title: "PENDING", Width: 18, Grow: true, Min: 8, Drop: 2},
			{Title: "APPS", Width: 4, Right: true},
			{Title: "ENDPOINTS", Width: 9, Right: true, Drop: 1},
			ageCol(),
		},
		Meta: func(s *rayv1.RayService) table.Meta { return objMeta(s, serviceStatus(s)) },
		Cells: func(s *rayv1.RayService) []string {
			r, t := appsReady(s.Status.ActiveServiceStatus)
			return []string{
				s.Name, s.Namespace, serviceStatus(s),
				orNone(s.Status.ActiveServiceStatus.RayClusterName),
				orNone(s.Status.PendingServiceStatus.RayClusterName),
				fmt.Sprintf("%d/%d", r, t), fmt.Sprint(s.Status.NumServeEndpoints), "",
			}
		},
		Live: func(s *rayv1.RayService, now time.Time, c []string) {
			c[7] = age(now, s.CreationTimestamp.Time)
		},
	}
	return newListPage(e, ServicesView, watch.RayService, "RayServices", spec, func(s *rayv1.RayService) page {
		return newServiceDetail(e, s)
	})
}

// newPodsPage lists Ray pods.
func newPodsPage(e *env) page {
	spec := table.Spec[*corev1.Pod]{
		Columns: []table.Column{
			{Title: "NAME", Width: 30, Grow: true, Min: 22, Sort: sortName},
			nsCol(),
			{Title: "CLUSTER", Width: 14, Grow: true, Min: 8, Drop: 1},
			{Title: "GROUP", Width: 10, Drop: 3},
			{Title: "TYPE", Width: 6, Drop: 4},
			{Title: "PHASE", Width: 11, Sort: sortStatus},
			{Title: "READY", Width: 5, Right: true},
			{Title: "RESTARTS", Width: 8, Right: true, Drop: 2},
			{Title: "IP", Width: 15, Drop: 6},
			{Title: "NODE", Width: 14, Grow: true, Min: 8, Drop: 7},
			ageCol(),
		},
		Meta: func(p *corev1.Pod) table.Meta { return objMeta(p, podStatus(p)) },
		Cells: func(p *corev1.Pod) []string {
			ready, restarts := podReady(p)
			return []string{
				p.Name, p.Namespace, orNone(p.Labels[rayv1.RayClusterLabelKey]), orNone(p.Labels[rayv1.RayNodeGroupLabelKey]),
				orNone(p.Labels[rayv1.RayNodeTypeLabelKey]), podStatus(p), ready, fmt.Sprint(restarts),
				orNone(p.Status.PodIP), orNone(p.Spec.NodeName), "",
			}
		},
		Live: func(p *corev1.Pod, now time.Time, c []string) {
			c[10] = age(now, p.CreationTimestamp.Time)
		},
	}
	return newListPage(e, PodsView, watch.Pod, "Pods", spec, func(p *corev1.Pod) page {
		o, ok := e.store.Find(watch.RayCluster, p.Namespace, p.Labels[rayv1.RayClusterLabelKey])
		if !ok {
			return nil
		}
		return newClusterDetail(e, o.(*rayv1.RayCluster))
	})
}
