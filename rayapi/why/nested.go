package why

import (
	"slices"

	"github.com/raydar/raydar/rayapi/status"
)

// nested are a RayJob's or RayService's cluster's causes, stated as the
// cluster's: the Subject names the cluster first. Causes the parent
// already states for itself are dropped (statedBy).
func nested(parent []Cause, in *ClusterInput, out []Cause) []Cause {
	if in == nil || in.Cluster == nil {
		return out
	}
	sub := in.subject()
	for _, c := range clusterCauses(in) {
		if statedBy(parent, c) {
			continue
		}
		if c.Subject != sub {
			c.Subject = sub + ", " + c.Subject
		}
		out = append(out, c)
	}
	return out
}

// statedBy: the parent's causes already say what the cluster's cause c
// says: who reconciles and suspended, by the same code; Ray's demand no
// pod serves (RayInfeasible), by a JobDemand or ServeDemand for the same
// shape.
func statedBy(parent []Cause, c Cause) bool {
	switch c.Code {
	case CodeNotReconciled, CodeOtherOperator, CodeSuspended:
		return hasCode(parent, c.Code)
	case CodeRayInfeasible:
		return slices.ContainsFunc(parent, func(p Cause) bool {
			return (p.Code == CodeJobDemand || p.Code == CodeServeDemand) && p.demand == c.demand
		})
	}
	return false
}

func hasCode(cs []Cause, code string) bool {
	for _, c := range cs {
		if c.Code == code {
			return true
		}
	}
	return false
}

// clusterReady: the cluster's STATUS word is ready.
func clusterReady(in *ClusterInput) bool {
	return in != nil && in.Cluster != nil && status.Cluster(in.Cluster) == "ready"
}
