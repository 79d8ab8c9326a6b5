package diagnose

import (
	"context"
	"fmt"
	"reflect"
	"time"

	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/inspect"
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// The Gateway API objects of the RayServices with
// NewClusterWithIncrementalUpgrade (why.GatewayInput): the watch does not
// cache them, so they are read, as `raydar why` reads them (kube/inspect
// ReadGateway), with the session's Get, in a tea.Cmd, every GatewayEvery
// per service (PollGateways); the answer (GatewayMsg) goes into the
// service's diagnosis. A cluster without the Gateway API reads as such
// (GatewayAPIMissing), never as a failure; a read that fails otherwise
// leaves the service without an answer: nothing is said of its Gateway.

// GatewayEvery is how often a RayService's Gateway, HTTPRoute and
// GatewayClass are read again: their conditions change as the Gateway's
// implementation acts, on the scale of an upgrade's intervalSeconds.
const GatewayEvery = 10 * time.Second

// gatewayInFlight bounds the services read at once (three GETs each).
const gatewayInFlight = 4

// gatewayTimeout bounds one service's reads.
const gatewayTimeout = 10 * time.Second

type gateways struct {
	get      func(ctx context.Context, obj client.Object) (client.Object, error)
	ctx      context.Context
	byUID    map[types.UID]*gatewayState
	inFlight int
}

type gatewayState struct {
	asked   time.Time
	loading bool
	in      *why.GatewayInput // the last answer; nil: none
}

// GatewayMsg is one RayService's answer, read by PollGateways' command.
type GatewayMsg struct {
	d   *Diagnoses
	uid types.UID
	in  *why.GatewayInput
}

// SetGet gives the session's way to read one object from the API server
// (host.Session.Get; nil: the Gateway API objects are never read, and
// nothing is said of them); ctx is the session's.
func (d *Diagnoses) SetGet(ctx context.Context, get func(ctx context.Context, obj client.Object) (client.Object, error)) {
	if get == nil {
		d.gw = nil
		return
	}
	d.gw = &gateways{get: get, ctx: ctx, byUID: map[types.UID]*gatewayState{}}
}

// PollGateways returns the command that reads the Gateway API objects of
// the RayServices with NewClusterWithIncrementalUpgrade not read for
// GatewayEvery; nil when none is due. Called from Update.
func (d *Diagnoses) PollGateways() tea.Cmd {
	g := d.gw
	if g == nil {
		return nil
	}
	now := d.now()
	var cmds []tea.Cmd
	for _, o := range d.store.List(watch.RayService) {
		if g.inFlight >= gatewayInFlight {
			break
		}
		svc := o.(*rayv1.RayService)
		if !incremental(svc) {
			continue
		}
		uid := watch.Key(o)
		s := g.byUID[uid]
		if s == nil {
			s = &gatewayState{}
			g.byUID[uid] = s
		}
		if s.loading || !s.asked.IsZero() && now.Sub(s.asked) < GatewayEvery {
			continue
		}
		s.loading, s.asked = true, now
		g.inFlight++
		ctx, get, svc := g.ctx, g.get, svc.DeepCopy()
		cmds = append(cmds, func() tea.Msg {
			ctx, cancel := context.WithTimeout(ctx, gatewayTimeout)
			defer cancel()
			read := func(ctx context.Context, obj client.Object) error { // Get answers a copy; ReadGateway reads obj
				full, err := get(ctx, obj)
				if err != nil {
					return err
				}
				u, ok := obj.(*unstructured.Unstructured)
				f, ok2 := full.(*unstructured.Unstructured)
				if !ok || !ok2 {
					return fmt.Errorf("reading %s: got a %T", obj.GetName(), full)
				}
				u.Object = f.Object
				return nil
			}
			in, _ := inspect.ReadGateway(ctx, read, nil, svc)
			return GatewayMsg{d: d, uid: uid, in: in}
		})
	}
	return tea.Batch(cmds...)
}

// ReceiveGateway stores an answer and recomputes the service when it
// changed (the lists re-project Changed). Answers of an earlier session
// are dropped.
func (d *Diagnoses) ReceiveGateway(m GatewayMsg) {
	g := d.gw
	if g == nil || m.d != d {
		return
	}
	g.inFlight = max(g.inFlight-1, 0)
	s := g.byUID[m.uid]
	if s == nil {
		return
	}
	s.loading = false
	if reflect.DeepEqual(s.in, m.in) {
		return
	}
	s.in = m.in
	d.recompute(nil, nil, uidSet{m.uid: true})
}

// gatewayFor is the last answer about a RayService (nil: none).
func (d *Diagnoses) gatewayFor(uid types.UID) *why.GatewayInput {
	if d.gw == nil {
		return nil
	}
	if s := d.gw.byUID[uid]; s != nil {
		return s.in
	}
	return nil
}

// incremental: the service's upgrade strategy is
// NewClusterWithIncrementalUpgrade.
func incremental(s *rayv1.RayService) bool {
	us := s.Spec.UpgradeStrategy
	return us != nil && us.Type != nil && *us.Type == rayv1.NewClusterWithIncrementalUpgrade && us.ClusterUpgradeOptions != nil
}
