package diagnose

import (
	"context"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/inspect"
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// The autoscaler's access (why.AutoscalerAccess): whether the head pod's
// ServiceAccount of a cluster with enableInTreeAutoscaling may do what
// Ray's autoscaler does, asked as `raydar why` asks it (kube/inspect's
// AskAutoscalerAccess: two SubjectAccessReviews), for the clusters on
// screen only (PollAccess), in a tea.Cmd; the answer (AccessMsg) goes into
// the cluster's diagnosis (AutoscalerForbidden) while the head still runs
// as the ServiceAccount asked about.

// AccessEvery is how often a cluster on screen is asked again: RBAC
// changes rarely. A change of the head's ServiceAccount asks at once.
const AccessEvery = time.Minute

// AccessRefusedFor is how long nothing is asked after the API server
// refused the user a SubjectAccessReview (403 on create): the diagnosis
// goes on without the answers, as `raydar why` does.
const AccessRefusedFor = 10 * time.Minute

// accessInFlight bounds the clusters asked at once (two reviews each); the
// rest are asked on later polls.
const accessInFlight = 4

// accessTimeout bounds one cluster's reviews.
const accessTimeout = 10 * time.Second

// access is the state of the autoscaler access answers of a session.
type access struct {
	review inspect.Review
	ctx    context.Context
	byUID  map[types.UID]*accessState
	// refusedUntil: the user may not create SubjectAccessReviews; nothing
	// is asked before then.
	refusedUntil time.Time
	inFlight     int
}

type accessState struct {
	sa      string    // the ServiceAccount last asked about
	asked   time.Time // when it was last asked, answered or not
	loading bool
	// acc is the last answer (about acc.ServiceAccount); nil: none.
	acc *why.AutoscalerAccess
}

// AccessMsg is one cluster's answer, read by PollAccess's command.
type AccessMsg struct {
	d   *Diagnoses
	uid types.UID
	acc *why.AutoscalerAccess
	err error
}

// SetReview gives the session's way to ask SubjectAccessReviews (nil:
// never asked, the diagnosis has only the sidecar's last exit to go by);
// ctx is the session's: a context switch cancels what is in flight.
func (d *Diagnoses) SetReview(ctx context.Context, review inspect.Review) {
	if review == nil {
		d.access = nil
		return
	}
	d.access = &access{review: review, ctx: ctx, byUID: map[types.UID]*accessState{}}
}

// PollAccess returns the command that asks, for the clusters shown that
// have enableInTreeAutoscaling and a head pod, whether the head's
// ServiceAccount may do what Ray's autoscaler does: for those never
// asked, asked over AccessEvery ago or whose head runs as another
// ServiceAccount. nil when nothing is due. Called from Update.
func (d *Diagnoses) PollAccess(shown []*rayv1.RayCluster) tea.Cmd {
	a := d.access
	if a == nil {
		return nil
	}
	now := d.now()
	if now.Before(a.refusedUntil) {
		return nil
	}
	var cmds []tea.Cmd
	for _, rc := range shown {
		if a.inFlight >= accessInFlight {
			break
		}
		if !rc.Spec.IsAutoscalingEnabled() {
			continue
		}
		head, sa := why.HeadServiceAccount(d.store.PodsOf(watch.ClusterRef{Namespace: rc.Namespace, Name: rc.Name}))
		if head == nil {
			continue
		}
		uid := watch.Key(rc)
		s := a.byUID[uid]
		if s == nil {
			s = &accessState{}
			a.byUID[uid] = s
		}
		if s.loading || (s.sa == sa && !s.asked.IsZero() && now.Sub(s.asked) < AccessEvery) {
			continue
		}
		s.loading, s.asked, s.sa = true, now, sa
		a.inFlight++
		ctx, review, ns, name := a.ctx, a.review, rc.Namespace, rc.Name
		cmds = append(cmds, func() tea.Msg {
			ctx, cancel := context.WithTimeout(ctx, accessTimeout)
			defer cancel()
			acc, err := inspect.AskAutoscalerAccess(ctx, review, ns, name, sa)
			return AccessMsg{d: d, uid: uid, acc: acc, err: err}
		})
	}
	return tea.Batch(cmds...)
}

// ReceiveAccess stores an answer and recomputes the cluster when what its
// diagnosis sees changed (the lists re-project Changed). An unanswered
// review leaves the cluster without an answer (never a refusal); a 403
// stops all asking for AccessRefusedFor and drops every answer. Answers
// of an earlier session are dropped.
func (d *Diagnoses) ReceiveAccess(m AccessMsg) {
	a := d.access
	if a == nil || m.d != d {
		return
	}
	a.inFlight = max(a.inFlight-1, 0)
	s := a.byUID[m.uid]
	if s == nil { // the cluster was deleted meanwhile
		return
	}
	s.loading = false
	dirty := map[types.UID]bool{}
	switch {
	case apierrors.IsForbidden(m.err):
		a.refusedUntil = d.now().Add(AccessRefusedFor)
		for uid, o := range a.byUID {
			if o.acc != nil {
				dirty[uid] = true
			}
			o.acc = nil
		}
	case m.err != nil:
		if s.acc != nil {
			dirty[m.uid] = true
		}
		s.acc = nil
	default:
		if s.acc == nil || s.acc.ServiceAccount != m.acc.ServiceAccount || !slices.Equal(s.acc.Denied, m.acc.Denied) {
			dirty[m.uid] = true
		}
		s.acc = m.acc
	}
	clusters := map[watch.ClusterRef]bool{}
	for uid := range dirty {
		if o, ok := d.store.Get(watch.RayCluster, uid); ok {
			clusters[watch.ClusterRef{Namespace: o.GetNamespace(), Name: o.GetName()}] = true
		}
	}
	if len(clusters) > 0 {
		d.recompute(clusters, nil, nil)
	}
}

// accessFor is the answer about the cluster's head's ServiceAccount sa
// (nil: none, or it was about another ServiceAccount).
func (d *Diagnoses) accessFor(uid types.UID, sa string) *why.AutoscalerAccess {
	if d.access == nil {
		return nil
	}
	if s := d.access.byUID[uid]; s != nil && s.acc != nil && s.acc.ServiceAccount == sa {
		return s.acc
	}
	return nil
}
