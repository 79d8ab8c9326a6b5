package faults

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/testobj"
)

// Leader election as `raydar operator` runs it: controller-runtime's
// defaults, which cmd/raydar does not change.
const (
	leaseDuration = 15 * time.Second
	retryPeriod   = 2 * time.Second
	// takeoverLimit bounds a takeover after the holder is SIGKILLed: the
	// Lease expires at most leaseDuration after the kill (the others saw
	// its last renewal before it); client-go then tries again after a
	// retry period jittered by up to 1.2 times itself (so up to 2.2 retry
	// periods); plus slack for the Lease update on a loaded 2-core machine.
	// Seen: 13.7–18.8 s.
	takeoverLimit = leaseDuration + retryPeriod + time.Duration(1.2*float64(retryPeriod)) + 4*time.Second
)

// TestTwoOperatorsLeaderKilled: two `raydar operator` processes elect a
// leader on one Lease, each through its own APIProxy so that its writes
// are counted apart. Exactly one reconciles; the leader is SIGKILLed and
// the other takes over within the lease duration plus one retry period.
func TestTwoOperatorsLeaderKilled(t *testing.T) {
	s := newScenario(t)
	ctx := context.Background()
	type member struct {
		proxy *APIProxy
		proc  *opProc
	}
	members := map[string]*member{}
	for _, id := range []string{"op-a", "op-b"} {
		p, err := NewAPIProxy(sb.Config)
		if err != nil {
			t.Fatal(err)
		}
		p.Tee = s.audit
		defer p.Close()
		kcfg := filepath.Join(t.TempDir(), id+".kubeconfig")
		if err := p.WriteKubeconfig(kcfg); err != nil {
			t.Fatal(err)
		}
		members[id] = &member{proxy: p, proc: startOpProc(t, procArgs{kubeconfig: kcfg, namespace: s.ns, identity: id, elect: true})}
	}
	holder := func() string {
		l, err := kc.CoordinationV1().Leases(s.ns).Get(ctx, controller.DefaultLeaderElectionID, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	var leader string
	eventually(t, 2*time.Minute, "a leader", func() (bool, string) {
		leader = holder()
		return members[leader] != nil, "holder " + leader
	})
	follower := map[string]string{"op-a": "op-b", "op-b": "op-a"}[leader]
	name := func(i int) string { return fmt.Sprintf("l%d", i) }
	for i := range 3 {
		create(t, testobj.Cluster(s.ns, name(i), 2))
	}
	converged(t, s.ns, "3 clusters up under "+leader)
	lw, fw := members[leader].proxy.Audit.ReconcileWrites(s.ns), members[follower].proxy.Audit.ReconcileWrites(s.ns)
	t.Logf("reconcile writes: leader %s %d, follower %s %d", leader, lw, follower, fw)
	s.check("exactly one operator reconciles", lw > 0 && fw == 0, fmt.Sprintf("leader %s made %d writes, follower %s %d", leader, lw, follower, fw))

	members[leader].proc.kill()
	killed := time.Now()
	s.fault("SIGKILL the leader %s", leader)
	for i := range 3 {
		patchRC(t, s.ns, name(i), func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr(int32(4)) })
	}
	eventually(t, 2*time.Minute, follower+" to take over", func() (bool, string) {
		h := holder()
		return h == follower, "holder " + h
	})
	took := time.Since(killed)
	t.Logf("%s took over %s after the kill", follower, took.Round(time.Millisecond))
	tally.figure("%s: takeover %s after SIGKILL of the leader (lease %s, retry %s)", t.Name(), took.Round(100*time.Millisecond), leaseDuration, retryPeriod)
	limit := takeoverLimit
	s.check("takeover within the lease duration (+ one jittered retry period)", took <= limit, fmt.Sprintf("took %s, limit %s", took, limit))
	converged(t, s.ns, "the scale-up under "+follower)
	fw2 := members[follower].proxy.Audit.ReconcileWrites(s.ns)
	s.check("the new leader reconciles", fw2 > 0, fmt.Sprintf("%s made %d writes", follower, fw2))
	s.finish(func() {
		for _, m := range members {
			m.proc.kill()
			_ = m.proxy.Close()
		}
	})
}
