package headsim

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox/rayhead"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// A cluster's Ray nodes, as its simulated head reports them: one per
// Running and Ready pod of the cluster (head and workers), at the pod's IP,
// with the resources its group's settings give one pod
// (raydash.HeadResources, raydash.WorkerGroupResources). Every pod event
// of a cluster with a head re-sends the whole list (rayhead.Head.SetNodes),
// so a worker that is not Ready offers nothing, as on a real cluster.

// clusterIndex indexes Ray pods by "namespace/cluster".
const clusterIndex = "raycluster"

func newRayPodInformer(cs kubernetes.Interface, ns string) toolscache.SharedIndexInformer {
	return coreinformers.NewFilteredPodInformer(cs, ns, 0, toolscache.Indexers{
		clusterIndex: func(obj any) ([]string, error) {
			p, ok := obj.(*corev1.Pod)
			if !ok || p.Labels[rayv1.RayClusterLabelKey] == "" {
				return nil, nil
			}
			return []string{p.Namespace + "/" + p.Labels[rayv1.RayClusterLabelKey]}, nil
		},
	}, func(lo *metav1.ListOptions) { lo.LabelSelector = rayv1.RayClusterLabelKey })
}

// clusterKeyOf is the "namespace/cluster" of a Ray pod event's object.
func clusterKeyOf(obj any) (string, bool) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Labels[rayv1.RayClusterLabelKey] == "" {
		return "", false
	}
	return p.Namespace + "/" + p.Labels[rayv1.RayClusterLabelKey], true
}

// syncNodes tells the cluster's head which nodes it has now.
func (s *Sim) syncNodes(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := toolscache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	h := s.Head(ns, name)
	if h == nil {
		return 0, nil // no head: nobody to tell; startHead enqueues the cluster
	}
	rc := &rayv1.RayCluster{}
	if err := s.cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, rc); apierrors.IsNotFound(err) {
		return 0, nil // a head pod without its RayCluster: the head stays without resources (it places everything)
	} else if err != nil {
		return 0, fmt.Errorf("headsim: RayCluster %s for its Ray nodes: %w", key, err)
	}
	h.SetNodes(RayNodes(rc, s.podsWith(key, nil)))
	return 0, nil
}

// podsWith is the cluster's Ray pods ("namespace/cluster") as the pod
// informer has them, with p in place of its cached copy (or added, when
// the informer has not seen it yet; nil: none).
func (s *Sim) podsWith(key string, p *corev1.Pod) []*corev1.Pod {
	objs, _ := s.rayPods.GetIndexer().ByIndex(clusterIndex, key) // only an unknown index errs
	pods := make([]*corev1.Pod, 0, len(objs)+1)
	for _, o := range objs {
		if q := o.(*corev1.Pod); p == nil || q.UID != p.UID {
			pods = append(pods, q)
		}
	}
	if p != nil {
		pods = append(pods, p)
	}
	return pods
}

// RayNodes are the Ray nodes the cluster's pods whose Ray container runs make
// (rayRunning: a pod only not Ready, as a head whose sidecar exited, is one):
// the head first, then the workers by name.
func RayNodes(rc *rayv1.RayCluster, pods []*corev1.Pod) []rayhead.Node {
	sort.Slice(pods, func(i, j int) bool {
		hi := pods[i].Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode)
		hj := pods[j].Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode)
		if hi != hj {
			return hi
		}
		return pods[i].Name < pods[j].Name
	})
	var out []rayhead.Node
	for _, p := range pods {
		if !rayRunning(p) {
			continue
		}
		head := p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode)
		var total dashboard.Resources
		group := p.Labels[rayv1.RayNodeGroupLabelKey]
		switch {
		case head:
			total, group = raydash.HeadResources(rc), rayv1.RayNodeHeadGroupLabelValue
		default:
			var ok bool
			if total, ok = raydash.WorkerGroupResources(rc, group); !ok {
				// A pod of a group the spec no longer has: what its own
				// Ray container offers.
				total = raydash.GroupResources(nil, nil, &p.Spec)
			}
		}
		out = append(out, rayhead.Node{Name: string(p.UID), IP: p.Status.PodIP, Head: head, Group: group, Total: total})
	}
	return out
}
