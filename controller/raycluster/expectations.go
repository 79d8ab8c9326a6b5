package raycluster

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// expectationTTL bounds how long a write this process made may stay unseen
// in the cache before the expectation is dropped and the cache is trusted
// again (KubeRay uses the same 30 s).
const expectationTTL = 30 * time.Second

// expectations remember this process's own writes until the informer cache
// shows them ("read your own writes"). The reconciler lays them over what the
// cache shows before deciding, so a stale cache never makes it create a pod
// twice or delete a second pod in place of one already going.
//
// Creations are keyed by object name: names are chosen by the controller
// before the request is sent, so even a create whose response was lost is
// remembered. Deletions are keyed by pod UID. Everything is per RayCluster
// UID, so a deleted and re-created cluster of the same name starts clean.
//
// Nothing here needs to survive a restart: a new process starts from a fresh
// LIST, which includes every write the previous process completed.
type expectations struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[types.UID]*clusterExpectations
}

type clusterExpectations struct {
	creates map[string]pendingCreate    // "Kind/name" → object
	deletes map[types.UID]pendingDelete // pod UID → when
	// uncertain is set after a write whose outcome is unknown (timeout,
	// connection reset): the next observation reads pods from the API
	// server instead of the cache.
	uncertain bool
}

type pendingCreate struct {
	obj client.Object
	at  time.Time
}

type pendingDelete struct {
	name string
	at   time.Time
}

func newExpectations() *expectations {
	return &expectations{now: time.Now, m: map[types.UID]*clusterExpectations{}}
}

func (e *expectations) get(uid types.UID) *clusterExpectations {
	c := e.m[uid]
	if c == nil {
		c = &clusterExpectations{creates: map[string]pendingCreate{}, deletes: map[types.UID]pendingDelete{}}
		e.m[uid] = c
	}
	return c
}

func objKey(obj client.Object) string {
	switch obj.(type) {
	case *corev1.Pod:
		return "Pod/" + obj.GetName()
	case *corev1.Service:
		return "Service/" + obj.GetName()
	default:
		return "Other/" + obj.GetName()
	}
}

// expectCreate records a create about to be sent.
func (e *expectations) expectCreate(cluster types.UID, obj client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(cluster).creates[objKey(obj)] = pendingCreate{obj: obj, at: e.now()}
}

// created records the server's answer to a create (it carries the UID).
func (e *expectations) created(cluster types.UID, obj client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.get(cluster)
	if _, ok := c.creates[objKey(obj)]; ok {
		c.creates[objKey(obj)] = pendingCreate{obj: obj, at: e.now()}
	}
}

// createFailed forgets a create that certainly did not happen.
func (e *expectations) createFailed(cluster types.UID, obj client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.get(cluster).creates, objKey(obj))
}

// observedCreate is called by the informer for every object it adds.
func (e *expectations) observedCreate(cluster types.UID, obj client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c := e.m[cluster]; c != nil {
		delete(c.creates, objKey(obj))
	}
}

// expectDelete records a pod deletion about to be sent.
func (e *expectations) expectDelete(cluster types.UID, p *corev1.Pod) {
	if p.UID == "" {
		return // a create whose answer was lost: nothing to key on
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(cluster).deletes[p.UID] = pendingDelete{name: p.Name, at: e.now()}
}

// deleteFailed forgets a deletion that certainly did not happen.
func (e *expectations) deleteFailed(cluster types.UID, p *corev1.Pod) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.get(cluster).deletes, p.UID)
}

// observedDelete is called by the informer when a pod is seen terminating
// or gone.
func (e *expectations) observedDelete(cluster types.UID, podUID types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c := e.m[cluster]; c != nil {
		delete(c.deletes, podUID)
	}
}

// markUncertain asks for a live read at the next observation.
func (e *expectations) markUncertain(cluster types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(cluster).uncertain = true
}

// takeUncertain reports and clears the uncertain flag.
func (e *expectations) takeUncertain(cluster types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.m[cluster]
	if c == nil || !c.uncertain {
		return false
	}
	c.uncertain = false
	return true
}

// forget drops everything about a cluster (it is gone).
func (e *expectations) forget(cluster types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, cluster)
}

// pending reports whether any write to the cluster is still unseen.
func (e *expectations) pending(cluster types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.m[cluster]
	return c != nil && (len(c.creates) > 0 || len(c.deletes) > 0)
}

// overlayPods lays the cluster's unseen writes over the pods read from the
// cache: created pods the cache does not show yet are added, pods whose
// deletion it does not show yet are marked terminating. Expired
// expectations are dropped.
func (e *expectations) overlayPods(cluster types.UID, pods []*corev1.Pod) []*corev1.Pod {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.m[cluster]
	if c == nil {
		return pods
	}
	now := e.now()
	present := make(map[string]bool, len(pods))
	out := make([]*corev1.Pod, 0, len(pods)+len(c.creates))
	for _, p := range pods {
		present["Pod/"+p.Name] = true
		if d, ok := c.deletes[p.UID]; ok && p.DeletionTimestamp == nil {
			if now.Sub(d.at) > expectationTTL {
				delete(c.deletes, p.UID)
			} else {
				cp := p.DeepCopy()
				t := metav1.NewTime(d.at)
				cp.DeletionTimestamp = &t
				p = cp
			}
		}
		out = append(out, p)
	}
	for k, pc := range c.creates {
		pod, ok := pc.obj.(*corev1.Pod)
		if !ok {
			continue
		}
		if present[k] || now.Sub(pc.at) > expectationTTL {
			delete(c.creates, k)
			continue
		}
		if _, gone := c.deletes[pod.UID]; gone && pod.UID != "" {
			cp := pod.DeepCopy()
			t := metav1.NewTime(c.deletes[pod.UID].at)
			cp.DeletionTimestamp = &t
			pod = cp
		}
		out = append(out, pod)
	}
	for uid, d := range c.deletes {
		if now.Sub(d.at) > expectationTTL {
			delete(c.deletes, uid)
		}
	}
	return out
}

// overlayService returns the Service the cache shows, else one this process
// created and the cache does not show yet.
func (e *expectations) overlayService(cluster types.UID, name string, cached *corev1.Service) *corev1.Service {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.m[cluster]
	if c == nil {
		return cached
	}
	k := "Service/" + name
	pc, ok := c.creates[k]
	if cached != nil || !ok {
		delete(c.creates, k)
		return cached
	}
	if e.now().Sub(pc.at) > expectationTTL {
		delete(c.creates, k)
		return nil
	}
	return pc.obj.(*corev1.Service)
}
