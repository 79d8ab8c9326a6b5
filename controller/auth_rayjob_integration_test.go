package controller

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/raydar/raydar/controller/kit"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// A token-auth RayJob end to end on the simulated heads: the cluster's
// Secret is made before its head starts, the head refuses callers without
// the token, and raydar's own dashboard calls (submit, poll) carry it, so
// the job completes.
func TestIntegrationRayJobTokenAuth(t *testing.T) {
	// The harness's simulated heads are known only once it returns; the
	// resolver asks them later, when the cluster is up.
	var sims atomic.Pointer[headsim.Sim]
	book := bookFunc(func(ns, name string) (string, bool) {
		if s := sims.Load(); s != nil {
			return s.DashboardURL(ns, name)
		}
		return "", false
	})
	h := newRJHarness(t, func(o *Options) {
		res, err := raydash.New(raydash.Options{AddressBook: book, HeadServiceName: kit.HeadServiceName,
			Secrets: raydash.SecretsFromClientset(kc)})
		if err != nil {
			t.Fatal(err)
		}
		o.Dashboards = res
	})
	sims.Store(h.sim)
	h.rayJob("tok", "echo hi", func(j *rayv1.RayJob) {
		j.Spec.RayClusterSpec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}
	})
	j := h.wait("tok", "Complete", deploymentIs(rayv1.JobDeploymentStatusComplete))
	if j.Status.JobStatus != rayv1.JobStatusSucceeded {
		t.Fatal(describeRJ(j))
	}
	head := h.sim.Head(h.ns, j.Status.RayClusterName)
	if head == nil {
		t.Fatal("no simulated head")
	}
	resp, err := http.Get(head.DashboardURL() + "/api/jobs/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a call without the token got %d, want 401: the head does not enforce the cluster's token", resp.StatusCode)
	}
}

type bookFunc func(namespace, name string) (string, bool)

func (f bookFunc) DashboardURL(namespace, name string) (string, bool) { return f(namespace, name) }
