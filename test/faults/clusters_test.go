package faults

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func ptr[T any](v T) *T { return &v }

// apiTimeout bounds one request of the test's own (the API server may be
// restarting).
const apiTimeout = 2 * time.Minute

// create creates obj, retrying while the API server is unreachable.
func create(t testing.TB, obj client.Object) {
	t.Helper()
	eventually(t, apiTimeout, "creating "+obj.GetName(), func() (bool, string) {
		err := cl.Create(context.Background(), obj)
		if apierrors.IsAlreadyExists(err) {
			return true, ""
		}
		return err == nil, errString(err)
	})
}

// patchRC applies f to a fresh copy of the RayCluster and updates it,
// retrying conflicts and unreachable API servers.
func patchRC(t testing.TB, ns, name string, f func(*rayv1.RayCluster)) {
	t.Helper()
	eventually(t, apiTimeout, "updating "+name, func() (bool, string) {
		rc := &rayv1.RayCluster{}
		if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
			return false, err.Error()
		}
		f(rc)
		err := cl.Update(context.Background(), rc)
		return err == nil, errString(err)
	})
}

// remove deletes obj (in the background: the garbage collector removes
// what it owns), retrying while the API server is unreachable.
func remove(t testing.TB, obj client.Object) {
	t.Helper()
	eventually(t, apiTimeout, "deleting "+obj.GetName(), func() (bool, string) {
		err := cl.Delete(context.Background(), obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
		return err == nil || apierrors.IsNotFound(err), errString(err)
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// converged waits until every RayCluster of ns has the pods it wants and
// the deleted ones are gone.
func converged(t testing.TB, ns, what string) {
	t.Helper()
	eventually(t, settleTimeout, what, func() (bool, string) {
		pods, err := livePods(ns)
		if err != nil {
			return false, err.Error()
		}
		return podsMatchDesired(ns, pods)
	})
}

func inNS(ns string) client.InNamespace { return client.InNamespace(ns) }

func objectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}

// clusterHead returns the live head pod of a cluster.
func clusterHead(t testing.TB, ns, cluster string) (*corev1.Pod, bool) {
	t.Helper()
	var head *corev1.Pod
	eventually(t, apiTimeout, "the head pod of "+cluster, func() (bool, string) {
		pods, err := livePods(ns)
		if err != nil {
			return false, err.Error()
		}
		for i := range pods {
			if pods[i].Labels[rayv1.RayClusterLabelKey] == cluster && pods[i].Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode) {
				head = &pods[i]
				return true, ""
			}
		}
		return false, "none"
	})
	return head, head != nil
}

// patchJob applies f to a fresh copy of the RayJob and updates it.
func patchJob(t testing.TB, ns, name string, f func(*rayv1.RayJob)) {
	t.Helper()
	eventually(t, apiTimeout, "updating "+name, func() (bool, string) {
		j := &rayv1.RayJob{}
		if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, err.Error()
		}
		f(j)
		err := cl.Update(context.Background(), j)
		return err == nil, errString(err)
	})
}
