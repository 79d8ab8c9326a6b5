package kit_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func pod(name string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid, ResourceVersion: "1"}}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestExpectationsOverlay(t *testing.T) {
	now := fixture.T0
	e := kit.NewExpectations(0, func() time.Time { return now })
	const owner = types.UID("rc-1")

	created := pod("new", "")
	e.ExpectCreate(owner, created)
	cached := []*corev1.Pod{pod("old", "uid-old")}
	e.ExpectDelete(owner, cached[0])

	got := kit.Overlay(e, owner, cached)
	if len(got) != 2 || got[0].DeletionTimestamp == nil || !got[0].DeletionTimestamp.Time.Equal(now) || got[1].Name != "new" {
		t.Fatalf("overlay %v", names(got))
	}
	if cached[0].DeletionTimestamp != nil {
		t.Fatal("overlay mutated the cached pod")
	}
	if !e.Pending(owner) {
		t.Error("writes not pending")
	}
	// A create is of its kind only: a Service overlay adds no pod.
	if svc := kit.OverlayOne(e, owner, "ns", "new", (*corev1.Service)(nil)); svc != nil {
		t.Errorf("a pod's create laid over a Service read: %v", svc)
	}
	// The informer sees both writes: the overlay adds nothing.
	e.ObservedCreate(owner, created)
	e.ObservedDelete(owner, "uid-old")
	if got := kit.Overlay(e, owner, cached); len(got) != 1 || got[0].DeletionTimestamp != nil {
		t.Fatalf("after observation %v", names(got))
	}
	if e.Pending(owner) {
		t.Error("observed writes still pending")
	}
	// A create never seen expires after the TTL.
	e.ExpectCreate(owner, created)
	now = now.Add(kit.DefaultExpectationTTL + time.Second)
	if got := kit.Overlay(e, owner, []*corev1.Pod(nil)); len(got) != 0 {
		t.Fatalf("expired overlay %v", names(got))
	}
	if e.Pending(owner) {
		t.Error("expired expectation still pending")
	}
	// A failed create or delete is forgotten at once.
	e.ExpectCreate(owner, created)
	e.CreateFailed(owner, created)
	e.ExpectDelete(owner, cached[0])
	e.DeleteFailed(owner, cached[0])
	if got := kit.Overlay(e, owner, cached); len(got) != 1 || got[0].DeletionTimestamp != nil {
		t.Fatalf("failed writes laid over %v", names(got))
	}
	// A deletion of an object without a UID has nothing to key on.
	e.ExpectDelete(owner, pod("nouid", ""))
	if e.Pending(owner) {
		t.Error("deletion without UID recorded")
	}
	// Uncertainty is taken once.
	e.MarkUncertain(owner)
	if !e.TakeUncertain(owner) || e.TakeUncertain(owner) {
		t.Error("TakeUncertain")
	}
	// A re-created owner of the same name has a new UID: no leftovers.
	e.ExpectCreate(owner, created)
	if got := kit.Overlay(e, types.UID("other"), []*corev1.Pod(nil)); len(got) != 0 {
		t.Error("leak across owners")
	}
	e.Forget(owner)
	if e.Pending(owner) {
		t.Error("Forget kept the owner's writes")
	}
}

func TestExpectationsCreatedThenDeleted(t *testing.T) {
	e := kit.NewExpectations(0, func() time.Time { return fixture.T0 })
	const owner = types.UID("rc-1")
	p := pod("p", "")
	e.ExpectCreate(owner, p)
	answered := pod("p", "uid-p")
	e.Created(owner, answered)
	e.ExpectDelete(owner, answered)
	got := kit.Overlay(e, owner, []*corev1.Pod(nil))
	if len(got) != 1 || got[0].UID != "uid-p" || got[0].DeletionTimestamp == nil {
		t.Fatalf("created then deleted, unseen: %+v", got)
	}
}

