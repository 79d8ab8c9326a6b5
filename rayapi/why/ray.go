package why

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// offer is what one pod of a group gives Ray: its logical resources, as
// raydar's ray start flags derive them (rayStartParams num-cpus, num-gpus,
// memory, resources; the group's resources field; else the Ray
// container's limits and requests).
type offer struct {
	group   string
	head    bool
	res     map[string]float64
	pods    int
	maxPods int32
	stuck   string // why the group cannot grow, "" if it may
}

// Ray's resource names.
const (
	rayCPU    = "CPU"
	rayGPU    = "GPU"
	rayMemory = "memory"
	rayObject = "object_store_memory"
)

// groupOffers lists the head's and every worker group's per-pod offer.
func groupOffers(rc *rayv1.RayCluster, pods []*podview.Pod) []offer {
	spec := &rc.Spec
	counts := make([]int, 1+len(spec.WorkerGroupSpecs)) // head, then the groups in order
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		head, group := podGroup(p)
		if head {
			counts[0]++
			continue
		}
		for i := range spec.WorkerGroupSpecs {
			if spec.WorkerGroupSpecs[i].GroupName == group {
				counts[i+1]++
				break
			}
		}
	}
	auto := spec.IsAutoscalingEnabled()
	out := make([]offer, 0, 1+len(spec.WorkerGroupSpecs))
	h := &spec.HeadGroupSpec
	out = append(out, offer{group: rayv1.RayNodeHeadGroupLabelValue, head: true, pods: counts[0], maxPods: 1,
		res: PodResources(h.RayStartParams, h.Resources, templateSpec(&h.Template.Spec)), stuck: "the head is one pod"})
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		o := offer{group: g.GroupName, pods: counts[i+1], maxPods: g.MaxPods(),
			res: PodResources(g.RayStartParams, g.Resources, templateSpec(&g.Template.Spec))}
		switch {
		case g.IsSuspended():
			o.stuck = "it is suspended"
		case int32(o.pods) >= o.maxPods:
			o.stuck = "it is at maxReplicas " + itoa(int64(g.Max()))
		case !auto && int32(o.pods) >= g.DesiredPods():
			o.stuck = "autoscaling is off (replicas " + itoa(int64(g.DesiredReplicas())) + ")"
		}
		out = append(out, o)
	}
	return out
}

// PodResources is the Ray resources one pod of a group is started with:
// rayStartParams num-cpus, num-gpus, memory, object-store-memory and
// resources (JSON), overridden by the group's resources field, else the
// Ray container's CPU limit (request when no limit), memory limit, "*gpu",
// TPU and Neuron core limits. What ray start leaves to Ray's defaults
// (object store, memory from the machine) is absent; kube/raydash
// GroupResources fills those in.
func PodResources(params, groupRes map[string]string, spec *podview.Spec) dashboard.Resources {
	out := dashboard.Resources{}
	num := func(key, ray string) {
		if v, ok := params[key]; ok {
			if f, err := strconv.ParseFloat(strings.Trim(v, "'\" "), 64); err == nil {
				out[ray] = f
			}
		}
	}
	num("num-cpus", rayCPU)
	num("num-gpus", rayGPU)
	num("memory", rayMemory)
	num("object-store-memory", rayObject)
	if v, ok := params["resources"]; ok {
		custom := map[string]float64{}
		if json.Unmarshal([]byte(strings.Trim(v, "'\"` ")), &custom) == nil {
			for k, f := range custom {
				out[k] = f
			}
		}
	}
	for name, v := range groupRes {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			continue
		}
		switch lower := strings.ToLower(name); {
		case lower == "cpu":
			out[rayCPU] = float64(q.Value())
		case lower == "memory":
			out[rayMemory] = float64(q.Value())
		case strings.HasSuffix(lower, "gpu"):
			out[rayGPU] = float64(q.Value())
		default:
			out[name] = q.AsApproximateFloat64()
		}
	}
	if spec == nil || len(spec.Containers) <= rayv1.RayContainerIndex {
		return out
	}
	res := &spec.Containers[rayv1.RayContainerIndex].Resources
	if _, ok := out[rayCPU]; !ok {
		if q, ok := res.Limits[corev1.ResourceCPU]; ok && !q.IsZero() {
			out[rayCPU] = float64(q.Value())
		} else if q, ok := res.Requests[corev1.ResourceCPU]; ok && !q.IsZero() {
			out[rayCPU] = float64(q.Value())
		}
	}
	if _, ok := out[rayMemory]; !ok {
		if q, ok := res.Limits[corev1.ResourceMemory]; ok && !q.IsZero() {
			out[rayMemory] = float64(q.Value())
		}
	}
	for name, q := range res.Limits {
		n := string(name)
		switch {
		case strings.HasSuffix(n, "gpu"):
			if _, ok := out[rayGPU]; !ok && !q.IsZero() {
				out[rayGPU] = float64(q.Value())
			}
		case n == "google.com/tpu":
			if _, ok := out["TPU"]; !ok {
				out["TPU"] = q.AsApproximateFloat64()
			}
		case n == "aws.amazon.com/neuroncore":
			if _, ok := out["neuron_cores"]; !ok {
				out["neuron_cores"] = q.AsApproximateFloat64()
			}
		}
	}
	return out
}

