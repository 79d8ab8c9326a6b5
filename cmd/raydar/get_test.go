package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Tests of raydar get against the sandbox (status_test.go checks its words
// against the TUI's without one).

func TestGet(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, testCluster(ns, "rc"), testCluster(ns, "other"), testService(ns, "svc"))
	job := testJob(ns, "job", true)
	create(t, ctx, job)
	job.Status = rayv1.RayJobStatus{JobId: "job-1", RayClusterName: "job-rc", JobStatus: rayv1.JobStatusRunning, JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}
	if err := cl.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
	testPod(t, ctx, ns, "rc", "", "rc-head", "10.1.0.1", true)
	testPod(t, ctx, ns, "rc", "cpu", "rc-cpu-b", "10.1.0.3", false)
	testPod(t, ctx, ns, "rc", "cpu", "rc-cpu-a", "10.1.0.2", true)
	testPod(t, ctx, ns, "other", "gpu", "other-gpu-a", "10.1.0.9", true)

	lines := func(out string) [][]string {
		var rows [][]string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			rows = append(rows, strings.Fields(l))
		}
		return rows
	}
	r := raydar(t, "", "-n", ns, "get", "clusters")
	if r.err != nil {
		t.Fatal(r.err)
	}
	rows := lines(r.stdout)
	if len(rows) != 3 || strings.Join(rows[0], " ") != "NAME STATUS WORKERS GROUPS AGE" ||
		strings.Join(rows[1][:4], " ") != "other pending 0/3 cpu=2,gpu=1" || rows[2][0] != "rc" {
		t.Fatalf("get clusters:\n%s", r.stdout)
	}

	r = raydar(t, "", "-n", ns, "get", "workers", "rc")
	if r.err != nil {
		t.Fatal(r.err)
	}
	rows = lines(r.stdout)
	want := [][]string{
		{"NAME", "GROUP", "TYPE", "PHASE", "READY", "IP", "NODE", "AGE"},
		{"rc-head", "headgroup", "head", "Running", "1/1", "10.1.0.1", "node-1"},
		{"rc-cpu-a", "cpu", "worker", "Running", "1/1", "10.1.0.2", "node-1"},
		{"rc-cpu-b", "cpu", "worker", "Running", "0/1", "10.1.0.3", "node-1"},
	}
	if len(rows) != len(want) || !slices.Equal(rows[0], want[0]) {
		t.Fatalf("get workers:\n%s", r.stdout)
	}
	for i := 1; i < len(want); i++ {
		if !slices.Equal(rows[i][:7], want[i]) {
			t.Fatalf("row %d %q, want %q", i, rows[i], want[i])
		}
	}

	r = raydar(t, "", "-n", ns, "get", "workers")
	if r.err != nil || !strings.Contains(r.stdout, "CLUSTER") || !strings.Contains(r.stdout, "other-gpu-a") {
		t.Fatalf("get workers (all clusters): %v\n%s", r.err, r.stdout)
	}
	r = raydar(t, "", "-n", ns, "get", "workers", "nope")
	wantErrorContaining(t, r, `raycluster "nope" not found in namespace `+ns)

	r = raydar(t, "", "-A", "get", "rj")
	if r.err != nil || !strings.HasPrefix(r.stdout, "NAMESPACE") || !strings.Contains(r.stdout, ns) || !strings.Contains(r.stdout, "RUNNING") || !strings.Contains(r.stdout, "job-rc") {
		t.Fatalf("get jobs -A: %v\n%s", r.err, r.stdout)
	}
	r = raydar(t, "", "-n", ns, "get", "services")
	if r.err != nil || !strings.Contains(r.stdout, "svc") {
		t.Fatalf("get services: %v\n%s", r.err, r.stdout)
	}

	// JSON/YAML: the objects, with apiVersion and kind.
	r = raydar(t, "", "-n", ns, "get", "clusters", "rc", "-o", "json")
	var one rayv1.RayCluster
	if err := json.Unmarshal([]byte(r.stdout), &one); r.err != nil || err != nil || one.Kind != "RayCluster" || one.APIVersion != "ray.io/v1" || one.Name != "rc" {
		t.Fatalf("get clusters rc -o json: %v %v\n%s", r.err, err, r.stdout)
	}
	r = raydar(t, "", "-n", ns, "get", "jobs", "-o", "yaml")
	var list struct {
		Kind  string         `json:"kind"`
		Items []rayv1.RayJob `json:"items"`
	}
	if err := yaml.Unmarshal([]byte(r.stdout), &list); r.err != nil || err != nil || list.Kind != "List" || len(list.Items) != 1 ||
		list.Items[0].Kind != "RayJob" || list.Items[0].Status.JobId != "job-1" {
		t.Fatalf("get jobs -o yaml: %v %v\n%s", r.err, err, r.stdout)
	}
	r = raydar(t, "", "-n", ns, "get", "workers", "rc", "-o", "json")
	var pods struct {
		Items []corev1.Pod `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &pods); r.err != nil || err != nil || len(pods.Items) != 3 || pods.Items[0].Kind != "Pod" {
		t.Fatalf("get workers -o json: %v %v\n%s", r.err, err, r.stdout)
	}

	r = raydar(t, "", "-n", ns, "get", "clusters", "nope")
	wantErrorContaining(t, r, `raycluster "nope" not found in namespace `+ns)
	r = raydar(t, "", "-A", "get", "clusters", "rc")
	wantErrorContaining(t, r, "a NAME needs one namespace")
	// The commands that act on one named object refuse -A the same way.
	for _, cmd := range [][]string{{"why", "cluster", "rc"}, {"ray-logs", "rc"}, {"port-forward", "rc"}} {
		r = raydar(t, "", append([]string{"-A"}, cmd...)...)
		wantErrorContaining(t, r, cmd[0]+" needs one namespace: drop -A/--all-namespaces or use -n")
	}
	r = raydar(t, "", "-n", newNamespace(t, ctx), "get", "services")
	if r.err != nil || r.stdout != "" || !strings.HasPrefix(r.stderr, "No services found in namespace") {
		t.Fatalf("empty: %v %q %q", r.err, r.stdout, r.stderr)
	}
}
