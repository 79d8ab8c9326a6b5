package format

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/table"
)

// ObjMeta is what the table sorts, filters and colours an object's row by:
// its namespace, name, age, labels and status word (classed by
// styles.ClassOf).
func ObjMeta(o client.Object, status string) table.Meta {
	return table.Meta{
		Namespace: o.GetNamespace(),
		Name:      o.GetName(),
		Created:   o.GetCreationTimestamp().Time,
		Status:    status,
		Class:     styles.ClassOf(status),
		Labels:    o.GetLabels(),
	}
}

// AgeColumn is the AGE column's header.
func AgeColumn() table.Column {
	return table.Column{Title: "AGE", Width: 5, Right: true, Sort: table.ByAge}
}

// JobMeta is what a table of RayJobs sorts, filters and colours by: the
// deployment status's colour, or the job status's while the deployment is
// neutral or fine (the RayJobs list, a RayCronJob's RayJobs): one home for both pages.
func JobMeta(j *rayv1.RayJob) table.Meta {
	m := ObjMeta(j, string(j.Status.JobStatus))
	m.Class = styles.ClassOf(string(j.Status.JobDeploymentStatus))
	if m.Class == styles.Neutral || m.Class == styles.OK {
		if c := styles.ClassOf(string(j.Status.JobStatus)); c != styles.Neutral {
			m.Class = c
		}
	}
	return m
}
