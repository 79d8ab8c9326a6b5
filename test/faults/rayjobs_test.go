package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/raydash/addrbook"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/testobj"
)

// serveConfig is the RayService's Serve config: one application.
const serveConfig = `applications:
  - name: fruit
    import_path: fruit.deployment_graph
    route_prefix: /fruit
`

// TestOperatorSIGKILLRayJobs: `raydar operator` runs as a child process,
// SIGKILLed after random delays (at least minKills times), etcd and the
// API server restarted once each and a dashboard down for a while, while RayJobs
// run on simulated heads (their own clusters and a shared one picked by
// clusterSelector): some finish on their own, some are stopped (`x`),
// some deleted while they run, and one stop request meets a SIGKILL the
// moment the stop reaches the dashboard, before raydar can record it. A
// RayService is brought up and upgraded meanwhile. Per object: submitted
// exactly once, stopped exactly once, one cluster (the RayService: one per
// config), the final status it should have.
func TestOperatorSIGKILLRayJobs(t *testing.T) {
	s := newScenario(t)
	ctx := context.Background()
	sd := seed(t)
	t.Logf("seed %d (FAULTS_SEED=%d replays the kill delays)", sd, sd)

	book := filepath.Join(t.TempDir(), "ray-heads.json")
	sim, err := headsim.Start(ctx, headsim.Options{Config: sb.Config, Namespace: s.ns, SetPodPhase: sb.SetPodPhase,
		EndContainer: sb.EndContainer, AddressBook: book})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
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
	// The operator processes reach the simulated heads through the book,
	// as `raydar operator` on a sandbox does.
	if err := addrbook.Advertise(kubeconfig, book); err != nil {
		t.Fatal(err)
	}
	k := startKiller(t, s, kubeconfig, rand.New(rand.NewPCG(sd, 1)), "rj")

	getJob, wait, running, newJob := s.getJob, s.waitJob, jobRunning, s.newJob

	// A cluster for the clusterSelector jobs, and the RayService.
	shared := testobj.Cluster(s.ns, "shared", 1)
	shared.Labels = map[string]string{rayv1.RayClusterLabelKey: "shared"}
	create(t, shared)
	svcSpec := testobj.Cluster(s.ns, "unused", 1).Spec
	create(t, &rayv1.RayService{ObjectMeta: objectMeta(s.ns, "svc"), Spec: rayv1.RayServiceSpec{
		ServeConfigV2: serveConfig, RayClusterDeletionDelaySeconds: ptr(int32(5)), RayClusterSpec: svcSpec}})

	done := []string{"done-0", "done-1", "done-2", "done-3"}
	for _, n := range done {
		newJob(n, "sleep 3", func(j *rayv1.RayJob) { j.Spec.ShutdownAfterJobFinishes = true })
	}
	selected := []string{"sel-0", "sel-1"}
	for _, n := range selected {
		newJob(n, "sleep 3", func(j *rayv1.RayJob) {
			j.Spec.RayClusterSpec = nil
			j.Spec.ClusterSelector = map[string]string{rayv1.RayClusterLabelKey: "shared"}
		})
	}
	// The shared cluster's dashboard down while they are submitted.
	if err := sim.SetRefuse(s.ns, "shared", true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(cutFor) // the outage's duration, not synchronisation
	if err := sim.SetRefuse(s.ns, "shared", false); err != nil {
		t.Fatal(err)
	}
	s.fault("dashboard of shared refused connections for %s while the clusterSelector RayJobs were submitted", cutFor)
	stopped := []string{"stop-0", "stop-1", "crashstop"}
	deleted := []string{"del-0", "del-1"}
	for _, n := range append(append([]string{}, stopped...), deleted...) {
		newJob(n, "sleep 600")
	}

	// Where each job ran, read while it runs (a deleted one's is gone).
	clusterOf, idOf := map[string]string{}, map[string]string{}
	for _, n := range append(append([]string{}, stopped...), deleted...) {
		j := wait(n, "RUNNING", running)
		clusterOf[n], idOf[n] = j.Status.RayClusterName, j.Status.JobId
	}
	stopRequest := func(n string) {
		patchJob(t, s.ns, n, func(j *rayv1.RayJob) {
			j.Annotations = map[string]string{rayv1.StopRequestedAnnotationKey: "faults@2030-01-01T00:00:00Z"}
		})
	}
	for _, n := range stopped[:2] {
		stopRequest(n)
	}
	for _, n := range deleted {
		j, err := getJob(n)
		if err != nil {
			t.Fatal(err)
		}
		remove(t, j)
	}
	// The crash between the stop call and its record: SIGKILL the moment
	// the dashboard has the stop.
	stopPath := "/api/jobs/" + idOf["crashstop"] + "/stop"
	stopRequest("crashstop")
	// Polled every millisecond: the record follows the call within a few.
	for deadline := time.Now().Add(rayLong); sim.Calls(s.ns, clusterOf["crashstop"], "POST", stopPath) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("crashstop's stop never reached the dashboard: %v", sim.AllCalls(s.ns, clusterOf["crashstop"]))
		}
	}
	k.killNow()
	begin := time.Now()
	if err := sb.RestartEtcd(ctx); err != nil {
		t.Fatal(err)
	}
	s.fault("etcd restarted with its data while RayJobs stop, finish and are deleted (API server ready again in %s)", time.Since(begin).Round(time.Millisecond))
	if j, err := getJob("crashstop"); err == nil {
		_, recorded := j.Annotations[rayv1.JobStopRecordAnnotationKey]
		tally.figure("%s: the SIGKILL after crashstop's stop call landed %s its record", t.Name(), map[bool]string{true: "after", false: "before"}[recorded])
	}

	// The RayService up, then upgraded.
	svcActive := func() (string, bool) {
		rs := &rayv1.RayService{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "svc"}, rs); err != nil {
			return "", false
		}
		c := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.RayServiceReady))
		return rs.Status.ActiveServiceStatus.RayClusterName, c != nil && c.Status == "True"
	}
	var oldCluster string
	eventually(t, rayLong, "svc serving", func() (bool, string) {
		c, ready := svcActive()
		oldCluster = c
		return ready && c != "", c
	})
	eventually(t, apiTimeout, "upgrading svc", func() (bool, string) {
		rs := &rayv1.RayService{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "svc"}, rs); err != nil {
			return false, err.Error()
		}
		rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
		err := cl.Update(ctx, rs)
		return err == nil, errString(err)
	})
	begin = time.Now()
	if err := sb.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	s.fault("kube-apiserver restarted during the RayService's upgrade (back in %s)", time.Since(begin).Round(time.Millisecond))
	var newCluster string
	eventually(t, rayLong, "svc serving on a new cluster", func() (bool, string) {
		c, ready := svcActive()
		newCluster = c
		return ready && c != "" && c != oldCluster, c
	})

	// Final states.
	for _, n := range done {
		j := wait(n, "SUCCEEDED and Complete", func(j *rayv1.RayJob) bool {
			return j.Status.JobStatus == rayv1.JobStatusSucceeded && j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete
		})
		clusterOf[n] = j.Status.RayClusterName
	}
	for _, n := range selected {
		wait(n, "SUCCEEDED", func(j *rayv1.RayJob) bool { return j.Status.JobStatus == rayv1.JobStatusSucceeded })
		clusterOf[n] = "shared"
	}
	for _, n := range stopped {
		wait(n, "STOPPED", func(j *rayv1.RayJob) bool { return j.Status.JobStatus == rayv1.JobStatusStopped })
		s.wantStop(sim, clusterOf[n], idOf[n])
	}
	for _, n := range deleted {
		s.wantStop(sim, clusterOf[n], idOf[n])
		eventually(t, rayLong, n+" gone", func() (bool, string) {
			_, err := getJob(n)
			return err != nil && strings.Contains(err.Error(), "not found"), errString(err)
		})
	}
	last := k.stop(sd)

	for _, n := range append(append(append([]string{}, done...), stopped...), deleted...) {
		subs := sim.Calls(s.ns, clusterOf[n], "POST", "/api/jobs/")
		s.check("a RayJob is submitted exactly once", subs == 1, fmt.Sprintf("%s on %s: %d submissions", n, clusterOf[n], subs))
		made := s.changes.clustersOf("RayJob/" + n)
		s.check("a RayJob makes one RayCluster", len(made) == 1, fmt.Sprintf("%s: %v", n, made))
	}
	subs := sim.Calls(s.ns, "shared", "POST", "/api/jobs/")
	s.check("each clusterSelector RayJob is submitted exactly once", subs == len(selected), fmt.Sprintf("%d submissions on shared for %d jobs", subs, len(selected)))
	for _, n := range selected {
		made := s.changes.clustersOf("RayJob/" + n)
		s.check("a clusterSelector RayJob makes no RayCluster", len(made) == 0, fmt.Sprintf("%s: %v", n, made))
	}
	made := s.changes.clustersOf("RayService/svc")
	s.check("a RayService makes one RayCluster per config (bring-up, upgrade)", len(made) == 2, fmt.Sprint(made))
	for _, c := range []string{oldCluster, newCluster} {
		puts := sim.Calls(s.ns, c, "PUT", "/api/serve/applications/")
		s.check("a RayService's Serve config is submitted once per cluster", puts == 1, fmt.Sprintf("%s: %d", c, puts))
	}
	s.finish(func() {
		if last != nil {
			last.kill()
		}
		_ = sim.Close()
		_ = proxy.Close()
	})
}
