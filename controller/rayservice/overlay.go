package rayservice

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// ownWritesTTL bounds how long a write is laid over a cache that does not
// show it (a watch that lags this long has bigger problems).
const ownWritesTTL = 2 * time.Minute

// ownWrites lays the RayService reconciler's own writes over the shared
// cache until the cache shows them: a cluster it created is present, one it
// deleted is terminating, an object it changed has the change. Without it
// a pass that follows a write too closely would decide from the state
// before the write (a second cluster, a second label patch).
type ownWrites struct {
	mu sync.Mutex
	m  map[string]*ownWrite
}

type ownWrite struct {
	cluster *rayv1.RayCluster
	pod     *corev1.Pod
	service *corev1.Service
	// created: the object may be missing from the cache; deleted: it may
	// still be there; otherwise the cache may still show staleRV.
	created, deleted bool
	uid              types.UID
	staleRV          string
	at               time.Time
}

func newOwnWrites() *ownWrites { return &ownWrites{m: map[string]*ownWrite{}} }

func writeKey(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

func (ov *ownWrites) get(key string, now time.Time) *ownWrite {
	e, ok := ov.m[key]
	if ok && now.Sub(e.at) > ownWritesTTL {
		delete(ov.m, key)
		return nil
	}
	return e
}

func (ov *ownWrites) put(key string, e *ownWrite) {
	ov.mu.Lock()
	defer ov.mu.Unlock()
	ov.m[key] = e
	if len(ov.m) > 256 {
		// Entries nobody looks at again (objects gone) expire here.
		for k, old := range ov.m {
			if e.at.Sub(old.at) > ownWritesTTL {
				delete(ov.m, k)
			}
		}
	}
}

func (ov *ownWrites) expectCluster(c *rayv1.RayCluster, now time.Time) {
	ov.put(writeKey("rc", c.Namespace, c.Name), &ownWrite{cluster: c.DeepCopy(), created: true, at: now})
}

func (ov *ownWrites) forgetCluster(c *rayv1.RayCluster) {
	ov.mu.Lock()
	delete(ov.m, writeKey("rc", c.Namespace, c.Name))
	ov.mu.Unlock()
}

// createdCluster records the created object (with its UID).
func (ov *ownWrites) createdCluster(c *rayv1.RayCluster, now time.Time) {
	ov.expectCluster(c, now)
}

func (ov *ownWrites) updatedCluster(prevRV string, c *rayv1.RayCluster, now time.Time) {
	ov.put(writeKey("rc", c.Namespace, c.Name), &ownWrite{cluster: c.DeepCopy(), staleRV: prevRV, uid: c.UID, at: now})
}

func (ov *ownWrites) deletedCluster(c *rayv1.RayCluster, now time.Time) {
	ov.put(writeKey("rc", c.Namespace, c.Name), &ownWrite{cluster: c.DeepCopy(), deleted: true, uid: c.UID, at: now})
}

func (ov *ownWrites) updatedPod(prevRV string, p *corev1.Pod, now time.Time) {
	ov.put(writeKey("pod", p.Namespace, p.Name), &ownWrite{pod: p.DeepCopy(), staleRV: prevRV, uid: p.UID, at: now})
}

func (ov *ownWrites) wroteService(s *corev1.Service, prevRV string, now time.Time) {
	ov.put(writeKey("svc", s.Namespace, s.Name), &ownWrite{service: s.DeepCopy(), created: prevRV == "", staleRV: prevRV, uid: s.UID, at: now})
}

func (ov *ownWrites) deletedService(s *corev1.Service, now time.Time) {
	ov.put(writeKey("svc", s.Namespace, s.Name), &ownWrite{service: s.DeepCopy(), deleted: true, uid: s.UID, at: now})
}

// clusters lays the overlay over the cached clusters of rs.
func (ov *ownWrites) clusters(rs *rayv1.RayService, cached []*rayv1.RayCluster, now time.Time) []*rayv1.RayCluster {
	ov.mu.Lock()
	defer ov.mu.Unlock()
	seen := map[string]bool{}
	out := make([]*rayv1.RayCluster, 0, len(cached)+1)
	for _, c := range cached {
		seen[c.Name] = true
		key := writeKey("rc", c.Namespace, c.Name)
		e := ov.get(key, now)
		switch {
		case e == nil:
			out = append(out, c)
		case e.created:
			delete(ov.m, key) // the cache shows it now
			out = append(out, c)
		case e.deleted:
			if c.UID == e.uid && c.DeletionTimestamp == nil {
				d := c.DeepCopy()
				t := metav1.NewTime(now)
				d.DeletionTimestamp = &t
				out = append(out, d)
			} else {
				delete(ov.m, key)
				out = append(out, c)
			}
		case c.UID == e.uid && c.ResourceVersion == e.staleRV:
			out = append(out, e.cluster.DeepCopy())
		default:
			delete(ov.m, key)
			out = append(out, c)
		}
	}
	for key, e := range ov.m {
		if e.cluster == nil || !e.created || seen[e.cluster.Name] || e.cluster.Namespace != rs.Namespace || !ownedBy(e.cluster, rs) {
			continue
		}
		if now.Sub(e.at) > ownWritesTTL {
			delete(ov.m, key)
			continue
		}
		out = append(out, e.cluster.DeepCopy())
	}
	return out
}

// pod lays the overlay over one cached pod.
func (ov *ownWrites) pod(p *corev1.Pod, now time.Time) *corev1.Pod {
	ov.mu.Lock()
	defer ov.mu.Unlock()
	key := writeKey("pod", p.Namespace, p.Name)
	e := ov.get(key, now)
	if e == nil {
		return p
	}
	if p.UID == e.uid && p.ResourceVersion == e.staleRV {
		// Only the label we patched is laid over: status changes of the
		// cached pod are newer than nothing we know.
		q := p.DeepCopy()
		if q.Labels == nil {
			q.Labels = map[string]string{}
		}
		q.Labels[rayv1.RayClusterServingServiceLabelKey] = e.pod.Labels[rayv1.RayClusterServingServiceLabelKey]
		return q
	}
	delete(ov.m, key)
	return p
}

// service lays the overlay over one cached Service (nil: absent).
func (ov *ownWrites) service(ns, name string, cached *corev1.Service, now time.Time) *corev1.Service {
	ov.mu.Lock()
	defer ov.mu.Unlock()
	key := writeKey("svc", ns, name)
	e := ov.get(key, now)
	switch {
	case e == nil:
		return cached
	case e.deleted:
		if cached != nil && cached.UID == e.uid {
			return nil
		}
	case e.created:
		if cached == nil {
			return e.service.DeepCopy()
		}
	case cached != nil && cached.UID == e.uid && cached.ResourceVersion == e.staleRV:
		return e.service.DeepCopy()
	}
	delete(ov.m, key)
	return cached
}
