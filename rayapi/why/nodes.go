package why

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/raydar/raydar/rayapi/podview"
)

// podRequests is what the scheduler counts a pod as asking for: per
// resource, the sum over its containers (and sidecars), or the most any
// init container asks when that is more (init containers run one at a
// time), plus the pod's overhead.
func podRequests(spec *podview.Spec) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := range spec.Containers {
		for name, q := range spec.Containers[i].Resources.Requests {
			sum := out[name]
			sum.Add(q)
			out[name] = sum
		}
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			// A sidecar runs beside the containers: it adds.
			for name, q := range c.Resources.Requests {
				sum := out[name]
				sum.Add(q)
				out[name] = sum
			}
		}
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			continue
		}
		for name, q := range c.Resources.Requests {
			if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
				out[name] = q.DeepCopy()
			}
		}
	}
	for name, q := range spec.Overhead {
		sum := out[name]
		sum.Add(q)
		out[name] = sum
	}
	return out
}

// maxAllocatable is the most of a resource any node offers (its
// allocatable), zero when no node has it.
func maxAllocatable(nodes []*corev1.Node, name corev1.ResourceName) resource.Quantity {
	var best resource.Quantity
	for _, n := range nodes {
		if q, ok := n.Status.Allocatable[name]; ok && q.Cmp(best) > 0 {
			best = q
		}
	}
	return best
}

// insufficient lists the resources the scheduler's message names as
// "Insufficient X".
func insufficient(msg string) []string {
	var out []string
	const key = "Insufficient "
	for {
		i := strings.Index(msg, key)
		if i < 0 {
			return out
		}
		msg = msg[i+len(key):]
		j := strings.IndexAny(msg, ",. ")
		if j < 0 {
			j = len(msg)
		}
		// "Insufficient cpu." ends the word; a resource name holds dots
		// (nvidia.com/gpu), so a "." ends it only before a space or the end.
		for j < len(msg) && msg[j] == '.' && j+1 < len(msg) && msg[j+1] != ' ' {
			k := strings.IndexAny(msg[j+1:], ",. ")
			if k < 0 {
				j = len(msg)
				break
			}
			j += 1 + k
		}
		if name := msg[:j]; name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
		msg = msg[j:]
	}
}

// schedule is what makes a pending pod unschedulable, specifically: the
// resources it asks more of than nodes offer, the node selector pairs no
// node carries, the taints it does not tolerate.
type schedule struct {
	reasons []string // "asks nvidia.com/gpu 4, the most any node offers is 0"
	fixes   []string
	// said counts the leading reasons the scheduler's message confirms.
	said int
}

// add appends a reason and its fix; one the scheduler's message confirms
// goes before those it does not.
func (s *schedule) add(said bool, reason, fix string) {
	if !said {
		s.reasons, s.fixes = append(s.reasons, reason), append(s.fixes, fix)
		return
	}
	s.reasons = slices.Insert(s.reasons, s.said, reason)
	s.fixes = slices.Insert(s.fixes, s.said, fix)
	s.said++
}