func TestExpectationsOverlayOne(t *testing.T) {
	now := fixture.T0
	e := kit.NewExpectations(time.Minute, func() time.Time { return now })
	const owner = types.UID("rs-1")
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}}
	e.ExpectCreate(owner, svc)
	if got := kit.OverlayOne(e, owner, "ns", "s", (*corev1.Service)(nil)); got == nil || got.Name != "s" {
		t.Fatalf("created Service not laid over: %v", got)
	}
	if got := kit.OverlayOne(e, owner, "ns", "other", (*corev1.Service)(nil)); got != nil {
		t.Fatalf("another name laid over: %v", got)
	}
	// The cache shows it: the expectation ends.
	cached := svc.DeepCopy()
	cached.UID, cached.ResourceVersion = "uid-s", "5"
	if got := kit.OverlayOne(e, owner, "ns", "s", cached); got != cached {
		t.Fatalf("cached Service replaced: %v", got)
	}
	if e.Pending(owner) {
		t.Error("seen create still pending")
	}
	// A TTL of a minute: after 59 s the create still counts.
	e.ExpectCreate(owner, svc)
	now = now.Add(59 * time.Second)
	if got := kit.OverlayOne(e, owner, "ns", "s", (*corev1.Service)(nil)); got == nil {
		t.Fatal("create forgotten before its TTL")
	}
	now = now.Add(2 * time.Second)
	if got := kit.OverlayOne(e, owner, "ns", "s", (*corev1.Service)(nil)); got != nil {
		t.Fatal("create kept after its TTL")
	}
}

func TestLatestReadsOwnWrites(t *testing.T) {
	now := fixture.T0
	e := kit.NewExpectations(0, func() time.Time { return now })
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "rc-1", ResourceVersion: "10"}}
	if got := kit.Latest(e, rc); got != rc {
		t.Fatal("nothing written: the cached object is returned")
	}
	// Two writes in one pass (finalizer, then status) supersede both
	// versions before them.
	w1 := rc.DeepCopy()
	w1.ResourceVersion, w1.Finalizers = "11", []string{"f"}
	e.Updated(rc.UID, "10", w1)
	w2 := w1.DeepCopy()
	w2.ResourceVersion, w2.Status.State = "12", rayv1.Ready
	e.Updated(rc.UID, "11", w2)
	for _, rv := range []string{"10", "11"} {
		stale := rc.DeepCopy()
		stale.ResourceVersion = rv
		if got := kit.Latest(e, stale); got.ResourceVersion != "12" || got.Status.State != rayv1.Ready {
			t.Fatalf("cache at %s: got version %s", rv, got.ResourceVersion)
		}
	}
	// The returned object is a copy: editing it leaves the record alone.
	stale := rc.DeepCopy()
	kit.Latest(e, stale).Status.State = "edited"
	if got := kit.Latest(e, stale); got.Status.State != rayv1.Ready {
		t.Fatal("the remembered write was modified through a returned copy")
	}
	// The cache shows a version after the writes: it is trusted, the
	// record ends.
	newer := rc.DeepCopy()
	newer.ResourceVersion = "13"
	if got := kit.Latest(e, newer); got != newer {
		t.Fatal("a newer cached version was replaced")
	}
	if got := kit.Latest(e, stale); got != stale {
		t.Fatal("the record outlived the cache catching up")
	}
	// A re-created object (same name, new UID) ignores the old record.
	e.Updated(rc.UID, "10", w2)
	other := rc.DeepCopy()
	other.UID = "rc-2"
	if got := kit.Latest(e, other); got != other {
		t.Fatal("write of another UID laid over")
	}
}

// TestForgetUnanswered: a create whose answer was lost stands for its pod
// until a live read, made after it returned, shows whether it happened.
func TestForgetUnanswered(t *testing.T) {
	e := kit.NewExpectations(0, func() time.Time { return fixture.T0 })
	const owner = types.UID("rc-1")
	lost, happened, answered := pod("lost", ""), pod("happened", ""), pod("answered", "")
	for _, p := range []*corev1.Pod{lost, happened, answered} {
		e.ExpectCreate(owner, p)
	}
	answered.UID = "uid-answered" // the server's answer came back
	e.Created(owner, answered)

	live := []*corev1.Pod{pod("happened", "uid-happened")}
	kit.ForgetUnanswered(e, owner, live)
	got := names(kit.Overlay(e, owner, live))
	want := "answered,happened"
	if strings.Join(sorted(got), ",") != want {
		t.Errorf("after a live read: %v, want %s (the lost create forgotten; an answered one kept until the cache shows it)", got, want)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
