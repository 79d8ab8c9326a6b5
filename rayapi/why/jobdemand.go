package why

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// jobShape is the Ray resources a RayJob's entrypoint asks for: Ray gives
// entrypoint_num_cpus, entrypoint_num_gpus and entrypoint_resources to the
// job's supervisor actor, so the job does not start before one Ray node
// holds them all. nil when it asks for none.
func jobShape(spec *rayv1.RayJobSpec) dashboard.Resources {
	out := dashboard.Resources{}
	if spec.EntrypointNumCpus > 0 {
		out[rayCPU] = float64(spec.EntrypointNumCpus)
	}
	if spec.EntrypointNumGpus > 0 {
		out[rayGPU] = float64(spec.EntrypointNumGpus)
	}
	if s := strings.TrimSpace(spec.EntrypointResources); s != "" {
		custom := map[string]float64{}
		if json.Unmarshal([]byte(s), &custom) == nil {
			for k, v := range custom {
				if v > 0 {
					out[k] = v
				}
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// jobShapeFields names the spec fields a shape came from, for evidence:
// "spec.entrypointNumGpus: 2".
func jobShapeFields(spec *rayv1.RayJobSpec) []string {
	var out []string
	if spec.EntrypointNumCpus > 0 {
		out = append(out, "spec.entrypointNumCpus: "+amount(rayCPU, float64(spec.EntrypointNumCpus)))
	}
	if spec.EntrypointNumGpus > 0 {
		out = append(out, "spec.entrypointNumGpus: "+amount(rayGPU, float64(spec.EntrypointNumGpus)))
	}
	if s := strings.TrimSpace(spec.EntrypointResources); s != "" {
		out = append(out, "spec.entrypointResources: "+s)
	}
	return out
}

// jobDemand states a RayJob that has not started running whose entrypoint
// asks for what its cluster does not give: no group (head included)
// offers the shape per pod; the groups that would cannot grow and have no
// pod; or, where Ray's view is known, Ray holds the entrypoint as pending
// or infeasible demand (the groups at maxReplicas, their pods
// unschedulable, or the autoscaler still to add one). The cluster's own
// RayInfeasible cause for the same shape is then left out (nested): one
// cause, stated once, on the job.
func jobDemand(in *JobInput, out []Cause) []Cause {
	j := in.Job
	ci := in.Cluster
	if ci == nil || ci.Cluster == nil {
		return out
	}
	switch j.Status.JobStatus {
	case "", rayv1.JobStatusPending:
	default:
		return out // running or finished: the entrypoint got its resources
	}
	shape := jobShape(&j.Spec)
	if shape == nil {
		return out
	}
	c, ok := shapeDemand(ci, shape, askerWords{
		who:     "entrypoint",
		less:    "spec.entrypointNumCpus/entrypointNumGpus/entrypointResources",
		cannot:  "the job cannot start",
		startOn: "the job starts",
	})
	if !ok {
		return out
	}
	c.Code, c.Subject = CodeJobDemand, jobSubject(j)
	c.Evidence = append(jobShapeFields(&j.Spec), c.Evidence...)
	return append(out, c)
}

// askerWords name what asks for a shape in shapeDemand's cause.
type askerWords struct {
	who     string // "entrypoint", "replica of deployment llm/Model"
	less    string // the fields to ask for less in
	cannot  string // "the job cannot start"
	startOn string // "the job starts" (once a pod runs)
}

// shapeDemand decides whether one shape (a RayJob's entrypoint, a Serve
// replica) waits on its cluster: no group (head included) offers it per
// pod; or, when some do, Ray holds the shape as pending or infeasible
// demand, or none of those groups has a pod nor may get one. The cause
// has its Summary, Rank, demand, Evidence (Ray's view, the groups) and
// Fix; the caller sets Code and Subject and adds its fields' evidence.
func shapeDemand(ci *ClusterInput, shape dashboard.Resources, w askerWords) (Cause, bool) {
	want := shapeWords(shape)
	offers := groupOffers(ci.Cluster, ci.Pods)
	var fitting []*offer
	for i := range offers {
		if offers[i].fits(shape) {
			fitting = append(fitting, &offers[i])
		}
	}
	c := Cause{Rank: rankRayDemand, demand: want}
	ray := rayHolds(ci.Capacity, want)
	if ray != "" {
		c.Evidence = append(c.Evidence, "Ray autoscaler: "+ray)
	}
	if len(fitting) == 0 {
		c.Summary = w.who + " asks " + want + "; " + podShortfall(offers, shape, ci.Cluster.Name)
		for i := range offers {
			c.Evidence = append(c.Evidence, offerWords(&offers[i]))
		}
		c.Fix = "ask for less in " + w.less + ", or add a worker group whose pods offer " + want + "; " + w.cannot + " before then"
		return c, true
	}
	// Some group offers the shape: it waits only when Ray says so, or
	// when none of those groups has a pod nor may get one.
	var stuck []string
	var grows, pending *offer // the first that may grow; the last whose pods are unschedulable
	for _, f := range fitting {
		switch {
		case f.head && ray == "":
			return c, false // the head offers it: Ray's view is needed to say it waits
		case groupUnschedulable(ci.Pods, f):
			pending = f
		case f.stuck == "":
			if grows == nil {
				grows = f
			}
		case f.pods == 0 || ray != "":
			stuck = append(stuck, "group "+f.group+": "+f.stuck)
		}
	}
	switch {
	case ray == "" && (grows != nil || pending != nil || len(stuck) < len(fitting)):
		return c, false // a pod may serve it, or one does and Ray's view is unknown
	case pending != nil:
		c.Summary = w.who + " waits for " + want + ": group " + pending.group + "'s pods cannot be scheduled"
		c.Evidence = append(c.Evidence, offerWords(pending)+"; its Pending pods are unschedulable (cause below)")
		c.Fix = "fix why group " + pending.group + "'s pods stay Pending (below); " + w.startOn + " once one runs"
	case grows != nil:
		c.Summary = w.who + " waits for " + want + ": the autoscaler may add a " + grows.group + " pod (" + itoa(int64(grows.pods)) + " of max " + itoa(int64(grows.maxPods)) + ")"
		c.Evidence = append(c.Evidence, offerWords(grows)+" and may grow")
		c.Fix = "wait for the autoscaler to add a pod; if it does not, see the cluster's autoscaler causes"
	case len(stuck) > 0:
		c.Summary = w.who + " asks " + want + "; " + stuck[0]
		c.Evidence = append(c.Evidence, stuck...)
		c.Fix = "raise the group's maxReplicas (or replicas), or turn on autoscaling; " + w.cannot + " before a pod offers " + want
	default:
		return c, false
	}
	return c, true
}

// rayHolds: Ray's demand of exactly the shape (its pending or infeasible
// list), in words; "" when Ray's view is unknown or holds none. Shapes are
// compared in shapeWords, as nested matches a job's demand to its
// cluster's RayInfeasible.
func rayHolds(cp *dashboard.Capacity, want string) string {
	if cp == nil {
		return ""
	}
	same := func(a dashboard.Resources) bool { return shapeWords(a) == want }
	for _, d := range cp.Infeasible {
		if same(d.Shape) {
			return demandWords(d) + " (infeasible)"
		}
	}
	for _, d := range cp.Pending {
		if same(d.Shape) {
			return demandWords(d)
		}
	}
	return ""
}

// groupUnschedulable: a worker pod of the group is Pending and the
// scheduler says it does not fit.
func groupUnschedulable(pods []*podview.Pod, f *offer) bool {
	if f.head {
		return false
	}
	for _, p := range pods {
		head, group := podGroup(p)
		if head || group != f.group || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending {
			continue
		}
		if _, ok := unschedulable(p, nil); ok {
			return true
		}
	}
	return false
}

// podShortfall says which resource of a shape no pod of the cluster (head
// included) offers: "no pod of RayCluster rc offers 2 GPU (the most is 0)".
func podShortfall(offers []offer, shape dashboard.Resources, name string) string {
	k, need, best, ok := lacking(offers, shape, true)
	if !ok {
		return "no pod of RayCluster " + name + " offers all of it"
	}
	return "no pod of RayCluster " + name + " offers " + amount(k, need) + " " + k + " (the most is " + amount(k, best) + ")"
}

// offerWords: "group gpu offers {CPU: 4, GPU: 4} per pod".
func offerWords(o *offer) string {
	name := "group " + o.group
	if o.head {
		name = "the head"
	}
	return name + " offers " + shapeWords(o.res) + " per pod"
}
