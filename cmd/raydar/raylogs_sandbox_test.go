package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestRayLogsCLI: raydar ray-logs against the sandbox's simulated heads,
// whose log API serves each job's real output: the listing of the head's
// files (-o json as a script reads it), one file, a RayJob's driver log by
// --job, followed with -f until interrupted, and the dashboard down.
func TestRayLogsCLI(t *testing.T) {
	ctx := needSandbox(t)
	e := newWhyEnv(t, ctx)
	rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "talk"},
		Spec: rayv1.RayJobSpec{Entrypoint: `echo "hello from the driver"; sleep 600`, SubmissionMode: rayv1.HTTPMode,
			RayClusterSpec: &whyCluster(e.ns, "x").Spec}}
	create(t, ctx, rj)
	got := &rayv1.RayJob{}
	for ctx.Err() == nil {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(rj), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.JobStatus == rayv1.JobStatusRunning {
			break
		}
		pollPause(ctx)
	}
	if got.Status.JobStatus != rayv1.JobStatusRunning {
		t.Fatalf("the RayJob did not get RUNNING: %s/%s", got.Status.JobStatus, got.Status.JobDeploymentStatus)
	}
	cluster, driver := got.Status.RayClusterName, dashboard.JobDriverLogFile(got.Status.JobId)
	rl := func(args ...string) cliResult {
		t.Helper()
		return raydar(t, "", append([]string{"--kubeconfig", e.kubeconfig, "-n", e.ns, "ray-logs"}, args...)...)
	}

	res := rl(cluster, "-o", "json")
	if res.err != nil {
		t.Fatalf("listing: %v\n%s", res.err, res.stderr)
	}
	var listing rayLogsJSON
	if err := json.Unmarshal([]byte(res.stdout), &listing); err != nil {
		t.Fatalf("-o json: %v\n%s", err, res.stdout)
	}
	if listing.Cluster != cluster || !strings.HasPrefix(listing.Pod, cluster+"-head") || listing.Node.IP == "" {
		t.Errorf("listing of %+v", listing)
	}
	if len(listing.Groups) == 0 || listing.Groups[0].Name != dashboard.LogGroupJobDriver || !slices.Contains(listing.Groups[0].Files, driver) {
		t.Errorf("groups %+v, want the job drivers first with %s", listing.Groups, driver)
	}
	if !slices.Contains(listing.Categories[dashboard.LogCategoryRaylet], "raylet.out") {
		t.Errorf("Ray's categories %v", listing.Categories)
	}
	res = rl(cluster)
	if res.err != nil || !strings.Contains(res.stdout, "GROUP") || !strings.Contains(res.stdout, driver) {
		t.Errorf("table listing: %v\n%s", res.err, res.stdout)
	}

	res = rl(cluster, driver)
	if res.err != nil || res.stdout != "hello from the driver\n" {
		t.Errorf("the driver log by name: %v %q", res.err, res.stdout)
	}
	res = rl("--job", "talk", "--tail", "5")
	if res.err != nil || res.stdout != "hello from the driver\n" {
		t.Errorf("--job: %v %q", res.err, res.stdout)
	}

	out, done, stop := startCommand(t, "--kubeconfig", e.kubeconfig, "-n", e.ns, "ray-logs", "--job", "talk", "-f")
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "hello from the driver") {
		select {
		case err := <-done:
			t.Fatalf("-f ended by itself: %v\n%s", err, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("-f printed nothing in a minute:\n%s", out)
		}
		pollPause(ctx)
	}
	stop() // an interrupt ends following without an error (stop checks)

	if err := e.sim.SetRefuse(e.ns, cluster, true); err != nil {
		t.Fatal(err)
	}
	res = rl(cluster)
	if res.err == nil || !strings.Contains(res.err.Error(), "cannot be reached") ||
		!strings.Contains(res.err.Error(), "kubectl logs -n "+e.ns+" "+listing.Pod) {
		t.Errorf("dashboard down: %v", res.err)
	}
}
