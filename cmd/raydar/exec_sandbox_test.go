package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/dynamic"

	"github.com/raydar/raydar/kube/sandbox/execsim"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// testRayCLI is sandbox.Options.RayCLI for this package's sandbox: this
// test binary run as raydar (mainEnv), `sandbox ray`.
func testRayCLI() []string {
	return []string{"env", mainEnv + "=1", os.Args[0], "-test.run=^$", "--", "sandbox", "ray"}
}

// TestExecRayStatus is issue 45's "raydar exec CLUSTER -- ray status prints
// the simulated head's answer": through the API server's pods/exec, kwok
// runs `ray` for the head pod as its Exec object says, and `ray status`
// prints what the cluster's simulated head knows (its nodes, their
// resources); the exit code of a command is raydar's, and the exec is
// audited.
func TestExecRayStatus(t *testing.T) {
	ctx := needSandbox(t)
	e := newWhyEnv(t, ctx)
	dyn, err := dynamic.NewForConfig(sb.Config)
	if err != nil {
		t.Fatal(err)
	}
	w, err := execsim.Start(ctx, execsim.Options{Clientset: sb.Clientset(), Dynamic: dyn, Heads: e.sim, Home: sb.ExecHome(), Namespace: e.ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	audit := auditLog(t)

	rc := whyCluster(e.ns, "shell")
	// What each pod offers Ray: 2 CPUs, 4Gi (kube/raydash GroupResources).
	for _, tpl := range []*corev1.PodTemplateSpec{&rc.Spec.HeadGroupSpec.Template, &rc.Spec.WorkerGroupSpecs[0].Template} {
		tpl.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	}
	create(t, ctx, rc)
	eventuallyCluster(t, ctx, e.ns, "shell", func(rc *rayv1.RayCluster) bool {
		return rc.Status.State == rayv1.Ready && rc.Status.ReadyWorkerReplicas == 1
	})
	exec := func(args ...string) cliResult {
		return raydar(t, "", append([]string{"--kubeconfig", e.kubeconfig, "exec", "shell", "-n", e.ns}, args...)...)
	}
	// The head knows its worker once the pod is Ready: poll until both
	// nodes are in the answer.
	var r cliResult
	for ctx.Err() == nil {
		r = exec("--", "ray", "status")
		if r.err == nil && strings.Contains(r.stdout, " 1 cpu\n") {
			break
		}
		pollPause(ctx)
	}
	if r.err != nil {
		t.Fatalf("raydar exec shell -- ray status: %v\nstdout %s\nstderr %s", r.err, r.stdout, r.stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^======== Autoscaler status: .* ========$`),
		regexp.MustCompile(`(?m)^Idle:\n( 1 (headgroup|cpu)\n){2}`),
		regexp.MustCompile(`(?m)^Total Usage:\n 0\.0/4\.0 CPU\n 0B/8\.00GiB memory\n`),
		regexp.MustCompile(`(?m)^Total Demands:\n \(no resource demands\)$`),
	} {
		if !want.MatchString(r.stdout) {
			t.Errorf("ray status prints no %s:\n%s", want, r.stdout)
		}
	}
	line := lastLine(t, audit)
	for _, want := range []string{`"action":"exec"`, `"outcome":"applied"`, `"command":["ray","status"]`, `"exitCode":0`, `"node":"head"`} {
		if !strings.Contains(line, want) {
			t.Errorf("the audit line has no %s: %s", want, line)
		}
	}

	// A command that fails: an error, its stderr passed on. (kwok v0.8.0
	// reports a non-zero exit as an internal error naming the status, not
	// as the exit code a kubelet sends: pkg/kwok/server/debugging_exec.go
	// wraps the command's error.)
	r = exec("--", "ray", "job", "list")
	if r.err == nil || !strings.Contains(r.err.Error(), "exit status 1") || !strings.Contains(r.stderr, "`ray job list` is not simulated") {
		t.Fatalf("ray job list: %v, stderr %q; want exit status 1 and the refusal", r.err, r.stderr)
	}
	// Read-only refuses, and names why.
	r = exec("--readonly", "--", "ray", "status")
	if r.err == nil || !strings.Contains(r.err.Error(), "read-only mode: exec raycluster "+e.ns+"/shell refused") {
		t.Fatalf("--readonly: %v", r.err)
	}
	// A shell needs a terminal.
	r = exec()
	if r.err == nil || !strings.Contains(r.err.Error(), "a shell needs a terminal") {
		t.Fatalf("a shell without a terminal: %v", r.err)
	}
}

func lastLine(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(fmt.Errorf("the audit log: %w", err))
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return lines[len(lines)-1]
}
