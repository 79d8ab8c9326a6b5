package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/rayhead"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/kube/sandbox/seed"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/conformance"
)

// TestSandboxThenOperator is issue 12's first run, as the README lists it:
// `raydar sandbox` in one terminal, `raydar operator` in another with the
// KUBECONFIG the sandbox printed, then KubeRay's own samples applied
// (server-side, as `kubectl apply --server-side` would). The RayJob, whose
// entrypoint is `python /home/ray/samples/sample_code.py`, is played out by
// the sandbox's simulated head and reaches SUCCEEDED; the same job asking
// for failure ends FAILED; the RayService becomes Ready. Two processes
// besides the test: the operator reaches the heads that run in the
// sandbox's process only through the address book its kubeconfig names.
func TestSandboxThenOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: builds raydar and runs a sandbox and an operator (skipped with -short)")
	}
	ctrllog.SetLogger(logr.Discard())
	bin, tools, dir := buildRaydar(t)
	sandboxtest.Lock(t) // before env: the children inherit the lock
	env := append(os.Environ(), sandbox.ToolsDirEnv+"="+tools, "HOME="+dir, "XDG_STATE_HOME="+filepath.Join(dir, "state"))

	// Terminal 1: raydar sandbox.
	sbx := startProcess(t, dir, "sandbox", env, bin, "sandbox", "--state-dir", filepath.Join(dir, "sandbox"))
	var kubeconfig string
	eventually(t, 5*time.Minute, "the sandbox to print export KUBECONFIG=", func() (bool, string) {
		if code := sbx.exitCode(); code != "" {
			t.Fatalf("raydar sandbox exited (%s):\n%s", code, sbx.output())
		}
		m := regexp.MustCompile(`(?m)^export KUBECONFIG=(\S+)$`).FindStringSubmatch(sbx.stdout())
		if m == nil {
			return false, sbx.output()
		}
		kubeconfig = m[1]
		return true, ""
	})

	// Terminal 2: raydar operator, with that KUBECONFIG and nothing else
	// but ports of its own (other tests may hold 8080 and 8081).
	op := startProcess(t, dir, "operator", append(env, "KUBECONFIG="+kubeconfig), bin,
		"operator", "--metrics-bind-address=0", "--health-probe-bind-address=0")

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := seed.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	// Terminal 3: kubectl apply -f, server-side, into default: KubeRay's
	// own samples, read from its module in the Go module cache (make tools
	// downloads it), not copied.
	moduleDir, err := conformance.KubeRayModuleDir()
	if err != nil {
		t.Fatal(err)
	}
	sample := func(name string) string { return filepath.Join(moduleDir, "config", "samples", name) }
	apply(t, ctx, c, sample("ray-job.sample.yaml"), nil)
	apply(t, ctx, c, sample("ray-job.sample.yaml"), func(u *unstructured.Unstructured) {
		if u.GetKind() != "RayJob" {
			u.SetName("") // the ConfigMap is the same: skip it
			return
		}
		u.SetName("rayjob-sample-fails")
		if err := unstructured.SetNestedField(u.Object, map[string]any{rayhead.OutcomeMetadata: "FAILED"}, "spec", "metadata"); err != nil {
			t.Fatal(err)
		}
	})
	apply(t, ctx, c, sample("ray-service.sample.yaml"), nil)

	dump := func() string {
		return fmt.Sprintf("raydar sandbox:\n%s\nraydar operator:\n%s", tail(sbx.output(), 40), tail(op.output(), 40))
	}
	waitJob := func(name string, want rayv1.JobStatus) *rayv1.RayJob {
		t.Helper()
		j := &rayv1.RayJob{}
		eventually(t, 5*time.Minute, "RayJob "+name+" "+string(want), func() (bool, string) {
			for _, p := range []*process{sbx, op} {
				if code := p.exitCode(); code != "" {
					t.Fatalf("raydar %s exited (%s)\n%s", p.name, code, dump())
				}
			}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, j); err != nil {
				return false, err.Error()
			}
			st := j.Status
			if st.JobStatus.IsTerminal() && st.JobStatus != want {
				t.Fatalf("RayJob %s ended %s (%s), want %s\n%s", name, st.JobStatus, st.Message, want, dump())
			}
			return st.JobStatus == want, fmt.Sprintf("deployment %q, job %q, message %q\n%s", st.JobDeploymentStatus, st.JobStatus, st.Message, dump())
		})
		return j
	}
	ok := waitJob("rayjob-sample", rayv1.JobStatusSucceeded)
	if ok.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete && ok.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
		t.Errorf("rayjob-sample: deployment status %q", ok.Status.JobDeploymentStatus)
	}
	failed := waitJob("rayjob-sample-fails", rayv1.JobStatusFailed)
	if !strings.Contains(failed.Status.Message, "played out: FAILED") {
		t.Errorf("the failed job's message does not say it was played out: %q", failed.Status.Message)
	}

	eventually(t, 5*time.Minute, "RayService rayservice-sample Ready", func() (bool, string) {
		s := &rayv1.RayService{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "rayservice-sample"}, s); err != nil {
			return false, err.Error()
		}
		for _, cond := range s.Status.Conditions {
			if cond.Type == string(rayv1.RayServiceReady) {
				return cond.Status == metav1.ConditionTrue, fmt.Sprintf("Ready %s: %s\n%s", cond.Status, cond.Message, dump())
			}
		}
		return false, "no Ready condition\n" + dump()
	})

	if out := op.output(); strings.Contains(out, "raydar-system") && !strings.Contains(out, "namespace raydar-system does not exist") {
		t.Errorf("the operator's log mentions raydar-system other than to say it is absent:\n%s", tail(out, 40))
	}
	// Ctrl-C in each terminal: both end cleanly.
	op.interrupt(t)
	sbx.interrupt(t)
}

