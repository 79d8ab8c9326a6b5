package controller

// The manager's own behaviour on a real control plane: leader election
// among raydar processes and the other-operator gate.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestIntegrationLeaderElection(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	lease := "raydar-test-" + ns
	elect := func(id string) func(*Options) {
		return func(o *Options) {
			o.DisableLeaderElection = false
			o.LeaderElectionNamespace = ns
			o.LeaderElectionID = lease
			o.Identity = id
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 3*time.Second, 2*time.Second, 300*time.Millisecond
		}
	}
	a := startOperator(t, ns, elect("alice"))
	b := startOperator(t, ns, elect("bob"))
	var leader, follower *runningOperator
	eventually(t, 30*time.Second, "one leader that both see", func() (bool, string) {
		la, lb := a.Leader(), b.Leader()
		if la.IsLeader == lb.IsLeader || la.Holder == "" || la.Holder != lb.Holder {
			return false, fmt.Sprintf("%+v / %+v", la, lb)
		}
		leader, follower = a, b
		if lb.IsLeader {
			leader, follower = b, a
		}
		return true, ""
	})
	if h := follower.Leader().Holder; h != leader.Leader().Identity {
		t.Fatalf("follower sees %q, leader is %q", h, leader.Leader().Identity)
	}
	createRC(t, testCluster(ns, "le", 2))
	waitReady(t, ns, "le", 2)
	// Only the leader reconciled: its gate saw the cluster, the follower's
	// reconciler never ran.
	followerSaw := follower.rec.Known()
	if followerSaw != 0 {
		t.Errorf("the follower reconciled %d clusters", followerSaw)
	}
	// The follower's cache is warm all the same (the TUI reads it).
	if err := follower.Cache().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "le"}, &rayv1.RayCluster{}); err != nil {
		t.Errorf("follower cache: %v", err)
	}

	// The leader goes away (it releases the Lease); the other takes over.
	leader.stop()
	eventually(t, 30*time.Second, "the follower to lead", func() (bool, string) {
		l := follower.Leader()
		return l.IsLeader && l.Holder == l.Identity, fmt.Sprintf("%+v", l)
	})
	patchRC(t, ns, "le", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(3)) })
	waitReady(t, ns, "le", 3)
}

func TestIntegrationOtherOperator(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	// A pod looking like KubeRay's operator (Helm labels), run by kwok.
	fake := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kuberay-operator-7d9f", Namespace: ns,
			Labels: map[string]string{rayv1.KubernetesApplicationNameLabelKey: "kuberay-operator"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kuberay-operator", Image: "quay.io/kuberay/operator:v1.5.2"}}},
	}
	if _, err := kc.CoreV1().Pods(ns).Create(context.Background(), fake, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.CoreV1().Pods(ns).Delete(context.Background(), fake.Name, metav1.DeleteOptions{})
		eventually(t, 30*time.Second, "the fake KubeRay pod gone", func() (bool, string) {
			_, err := kc.CoreV1().Pods(ns).Get(context.Background(), fake.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	})
	eventually(t, 30*time.Second, "the fake KubeRay pod running", func() (bool, string) {
		p, err := kc.CoreV1().Pods(ns).Get(context.Background(), fake.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, fmt.Sprint(err)
	})

	op := startOperator(t, ns, func(o *Options) { o.IgnoreOtherOperators = false; o.OtherOperatorInterval = 500 * time.Millisecond })
	eventually(t, 30*time.Second, "detection", func() (bool, string) {
		o := op.OtherOperator()
		return o.Detected && slices.Contains(o.Pods, ns+"/"+fake.Name), fmt.Sprintf("%+v", o)
	})

	createRC(t, testCluster(ns, "kr", 1))
	theirs := testCluster(ns, "kueue", 1)
	theirs.Spec.ManagedBy = fixture.Ptr(rayv1.MultiKueueController)
	createRC(t, theirs)
	ours := testCluster(ns, "ours", 1)
	ours.Spec.ManagedBy = fixture.Ptr(rayv1.ManagedByRaydar)
	createRC(t, ours)

	// A RayJob KubeRay would reconcile: left alone too, and taken up as
	// soon as KubeRay goes (the gate kicks every kind, not only clusters).
	jobSpec := testCluster(ns, "unused", 0).Spec
	job := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "krjob", Namespace: ns},
		Spec: rayv1.RayJobSpec{Entrypoint: "true", SubmissionMode: rayv1.HTTPMode, RayClusterSpec: &jobSpec}}
	if err := cl.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}

	waitReady(t, ns, "ours", 1)
	waitEvent(t, ns, "kr", kit.ReasonOtherOperator, ns+"/"+fake.Name)
	waitEventOf(t, 30*time.Second, ns, rayv1.KindRayJob, "krjob", "", kit.ReasonOtherOperator, ns+"/"+fake.Name)
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(job), job); err != nil {
		t.Fatal(err)
	} else if job.Status.JobDeploymentStatus != "" || job.Status.RayClusterName != "" {
		t.Errorf("raydar touched the RayJob left to KubeRay: %+v", job.Status)
	}
	waitEvent(t, ns, "kueue", kit.ReasonManagedElsewhere, "kueue.x-k8s.io/multikueue")
	for _, name := range []string{"kr", "kueue"} {
		h, w := clusterPods(t, ns, name)
		if len(h)+len(w) != 0 {
			t.Errorf("%s: raydar created pods although it must not touch the cluster", name)
		}
		if st := getRC(t, ns, name).Status; st.ObservedGeneration != 0 {
			t.Errorf("%s: raydar wrote its status: %+v", name, st)
		}
	}
	eventually(t, 10*time.Second, "Unmanaged to list both", func() (bool, string) {
		u := op.Unmanaged()
		_, a := u[types.NamespacedName{Namespace: ns, Name: "kr"}]
		_, b := u[types.NamespacedName{Namespace: ns, Name: "kueue"}]
		return a && b, fmt.Sprint(u)
	})

	// KubeRay goes away: raydar takes the unowned cluster over.
	if err := kc.CoreV1().Pods(ns).Delete(context.Background(), fake.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ns, "kr", 1)
	// Nothing about the RayJob changed since it was skipped: only the
	// gate's kick can bring it back.
	eventually(t, 60*time.Second, "the RayJob taken up (its cluster named in its status)", func() (bool, string) {
		j := &rayv1.RayJob{}
		if err := cl.Get(context.Background(), client.ObjectKeyFromObject(job), j); err != nil {
			return false, err.Error()
		}
		return j.Status.RayClusterName != "", fmt.Sprintf("%+v", j.Status)
	})
	if h, w := clusterPods(t, ns, "kueue"); len(h)+len(w) != 0 {
		t.Error("the MultiKueue cluster was touched")
	}
}
