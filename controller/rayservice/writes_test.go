package rayservice

import (
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestRayServiceOverlay: the RayService reconciler's writes laid over a
// lagging cache, through the kit's Expectations as observe and act use
// them (owner: the RayService).
func TestRayServiceOverlay(t *testing.T) {
	rs := testService()
	mk := func(suffix, rv string) *rayv1.RayCluster {
		rc := buildCluster(rs, kit.RayServiceClusterName(rs.Name, suffix))
		rc.UID, rc.ResourceVersion = types.UID("uid-"+rc.Name), rv
		return rc
	}
	now := fixture.T0
	ov := kit.NewExpectations(writesTTL, func() time.Time { return now })
	clusters := func(cached ...*rayv1.RayCluster) []*rayv1.RayCluster { return kit.Overlay(ov, rs.UID, cached) }

	// Created: present until the cache shows it.
	created := mk("aaaaa", "1")
	ov.ExpectCreate(rs.UID, created)
	if got := clusters(); len(got) != 1 || got[0].Name != created.Name {
		t.Fatalf("created cluster missing from a lagging cache: %v", got)
	}
	if got := clusters(created); len(got) != 1 {
		t.Fatalf("created cluster doubled: %d", len(got))
	}
	if got := clusters(); len(got) != 0 {
		t.Fatalf("entry kept after the cache showed the cluster: %v", got)
	}

	// Updated: ours while the cache shows the superseded version.
	cached := mk("bbbbb", "5")
	mine := cached.DeepCopy()
	mine.ResourceVersion = "6"
	mine.Annotations[ServeConfigHashKey] = "h"
	ov.Updated(rs.UID, "5", mine)
	if got := clusters(cached); got[0].Annotations[ServeConfigHashKey] != "h" {
		t.Fatal("our update not laid over the stale cache")
	}
	newer := cached.DeepCopy()
	newer.ResourceVersion = "7"
	if got := clusters(newer); got[0].ResourceVersion != "7" {
		t.Fatal("a newer cached version lost to the overlay")
	}

	// Deleted: terminating until the cache says so.
	ov.ExpectDelete(rs.UID, cached)
	if got := clusters(cached); got[0].DeletionTimestamp == nil {
		t.Fatal("deleted cluster not terminating")
	}

	// Expired entries are dropped.
	ov.ExpectCreate(rs.UID, mk("ccccc", "1"))
	now = fixture.T0.Add(writesTTL + time.Second)
	if got := clusters(); len(got) != 0 {
		t.Fatalf("expired entry kept: %v", got)
	}
	now = fixture.T0

	// Pods: only our label is laid over, and only on the superseded version.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "pu", ResourceVersion: "3",
		Labels: map[string]string{rayv1.RayClusterServingServiceLabelKey: "false"}}}
	patched := pod.DeepCopy()
	patched.ResourceVersion = "4"
	patched.Labels[rayv1.RayClusterServingServiceLabelKey] = "true"
	ov.Updated(rs.UID, "3", patched)
	stale := pod.DeepCopy()
	stale.Status.Phase = corev1.PodRunning
	if got := overlayPod(ov, rs.UID, stale); got.Labels[rayv1.RayClusterServingServiceLabelKey] != "true" || got.Status.Phase != corev1.PodRunning {
		t.Fatalf("pod overlay = %+v", got)
	}

	// Services: a created one shows until cached; a deleted one is gone.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "su"}}
	ov.ExpectCreate(rs.UID, svc)
	ov.Created(rs.UID, svc)
	if overlayService(ov, rs.UID, "ns", "s", nil) == nil {
		t.Fatal("created Service missing")
	}
	ov.ExpectDelete(rs.UID, svc)
	if overlayService(ov, rs.UID, "ns", "s", svc) != nil {
		t.Fatal("deleted Service still there")
	}
}
