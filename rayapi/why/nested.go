package why

import "github.com/raydar/raydar/rayapi/status"

// nested are a RayJob's or RayService's cluster's causes, stated as the
// cluster's: the Subject names the cluster first. Causes the parent
// already states for itself (who reconciles, suspended) are dropped.
func nested(parent []Cause, in *ClusterInput, out []Cause) []Cause {
	if in == nil || in.Cluster == nil {
		return out
	}
	sub := in.subject()
	for _, c := range clusterCauses(in) {
		if hasCode(parent, c.Code) && (c.Code == CodeNotReconciled || c.Code == CodeOtherOperator || c.Code == CodeSuspended) {
			continue
		}
		if c.Code == CodeRayInfeasible && statesDemand(parent, c.demand) {
			continue // the job's own demand, stated as the job's
		}
		if c.Subject != sub {
			c.Subject = sub + ", " + c.Subject
		}
		out = append(out, c)
	}
	return out
}

// statesDemand: one of the causes is a JobDemand for the shape.
func statesDemand(cs []Cause, demand string) bool {
	for _, c := range cs {
		if c.Code == CodeJobDemand && c.demand == demand {
			return true
		}
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
