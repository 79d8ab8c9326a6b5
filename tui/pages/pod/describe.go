package pod

import (
	"fmt"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
)

// describeFields is a Ray pod's part of its describe page.
func describeFields(d *format.Describer, x *podview.Pod) {
	ready, restarts := format.PodReady(x)
	d.Field("Status", format.PodStatus(x))
	d.Field("Ready", ready)
	d.Field("Restarts", fmt.Sprint(restarts))
	d.Field("Node", format.OrNone(x.Spec.NodeName))
	d.Field("IP", format.OrNone(x.Status.PodIP))
	d.Field("Cluster", format.OrNone(x.Labels[rayv1.RayClusterLabelKey]))
	d.Field("Group", format.OrNone(x.Labels[rayv1.RayNodeGroupLabelKey]))
	d.Field("Node type", format.OrNone(x.Labels[rayv1.RayNodeTypeLabelKey]))
	d.Label("Containers")
	cs := map[string]podview.ContainerStatus{}
	for _, c := range x.Status.ContainerStatuses {
		cs[c.Name] = c
	}
	for _, c := range x.Spec.Containers {
		s := cs[c.Name]
		state := format.None
		switch {
		case s.State.Running != nil:
			state = "running"
		case s.State.Terminated != nil:
			state = "terminated (" + s.State.Terminated.Reason + ")"
		case s.State.Waiting != nil && s.State.Waiting.Reason != "":
			state = "waiting (" + s.State.Waiting.Reason + ")"
		}
		d.Sub(fmt.Sprintf("%s  image %s, ready %t, restarts %d, %s", c.Name, format.OrNone(c.Image), s.Ready, s.RestartCount, state))
	}
	d.Label("Conditions (PodScheduled, Ready: the YAML below has all)")
	if len(x.Status.Conditions) == 0 {
		d.Sub(format.None)
	}
	for _, c := range x.Status.Conditions {
		d.Sub(fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
}
