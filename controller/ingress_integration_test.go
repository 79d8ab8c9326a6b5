package controller

import (
	"context"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// enableIngress and ray.io/enable-serve-service against a real API server:
// the Ingress and the serve Service exist, owned by the cluster, and the
// Ingress is brought back when edited.
func TestIntegrationIngressAndServeService(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	rc := testCluster(ns, "web", 1)
	rc.Annotations = map[string]string{rayv1.EnableServeServiceKey: "true"}
	rc.Spec.HeadGroupSpec.EnableIngress = fixture.Ptr(true)
	createRC(t, rc)
	got := waitReady(t, ns, "web", 1)

	ing, err := kc.NetworkingV1().Ingresses(ns).Get(context.Background(), "web-head-ingress", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Ingress: %v", err)
	}
	if len(ing.OwnerReferences) != 1 || ing.OwnerReferences[0].UID != got.UID ||
		ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name != "web-head-svc" {
		t.Errorf("Ingress %+v", ing)
	}
	svc, err := kc.CoreV1().Services(ns).Get(context.Background(), "web-serve-svc", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("serve Service: %v", err)
	}
	if len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].UID != got.UID || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8000 {
		t.Errorf("serve Service %+v", svc)
	}
	waitEvent(t, ns, "web", rayv1.EventCreatedIngress, "web-head-ingress")

	// An edit of the Ingress is undone on the next pass (a cluster change
	// brings one).
	ing.Spec.Rules[0].Host = "elsewhere.example.com"
	if _, err := kc.NetworkingV1().Ingresses(ns).Update(context.Background(), ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	patchRC(t, ns, "web", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(2)) })
	eventually(t, 30*time.Second, "the Ingress back as the cluster asks", func() (bool, string) {
		cur, err := kc.NetworkingV1().Ingresses(ns).Get(context.Background(), "web-head-ingress", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cur.Spec.Rules[0].Host == "", cur.Spec.Rules[0].Host
	})
}
