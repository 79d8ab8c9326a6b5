package actions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/podexec"
)

// execFixtures are fixtures() with the pods running.
func execFixtures() []client.Object {
	objs := fixtures()
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			p.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
				{Name: "ray", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
		}
	}
	return objs
}

// fakeExec records the execs asked and ends each with code.
type fakeExec struct {
	got  []podexec.Request
	code int
}

func (f *fakeExec) run(_ context.Context, _ *rest.Config, r podexec.Request, s podexec.Streams) error {
	f.got = append(f.got, r)
	if s.Out != nil {
		_, _ = s.Out.Write([]byte("ran\n"))
	}
	if f.code != 0 {
		return &podexec.ExitError{Code: f.code}
	}
	return nil
}

func TestExecOpensAShellInTheHeadAndIsAudited(t *testing.T) {
	fx := &fakeExec{}
	h := newHarness(t, actions.Options{Exec: fx.run}, interceptor.Funcs{}, execFixtures()...)
	var out bytes.Buffer
	r, err := h.a.Exec(context.Background(), "team-a", "rc", actions.ExecRequest{}, podexec.Streams{Out: &out, TTY: true})
	if err != nil || r.Outcome != actions.OutcomeApplied {
		t.Fatalf("Exec: %v, outcome %s", err, r.Outcome)
	}
	want := podexec.Request{Namespace: "team-a", Pod: "rc-head", Container: "ray", Command: podexec.DefaultShell}
	if len(fx.got) != 1 || fx.got[0].Pod != want.Pod || fx.got[0].Container != want.Container ||
		strings.Join(fx.got[0].Command, " ") != strings.Join(want.Command, " ") || out.String() != "ran\n" {
		t.Fatalf("execs %+v (output %q); want one %+v", fx.got, out.String(), want)
	}
	if len(h.rec.got) != 1 || h.rec.got[0].Kind != "Pod" || h.rec.got[0].Name != "rc-head" || h.rec.got[0].Reason != actions.ReasonExec ||
		h.rec.got[0].Note != "Opened a shell in container ray, exit code 0, by alice (context kind-dev) from raydar" {
		t.Fatalf("events %+v", h.rec.got)
	}
	line := lastAuditLine(t, h.audit)
	if line["action"] != "exec" || line["outcome"] != "applied" {
		t.Fatalf("audit line %v", line)
	}
	d, _ := line["details"].(map[string]any)
	if d["pod"] != "rc-head" || d["container"] != "ray" || d["shell"] != true || d["tty"] != true || d["exitCode"] != float64(0) {
		t.Fatalf("audit details %v", d)
	}
}

func TestExecOfACommandThatFailsIsAppliedWithItsExitCode(t *testing.T) {
	fx := &fakeExec{code: 3}
	h := newHarness(t, actions.Options{Exec: fx.run}, interceptor.Funcs{}, execFixtures()...)
	r, err := h.a.Exec(context.Background(), "team-a", "rc", actions.ExecRequest{Pod: "rc-cpu-2", Command: []string{"ray", "status"}}, podexec.Streams{})
	var ee *podexec.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || r.Outcome != actions.OutcomeApplied {
		t.Fatalf("Exec: %v (outcome %s); want exit code 3, applied", err, r.Outcome)
	}
	if fx.got[0].Pod != "rc-cpu-2" || len(h.rec.got) != 1 || !strings.Contains(h.rec.got[0].Note, "Ran ray status in container ray, exit code 3") {
		t.Fatalf("execs %+v, events %+v", fx.got, h.rec.got)
	}
	if d, _ := lastAuditLine(t, h.audit)["details"].(map[string]any); d["exitCode"] != float64(3) {
		t.Fatalf("audit details %v", d)
	}
}

