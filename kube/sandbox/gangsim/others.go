package gangsim

// The three batch schedulers besides Volcano, simulated as little as
// raydar's and KubeRay's pods need to start, each binding only pods whose
// schedulerName is its own (rayapi/v1 BatchSchedulerSchedulerNames):
//
//   - scheduler-plugins (schedulerName scheduler-plugins-scheduler): each
//     scheduling.x-k8s.io/v1alpha1 PodGroup's pods (label
//     scheduling.x-k8s.io/pod-group) are bound only when minMember of them
//     exist and all fit at once, and its status.phase set Running or
//     Pending, as for Volcano; a pod without the label is bound alone.
//   - yunikorn: the pods of one application (label applicationId) that
//     carry task groups (annotation yunikorn.apache.org/task-groups, JSON)
//     are held until every task group's minMember × minResource fits at
//     once (YuniKorn's placeholders reserve them), then bound as they come,
//     the RayJob submitter after the cluster; the reservation itself is not
//     kept (the nodes stay free for others until the real pods come). A pod
//     without task groups is bound alone.
//   - kai-scheduler: pods without a kai.scheduler/queue label stay Pending
//     (KAI schedules no pod without a queue); the others of one Ray
//     cluster (label ray.io/cluster) are bound all together or not at all
//     (KAI's PodGrouper makes one PodGroup per cluster). A gpu-fraction
//     annotation asks for a node with GPUs (nvidia.com/gpu allocatable);
//     the fractions are not counted.
//
// None of them has queues, priorities, preemption or KAI's and YuniKorn's
// own objects (KAI's Queue kind is not served: the kai samples' Queues are
// not created).

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The pods' labels and annotations the simulated schedulers read
// (KubeRay v1.6.2 yunikorn_scheduler.go:19-27, kai_scheduler.go:27,
// scheduler_plugins.go:118).
const (
	yunikornAppLabel        = "applicationId"
	yunikornTaskGroups      = "yunikorn.apache.org/task-groups"
	kaiGPUFraction          = "gpu-fraction"
	rayClusterLabel         = "ray.io/cluster"
	schedulerPluginsPGLabel = spv1alpha1.PodGroupLabel
)

