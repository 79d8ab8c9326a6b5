package tui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// fakeReviews is a clientset whose SubjectAccessReviews are answered by
// answer (allowed, denied, or an error such as the API server refusing
// the user a review), recording what was asked.
type fakeReviews struct {
	mu     sync.Mutex
	asked  []string // "user verb resource name" per review
	ticks  int
	answer func(ra *authorizationv1.ResourceAttributes) (allowed bool, err error)
	cs     *fake.Clientset
}

func newFakeReviews(answer func(ra *authorizationv1.ResourceAttributes) (bool, error)) *fakeReviews {
	f := &fakeReviews{answer: answer, cs: fake.NewClientset()}
	f.cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		ra := sar.Spec.ResourceAttributes
		f.mu.Lock()
		f.asked = append(f.asked, sar.Spec.User+" "+ra.Verb+" "+ra.Resource+" "+ra.Name)
		f.mu.Unlock()
		allowed, err := f.answer(ra)
		if err != nil {
			return true, nil, err
		}
		sar.Status.Allowed = allowed
		return true, sar, nil
	})
	return f
}

func (f *fakeReviews) session() Session {
	return Session{Review: func(ctx context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
		return f.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	}, Role: f.tick}
}

// tick counts the App's ticks (Session.Role is read on each).
func (f *fakeReviews) tick() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ticks++
	return "leader"
}

func (f *fakeReviews) askedNow() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.asked)
}

// waitTicks waits until the App has ticked n more times.
func (f *fakeReviews) waitTicks(t *testing.T, n int) {
	t.Helper()
	waitCount(t, &f.mu, &f.ticks, n, "ticks")
}

// autoscaling turns enableInTreeAutoscaling on for the named clusters of
// the fixture, their heads with a running autoscaler sidecar (nothing else
// to say about them), running as ServiceAccount sa ("": default).
func autoscaling(st *watch.Store, sa string, clusters ...string) {
	for _, name := range clusters {
		o, ok := st.Find(watch.RayCluster, clusterNS(name), name)
		if !ok {
			panic("no cluster " + name)
		}
		o.(*rayv1.RayCluster).Spec.EnableInTreeAutoscaling = ptr.To(true)
		for _, p := range st.PodsOf(watch.ClusterRef{Namespace: clusterNS(name), Name: name}) {
			if p.Labels[rayv1.RayNodeTypeLabelKey] != "head" {
				continue
			}
			p.Spec.ServiceAccountName = sa
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: rayv1.AutoscalerContainerName})
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, podview.ContainerStatus{Name: rayv1.AutoscalerContainerName,
				Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
		}
	}
}

func clusterNS(name string) string {
	if strings.HasPrefix(name, "fruit-") {
		return "serve"
	}
	return "ml"
}

const refusedPatch = "autoscaler refused by RBAC: ServiceAccount default may not patch rayclusters.ray.io"

// TestAutoscalerRefusedByRBAC: a cluster with in-tree autoscaling whose
// head's ServiceAccount may not patch it says so in its WHY cell and on
// its page, before its sidecar ever crashes: the TUI asks the
// SubjectAccessReviews `raydar why` asks, once for the cluster on screen
// (not again on every tick), and none for the clusters without in-tree
// autoscaling.
func TestAutoscalerRefusedByRBAC(t *testing.T) {
	f := newFakeReviews(func(ra *authorizationv1.ResourceAttributes) (bool, error) {
		return ra.Resource != rayv1.ResourceRayClusters, nil
	})
	st := fixture()
	autoscaling(st, "", "notebook")
	opts := Options{Store: st, Session: f.session(), Tick: 20 * time.Millisecond}
	tm, _ := start(t, opts, 220, 30)
	screen := waitScreen(t, tm, "autoscaler refused by RBAC")
	if !strings.Contains(lineWith(screen, "notebook"), "autoscaler refused by RBAC: ServiceAccount default") {
		t.Errorf("the WHY cell of notebook does not say it:\n%s", screen)
	}
	want := []string{"system:serviceaccount:ml:default patch rayclusters notebook", "system:serviceaccount:ml:default list pods "}
	f.waitTicks(t, 5)
	if got := f.askedNow(); !slices.Equal(got, want) {
		t.Errorf("asked %q, want %q (once, for notebook only)", got, want)
	}
	typeKeys(tm, "/notebook", "<enter>", "<enter>")
	screen = waitScreen(t, tm, "SubjectAccessReview: system:serviceaccount:ml:default may not patch rayclusters.ray.io")
	if !strings.Contains(screen, refusedPatch) {
		t.Errorf("the cluster page does not say it:\n%s", screen)
	}
}

