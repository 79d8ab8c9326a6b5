package faults

import (
	"fmt"
	"net"
	"testing"
	"time"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/testobj"
)

// cutFor is how long a cut lasts: longer than client-go's first retries,
// shorter than anything that would make the operator give up.
const cutFor = 4 * time.Second

// TestConnectionCut: the operator reaches the API server only through an
// APIProxy; every connection is cut and new ones refused for a few seconds
// right after a scale-up is asked for, and again right after a delete.
func TestConnectionCut(t *testing.T) {
	s := newScenario(t)
	proxy, err := NewAPIProxy(sb.Config)
	if err != nil {
		t.Fatal(err)
	}
	proxy.Audit = s.audit
	defer proxy.Close()
	op := startInProc(t, proxy.Config(), s.ns, nil)
	name := func(i int) string { return fmt.Sprintf("k%d", i) }
	for i := range 3 {
		create(t, testobj.Cluster(s.ns, name(i), 2))
	}
	converged(t, s.ns, "3 clusters up")

	cut := func(what string) {
		n := proxy.Cut()
		_, dialErr := net.DialTimeout("tcp", proxy.Addr(), time.Second)
		s.selfCheck("new connections refused while cut", dialErr != nil, "a connection to the proxy succeeded while cut")
		time.Sleep(cutFor) // the fault's duration, not synchronisation
		if err := proxy.Restore(); err != nil {
			t.Fatal(err)
		}
		s.fault("operator's connection to the API server cut %s (%d connections, %s)", what, n, cutFor)
	}
	for i := range 3 {
		patchRC(t, s.ns, name(i), func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr(int32(6)) })
	}
	cut("during a scale-up")
	// Nothing else changes: the operator must finish the scale-up on its
	// own (its retries), within a minute of the restore (controller-runtime's
	// back-off after a few seconds of failures is well under that).
	msg, ok := poll(time.Minute, func() (bool, string) {
		pods, err := livePods(s.ns)
		if err != nil {
			return false, err.Error()
		}
		return podsMatchDesired(s.ns, pods)
	})
	s.check("the scale-up completes after a cut with no further change", ok, msg)
	if !ok {
		// Tell a stalled operator from a broken cache: any change to the
		// clusters wakes it.
		for i := range 3 {
			patchRC(t, s.ns, name(i), func(rc *rayv1.RayCluster) {
				if rc.Annotations == nil {
					rc.Annotations = map[string]string{}
				}
				rc.Annotations["faults.raydar.io/touch"] = "1"
			})
		}
		t.Logf("the clusters were touched (an annotation) to wake the operator")
	}
	converged(t, s.ns, "the scale-up after the cut")

	remove(t, testobj.Cluster(s.ns, name(0), 0))
	cut("during a delete")
	eventually(t, settleTimeout, "k0 deleted", func() (bool, string) {
		list := &rayv1.RayClusterList{}
		if err := cl.List(t.Context(), list, inNS(s.ns)); err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 2, fmt.Sprintf("%d clusters", len(list.Items))
	})
	// The operator still acts after the cuts (a scale-down only it makes).
	patchRC(t, s.ns, name(1), func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr(int32(1)) })
	converged(t, s.ns, "a scale-down after the cuts")
	s.finish(func() {
		op.stop()
		_ = proxy.Close()
	})
}