// passOther is one pass of scheduler-plugins, yunikorn or kai-scheduler.
func (s *Sim) passOther(ctx context.Context, c client.Client, kc kubernetes.Interface, logf func(string, ...any)) error {
	name := rayv1.BatchSchedulerSchedulerNames[s.scheduler]
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	var mine []*corev1.Pod
	for i := range pods.Items {
		if p := &pods.Items[i]; p.Spec.SchedulerName == name && live(p) {
			mine = append(mine, p)
		}
	}
	var groups spv1alpha1.PodGroupList
	if s.scheduler == "scheduler-plugins" {
		if err := c.List(ctx, &groups); err != nil {
			return fmt.Errorf("listing PodGroups: %w", err)
		}
	}
	if len(mine) == 0 && len(groups.Items) == 0 {
		return nil
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	free := freeCapacity(nodes.Items, pods.Items)
	names := make([]string, 0, len(free))
	for n := range free {
		names = append(names, n)
	}
	sort.Strings(names)
	gpuNodes := map[string]bool{}
	for _, n := range nodes.Items {
		if q, ok := n.Status.Allocatable["nvidia.com/gpu"]; ok && !q.IsZero() {
			gpuNodes[n.Name] = true
		}
	}
	// place binds pods together, or none when they do not all fit.
	place := func(ps []*corev1.Pod, why string) int {
		placed, ok := fitWhere(ps, free, names, func(p *corev1.Pod, node string) bool {
			return p.Annotations[kaiGPUFraction] == "" || gpuNodes[node]
		})
		if !ok {
			return 0
		}
		n := 0
		for _, p := range ps {
			if s.bind(ctx, kc, p, placed[p.Name], logf) {
				n++
			}
		}
		if why != "" {
			logf("gangsim: %s: bound %d pods together", why, n)
		}
		return n
	}
	switch s.scheduler {
	case "scheduler-plugins":
		s.schedulerPlugins(ctx, c, groups.Items, mine, place, logf)
	case "yunikorn":
		s.yunikorn(mine, free, names, place)
	case "kai-scheduler":
		byCluster := map[string][]*corev1.Pod{}
		for _, p := range unboundOf(mine) {
			if p.Labels[rayv1.KaiQueueLabelKey] == "" {
				continue // KAI leaves it Pending
			}
			k := p.Namespace + "/" + p.Labels[rayClusterLabel]
			if p.Labels[rayClusterLabel] == "" {
				k = p.Namespace + "/pod/" + p.Name
			}
			byCluster[k] = append(byCluster[k], p)
		}
		for _, k := range sortedKeys(byCluster) {
			place(byCluster[k], "kai-scheduler, cluster "+k)
		}
	}
	return nil
}

// schedulerPlugins binds each PodGroup's pods as Volcano's are bound, and
// the pods of no PodGroup alone.
func (s *Sim) schedulerPlugins(ctx context.Context, c client.Client, groups []spv1alpha1.PodGroup, mine []*corev1.Pod,
	place func([]*corev1.Pod, string) int, logf func(string, ...any)) {
	inGroup := map[string]bool{}
	for i := range groups {
		pg := &groups[i]
		var bound, unbound []*corev1.Pod
		for _, p := range mine {
			if p.Namespace != pg.Namespace || p.Labels[schedulerPluginsPGLabel] != pg.Name {
				continue
			}
			inGroup[p.Namespace+"/"+p.Name] = true
			if p.Spec.NodeName != "" {
				bound = append(bound, p)
			} else {
				unbound = append(unbound, p)
			}
		}
		n := len(bound)
		if len(unbound) > 0 && int32(len(bound)+len(unbound)) >= pg.Spec.MinMember {
			n += place(unbound, fmt.Sprintf("PodGroup %s/%s (minMember %d)", pg.Namespace, pg.Name, pg.Spec.MinMember))
		}
		phase := spv1alpha1.PodGroupPending
		if int32(n) >= pg.Spec.MinMember && n > 0 {
			phase = spv1alpha1.PodGroupRunning
		}
		if pg.Status.Phase != phase || pg.Status.Running != int32(n) {
			pg.Status.Phase, pg.Status.Running = phase, int32(n)
			if err := c.Status().Update(ctx, pg); err != nil && ctx.Err() == nil {
				logf("gangsim: PodGroup %s/%s status: %v", pg.Namespace, pg.Name, err)
			}
		}
	}
	for _, p := range unboundOf(mine) {
		if !inGroup[p.Namespace+"/"+p.Name] && p.Labels[schedulerPluginsPGLabel] == "" {
			place([]*corev1.Pod{p}, "")
		}
	}
}

// taskGroup is the part of a YuniKorn task group the simulation reads.
type taskGroup struct {
	Name        string                       `json:"name"`
	MinMember   int32                        `json:"minMember"`
	MinResource map[string]resource.Quantity `json:"minResource"`
}

// yunikorn admits each application's gang once its task groups fit, then
// binds its pods one by one; pods without task groups alone.
func (s *Sim) yunikorn(mine []*corev1.Pod, free map[string]corev1.ResourceList, names []string, place func([]*corev1.Pod, string) int) {
	for _, p := range unboundOf(mine) {
		tg := p.Annotations[yunikornTaskGroups]
		if tg == "" {
			place([]*corev1.Pod{p}, "")
			continue
		}
		app := p.Namespace + "/" + p.Labels[yunikornAppLabel]
		if p.Labels[yunikornAppLabel] == "" {
			app = p.Namespace + "/pod/" + p.Name
		}
		if !s.admitted[app] {
			var groups []taskGroup
			if err := json.Unmarshal([]byte(tg), &groups); err != nil {
				continue // YuniKorn rejects it: the pod stays Pending
			}
			var placeholders []*corev1.Pod
			for _, g := range groups {
				req := corev1.ResourceList{}
				for k, q := range g.MinResource {
					req[corev1.ResourceName(k)] = q
				}
				for i := range g.MinMember {
					placeholders = append(placeholders, &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name: fmt.Sprintf("%s-%d", g.Name, i), Resources: corev1.ResourceRequirements{Requests: req}}}}})
					placeholders[len(placeholders)-1].Name = fmt.Sprintf("tg-%s-%d", g.Name, i)
				}
			}
			trial := map[string]corev1.ResourceList{}
			for n, r := range free {
				trial[n] = r.DeepCopy()
			}
			if _, ok := fitWhere(placeholders, trial, names, nil); !ok {
				continue
			}
			s.admitted[app] = true
		}
		place([]*corev1.Pod{p}, "")
	}
}

// live: not deleted, not finished.
func live(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// unboundOf are the pods bound to no node, by namespace and name.
func unboundOf(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