// TestAutoscalerAllowedOrUnasked: an allowed ServiceAccount, a user the
// API server refuses SubjectAccessReviews (403 on create) and an API
// server that fails the review all show nothing; an unanswered review is
// not asked again on the next ticks.
func TestAutoscalerAllowedOrUnasked(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer func(*authorizationv1.ResourceAttributes) (bool, error)
		asked  int
	}{
		{"allowed", func(*authorizationv1.ResourceAttributes) (bool, error) { return true, nil }, 2},
		{"user may not review", func(*authorizationv1.ResourceAttributes) (bool, error) {
			return false, apierrors.NewForbidden(schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, "",
				errors.New(`User "alice" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope`))
		}, 1},
		{"API server error", func(*authorizationv1.ResourceAttributes) (bool, error) {
			return false, apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
		}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeReviews(c.answer)
			st := fixture()
			autoscaling(st, "", "notebook")
			tm, _ := start(t, Options{Store: st, Session: f.session(), Tick: 20 * time.Millisecond}, 220, 30)
			waitScreen(t, tm, "notebook")
			deadline := time.Now().Add(teatestTimeout)
			for len(f.askedNow()) < c.asked && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond) // polling, with a deadline
			}
			f.waitTicks(t, 5)
			if got := f.askedNow(); len(got) != c.asked {
				t.Errorf("asked %q, want %d reviews", got, c.asked)
			}
			typeKeys(tm, "/notebook", "<enter>", "<enter>")
			screen := waitScreen(t, tm, "notebook-head-2b4c6")
			f.waitTicks(t, 3)
			screen = screenNow(tm)
			if strings.Contains(screen, "RBAC") || strings.Contains(screen, "SubjectAccessReview") {
				t.Errorf("says refused:\n%s", screen)
			}
			if got := f.askedNow(); len(got) != c.asked {
				t.Errorf("asked %q on the cluster page, want %d reviews", got, c.asked)
			}
		})
	}
}

// TestAutoscalerAccessOnScreenOnly: of the clusters with in-tree
// autoscaling, only the rows on screen are asked about.
func TestAutoscalerAccessOnScreenOnly(t *testing.T) {
	f := newFakeReviews(func(*authorizationv1.ResourceAttributes) (bool, error) { return true, nil })
	st := fixture()
	all := []string{"train-a", "notebook", "fruit-raycluster-abcde", "fruit-raycluster-fghij"}
	autoscaling(st, "", all...)
	tm, _ := start(t, Options{Store: st, Session: f.session(), Tick: 20 * time.Millisecond}, 220, 8) // two rows
	screen := waitScreen(t, tm, "NAME")
	f.waitTicks(t, 5)
	screen = screenNow(tm)
	var shown, hidden []string
	for _, name := range all {
		if strings.Contains(screen, name+" ") {
			shown = append(shown, name)
		} else {
			hidden = append(hidden, name)
		}
	}
	if len(shown) == 0 || len(hidden) == 0 {
		t.Fatalf("shown %q, hidden %q: the screen should hold some rows only:\n%s", shown, hidden, screen)
	}
	asked := map[string]bool{}
	for _, a := range f.askedNow() {
		f := strings.Fields(a)
		if len(f) == 4 {
			asked[f[3]] = true
		}
	}
	for _, name := range shown {
		if !asked[name] {
			t.Errorf("%s on screen, not asked (asked %q)", name, f.askedNow())
		}
	}
	for _, name := range hidden {
		if asked[name] {
			t.Errorf("%s not on screen, asked (%q)", name, f.askedNow())
		}
	}
}

// TestAutoscalerRefusedOnJobPage: the RayJob list asks nothing (its rows
// are not clusters); the job's page asks about its cluster, whose refused
// autoscaler its Why block states.
func TestAutoscalerRefusedOnJobPage(t *testing.T) {
	f := newFakeReviews(func(ra *authorizationv1.ResourceAttributes) (bool, error) {
		return ra.Resource != rayv1.ResourceRayClusters, nil
	})
	st := fixture()
	autoscaling(st, "", "train-a")
	tm, _ := start(t, Options{Store: st, Session: f.session(), Tick: 20 * time.Millisecond, StartView: "rayjobs"}, 220, 50)
	waitScreen(t, tm, "nightly-eval")
	f.waitTicks(t, 5)
	if got := f.askedNow(); len(got) != 0 {
		t.Fatalf("the RayJob list asked %q", got)
	}
	typeKeys(tm, "/nightly", "<enter>", "<enter>")
	screen := waitScreen(t, tm, "autoscaler refused by RBAC: ServiceAccount default may not patch rayclusters.ray.io")
	if !strings.Contains(screen, "RayJob ml/nightly-eval") {
		t.Errorf("not the job's page:\n%s", screen)
	}
}
