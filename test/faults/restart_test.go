package faults

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/testobj"
)

// workerPods counts the live worker pods of the namespace.
func workerPods(ns string) int {
	pods, err := livePods(ns)
	if err != nil {
		return -1
	}
	n := 0
	for _, p := range pods {
		if p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.WorkerNode) {
			n++
		}
	}
	return n
}

// TestAPIServerAndEtcdRestarts: kube-apiserver is restarted while four
// RayClusters scale up and again right after two of them are deleted;
// then etcd is restarted with its data during a scale-down. The operator
// (in this process) must ride every restart out.
func TestAPIServerAndEtcdRestarts(t *testing.T) {
	s := newScenario(t)
	ctx := context.Background()
	op := startInProc(t, s.audit.Wrap(sb.Config), s.ns, nil)
	const n = 4
	name := func(i int) string { return fmt.Sprintf("r%d", i) }
	for i := range n {
		create(t, testobj.Cluster(s.ns, name(i), 1))
	}
	converged(t, s.ns, "4 clusters up")

	// During a scale-up: 4 -> 40 workers; the API server goes down as soon
	// as the last scale-up is written, while the operator creates pods.
	for i := range n {
		patchRC(t, s.ns, name(i), func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr(int32(10)) })
	}
	w := workerPods(s.ns)
	begin := time.Now()
	if err := sb.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	s.fault("kube-apiserver restarted during a scale-up (%d of %d workers existed; back in %s)", w, n*10, time.Since(begin).Round(time.Millisecond))
	tally.figure("%s: kube-apiserver restart during a scale-up took %s", t.Name(), time.Since(begin).Round(100*time.Millisecond))
	converged(t, s.ns, "the scale-up after the API server restart")

	// During a delete: stop the API server as soon as the deletes return.
	for i := range 2 {
		remove(t, testobj.Cluster(s.ns, name(i), 0))
	}
	begin = time.Now()
	if err := sb.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	s.fault("kube-apiserver restarted during the deletion of 2 clusters (back in %s)", time.Since(begin).Round(time.Millisecond))
	eventually(t, settleTimeout, "2 clusters deleted", func() (bool, string) {
		list := &rayv1.RayClusterList{}
		if err := cl.List(ctx, list, inNS(s.ns)); err != nil {
			return false, err.Error()
		}
		return len(list.Items) == n-2, fmt.Sprintf("%d clusters", len(list.Items))
	})
	converged(t, s.ns, "the deletion after the API server restart")

	// etcd with its data, during a scale-down.
	before := map[string]types.UID{}
	for i := 2; i < n; i++ {
		before[name(i)] = getRC(t, s.ns, name(i)).UID
		patchRC(t, s.ns, name(i), func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr(int32(3)) })
	}
	begin = time.Now()
	if err := sb.RestartEtcd(ctx); err != nil {
		t.Fatal(err)
	}
	s.fault("etcd restarted with its data during a scale-down (API server ready again in %s)", time.Since(begin).Round(time.Millisecond))
	for nm, uid := range before {
		got := getRC(t, s.ns, nm)
		s.selfCheck("etcd kept its data", got.UID == uid && *got.Spec.WorkerGroupSpecs[0].Replicas == 3,
			fmt.Sprintf("%s: uid %s (was %s), replicas %d", nm, got.UID, uid, *got.Spec.WorkerGroupSpecs[0].Replicas))
	}
	converged(t, s.ns, "the scale-down after the etcd restart")
	s.finish(op.stop)
}

// getRC reads a RayCluster, retrying while the API server is unreachable.
func getRC(t testing.TB, ns, name string) *rayv1.RayCluster {
	t.Helper()
	rc := &rayv1.RayCluster{}
	eventually(t, apiTimeout, "reading "+name, func() (bool, string) {
		err := cl.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, rc)
		return err == nil, errString(err)
	})
	return rc
}
