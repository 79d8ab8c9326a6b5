package kit

import (
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Event is a Kubernetes Event to emit on the reconciled object.
type Event struct {
	Type    string // corev1.EventTypeNormal or Warning
	Reason  string
	Action  string
	Message string
	// Once, when set, makes the Event said once per object for this value
	// under its Reason (Emit, Events.Once): a condition a plan repeats on
	// every pass is told by one Event.
	Once string
}

// MaxEventMessage bounds an Event's message (longer ones are truncated).
const MaxEventMessage = 1000

// Events emits the reconcilers' Events, and is the one "say this once"
// scheme: a warning that repeats every pass (a refusal, a failing
// dashboard, the other-operator gate) is told by one Event, and again only
// when its message changes or after Unsay.
type Events struct {
	rec recorder.EventRecorder

	mu   sync.Mutex
	said map[types.UID]map[string]string // object UID → key → message told
}

// NewEvents emits through rec.
func NewEvents(rec recorder.EventRecorder) *Events {
	return &Events{rec: rec, said: map[types.UID]map[string]string{}}
}

// Emit emits e on obj (related: a second object the Event is about, or
// nil), its message truncated to MaxEventMessage; an e with Once set is
// emitted only the first time for that value under its Reason (Once).
func (ev *Events) Emit(obj, related runtime.Object, e Event) {
	if e.Once != "" {
		if o, ok := obj.(metav1.Object); !ok || !ev.Once(o.GetUID(), e.Reason, e.Once) {
			return
		}
	}
	ev.rec.Eventf(obj, related, e.Type, e.Reason, e.Action, "%s", Truncate(e.Message, MaxEventMessage))
}

// Once records that the message msg was told under key for the object uid
// and reports whether it is new (never told, or told with another message).
func (ev *Events) Once(uid types.UID, key, msg string) bool {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	m := ev.said[uid]
	if m == nil {
		m = map[string]string{}
		ev.said[uid] = m
	}
	if told, ok := m[key]; ok && told == msg {
		return false
	}
	m[key] = msg
	return true
}

// EmitOnce emits e on obj unless the same message was already told under
// key; it reports whether it emitted.
func (ev *Events) EmitOnce(obj client.Object, key string, e Event) bool {
	if !ev.Once(obj.GetUID(), key, e.Reason+"\x00"+e.Message) {
		return false
	}
	ev.Emit(obj, nil, e)
	return true
}

// Unsay forgets what was told under key: the condition is over, the next
// occurrence is told again.
func (ev *Events) Unsay(uid types.UID, key string) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	delete(ev.said[uid], key)
	if len(ev.said[uid]) == 0 {
		delete(ev.said, uid)
	}
}

// Forget drops everything told about an object (it is gone).
func (ev *Events) Forget(uid types.UID) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	delete(ev.said, uid)
}

func joinPhrases(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
