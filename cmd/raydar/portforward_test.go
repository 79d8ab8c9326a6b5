package main

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/kube/portforward"
)

func TestPortForwardPrintsURLsAndSSHLine(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, testCluster(ns, "pf"))
	t.Setenv("USER", "ana")
	host, _ := os.Hostname()

	cmd := newRootCmd()
	cmd.SetArgs([]string{"--kubeconfig", sb.KubeconfigPath, "port-forward", "pf", "-n", ns, "--port", ":8265", "--serve", "--port", ":8000"})
	var out syncBuffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(runCtx) }()
	deadline := time.Now().Add(time.Minute)
	// No head pod: the forward keeps listening and says why it waits.
	for !strings.Contains(out.String(), "has no head pod") {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no state line within a minute:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond) // a poll interval
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Ctrl-C (context end) should end the command cleanly: %v", err)
	}
	o := out.String()
	for _, want := range []string{
		"Forwarding cluster " + ns + "/pf (head):",
		"http://127.0.0.1:",
		"ssh -L ",
		" ana@" + host,
		"-L 8000:127.0.0.1:8000",
	} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q:\n%s", want, o)
		}
	}
}

func TestPortForwardPortClashIsOneClearError(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, testCluster(ns, "pf"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	begin := time.Now()
	r := raydar(t, "", "port-forward", "pf", "-n", ns, "--port", port+":8265")
	if r.err == nil || !strings.Contains(r.err.Error(), "127.0.0.1:"+port+" is already in use") {
		t.Fatalf("port clash: %v (stdout %q)", r.err, r.stdout)
	}
	if time.Since(begin) > 30*time.Second {
		t.Errorf("the clash took %s to report: it was retried", time.Since(begin))
	}
}

func TestPortForwardMissingCluster(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	r := raydar(t, "", "port-forward", "nope", "-n", ns)
	if r.err == nil || !strings.Contains(r.err.Error(), "RayCluster "+ns+"/nope does not exist") {
		t.Fatalf("missing cluster: %v", r.err)
	}
}

func TestPortForwardFlags(t *testing.T) {
	for _, c := range []struct {
		f    portForwardFlags
		want []portforward.Port
		err  string
	}{
		{portForwardFlags{}, []portforward.Port{portforward.Dashboard}, ""},
		{portForwardFlags{serve: true, client: true}, []portforward.Port{portforward.Serve, portforward.Client}, ""},
		{portForwardFlags{dashboard: true, ports: []string{"8265:9000"}}, nil, "local port 8265 asked for twice"},
		{portForwardFlags{ports: []string{"x"}}, nil, "port must be a number"},
	} {
		got, err := c.f.list()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: error %v, want %q", c.f, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%+v: %v, %v; want %v", c.f, got, err, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%+v: %v, want %v", c.f, got, c.want)
			}
		}
	}
}
