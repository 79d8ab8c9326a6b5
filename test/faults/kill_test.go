package faults

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/testobj"
)

// minKills is how many times the operator is SIGKILLed at least.
const minKills = 20

// seed is FAULTS_SEED when set (to replay a run), else the clock.
func seed(t testing.TB) uint64 {
	if v := os.Getenv("FAULTS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("FAULTS_SEED=%q: %v", v, err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// TestOperatorSIGKILL: `raydar operator` runs as a child process and is
// SIGKILLed after random delays (at least minKills times) while 20
// RayClusters are created, scaled up, scaled down, suspended and deleted;
// a new process takes over each time. After the last kill one operator
// runs on and everything must settle.
func TestOperatorSIGKILL(t *testing.T) {
	s := newScenario(t)
	sd := seed(t)
	t.Logf("seed %d (FAULTS_SEED=%d replays the delays and operations)", sd, sd)
	killRNG := rand.New(rand.NewPCG(sd, 1))
	opRNG := rand.New(rand.NewPCG(sd, 2))

	proxy, err := NewAPIProxy(sb.Config)
	if err != nil {
		t.Fatal(err)
	}
	proxy.Audit = s.audit
	defer proxy.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := proxy.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}

	var (
		mu      sync.Mutex
		current *opProc
		kills   int
		delays  []time.Duration
	)
	stopKilling := make(chan struct{})
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		for i := 0; ; i++ {
			p, err := startOpProcErr(t, procArgs{kubeconfig: kubeconfig, namespace: s.ns, identity: fmt.Sprintf("op-%02d", i)})
			if err != nil {
				t.Errorf("starting operator %d: %v", i, err)
				return
			}
			mu.Lock()
			current = p
			enough := kills >= minKills
			mu.Unlock()
			if enough {
				select {
				case <-stopKilling:
					return // this one runs on
				default:
				}
			}
			d := 200*time.Millisecond + time.Duration(killRNG.Int64N(int64(3800*time.Millisecond)))
			select {
			case <-time.After(d): // fault timing, not synchronisation
			case <-stopKilling:
				if enough {
					return
				}
				<-time.After(d)
			}
			if p.exited() {
				t.Errorf("operator %s exited on its own", p.identity)
			}
			p.kill()
			mu.Lock()
			kills++
			delays = append(delays, d)
			mu.Unlock()
			s.fault("SIGKILL operator %s after %s", p.identity, d.Round(time.Millisecond))
		}
	}()

	const n = 20
	replicas := map[string]int32{}
	name := func(i int) string { return fmt.Sprintf("c%02d", i) }
	for i := range n {
		replicas[name(i)] = 1 + opRNG.Int32N(3)
		create(t, testobj.Cluster(s.ns, name(i), replicas[name(i)]))
	}
	converged(t, s.ns, "20 clusters up")
	for i := range n {
		r := replicas[name(i)] + 2 + opRNG.Int32N(3)
		patchRC(t, s.ns, name(i), func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = &r })
	}
	converged(t, s.ns, "20 clusters scaled up")
	for _, i := range opRNG.Perm(n)[:12] {
		r := opRNG.Int32N(2)
		patchRC(t, s.ns, name(i), func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = &r })
	}
	converged(t, s.ns, "12 clusters scaled down")
	perm := opRNG.Perm(n)
	for _, i := range perm[:6] {
		patchRC(t, s.ns, name(i), func(rc *rayv1.RayCluster) { rc.Spec.Suspend = ptr(true) })
	}
	converged(t, s.ns, "6 clusters suspended")
	// Delete 8: 3 of the suspended ones and 5 others.
	for _, i := range append(perm[:3:3], perm[6:11]...) {
		remove(t, testobj.Cluster(s.ns, name(i), 0))
	}
	eventually(t, settleTimeout, "8 clusters deleted", func() (bool, string) {
		list := &rayv1.RayClusterList{}
		if err := cl.List(t.Context(), list, inNS(s.ns)); err != nil {
			return false, err.Error()
		}
		return len(list.Items) == n-8, fmt.Sprintf("%d clusters", len(list.Items))
	})
	// Resume one suspended cluster that is left.
	patchRC(t, s.ns, name(perm[3]), func(rc *rayv1.RayCluster) { rc.Spec.Suspend = ptr(false) })

	close(stopKilling)
	<-killerDone
	mu.Lock()
	last, k := current, kills
	mu.Unlock()
	t.Logf("%d kills (delays %v)", k, delays)
	tally.figure("%s: %d SIGKILLs of `raydar operator` (seed %d)", t.Name(), k, sd)
	s.selfCheck(fmt.Sprintf("operator SIGKILLed at least %d times", minKills), k >= minKills, fmt.Sprintf("%d kills", k))
	s.finish(func() {
		if last != nil {
			last.kill()
		}
		_ = proxy.Close()
	})
}