func explainSchedule(pod *podview.Pod, msg string, nodes Nodes, each bool) schedule {
	var s schedule
	verb := "asks "
	if each {
		verb = "each asks "
	}
	req := podRequests(&pod.Spec)
	short := insufficient(msg)
	names := make([]string, 0, len(req))
	for name := range req {
		names = append(names, string(name))
	}
	slices.Sort(names)
	for _, name := range names {
		q := req[corev1.ResourceName(name)]
		named := slices.Contains(short, name)
		var most resource.Quantity
		if nodes.Known {
			most = maxAllocatable(nodes.List, corev1.ResourceName(name))
		}
		if !named && !(nodes.Known && q.Cmp(most) > 0) {
			continue
		}
		r := verb + name + " " + q.String()
		if nodes.Known {
			r += ", the most any node offers is " + most.String()
			if q.Cmp(most) <= 0 {
				r += " (the rest is in use)"
			}
		}
		s.add(named, r, "add nodes with "+name+" "+q.String()+" free (or a node pool the cluster autoscaler may grow), or lower the group's request")
	}
	for _, name := range short {
		if _, ok := req[corev1.ResourceName(name)]; !ok && name != "pods" {
			s.add(true, "no node has enough "+name, "add nodes with more "+name)
		}
	}
	if !nodes.Known || len(nodes.List) == 0 {
		return s
	}
	if sel := pod.Spec.NodeSelector; len(sel) > 0 && !anyNodeMatches(nodes.List, sel) {
		keys := make([]string, 0, len(sel))
		for k := range sel {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var none []string
		for _, k := range keys {
			if !anyNodeMatches(nodes.List, map[string]string{k: sel[k]}) {
				none = append(none, k+"="+sel[k])
			}
		}
		if len(none) == 0 { // each pair matches some node, never all on one
			for _, k := range keys {
				none = append(none, k+"="+sel[k])
			}
		}
		s.add(strings.Contains(msg, "node affinity/selector"), "nodeSelector "+strings.Join(none, ",")+" matches no node",
			"fix the group's nodeSelector, or label a node "+strings.Join(none, ","))
	}
	if terms := requiredTerms(pod); len(terms) > 0 && !anyNodeMatchesTerms(nodes.List, terms) {
		s.add(strings.Contains(msg, "node affinity"), "required node affinity matches no node",
			"fix the group's required node affinity, or label a node to match it")
	}
	switch taints := untoleratedEverywhere(nodes.List, pod.Spec.Tolerations); {
	case len(taints) == 0:
	case taints[0] == "":
		s.add(strings.Contains(msg, "taint"), "every node has a taint it does not tolerate (one: "+taints[1]+")",
			"add tolerations for the nodes' taints to the group's pod template, or untaint a node")
	default:
		s.add(strings.Contains(msg, "taint"), "every node has taint "+strings.Join(taints, ", ")+", not tolerated",
			"add a toleration for "+taints[0]+" to the group's pod template, or untaint a node")
	}
	return s
}

func anyNodeMatches(nodes []*corev1.Node, sel map[string]string) bool {
	for _, n := range nodes {
		ok := true
		for k, v := range sel {
			if n.Labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// untoleratedEverywhere lists the NoSchedule/NoExecute taints ("k=v:Effect")
// that every node carries and the tolerations do not tolerate; nil when
// some node has no such taint at all; {"", one} when every node has one
// but not the same.
func untoleratedEverywhere(nodes []*corev1.Node, tols []corev1.Toleration) []string {
	var common []string
	for i, n := range nodes {
		var mine []string
		for j := range n.Spec.Taints {
			t := &n.Spec.Taints[j]
			if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
				continue
			}
			if !tolerated(tols, t) {
				mine = append(mine, taintString(t))
			}
		}
		if len(mine) == 0 {
			return nil
		}
		if i == 0 {
			common = mine
			continue
		}
		common = slices.DeleteFunc(common, func(s string) bool { return !slices.Contains(mine, s) })
		if len(common) == 0 {
			// Every node has a taint the pod does not tolerate, but not
			// the same one.
			return []string{"", mine[0]}
		}
	}
	return common
}

func taintString(t *corev1.Taint) string {
	s := t.Key
	if t.Value != "" {
		s += "=" + t.Value
	}
	return s + ":" + string(t.Effect)
}

// tolerated is the scheduler's toleration rule (Equal and Exists).
func tolerated(tols []corev1.Toleration, t *corev1.Taint) bool {
	for _, tol := range tols {
		if tol.Effect != "" && tol.Effect != t.Effect {
			continue
		}
		if tol.Key != "" && tol.Key != t.Key {
			continue
		}
		switch tol.Operator {
		case corev1.TolerationOpExists:
			return true
		case "", corev1.TolerationOpEqual:
			if tol.Key != "" && tol.Value == t.Value {
				return true
			}
		}
	}
	return false
}

// requiredTerms are the pod's requiredDuringSchedulingIgnoredDuringExecution
// node selector terms.
func requiredTerms(p *podview.Pod) []corev1.NodeSelectorTerm {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
}

// anyNodeMatchesTerms: some node matches some term (terms are ORed, a
// term's label expressions ANDed). Field expressions (metadata.name) and
// Gt/Lt are taken to match: raydar does not guess about them.
func anyNodeMatchesTerms(nodes []*corev1.Node, terms []corev1.NodeSelectorTerm) bool {
	for _, n := range nodes {
		for i := range terms {
			if termMatches(n.Labels, &terms[i]) {
				return true
			}
		}
	}
	return false
}

func termMatches(labels map[string]string, t *corev1.NodeSelectorTerm) bool {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return false // an empty term matches nothing
	}
	for _, e := range t.MatchExpressions {
		v, has := labels[e.Key]
		switch e.Operator {
		case corev1.NodeSelectorOpIn:
			if !has || !slices.Contains(e.Values, v) {
				return false
			}
		case corev1.NodeSelectorOpNotIn:
			if has && slices.Contains(e.Values, v) {
				return false
			}
		case corev1.NodeSelectorOpExists:
			if !has {
				return false
			}
		case corev1.NodeSelectorOpDoesNotExist:
			if has {
				return false
			}
		}
	}
	return true
}