// apply applies every object of a YAML file server-side, as kubectl
// apply --server-side does; edit may change each object (an empty name
// skips it).
func apply(t *testing.T, ctx context.Context, c client.Client, path string, edit func(*unstructured.Unstructured)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if edit != nil {
			edit(u)
			if u.GetName() == "" {
				continue
			}
		}
		u.SetNamespace("default")
		if err := c.Patch(ctx, u, client.Apply, client.FieldOwner("kubectl"), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s %s from %s: %v", u.GetKind(), u.GetName(), path, err)
		}
	}
}

// process is one raydar command running as a child, its output in files.
type process struct {
	name    string
	cmd     *exec.Cmd
	outPath string
	errPath string
	done    chan struct{}
	waitErr error
}

func startProcess(t *testing.T, dir, name string, env []string, bin string, args ...string) *process {
	t.Helper()
	p := &process{name: name, outPath: filepath.Join(dir, name+".stdout"), errPath: filepath.Join(dir, name+".stderr"), done: make(chan struct{})}
	out, err := os.Create(p.outPath)
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.Create(p.errPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = out, errf
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		out.Close()
		errf.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *process) stdout() string {
	b, _ := os.ReadFile(p.outPath)
	return string(b)
}

func (p *process) output() string {
	e, _ := os.ReadFile(p.errPath)
	return p.stdout() + string(e)
}

// exitCode is "" while the process runs.
func (p *process) exitCode() string {
	select {
	case <-p.done:
		if p.waitErr == nil {
			return "exit 0"
		}
		return p.waitErr.Error()
	default:
		return ""
	}
}

// interrupt sends SIGINT (Ctrl-C) and expects a clean exit within a minute.
func (p *process) interrupt(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Errorf("raydar %s: %v", p.name, err)
		return
	}
	select {
	case <-p.done:
		if p.waitErr != nil {
			t.Errorf("raydar %s after Ctrl-C: %v\n%s", p.name, p.waitErr, tail(p.output(), 20))
		}
	case <-time.After(time.Minute):
		t.Errorf("raydar %s still runs a minute after Ctrl-C", p.name)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
