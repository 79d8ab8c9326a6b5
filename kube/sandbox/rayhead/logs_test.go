//go:build unix

package rayhead

import (
	"bufio"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

func TestLogListingPerNode(t *testing.T) {
	h, c := startHead(t, Options{NodeIP: "10.0.0.5"})
	ctx := context.Background()
	h.SetNodes([]Node{
		{Name: "head-uid", IP: "10.0.0.5", Head: true, Group: "headgroup", Total: dashboard.Resources{"CPU": 2}},
		{Name: "w1-uid", IP: "10.0.0.6", Group: "workers", Total: dashboard.Resources{"CPU": 2}},
	})
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "echo hi"})
	waitJob(t, c, id, dashboard.JobSucceeded)

	head, err := c.ListLogs(ctx, dashboard.LogNode{IP: "10.0.0.5"}, "")
	if err != nil {
		t.Fatal(err)
	}
	for cat, file := range map[string]string{"raylet": "raylet.out", "gcs_server": "gcs_server.out", "dashboard": "dashboard.log",
		"internal": dashboard.JobDriverLogFile(id), "agent": "dashboard_agent.log"} {
		if !slices.Contains(head[cat], file) {
			t.Errorf("head: %s not under %s: %v", file, cat, head)
		}
	}
	if !slices.Contains(head["internal"], dashboard.RuntimeEnvSetupPrefix+id+".log") {
		t.Errorf("head: no runtime env setup log for %s: %v", id, head)
	}
	worker, err := c.ListLogs(ctx, dashboard.LogNode{ID: nodeIDFor("w1-uid")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(worker["raylet"], "raylet.out") || len(worker["gcs_server"]) > 0 || len(worker["internal"]) > 0 {
		t.Errorf("worker listing: %v", worker)
	}
	if _, err := c.ListLogs(ctx, dashboard.LogNode{IP: "10.9.9.9"}, ""); !errors.Is(err, dashboard.ErrNotFound) {
		t.Errorf("unknown IP: %v", err)
	}
	out, err := c.ReadLog(ctx, dashboard.LogRequest{SubmissionID: id})
	if err != nil || out != "hi\n" {
		t.Errorf("driver log by submission id: %q, %v", out, err)
	}
	env, err := c.ReadLog(ctx, dashboard.LogRequest{Node: dashboard.LogNode{IP: "10.0.0.5"}, Filename: dashboard.RuntimeEnvSetupPrefix + id + ".log"})
	if err != nil || !strings.Contains(env, "Creating runtime env for job "+id) || !strings.Contains(env, "Successfully created runtime env") {
		t.Errorf("runtime env setup log: %q, %v", env, err)
	}
	if _, err := c.ReadLog(ctx, dashboard.LogRequest{Node: dashboard.LogNode{IP: "10.0.0.6"}, Filename: "gcs_server.out"}); !errors.Is(err, dashboard.ErrNotFound) {
		t.Errorf("gcs_server.out on a worker: %v", err)
	}
}

func TestLogTailAndFollow(t *testing.T) {
	_, c := startHead(t, Options{})
	ctx := context.Background()
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "for i in 1 2 3 4 5; do echo line $i; done; sleep 300"})
	waitJob(t, c, id, dashboard.JobRunning)
	eventually(t, "5 lines", func() (bool, string) {
		out, err := c.ReadLog(ctx, dashboard.LogRequest{SubmissionID: id, Lines: 2})
		return err == nil && out == "line 4\nline 5\n", out
	})

	// A growing driver log, followed.
	id = submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "echo start; sleep 300", SubmissionID: "grow"})
	waitJob(t, c, id, dashboard.JobRunning)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc, err := c.StreamLog(sctx, dashboard.LogRequest{SubmissionID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(rc)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(want string) {
		t.Helper()
		select {
		case l := <-lines:
			if l != want {
				t.Fatalf("line %q, want %q", l, want)
			}
		case <-time.After(waitTimeout):
			t.Fatalf("no line %q", want)
		}
	}
	expect("start")
	// The head's raylet.out grows too: a new job is a new line.
	id2 := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "true"})
	waitJob(t, c, id2, dashboard.JobSucceeded)
	raylet, err := c.ReadLog(ctx, dashboard.LogRequest{Node: dashboard.LogNode{IP: "127.0.0.1"}, Filename: "raylet.out"})
	if err != nil || !strings.Contains(raylet, "Job "+id2+" ended: SUCCEEDED") {
		t.Errorf("raylet.out: %q, %v", raylet, err)
	}
	if _, err := c.StopJob(ctx, id); err != nil {
		t.Fatal(err)
	}
	cancel()
	for range lines { // the stream ends with the context
	}
}

func TestServeControllerLog(t *testing.T) {
	_, c := startHead(t, Options{NodeIP: "10.0.0.5"})
	ctx := context.Background()
	if err := c.DeployServeConfigV2(ctx, "applications:\n  - name: bad\n    import_path: failing_module:app\n"); err != nil {
		t.Fatal(err)
	}
	waitServe(t, c, "bad DEPLOY_FAILED", func(d *dashboard.ServeDetails) bool {
		return d.Applications["bad"].Status == dashboard.AppDeployFailed
	})
	all, err := c.ListAllLogs(ctx, dashboard.LogNode{IP: "10.0.0.5"})
	if err != nil {
		t.Fatal(err)
	}
	var serve []string
	for _, g := range all.Groups() {
		if g.Name == dashboard.LogGroupServe {
			serve = g.Files
		}
	}
	if len(serve) != 1 || !strings.HasPrefix(serve[0], "serve/controller_") {
		t.Fatalf("serve group: %v (listing %v)", serve, all)
	}
	out, err := c.ReadLog(ctx, dashboard.LogRequest{Node: dashboard.LogNode{IP: "10.0.0.5"}, Filename: serve[0], Lines: -1})
	if err != nil || !strings.Contains(out, "Failed to deploy application 'bad'") || !strings.Contains(out, "No module named 'failing_module'") {
		t.Errorf("controller log: %q, %v", out, err)
	}
}

func TestTailStart(t *testing.T) {
	for _, tc := range []struct {
		data string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"}, {"a\nb\nc", 2, "b\nc"}, {"a\nb\n", 5, "a\nb\n"}, {"a\nb\n", -1, "a\nb\n"}, {"", 3, ""},
	} {
		if got := tc.data[tailStart(tc.data, tc.n):]; got != tc.want {
			t.Errorf("tail %d of %q = %q, want %q", tc.n, tc.data, got, tc.want)
		}
	}
}
