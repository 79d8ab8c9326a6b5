//go:build unix

package rayhead

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

func TestFaultHTTP500(t *testing.T) {
	h, c := startHead(t, Options{})
	ctx := context.Background()
	if err := c.DeployServeConfigV2(ctx, "applications:\n  - {name: a, import_path: a.b}\n"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the proxy to be healthy", func() (bool, string) {
		err := dashboard.ProxyHealthy(ctx, h.ProxyURL())
		return err == nil, errString(err)
	})

	h.SetHTTP500(true)
	_, err := c.ListJobs(ctx)
	var he *dashboard.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 500 || errors.Is(err, dashboard.ErrUnavailable) {
		t.Errorf("ListJobs under HTTP500 = %v", err)
	}
	if err := c.CheckGCSHealth(ctx); !errors.As(err, &he) || he.StatusCode != 500 {
		t.Errorf("CheckGCSHealth under HTTP500 = %v", err)
	}
	if err := dashboard.ProxyHealthy(ctx, h.ProxyURL()); !errors.As(err, &he) || he.StatusCode != 500 {
		t.Errorf("ProxyHealthy under HTTP500 = %v", err)
	}
	h.SetHTTP500(false)
	if _, err := c.ListJobs(ctx); err != nil {
		t.Errorf("ListJobs after HTTP500 off = %v", err)
	}
	if err := dashboard.ProxyHealthy(ctx, h.ProxyURL()); err != nil {
		t.Errorf("ProxyHealthy after HTTP500 off = %v", err)
	}
}

func TestFaultLatency(t *testing.T) {
	h, _ := startHead(t, Options{})
	ctx := context.Background()
	fast := newClient(t, h, dashboard.WithTimeout(200*time.Millisecond))

	h.SetLatency(time.Minute)
	start := time.Now()
	err := fast.CheckGCSHealth(ctx)
	if !errors.Is(err, dashboard.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CheckGCSHealth under latency = %v", err)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("the timeout took %v", el)
	}

	// A latency below the timeout only slows the answer down.
	h.SetLatency(50 * time.Millisecond)
	patient := newClient(t, h)
	start = time.Now()
	if err := patient.CheckGCSHealth(ctx); err != nil {
		t.Errorf("CheckGCSHealth with small latency = %v", err)
	}
	if el := time.Since(start); el < 50*time.Millisecond {
		t.Errorf("answered after %v, before the latency", el)
	}

	h.SetLatency(0)
	if err := fast.CheckGCSHealth(ctx); err != nil {
		t.Errorf("CheckGCSHealth after latency off = %v", err)
	}

	// Close does not wait for a delayed answer.
	h.SetLatency(time.Hour)
	errc := make(chan error, 1)
	go func() { errc <- patient.CheckGCSHealth(ctx) }()
	eventually(t, "the delayed request to arrive", func() (bool, string) {
		return h.delayed.Load() > 0, "no request waiting"
	})
	start = time.Now()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("Close took %v", el)
	}
	if err := <-errc; err == nil {
		t.Error("a request pending across Close succeeded")
	}
}

func TestFaultRefuse(t *testing.T) {
	h, c := startHead(t, Options{})
	ctx := context.Background()
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "sleep 300"})
	waitJob(t, c, id, dashboard.JobRunning)
	addr, proxy := h.DashboardAddr(), h.ProxyAddr()

	if err := h.SetRefuse(true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetJobInfo(ctx, id); !errors.Is(err, dashboard.ErrUnavailable) || errors.Is(err, dashboard.ErrNotFound) {
		t.Errorf("GetJobInfo while refusing = %v", err)
	}
	if err := dashboard.ProxyHealthy(ctx, h.ProxyURL()); !errors.Is(err, dashboard.ErrUnavailable) {
		t.Errorf("ProxyHealthy while refusing = %v", err)
	}
	if err := h.SetRefuse(true); err != nil {
		t.Errorf("SetRefuse(true) twice: %v", err)
	}

	if err := h.SetRefuse(false); err != nil {
		t.Fatal(err)
	}
	if h.DashboardAddr() != addr || h.ProxyAddr() != proxy {
		t.Errorf("addresses changed: %s %s → %s %s", addr, proxy, h.DashboardAddr(), h.ProxyAddr())
	}
	// The job kept running while the head refused connections.
	info, err := c.GetJobInfo(ctx, id)
	if err != nil || info.Status != dashboard.JobRunning {
		t.Errorf("GetJobInfo after refusing = %+v, %v", info, err)
	}
}

func TestToken(t *testing.T) {
	h, _ := startHead(t, Options{Token: "s3cret"})
	ctx := context.Background()

	none := newClient(t, h)
	_, err := none.ListJobs(ctx)
	var he *dashboard.HTTPError
	if !errors.Is(err, dashboard.ErrUnauthorized) || !errors.As(err, &he) || he.StatusCode != 401 {
		t.Errorf("without token: %v", err)
	}
	wrong := newClient(t, h, dashboard.WithToken("nope"))
	if _, err := wrong.ListJobs(ctx); !errors.Is(err, dashboard.ErrUnauthorized) || !errors.As(err, &he) || he.StatusCode != 403 {
		t.Errorf("wrong token: %v", err)
	}
	if err := none.CheckGCSHealth(ctx); err != nil {
		t.Errorf("health needs no token: %v", err)
	}
	right := newClient(t, h, dashboard.WithToken("s3cret"))
	if _, err := right.ListJobs(ctx); err != nil {
		t.Errorf("right token: %v", err)
	}
	if err := right.DeployServeConfigV2(ctx, "applications: []\n"); err != nil {
		t.Errorf("right token, serve: %v", err)
	}
}

func TestUnknownJob(t *testing.T) {
	_, c := startHead(t, Options{})
	ctx := context.Background()
	if _, err := c.GetJobInfo(ctx, "raysubmit_nope"); !errors.Is(err, dashboard.ErrNotFound) {
		t.Errorf("GetJobInfo = %v", err)
	}
	if _, err := c.GetJobLogs(ctx, "raysubmit_nope"); !errors.Is(err, dashboard.ErrNotFound) {
		t.Errorf("GetJobLogs = %v", err)
	}
	if err := c.DeleteJob(ctx, "raysubmit_nope"); !errors.Is(err, dashboard.ErrNotFound) {
		t.Errorf("DeleteJob = %v", err)
	}
}
