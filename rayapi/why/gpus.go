package why

import (
	"fmt"
	"strings"

	"github.com/raydar/raydar/rayapi/status"
)

// gpusIdleCause: GPUs the cluster's pods hold that Ray's gauges read below
// the idle threshold (for IdleFor, or now with one reading). Nothing when
// the gauges were not read or no GPU is idle.
func gpusIdleCause(in *ClusterInput, subject string, cs []Cause) []Cause {
	g := in.GPUs
	if g == nil || len(g.GPUs) == 0 {
		return cs
	}
	var idle []GPUReading
	for _, r := range g.GPUs {
		if r.UtilPct < g.BelowPct && (g.IdleFor == 0 || r.Below >= g.IdleFor) {
			idle = append(idle, r)
		}
	}
	if len(idle) == 0 {
		return cs
	}
	when := "now (one reading)"
	if g.IdleFor > 0 {
		when = "for " + status.Age(in.Now, in.Now.Add(-g.IdleFor)) + " or more"
	}
	summary := fmt.Sprintf("%d of %d GPUs held by the cluster's pods idle: below %.0f%% %s", len(idle), len(g.GPUs), g.BelowPct, when)
	var ev []string
	for _, r := range idle {
		e := fmt.Sprintf("pod %s GPU %d: %.0f%%", r.Pod, r.Index, r.UtilPct)
		if r.Below > 0 {
			e += " for " + status.Age(in.Now, in.Now.Add(-r.Below))
		}
		ev = append(ev, e)
	}
	fix := "give them work, or free them: scale the group down (s) or suspend the cluster (z) from the TUI's :gpus"
	if !in.Cluster.Spec.IsAutoscalingEnabled() {
		fix += "; with enableInTreeAutoscaling Ray's autoscaler removes idle workers itself"
	}
	return append(cs, Cause{Code: CodeGPUsIdle, Subject: subject, Rank: rankGPUsIdle, Summary: summary,
		Evidence: []string{strings.Join(ev, "; ")}, Fix: fix})
}
