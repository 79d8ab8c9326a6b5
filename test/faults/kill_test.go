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

	k := startKiller(t, s, kubeconfig, killRNG, "op")

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

	last := k.stop(sd)
	s.finish(func() {
		if last != nil {
			last.kill()
		}
		_ = proxy.Close()
	})
}

// killer runs `raydar operator` processes one after another, each
// SIGKILLed after a random delay of 0.2–4 s, a new one taking over each
// time; once stop is called and at least minKills happened, the last one
// runs on.
type killer struct {
	t       *testing.T
	s       *scenario
	mu      sync.Mutex
	current *opProc
	kills   int
	delays  []time.Duration
	now     chan chan struct{} // killNow's requests
	stopped chan struct{}
	done    chan struct{}
}

// startKiller starts the loop; identities are prefix-NN.
func startKiller(t *testing.T, s *scenario, kubeconfig string, rng *rand.Rand, prefix string) *killer {
	k := &killer{t: t, s: s, now: make(chan chan struct{}), stopped: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(k.done)
		for i := 0; ; i++ {
			p, err := startOpProcErr(t, procArgs{kubeconfig: kubeconfig, namespace: s.ns, identity: fmt.Sprintf("%s-%02d", prefix, i)})
			if err != nil {
				t.Errorf("starting operator %d: %v", i, err)
				return
			}
			k.mu.Lock()
			k.current = p
			enough := k.kills >= minKills
			k.mu.Unlock()
			if enough {
				select {
				case <-k.stopped:
					return // this one runs on
				default:
				}
			}
			d := 200*time.Millisecond + time.Duration(rng.Int64N(int64(3800*time.Millisecond)))
			var asked chan struct{}
			select {
			case <-time.After(d): // fault timing, not synchronisation
			case asked = <-k.now:
			case <-k.stopped:
				if enough {
					return
				}
				select {
				case <-time.After(d):
				case asked = <-k.now:
				}
			}
			if p.exited() {
				t.Errorf("operator %s exited on its own", p.identity)
			}
			p.kill()
			k.mu.Lock()
			k.kills++
			k.delays = append(k.delays, d)
			k.mu.Unlock()
			if asked != nil {
				s.fault("SIGKILL operator %s at the moment the test chose", p.identity)
				close(asked)
			} else {
				s.fault("SIGKILL operator %s after %s", p.identity, d.Round(time.Millisecond))
			}
		}
	}()
	return k
}

// killNow SIGKILLs the running operator at once and returns when it is
// dead (a new one is starting).
func (k *killer) killNow() {
	asked := make(chan struct{})
	select {
	case k.now <- asked:
		<-asked
	case <-k.done:
	}
}

// stop ends the kills once there were enough, and returns the operator
// that runs on; the kills are counted and checked.
func (k *killer) stop(seed uint64) *opProc {
	close(k.stopped)
	<-k.done
	k.mu.Lock()
	last, n := k.current, k.kills
	k.mu.Unlock()
	k.t.Logf("%d kills (delays %v)", n, k.delays)
	tally.figure("%s: %d SIGKILLs of `raydar operator` (seed %d)", k.t.Name(), n, seed)
	k.s.selfCheck(fmt.Sprintf("operator SIGKILLed at least %d times", minKills), n >= minKills, fmt.Sprintf("%d kills", n))
	return last
}
