package tui

import (
	"strings"

	"github.com/raydar/raydar/tui/actions"
	"github.com/raydar/raydar/tui/pages/gpus"
)

// DefaultActions returns raydar's actions for every view (issue 7):
//
//	s       scale a worker group (cluster detail, on a group or pod row)
//	ctrl+d  delete the marked worker pods, or the selected one (cluster
//	        detail); delete the selected RayCluster/RayJob/RayService/
//	        RayCronJob (their lists; job, service and RayCronJob detail)
//	x       stop a RayJob (jobs list, job detail)
//	t       trigger a RayCronJob now: a RayJob from its jobTemplate, the
//	        way kubectl create job --from=cronjob/… does (RayCronJob list
//	        and detail)
//	z       suspend or resume a RayCluster/RayJob/RayService/RayCronJob
//	        (their lists and details)
//	e       edit the selected RayCluster/RayJob/RayService/RayCronJob
//	        (their lists and details) in $KUBE_EDITOR, as kubectl edit
//	        (kube/edit; tui/actions/edit.go)
//	d       describe the selected object: summary, Events, YAML
//	l       follow a pod's logs (pods list, cluster detail on a pod row)
//	s, z    scale the selected GPU's worker group, suspend its cluster (:gpus)
//
// Every mutating action is Dangerous (hidden with --readonly), opens a
// confirmation whose default button is Cancel, and applies through
// deps.Actions, which refuses by itself in read-only mode.
func DefaultActions(deps ActionDeps) map[ViewKind][]Action {
	byName := actions.ByName(deps)
	// Which view offers which is the registry's (each kind's entry).
	out := map[ViewKind][]Action{}
	add := func(v ViewKind, names string) {
		for _, n := range strings.Fields(names) {
			if act, ok := byName[n]; ok {
				out[v] = append(out[v], act)
			}
		}
	}
	reg := kinds()
	for _, k := range reg.Entries {
		add(k.List, k.ListActions)
		if k.Detail != "" {
			add(k.Detail, k.DetailActions)
		}
	}
	add(gpus.View, ActionScale+" "+ActionSuspend) // the selected GPU's group and cluster
	add(RayLogsView, ActionLogs)                  // the pod's container logs, when Ray's are out of reach
	add(RayLogView, ActionLogs)
	return out
}