func TestExecRefusesWhatIsNotThere(t *testing.T) {
	objs := execFixtures()
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && p.Name == "rc-cpu-1" {
			p.Status.Phase = corev1.PodPending
		}
	}
	for name, tc := range map[string]struct {
		req  actions.ExecRequest
		want string
	}{
		"not the cluster's": {actions.ExecRequest{Pod: "other"}, "pod other is not a pod of RayCluster team-a/rc (its pods: rc-cpu-1, rc-cpu-2, rc-head)"},
		"pending":           {actions.ExecRequest{Pod: "rc-cpu-1"}, "pod team-a/rc-cpu-1 is Pending, not Running"},
		"no such container": {actions.ExecRequest{Container: "sidecar"}, `pod team-a/rc-head has no container "sidecar" (its containers: ray)`},
	} {
		t.Run(name, func(t *testing.T) {
			fx := &fakeExec{}
			h := newHarness(t, actions.Options{Exec: fx.run}, interceptor.Funcs{}, objs...)
			r, err := h.a.Exec(context.Background(), "team-a", "rc", tc.req, podexec.Streams{})
			if !errors.Is(err, actions.ErrInvalid) || !strings.Contains(err.Error(), tc.want) || r.Outcome != actions.OutcomeRejected {
				t.Fatalf("error %v (outcome %s); want it to say %q", err, r.Outcome, tc.want)
			}
			if len(fx.got) != 0 {
				t.Fatalf("exec ran: %+v", fx.got)
			}
		})
	}
}

func TestExecOnAProtectedContextWantsTheClusterName(t *testing.T) {
	fx := &fakeExec{}
	h := newHarness(t, actions.Options{Exec: fx.run, Protected: true}, interceptor.Funcs{}, execFixtures()...)
	_, err := h.a.Exec(actions.WithConfirmation(context.Background(), "rc-head"), "team-a", "rc", actions.ExecRequest{}, podexec.Streams{})
	if !errors.Is(err, actions.ErrProtected) || len(fx.got) != 0 {
		t.Fatalf("error %v, %d execs; want a ProtectedError and none", err, len(fx.got))
	}
	if _, err := h.a.Exec(actions.WithConfirmation(context.Background(), "rc"), "team-a", "rc", actions.ExecRequest{}, podexec.Streams{}); err != nil || len(fx.got) != 1 {
		t.Fatalf("confirmed: %v, %d execs", err, len(fx.got))
	}
}

// TestReadOnlyExecSendsNoRequest: an exec in read-only mode, from --readonly
// or from a context the config file marks read-only, is refused before any
// request reaches the API server (pods/exec is a create), and nothing is
// audited.
func TestReadOnlyExecSendsNoRequest(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer srv.Close()
	pol := &actions.Policy{Path: "/cfg/config.yaml", ReadOnly: []string{"prod-*"}}
	for name, opts := range map[string]actions.Options{
		"--readonly":        {ReadOnly: true, Context: "dev"},
		"read-only context": func() actions.Options { o := actions.Options{Context: "prod-eu"}; pol.Apply("prod-eu", &o); return o }(),
	} {
		t.Run(name, func(t *testing.T) {
			opts.AuditLogPath = filepath.Join(t.TempDir(), "audit.log")
			a, err := actions.NewForConfig(&rest.Config{Host: srv.URL}, opts)
			if err != nil {
				t.Fatal(err)
			}
			r, err := a.Exec(context.Background(), "team-a", "rc", actions.ExecRequest{Command: []string{"ray", "status"}}, podexec.Streams{Out: &bytes.Buffer{}})
			if !errors.Is(err, actions.ErrReadOnly) || r.Outcome != actions.OutcomeRefused {
				t.Fatalf("error %v, outcome %s; want read-only", err, r.Outcome)
			}
			if n := requests.Load(); n != 0 {
				t.Fatalf("%d requests reached the API server in read-only mode", n)
			}
			if _, err := os.Stat(opts.AuditLogPath); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("audit log touched: %v", err)
			}
		})
	}
}

func lastAuditLine(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
