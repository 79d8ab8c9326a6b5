package diagnose

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// runGateways runs a PollGateways command and hands its answers to d, as
// the App does; it returns how many services were read.
func runGateways(t *testing.T, d *Diagnoses, cmd tea.Cmd) int {
	t.Helper()
	if cmd == nil {
		return 0
	}
	switch m := cmd().(type) {
	case tea.BatchMsg:
		n := 0
		for _, c := range m {
			n += runGateways(t, d, c)
		}
		return n
	case GatewayMsg:
		d.ReceiveGateway(m)
		return 1
	default:
		t.Fatalf("message %T", m)
	}
	return 0
}

// PollGateways reads the Gateway API objects of the RayServices that
// upgrade incrementally only, again after GatewayEvery and not before,
// and their answer (here: no Gateway API) is in the service's causes; a
// Get that is not set reads nothing.
func TestPollGateways(t *testing.T) {
	clock := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	st := watch.NewStore()
	inc := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "inc", UID: "inc-uid"},
		Spec: rayv1.RayServiceSpec{UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.NewClusterWithIncrementalUpgrade),
			ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{GatewayClassName: "gw"}}}}
	plain := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "plain", UID: "plain-uid"}}
	st.Add(inc, plain)
	d := NewDiagnoses(st, func() time.Time { return clock }, "leader", nil)
	if cmd := d.PollGateways(); cmd != nil {
		t.Fatal("read without a Get")
	}
	var asked []string
	d.SetGet(context.Background(), func(_ context.Context, obj client.Object) (client.Object, error) {
		asked = append(asked, obj.GetName())
		return nil, &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "gateway.networking.k8s.io", Kind: "GatewayClass"}}
	})
	if n := runGateways(t, d, d.PollGateways()); n != 1 || len(asked) != 3 {
		t.Fatalf("read %d services, asked %q; want inc's three objects", n, asked)
	}
	if c := codes(d.Get(types.UID("inc-uid"))); c != why.CodeGatewayAPIMissing {
		t.Errorf("inc's causes %q, want %s", c, why.CodeGatewayAPIMissing)
	}
	if d.Get(types.UID("plain-uid")) != nil {
		t.Errorf("plain's causes %+v", d.Get(types.UID("plain-uid")))
	}
	clock = clock.Add(GatewayEvery - time.Second)
	if n := runGateways(t, d, d.PollGateways()); n != 0 {
		t.Fatalf("read again after %s", GatewayEvery-time.Second)
	}
	clock = clock.Add(time.Second)
	if n := runGateways(t, d, d.PollGateways()); n != 1 {
		t.Fatalf("not read again after %s", GatewayEvery)
	}
}

func codes(cs []why.Cause) string {
	out := ""
	for i, c := range cs {
		if i > 0 {
			out += ","
		}
		out += c.Code
	}
	return out
}
