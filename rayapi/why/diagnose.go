package why

import (
	"sort"
)

// Cluster returns why a RayCluster is not progressing, most decisive cause
// first; nil when it is healthy.
func Cluster(in ClusterInput) []Cause {
	if in.Cluster == nil {
		return nil
	}
	return ranked(clusterCauses(&in))
}

// Job returns why a RayJob is not progressing (including its cluster's own
// causes, stated once); nil when it is healthy or finished as asked.
func Job(in JobInput) []Cause {
	if in.Job == nil {
		return nil
	}
	return ranked(jobCauses(&in))
}

// Service returns why a RayService is not progressing (including its
// clusters' causes, stated once); nil when it is healthy.
func Service(in ServiceInput) []Cause {
	if in.Service == nil {
		return nil
	}
	return ranked(serviceCauses(&in))
}

// ranked sorts causes by Rank, stably (the order found breaks ties); nil
// for none.
func ranked(cs []Cause) []Cause {
	if len(cs) == 0 {
		return nil
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Rank < cs[j].Rank })
	return cs
}