// has is how much of a Ray resource a pod offers; ok false when it is not
// known (CPU and memory default to the machine's, which raydar cannot
// see), so the shape is taken to fit.
func (o *offer) has(name string) (float64, bool) {
	if v, ok := o.res[name]; ok {
		return v, true
	}
	switch name {
	case rayCPU, rayMemory, rayObject:
		return 0, false
	}
	return 0, true
}

func (o *offer) fits(shape dashboard.Resources) bool {
	for k, need := range shape {
		if v, known := o.has(k); known && v < need {
			return false
		}
	}
	return true
}

// rayCauses states Ray's demand that no pod will serve: infeasible demand
// (no group offers the shape), or demand whose groups cannot grow. Demand
// a Pending (unschedulable) group would serve is added to that group's
// Unschedulable cause instead: one cause, stated once.
func rayCauses(in *ClusterInput, s *podScan, out []Cause) []Cause {
	cp := in.Capacity
	if cp == nil || len(cp.Infeasible)+len(cp.Pending) == 0 {
		return out
	}
	offers := groupOffers(in.Cluster, in.Pods)
	demand := func(d dashboard.Demand, infeasible bool) {
		want := demandWords(d)
		var fitting []*offer
		for i := range offers {
			if !offers[i].head && offers[i].fits(d.Shape) {
				fitting = append(fitting, &offers[i])
			}
		}
		tag := ""
		if infeasible {
			tag = " (infeasible)"
		}
		for _, f := range fitting {
			for _, is := range s.issues {
				if is.code == CodeUnschedulable && is.key == groupKey(f.head, f.group) {
					is.evidence = append(is.evidence, "Ray: "+want+tag+", which these pods would serve")
					return
				}
			}
		}
		c := Cause{Code: CodeRayInfeasible, Subject: in.subject(), Rank: rankRayDemand, demand: shapeWords(d.Shape),
			Evidence: []string{"Ray autoscaler: " + want + tag}}
		switch {
		case len(fitting) == 0:
			c.Summary = want + "; " + shortfall(offers, d.Shape)
			c.Fix = "add or change a worker group so one pod offers " + shapeWords(d.Shape) + ", or ask for less in the tasks/actors"
		default:
			var why []string
			for _, f := range fitting {
				if f.stuck == "" {
					return // the autoscaler may still add a pod that serves it
				}
				why = append(why, "group "+f.group+": "+f.stuck)
			}
			c.Summary = want + "; " + why[0]
			c.Evidence = append(c.Evidence, why...)
			c.Fix = "raise the group's maxReplicas (or replicas), or turn on autoscaling"
		}
		out = append(out, c)
	}
	for _, d := range cp.Infeasible {
		demand(d, true)
	}
	for _, d := range cp.Pending {
		demand(d, false)
	}
	return out
}

// shortfall says which resource of a shape no worker group offers per pod:
// "no worker group offers 2 GPU per pod".
func shortfall(offers []offer, shape dashboard.Resources) string {
	k, need, best, ok := lacking(offers, shape, false)
	if !ok {
		return "no worker group offers all of it in one pod"
	}
	s := "no worker group offers " + amount(k, need) + " " + k + " per pod"
	if best > 0 {
		s += " (the most is " + amount(k, best) + ")"
	}
	return s
}

// lacking is the first resource of a shape (by name) that no pod of the
// offers (the head's only withHead) has enough of: its name, the amount
// asked and the most one pod offers. A resource a pod offers an unknown
// amount of is taken to be enough (offer.has).
func lacking(offers []offer, shape dashboard.Resources, withHead bool) (name string, need, best float64, ok bool) {
	for _, k := range sortedKeys(shape) {
		need, best, fits := shape[k], 0.0, false
		for i := range offers {
			if offers[i].head && !withHead {
				continue
			}
			v, known := offers[i].has(k)
			if !known || v >= need {
				fits = true
				break
			}
			best = max(best, v)
		}
		if !fits {
			return k, need, best, true
		}
	}
	return "", 0, 0, false
}

// demandWords: "4 tasks want {GPU: 2}".
func demandWords(d dashboard.Demand) string {
	if d.Count == 1 {
		return "1 task wants " + shapeWords(d.Shape)
	}
	return strconv.Itoa(d.Count) + " tasks want " + shapeWords(d.Shape)
}

// shapeWords: "{CPU: 1, GPU: 2}", memory in bytes as a quantity.
func shapeWords(r dashboard.Resources) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range sortedKeys(r) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + ": " + amount(k, r[k]))
	}
	b.WriteByte('}')
	return b.String()
}

func amount(name string, v float64) string {
	if name == rayMemory || name == rayObject {
		return resource.NewQuantity(int64(v), resource.BinarySI).String()
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func sortedKeys(r dashboard.Resources) []string {
	keys := make([]string, 0, len(r))
	for k, v := range r {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// templateSpec is what a group's pods will be, as the record of a pod.
func templateSpec(s *corev1.PodSpec) *podview.Spec {
	v := podview.SpecOf(s)
	return &v
}
