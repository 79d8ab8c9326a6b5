package why

// Cluster returns why a RayCluster is not progressing, most decisive cause
// first; nil when it is healthy.
func Cluster(in ClusterInput) []Cause { return nil }

// Job returns why a RayJob is not progressing (including its cluster's own
// causes, stated once); nil when it is healthy or finished as asked.
func Job(in JobInput) []Cause { return nil }

// Service returns why a RayService is not progressing (including its
// clusters' causes, stated once); nil when it is healthy.
func Service(in ServiceInput) []Cause { return nil }

// Column is the WHY column's text for causes: the first cause's summary,
// with "(+N)" when there are more; "" when there are none.
func Column(cs []Cause) string { return "" }
