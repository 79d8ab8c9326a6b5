package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// A Recreate cluster whose pods KubeRay made (KubeRay's hash and version on
// every pod) keeps every pod when raydar takes over; a spec change after
// that still replaces them all.
func TestIntegrationRecreateTakeoverKeepsPods(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	rc := testCluster(ns, "tk", 2)
	rc.Spec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: fixture.Ptr(rayv1.RayClusterRecreate)}
	createRC(t, rc)
	waitReady(t, ns, "tk", 2)
	h, w := clusterPods(t, ns, "tk")
	old := append(allPodNames(h), allPodNames(w)...)

	// Make the pods KubeRay's, as a KubeRay operator that ran the cluster
	// left them, then wake the cluster.
	for _, p := range append(h, w...) {
		orig := p.DeepCopy()
		p.Annotations[rayv1.UpgradeStrategyRecreateHashKey] = "6K8TMPTHBMU9QFNJ0QS3NB1OFLS2S29B"
		p.Annotations[rayv1.KubeRayVersion] = "v1.7.0"
		if err := cl.Patch(context.Background(), &p, client.MergeFrom(orig)); err != nil {
			t.Fatal(err)
		}
	}
	patchRC(t, ns, "tk", func(rc *rayv1.RayCluster) {
		if rc.Annotations == nil {
			rc.Annotations = map[string]string{}
		}
		rc.Annotations["test/wake"] = "1"
	})
	eventually(t, 30*time.Second, "raydar's hash stamped onto the head pod", func() (bool, string) {
		h, _ := clusterPods(t, ns, "tk")
		if len(h) != 1 {
			return false, fmt.Sprintf("%d heads", len(h))
		}
		v := h[0].Annotations[rayv1.KubeRayVersion]
		return v == kit.KuberayVersionValue, "version " + v
	})
	h, w = clusterPods(t, ns, "tk")
	for _, p := range append(h, w...) {
		if !slices.Contains(old, p.Name) || p.DeletionTimestamp != nil {
			t.Fatalf("pod %s is new or going: the takeover recreated pods", p.Name)
		}
	}

	patchRC(t, ns, "tk", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	})
	waitEvent(t, ns, "tk", raycluster.ReasonRecreate, "deleting all 3 pods")
	eventually(t, 60*time.Second, "every pod replaced", func() (bool, string) {
		h, w := clusterPods(t, ns, "tk")
		for _, p := range append(h, w...) {
			if slices.Contains(old, p.Name) {
				return false, "old pod " + p.Name + " still there"
			}
		}
		return len(h) == 1 && len(w) == 2, fmt.Sprintf("pods=%d", len(h)+len(w))
	})
}
