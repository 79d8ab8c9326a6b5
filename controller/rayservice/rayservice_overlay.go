package rayservice

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// rsOverlayTTL bounds how long a write is laid over a cache that does not
// show it (a watch that lags this long has bigger problems).
const rsOverlayTTL = 2 * time.Minute

// rsOverlay lays the RayService reconciler's own writes over the shared
// cache until the cache shows them: a cluster it created is present, one it
// deleted is terminating, an object it changed has the change. Without it
// a pass that follows a write too closely would decide from the state
// before the write (a second cluster, a second label patch).
type rsOverlay struct {
	mu sync.Mutex
	m  map[string]*rsOverlayEntry
}

type rsOverlayEntry struct {
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

func newRSOverlay() *rsOverlay { return &rsOverlay{m: map[string]*rsOverlayEntry{}} }

func rsKey(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

func (ov *rsOverlay) get(key string, now time.Time) *rsOverlayEntry {
	e, ok := ov.m[key]
	if ok && now.Sub(e.at) > rsOverlayTTL {
		delete(ov.m, key)
		return nil
	}
	return e
}

func (ov *rsOverlay) put(key string, e *rsOverlayEntry) {
	ov.mu.Lock()
	defer ov.mu.Unlock()
	ov.m[key] = e
	if len(ov.m) > 256 {
		// Entries nobody looks at again (objects gone) expire here.
		for k, old := range ov.m {
			if e.at.Sub(old.at) > rsOverlayTTL {
				delete(ov.m, k)
			}
		}
	}
}

func (ov *rsOverlay) expectCluster(c *rayv1.RayCluster, now time.Time) {
	ov.put(rsKey("rc", c.Namespace, c.Name), &rsOverlayEntry{cluster: c.DeepCopy(), created: true, at: now})
}

func (ov *rsOverlay) forgetCluster(c *rayv1.RayCluster) {
	ov.mu.Lock()
	delete(ov.m, rsKey("rc", c.Namespace, c.Name))
	ov.mu.Unlock()
}

// createdCluster records the created object (with its UID).
func (ov *rsOverlay) createdCluster(c *rayv1.RayCluster, now time.Time) {
	ov.expectCluster(c, now)
}

func (ov *rsOverlay) updatedCluster(prevRV string, c *rayv1.RayCluster, now time.Time) {
	ov.put(rsKey("rc", c.Namespace, c.Name), &rsOverlayEntry{cluster: c.DeepCopy(), staleRV: prevRV, uid: c.UID, at: now})
}

func (ov *rsOverlay) deletedCluster(c *rayv1.RayCluster, now time.Time) {
	ov.put(rsKey("rc", c.Namespace, c.Name), &rsOverlayEntry{cluster: c.DeepCopy(), deleted: true, uid: c.UID, at: now})
}

func (ov *rsOverlay) updatedPod(prevRV string, p *corev1.Pod, now time.Time) {
	ov.put(rsKey("pod", p.Namespace, p.Name), &rsOverlayEntry{pod: p.DeepCopy(), staleRV: prevRV, uid: p.UID, at: now})
}

func (ov *rsOverlay) wroteService(s *corev1.Service, prevRV string, now time.Time) {
	ov.put(rsKey("svc", s.Namespace, s.Name), &rsOverlayEntry{service: s.DeepCopy(), created: prevRV == "", staleRV: prevRV, uid: s.UID, at: now})
}

func (ov *rsOverlay) deletedService(s *corev1.Service, now time.Time) {
	ov.put(rsKey("svc", s.Namespace, s.Name), &rsOverlayEntry{service: s.DeepCopy(), deleted: true, uid: s.UID, at: now})
}

// clusters lays the overlay over the cached clusters of rs.
func (ov *rsOverlay) clusters(rs *rayv1.RayService, cached []*rayv1.RayCluster, now time.Time) []*rayv1.RayCluster {
	ov.mu.Lock()
	defer ov.mu.Unlock()
	seen := map[string]bool{}
	out := make([]*rayv1.RayCluster, 0, len(cached)+1)
	for _, c := range cached {
		seen[c.Name] = true
		key := rsKey("rc", c.Namespace, c.Name)
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
		if e.cluster == nil || !e.created || seen[e.cluster.Name] || e.cluster.Namespace != rs.Namespace || !rsOwnedBy(e.cluster, rs) {
			continue
		}
		if now.Sub(e.at) > rsOverlayTTL {
			delete(ov.m, key)
			continue
		}
		out = append(out, e.cluster.DeepCopy())
	}
	return out
}

// pod lays the overlay over one cached pod.
func (ov *rsOverlay) pod(p *corev1.Pod, now time.Time) *corev1.Pod {
	ov.mu.Lock()
	defer ov.mu.Unlock()
	key := rsKey("pod", p.Namespace, p.Name)
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
func (ov *rsOverlay) service(ns, name string, cached *corev1.Service, now time.Time) *corev1.Service {
	ov.mu.Lock()
	defer ov.mu.Unlock()
	key := rsKey("svc", ns, name)
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
