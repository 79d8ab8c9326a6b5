package watch

import (
	"hash/maphash"
	"maps"
	"slices"
	"sync"
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/podview"
)

// compactPod makes a decoded pod share what it has in common with the
// pods before it, in place, changing no value a reader sees: the strings
// that repeat from pod to pod (namespace, label and annotation keys and
// values, owner, node, image, container names, condition types and
// reasons) become one shared copy each (unique.Make: a copy no pod
// references any more is freed), label and annotation maps, tolerations,
// owner references and SlimPod's trimmed containers equal to a shared one
// become that one, and pointers to true or false point to one true and one
// false. Its one caller is SlimPod (the containers it gets are trimmed).
//
// The protobuf decoder allocates every string and map of every pod anew:
// at 10,000 KubeRay pods they were ~1.6 KB of a trimmed pod's ~5.1 KB
// (docs/benchmarks.md, issue 27). Cached objects are never modified (the
// Store's rule, and client-go's), so sharing is safe; a reader that
// wants to change one copies it first, as it must anyway.
func compactPod(p *podview.Pod) {
	m := &p.ObjectMeta
	m.Namespace = in(m.Namespace)
	m.GenerateName = in(m.GenerateName)
	m.Labels = shared.labels(m.Labels)
	m.Annotations = shared.labels(m.Annotations)
	m.OwnerReferences = shared.owners(m.OwnerReferences)
	for i, f := range m.Finalizers {
		m.Finalizers[i] = in(f)
	}

	s := &p.Spec
	s.NodeName, s.SchedulerName, s.ServiceAccountName = in(s.NodeName), in(s.SchedulerName), in(s.ServiceAccountName)
	s.NodeSelector = shared.labels(s.NodeSelector)
	s.Tolerations = shared.tolerations(s.Tolerations)
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			cs[i].Name, cs[i].Image = in(cs[i].Name), in(cs[i].Image)
		}
	}
	s.InitContainers = shared.containers(s.InitContainers)
	s.Containers = shared.containers(s.Containers)

	st := &p.Status
	st.Phase, st.Reason, st.Message = in(st.Phase), in(st.Reason), in(st.Message)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type, c.Status, c.Reason, c.Message = in(c.Type), in(c.Status), in(c.Reason), in(c.Message)
	}
	for _, cs := range [][]podview.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range cs {
			compactContainerStatus(&cs[i])
		}
	}
}

func compactContainerStatus(c *podview.ContainerStatus) {
	c.Name, c.Image = in(c.Name), in(c.Image)
	c.Started = sharedBool(c.Started)
	for _, s := range []*corev1.ContainerState{&c.State, &c.LastTerminationState} {
		if w := s.Waiting; w != nil {
			w.Reason, w.Message = in(w.Reason), in(w.Message)
		}
		if t := s.Terminated; t != nil {
			t.Reason, t.Message = in(t.Reason), in(t.Message)
		}
	}
}

// in is s's shared copy.
func in[S ~string](s S) S {
	if s == "" {
		return s
	}
	return S(unique.Make(string(s)).Value())
}

var (
	sharedTrue, sharedFalse = true, false
)

// sharedBool is a pointer to the shared true or false (nil stays nil).
func sharedBool(b *bool) *bool {
	switch {
	case b == nil:
		return nil
	case *b:
		return &sharedTrue
	default:
		return &sharedFalse
	}
}

// shared holds the label maps, tolerations, owner references and trimmed
// containers pods share, by a hash of their content (a collision shares
// nothing). Each table is cleared when it grows past maxShared entries, so
// it never holds much that no pod uses any more.
var shared = &sharer{maps: map[uint64]map[string]string{}, tols: map[uint64][]corev1.Toleration{}, refs: map[uint64][]metav1.OwnerReference{},
	ctrs: map[uint64][]corev1.Container{}, tctrs: map[uint64][]corev1.Container{}, res: map[uint64]corev1.ResourceList{}}

const maxShared = 1 << 15

type sharer struct {
	mu   sync.Mutex
	seed maphash.Seed
	maps map[uint64]map[string]string
	tols map[uint64][]corev1.Toleration
	refs map[uint64][]metav1.OwnerReference
	ctrs map[uint64][]corev1.Container
	// tctrs and res are CompactRay's: pod templates' whole containers,
	// and resource lists.
	tctrs map[uint64][]corev1.Container
	res   map[uint64]corev1.ResourceList
}

func init() { shared.seed = maphash.MakeSeed() }

// labels is m, or a shared map with the same entries.
func (s *sharer) labels(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	var sum uint64
	for k, v := range m { // order-independent: a sum of the entries' hashes
		var h maphash.Hash
		h.SetSeed(s.seed)
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v)
		sum += h.Sum64()
	}
	return shareBy(s, s.maps, sum, m, maps.Equal, internMap)
}

// shareBy returns the value table holds under sum when it equals v, else
// keep(v) (v with its strings shared), which table then holds under sum
// unless another value does (a hash collision shares nothing). The table is
// cleared when it reaches maxShared entries.
func shareBy[T any](s *sharer, table map[uint64]T, sum uint64, v T, equal func(a, b T) bool, keep func(T) T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := table[sum]
	if ok && equal(c, v) {
		return c
	}
	v = keep(v)
	if !ok {
		if len(table) >= maxShared {
			clear(table)
		}
		table[sum] = v
	}
	return v
}

