package cluster

import (
	"fmt"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/format"
)

// describeFields is the RayCluster's part of its describe page.
func describeFields(d *format.Describer, x *rayv1.RayCluster) {
	s := x.Status
	d.Field("State", format.ClusterStatus(x))
	d.Field("Ray version", format.OrNone(x.Spec.RayVersion))
	d.Field("Suspended", fmt.Sprint(x.Spec.IsSuspended()))
	d.Field("Autoscaling", onOff(x.Spec.IsAutoscalingEnabled()))
	d.Field("Workers", fmt.Sprintf("%d/%d available, %d ready (min %d, max %d)", s.AvailableWorkerReplicas,
		s.DesiredWorkerReplicas, s.ReadyWorkerReplicas, s.MinWorkerReplicas, s.MaxWorkerReplicas))
	d.Field("Resources", fmt.Sprintf("%s CPU, %s memory, %s GPU", format.Qty(s.DesiredCPU), format.Qty(s.DesiredMemory), format.Qty(s.DesiredGPU)))
	d.Security(why.SecurityOf(&x.Spec))
	d.Field("Head", fmt.Sprintf("pod IP %s, service %s (%s)", format.OrNone(s.Head.PodIP), format.OrNone(s.Head.ServiceName), format.OrNone(s.Head.ServiceIP)))
	d.Label("Worker groups")
	if len(x.Spec.WorkerGroupSpecs) == 0 {
		d.Sub(format.None)
	}
	for i := range x.Spec.WorkerGroupSpecs {
		g := &x.Spec.WorkerGroupSpecs[i]
		line := fmt.Sprintf("%-12s min %s / replicas %s / max %s, %d host(s) per replica", g.GroupName,
			format.I32(g.MinReplicas), format.I32(g.Replicas), format.I32(g.MaxReplicas), g.Hosts())
		if g.IsSuspended() {
			line += ", suspended"
		}
		if n := len(g.ScaleStrategy.WorkersToDelete); n > 0 {
			line += fmt.Sprintf(", %d to delete", n)
		}
		d.Sub(line)
	}
	d.Conds(s.Conditions)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
