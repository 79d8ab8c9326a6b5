package tuitest

import (
	"fmt"
	"sort"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/why"
)

// Recorder is a diagnoser that records its inputs and calls per object,
// and names the causes the test sets per object name; its methods fill
// tui/diagnose's Diagnosers.
type Recorder struct {
	Calls    map[string]int // "RayCluster ns/name" → calls
	Clusters map[string]why.ClusterInput
	Jobs     map[string]why.JobInput
	Svcs     map[string]why.ServiceInput
	Causes   map[string][]why.Cause // by object name
}

// NewRecorder is a Recorder that has recorded nothing.
func NewRecorder() *Recorder {
	return &Recorder{Calls: map[string]int{}, Clusters: map[string]why.ClusterInput{}, Jobs: map[string]why.JobInput{},
		Svcs: map[string]why.ServiceInput{}, Causes: map[string][]why.Cause{}}
}

// Cluster is a cluster diagnoser (tui/diagnose's Diagnosers.Cluster): it
// records its input and names the causes set for the cluster.
func (r *Recorder) Cluster(in why.ClusterInput) []why.Cause {
	r.Calls["RayCluster "+in.Cluster.Namespace+"/"+in.Cluster.Name]++
	r.Clusters[in.Cluster.Name] = in
	return r.Causes[in.Cluster.Name]
}

// Job is a job diagnoser, recording as Cluster does.
func (r *Recorder) Job(in why.JobInput) []why.Cause {
	r.Calls["RayJob "+in.Job.Namespace+"/"+in.Job.Name]++
	r.Jobs[in.Job.Name] = in
	return r.Causes[in.Job.Name]
}

// Service is a service diagnoser, recording as Cluster does.
func (r *Recorder) Service(in why.ServiceInput) []why.Cause {
	r.Calls["RayService "+in.Service.Namespace+"/"+in.Service.Name]++
	r.Svcs[in.Service.Name] = in
	return r.Causes[in.Service.Name]
}

// Column is the WHY column's text of causes, by rayapi/why.Column's
// contract.
func (r *Recorder) Column(cs []why.Cause) string {
	switch len(cs) {
	case 0:
		return ""
	case 1:
		return cs[0].Summary
	}
	return fmt.Sprintf("%s (+%d)", cs[0].Summary, len(cs)-1)
}

// Called returns the objects diagnosed since the last reset, sorted.
func (r *Recorder) Called() []string {
	var out []string
	for k := range r.Calls {
		out = append(out, k)
	}
	sort.Strings(out)
	clear(r.Calls)
	return out
}

// MustFind is the object of kind k named ns/name in st; it fails the test
// without it.
func MustFind(t *testing.T, st *watch.Store, k watch.Kind, ns, name string) client.Object {
	t.Helper()
	o, ok := st.Find(k, ns, name)
	if !ok {
		t.Fatalf("%s %s/%s not in the fixture", k, ns, name)
	}
	return o
}