func internMap(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[in(k)] = in(v)
	}
	return c
}

// tolerations is ts, or a shared slice equal to it.
func (s *sharer) tolerations(ts []corev1.Toleration) []corev1.Toleration {
	if len(ts) == 0 {
		return ts
	}
	var h maphash.Hash
	h.SetSeed(s.seed)
	for _, t := range ts {
		h.WriteString(t.Key)
		h.WriteByte(0)
		h.WriteString(string(t.Operator))
		h.WriteByte(0)
		h.WriteString(t.Value)
		h.WriteByte(0)
		h.WriteString(string(t.Effect))
		h.WriteByte(0)
		if t.TolerationSeconds != nil {
			maphash.WriteComparable(&h, *t.TolerationSeconds)
		}
		h.WriteByte(1)
	}
	sum := h.Sum64()
	return shareBy(s, s.tols, sum, ts, tolerationsEqual, func(ts []corev1.Toleration) []corev1.Toleration {
		for i := range ts {
			t := &ts[i]
			t.Key, t.Operator, t.Value, t.Effect = in(t.Key), in(t.Operator), in(t.Value), in(t.Effect)
		}
		return ts
	})
}

func tolerationsEqual(a, b []corev1.Toleration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].MatchToleration(&b[i]) || a[i].Value != b[i].Value ||
			(a[i].TolerationSeconds == nil) != (b[i].TolerationSeconds == nil) ||
			(a[i].TolerationSeconds != nil && *a[i].TolerationSeconds != *b[i].TolerationSeconds) {
			return false
		}
	}
	return true
}

// owners is rs, or a shared slice equal to it.
func (s *sharer) owners(rs []metav1.OwnerReference) []metav1.OwnerReference {
	if len(rs) == 0 {
		return rs
	}
	var h maphash.Hash
	h.SetSeed(s.seed)
	for _, r := range rs {
		h.WriteString(r.APIVersion)
		h.WriteByte(0)
		h.WriteString(r.Kind)
		h.WriteByte(0)
		h.WriteString(r.Name)
		h.WriteByte(0)
		h.WriteString(string(r.UID))
		h.WriteByte(boolByte(r.Controller))
		h.WriteByte(boolByte(r.BlockOwnerDeletion))
	}
	sum := h.Sum64()
	return shareBy(s, s.refs, sum, rs, ownersEqual, func(rs []metav1.OwnerReference) []metav1.OwnerReference {
		for i := range rs {
			r := &rs[i]
			r.APIVersion, r.Kind, r.Name, r.UID = in(r.APIVersion), in(r.Kind), in(r.Name), in(r.UID)
			r.Controller, r.BlockOwnerDeletion = sharedBool(r.Controller), sharedBool(r.BlockOwnerDeletion)
		}
		return rs
	})
}

// containers is cs, or a shared slice equal to it, when its containers are
// as SlimPod leaves a ready pod's: a name, an image and a restart policy
// (the workers of a group then share one slice). A container with
// resources (a pod that is not ready) keeps its own.
func (s *sharer) containers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return cs
	}
	var h maphash.Hash
	h.SetSeed(s.seed)
	for i := range cs {
		c := &cs[i]
		if len(c.Resources.Limits)+len(c.Resources.Requests)+len(c.Resources.Claims) > 0 {
			return cs
		}
		h.WriteString(c.Name)
		h.WriteByte(0)
		h.WriteString(c.Image)
		h.WriteByte(0)
		if c.RestartPolicy != nil {
			h.WriteString(string(*c.RestartPolicy))
		}
		h.WriteByte(1)
		for _, p := range c.Ports { // the "metrics" port (slimContainers)
			h.WriteString(p.Name)
			h.WriteByte(byte(p.ContainerPort))
			h.WriteByte(byte(p.ContainerPort >> 8))
		}
		h.WriteByte(2)
	}
	sum := h.Sum64()
	return shareBy(s, s.ctrs, sum, cs, slimContainersEqual, func(cs []corev1.Container) []corev1.Container { return cs })
}

// slimContainersEqual compares what SlimPod keeps of a ready pod's
// containers.
func slimContainersEqual(a, b []corev1.Container) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Name != y.Name || x.Image != y.Image || (x.RestartPolicy == nil) != (y.RestartPolicy == nil) ||
			(x.RestartPolicy != nil && *x.RestartPolicy != *y.RestartPolicy) || !slices.Equal(x.Ports, y.Ports) {
			return false
		}
	}
	return true
}

// boolByte: 0 nil, 1 false, 2 true.
func boolByte(b *bool) byte {
	switch {
	case b == nil:
		return 0
	case *b:
		return 2
	default:
		return 1
	}
}

func ownersEqual(a, b []metav1.OwnerReference) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.APIVersion != y.APIVersion || x.Kind != y.Kind || x.Name != y.Name || x.UID != y.UID ||
			boolByte(x.Controller) != boolByte(y.Controller) || boolByte(x.BlockOwnerDeletion) != boolByte(y.BlockOwnerDeletion) {
			return false
		}
	}
	return true
}
