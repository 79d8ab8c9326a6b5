package actions

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/widgets"
)

// forwardTarget is what shift-f forwards to from a view's target: a
// cluster's head (a RayCluster row; the cluster detail on a group row), or
// a pod (a pod row, also in the cluster detail). Its title names it.
func forwardTarget(tg host.Target) (spec portforward.Spec, title string, err error) {
	obj := tg.Selected
	if obj == nil {
		obj = tg.Owner
	}
	if p, ok := podview.From(obj); ok { // the Store's record, or a pod read whole
		obj = p
	}
	switch o := obj.(type) {
	case *rayv1.RayCluster:
		return portforward.Spec{Namespace: o.Namespace, Cluster: o.Name},
			fmt.Sprintf("Port-forward to the head of RayCluster %s/%s", o.Namespace, o.Name), nil
	case *podview.Pod:
		if c := o.Labels[rayv1.RayClusterLabelKey]; c != "" && o.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode) {
			// A head pod: follow the cluster's head, as its replacement
			// gets another name.
			return portforward.Spec{Namespace: o.Namespace, Cluster: c},
				fmt.Sprintf("Port-forward to the head of RayCluster %s/%s (pod %s now)", o.Namespace, c, o.Name), nil
		}
		return portforward.Spec{Namespace: o.Namespace, Pod: o.Name},
			fmt.Sprintf("Port-forward to pod %s/%s", o.Namespace, o.Name), nil
	}
	return portforward.Spec{}, "", fmt.Errorf("select a RayCluster or a pod to port-forward to")
}

// portForward is shift-f: the dialog that starts a forward.
func (r *actionRunner) portForward(tg host.Target) tea.Cmd {
	fw := tg.Env.Sess.Forwards
	if fw == nil {
		return host.ErrMsg(fmt.Errorf("port-forwarding is not available in this session"))
	}
	spec, title, err := forwardTarget(tg)
	if err != nil {
		return host.ErrMsg(err)
	}
	return showDialog(tg, widgets.NewForwardDialog(tg.Env.St, tg.Env.KM, title, spec, fw))
}
