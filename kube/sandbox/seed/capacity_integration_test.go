package seed

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// capacityPoller is the CapacityPoller the TUI would run, over the
// sandbox's simulated heads and its API server.
func capacityPoller(t *testing.T) *raydash.CapacityPoller {
	t.Helper()
	res, err := raydash.New(raydash.Options{AddressBook: sim})
	if err != nil {
		t.Fatal(err)
	}
	p, err := raydash.NewCapacityPoller(raydash.CapacityOptions{
		Resolver: res, Interval: 200 * time.Millisecond,
		Cluster: func(ns, name string) (*rayv1.RayCluster, error) {
			rc := &rayv1.RayCluster{}
			if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
				return nil, err
			}
			return rc, nil
		},
		Pods: func(ns, name string) ([]*podview.Pod, error) {
			var l corev1.PodList
			if err := cl.List(context.Background(), &l, client.InNamespace(ns), client.MatchingLabels{rayv1.RayClusterLabelKey: name}); err != nil {
				return nil, err
			}
			out := make([]*podview.Pod, len(l.Items))
			for i := range l.Items {
				out[i] = podview.Of(&l.Items[i])
			}
			return out, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func readyPods(t *testing.T, ns, cluster string) map[string]string {
	var l corev1.PodList
	if err := cl.List(context.Background(), &l, client.InNamespace(ns), client.MatchingLabels{rayv1.RayClusterLabelKey: cluster}); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					out[p.Status.PodIP] = p.Name
				}
			}
		}
	}
	return out
}

// TestCapacityInSandbox: Ray's view of capacity as the simulated heads
// report it, consistent with the pods that exist.
func TestCapacityInSandbox(t *testing.T) {
	needSandbox(t)
	ctx := context.Background()
	if err := Seed(ctx, cl, demoOptions(t)); err != nil {
		t.Fatal(err)
	}
	ns := DefaultNamespace
	p := capacityPoller(t)

	// The demo's infeasible job: PENDING in Ray, its {GPU: 2} infeasible
	// (ClusterShared's only group has no GPUs), one Ray node per Ready pod.
	t.Run(JobInfeasible, func(t *testing.T) {
		waitJob(t, ns, JobInfeasible, rayv1.JobStatusPending, rayv1.JobDeploymentStatusRunning)
		eventually(t, 2*time.Minute, "ClusterShared's capacity: nodes for its Ready pods, {GPU: 2} infeasible", func() (bool, string) {
			c, err, ok := p.Get(ns, ClusterShared)
			if !ok || err != nil {
				return false, fmt.Sprintf("ok=%v err=%v", ok, err)
			}
			ready := readyPods(t, ns, ClusterShared)
			alive := 0
			for _, n := range c.Nodes {
				if n.Alive {
					alive++
					if ready[n.IP] == "" || n.Pod != ready[n.IP] {
						return false, fmt.Sprintf("alive node %s (%s) is not a Ready pod's: ready %v", n.IP, n.Pod, ready)
					}
				}
			}
			infeasible := len(c.Infeasible) == 1 && c.Infeasible[0].Shape.Equal(dashboard.Resources{"GPU": InfeasibleGPUs})
			return alive == len(ready) && alive == 1+SharedReplicas && infeasible && c.RunningJobs >= 1,
				fmt.Sprintf("alive %d, ready pods %d, pending %v, infeasible %v, running jobs %d", alive, len(ready), c.Pending, c.Infeasible, c.RunningJobs)
		})
		if s := getJob(t, ns, JobInfeasible).Status; s.JobStatus != rayv1.JobStatusPending {
			t.Errorf("RayJob %s: job status %q, want PENDING", JobInfeasible, s.JobStatus)
		}
	})

	// A RayService whose GPU workers no node can hold: the head is the only
	// Ray node, the application stays DEPLOYING, its replicas' demand is
	// pending (the group could hold it, once scheduled), not RUNNING.
	t.Run("service-with-unschedulable-gpus", func(t *testing.T) {
		gpus := corev1.ResourceList{GPUResource: *resource.NewQuantity(GPUsPerWorker, resource.DecimalSI)}
		rs := &rayv1.RayService{ObjectMeta: meta(ns, "llm-needs-gpus", "test"), Spec: rayv1.RayServiceSpec{
			ServeConfigV2: `applications:
  - name: llm
    route_prefix: /llm
    import_path: llm.app:deployment
    deployments:
      - name: LLM
        num_replicas: 1
        ray_actor_options:
          num_gpus: 1
`,
			RayClusterSpec: rayv1.RayClusterSpec{RayVersion: RayVersion, HeadGroupSpec: head(RayImage, 1),
				WorkerGroupSpecs: []rayv1.WorkerGroupSpec{workers("gpu", RayImage, 1, 0, 2, resources(8, gpus))}},
		}}
		if err := cl.Create(ctx, rs); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.Delete(context.Background(), rs) })
		var cluster string
		eventually(t, 3*time.Minute, "the service's cluster with a head and its app deployed", func() (bool, string) {
			var l rayv1.RayClusterList
			if err := cl.List(ctx, &l, client.InNamespace(ns)); err != nil {
				return false, err.Error()
			}
			for _, rc := range l.Items {
				for _, o := range rc.OwnerReferences {
					if o.Name == rs.Name {
						cluster = rc.Name
					}
				}
			}
			h := sim.Head(ns, cluster)
			if h == nil {
				return false, "no head for cluster " + cluster
			}
			dc, _ := dashboard.New(h.DashboardURL())
			d, err := dc.GetServeApplications(ctx)
			if err != nil {
				return false, err.Error()
			}
			app, ok := d.Applications["llm"]
			return ok && app.Message != "", fmt.Sprintf("apps %v", d.Applications)
		})
		eventually(t, 2*time.Minute, "only the head as a Ray node, {GPU: 1} pending", func() (bool, string) {
			c, err, ok := p.Get(ns, cluster)
			if !ok || err != nil {
				return false, fmt.Sprintf("ok=%v err=%v", ok, err)
			}
			alive := 0
			for _, n := range c.Nodes {
				if n.Alive {
					alive++
				}
			}
			pending := len(c.Pending) == 1 && c.Pending[0].Shape.Equal(dashboard.Resources{"GPU": 1}) && len(c.Infeasible) == 0
			return alive == 1 && c.Nodes[0].Head && pending, fmt.Sprintf("nodes %+v pending %v infeasible %v", c.Nodes, c.Pending, c.Infeasible)
		})
		// Held for a while: the app never turns RUNNING without a GPU node.
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			h := sim.Head(ns, cluster)
			if h == nil {
				t.Fatalf("cluster %s lost its head", cluster)
			}
			dc, _ := dashboard.New(h.DashboardURL())
			d, err := dc.GetServeApplications(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st := d.Applications["llm"].Status; st != dashboard.AppDeploying {
				t.Fatalf("app llm %s, want DEPLOYING while no Ready pod offers a GPU", st)
			}
			time.Sleep(500 * time.Millisecond) // sampling an invariant over time, not synchronisation
		}
	})
}
