package watch

import (
	"encoding/binary"
	"hash/maphash"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// CompactRay is the observe-only TUI cache's transform for every kind but
// pods (those are SlimPod's): it strips managedFields, and makes the
// cluster spec of a RayCluster, a RayJob, a RayService or a RayCronJob
// share with the ones before it what is equal, in place, changing no value
// a reader sees:
//
//   - resource lists (a container's requests and limits) with the same
//     quantities, written the same way, become one shared map;
//   - pod templates' containers (init and app) equal to a shared slice
//     become that slice (reflect.DeepEqual, after their resource lists are
//     shared);
//   - label, annotation, node selector and rayStartParams maps, and
//     tolerations, as compactPod shares a pod's; the strings that repeat
//     (namespace, group names, images, container names) one copy each.
//
// The JSON decoder allocates every map of every object anew: a RayCluster
// of 1 head and 1 worker group, small pods, kept 6.8 KB decoded, 2.8 KB of
// it the four resource lists (a map of two Quantities is ~700 bytes).
// Clusters made from one template (a chart, a RayJob's spec) share them.
// Cached objects are never modified (the Store's rule, and client-go's), so
// sharing is safe; a reader that wants to change one copies it first.
func CompactRay(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
		if m.GetNamespace() != "" {
			m.SetNamespace(in(m.GetNamespace()))
		}
	}
	switch o := obj.(type) {
	case *rayv1.RayCluster:
		compactClusterSpec(&o.Spec)
	case *rayv1.RayJob:
		if o.Spec.RayClusterSpec != nil {
			compactClusterSpec(o.Spec.RayClusterSpec)
		}
	case *rayv1.RayService:
		compactClusterSpec(&o.Spec.RayClusterSpec)
	case *rayv1.RayCronJob:
		if o.Spec.JobTemplate.RayClusterSpec != nil {
			compactClusterSpec(o.Spec.JobTemplate.RayClusterSpec)
		}
	}
	return obj, nil
}

func compactClusterSpec(s *rayv1.RayClusterSpec) {
	h := &s.HeadGroupSpec
	h.RayStartParams = shared.labels(h.RayStartParams)
	h.Labels = shared.labels(h.Labels)
	h.Resources = shared.labels(h.Resources)
	compactTemplate(&h.Template)
	for i := range s.WorkerGroupSpecs {
		g := &s.WorkerGroupSpecs[i]
		g.GroupName = in(g.GroupName)
		g.RayStartParams = shared.labels(g.RayStartParams)
		g.Labels = shared.labels(g.Labels)
		g.Resources = shared.labels(g.Resources)
		compactTemplate(&g.Template)
	}
}

func compactTemplate(t *corev1.PodTemplateSpec) {
	t.Labels = shared.labels(t.Labels)
	t.Annotations = shared.labels(t.Annotations)
	ps := &t.Spec
	ps.NodeSelector = shared.labels(ps.NodeSelector)
	ps.Tolerations = shared.tolerations(ps.Tolerations)
	ps.ServiceAccountName, ps.SchedulerName = in(ps.ServiceAccountName), in(ps.SchedulerName)
	ps.InitContainers = shared.templateContainers(ps.InitContainers)
	ps.Containers = shared.templateContainers(ps.Containers)
}

// templateContainers is cs, with its resource lists and strings shared, or
// a shared slice equal to it.
func (s *sharer) templateContainers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return cs
	}
	var h maphash.Hash
	h.SetSeed(s.seed)
	for i := range cs {
		c := &cs[i]
		c.Name, c.Image = in(c.Name), in(c.Image)
		c.Resources.Limits = s.resources(c.Resources.Limits)
		c.Resources.Requests = s.resources(c.Resources.Requests)
		// What tells containers apart cheaply; DeepEqual decides.
		h.WriteString(c.Name)
		h.WriteByte(0)
		h.WriteString(c.Image)
		h.WriteByte(0)
		for _, n := range [...]int{len(c.Command), len(c.Args), len(c.Env), len(c.EnvFrom), len(c.Ports), len(c.VolumeMounts), len(c.Resources.Limits), len(c.Resources.Requests)} {
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], uint32(n))
			h.Write(b[:])
		}
		for _, e := range c.Env {
			h.WriteString(e.Name)
			h.WriteByte(0)
			h.WriteString(e.Value)
			h.WriteByte(0)
		}
		for _, a := range c.Args {
			h.WriteString(a)
			h.WriteByte(0)
		}
	}
	return shareBy(s, s.tctrs, h.Sum64(), cs, containersDeepEqual, func(cs []corev1.Container) []corev1.Container { return cs })
}

func containersDeepEqual(a, b []corev1.Container) bool { return reflect.DeepEqual(a, b) }

// resources is l, or a shared list with the same quantities written the
// same way ("1Gi" and "1073741824" are equal in value but not shared: a
// reader shows what the user wrote).
func (s *sharer) resources(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	var sum uint64
	for k, q := range l {
		str := q.String()
		l[k] = q // with its string form kept (a Quantity caches it), for resourcesEqual
		var h maphash.Hash
		h.SetSeed(s.seed)
		h.WriteString(string(k))
		h.WriteByte(0)
		h.WriteString(str)
		h.WriteByte(0)
		h.WriteString(string(q.Format))
		sum += h.Sum64()
	}
	return shareBy(s, s.res, sum, l, resourcesEqual, func(l corev1.ResourceList) corev1.ResourceList {
		c := make(corev1.ResourceList, len(l))
		for k, q := range l {
			c[in(k)] = q
		}
		return c
	})
}

func resourcesEqual(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || x.String() != y.String() || x.Format != y.Format || x.Cmp(y) != 0 {
			return false
		}
	}
	return true
}
