//go:build unix

package rayhead

import (
	"context"
	"testing"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// waitTimeout is generous: the tests run on a loaded 2-core machine.
const waitTimeout = 60 * time.Second

// startHead starts a Head on loopback, closed when the test ends, and a
// client for it with a timeout that tolerates a busy machine.
func startHead(t *testing.T, opts Options) (*Head, *dashboard.Client) {
	t.Helper()
	if opts.ServeDeployDelay == 0 {
		opts.ServeDeployDelay = 50 * time.Millisecond
	}
	h := New(opts)
	if err := h.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h, newClient(t, h)
}

func newClient(t *testing.T, h *Head, opts ...dashboard.Option) *dashboard.Client {
	t.Helper()
	c, err := dashboard.New(h.DashboardURL(), append([]dashboard.Option{dashboard.WithTimeout(20 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually polls cond until it returns true or waitTimeout passes.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last state: %s", waitTimeout, what, last)
		}
		time.Sleep(25 * time.Millisecond) // poll interval, not synchronisation
	}
}

// waitJob polls until the job has the wanted status and returns its info.
func waitJob(t *testing.T, c *dashboard.Client, id string, want dashboard.JobStatus) *dashboard.JobInfo {
	t.Helper()
	var info *dashboard.JobInfo
	eventually(t, "job "+id+" to be "+string(want), func() (bool, string) {
		var err error
		info, err = c.GetJobInfo(context.Background(), id)
		if err != nil {
			return false, err.Error()
		}
		if info.Status.IsTerminal() && info.Status != want {
			t.Fatalf("job %s ended %s, want %s: %s", id, info.Status, want, info.Message)
		}
		return info.Status == want, string(info.Status) + ": " + info.Message
	})
	return info
}

func submit(t *testing.T, c *dashboard.Client, req dashboard.SubmitJobRequest) string {
	t.Helper()
	id, err := c.SubmitJob(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// waitServe polls the Serve status until cond accepts it.
func waitServe(t *testing.T, c *dashboard.Client, what string, cond func(*dashboard.ServeDetails) bool) *dashboard.ServeDetails {
	t.Helper()
	var d *dashboard.ServeDetails
	eventually(t, what, func() (bool, string) {
		var err error
		d, err = c.GetServeApplications(context.Background())
		if err != nil {
			return false, err.Error()
		}
		state := ""
		for name, a := range d.Applications {
			state += name + "=" + string(a.Status) + " "
		}
		return cond(d), state
	})
	return d
}
