package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// Restarting control-plane components, for fault tests: the API server and
// etcd come back on the same address with the same certificates, and etcd
// with its data, so every client (kubeconfig, Config) keeps working once
// they are up again.

// RestartGrace is how long StopAPIServer and RestartEtcd wait after
// SIGTERM before they SIGKILL.
const RestartGrace = 10 * time.Second

// StopAPIServer stops kube-apiserver (SIGTERM, then SIGKILL after
// RestartGrace) and returns once its port refuses connections; etcd and
// every other component keep running. StartAPIServer brings it back.
func (s *Sandbox) StopAPIServer() error {
	if s.env == nil {
		return errors.New("sandbox: not started")
	}
	a := s.env.ControlPlane.APIServer
	a.StopTimeout = RestartGrace
	// A timeout is not a failure: envtest has sent SIGKILL then.
	_ = a.Stop()
	u, err := url.Parse(s.Config.Host)
	if err != nil {
		return err
	}
	return s.waitPortClosed(u.Host)
}

// waitPortClosed waits until nothing listens on addr (host:port) any more:
// the process that did is gone.
func (s *Sandbox) waitPortClosed(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.poll(ctx, addr+" to close", func(context.Context) (bool, error) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return true, nil
		}
		c.Close()
		return false, nil
	})
}

// StartAPIServer starts a stopped kube-apiserver again on the same port
// with the same certificates and returns once it answers /readyz.
func (s *Sandbox) StartAPIServer(ctx context.Context) error {
	if s.env == nil {
		return errors.New("sandbox: not started")
	}
	if err := s.spawner.do(s.env.ControlPlane.APIServer.Start); err != nil {
		return fmt.Errorf("sandbox: starting kube-apiserver again: %w\n%s:\n%s", err, s.LogPath(APIServer), tailFile(s.LogPath(APIServer), 10))
	}
	return s.waitAPIReady(ctx)
}

// RestartAPIServer stops kube-apiserver and starts it again.
func (s *Sandbox) RestartAPIServer(ctx context.Context) error {
	if err := s.StopAPIServer(); err != nil {
		return err
	}
	return s.StartAPIServer(ctx)
}

// RestartEtcd stops etcd (SIGTERM, SIGKILL after RestartGrace) and starts it again on the same client
// address with the same data directory: every object survives. The API
// server keeps running and reconnects; RestartEtcd returns once the API
// server answers /readyz again (which checks etcd).
func (s *Sandbox) RestartEtcd(ctx context.Context) error {
	if s.env == nil {
		return errors.New("sandbox: not started")
	}
	e := s.env.ControlPlane.Etcd
	e.StopTimeout = RestartGrace
	_ = e.Stop() // a timeout is not a failure: envtest has sent SIGKILL then
	if err := s.waitPortClosed(e.URL.Host); err != nil {
		return err
	}
	if err := s.spawner.do(e.Start); err != nil {
		return fmt.Errorf("sandbox: starting etcd again: %w\n%s:\n%s", err, s.LogPath(Etcd), tailFile(s.LogPath(Etcd), 10))
	}
	return s.waitAPIReady(ctx)
}

// waitAPIReady polls the API server's /readyz (which includes etcd) until
// it answers ok.
func (s *Sandbox) waitAPIReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cfg := rest.CopyConfig(s.Config)
	cfg.Timeout = 5 * time.Second
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	defer hc.CloseIdleConnections()
	err = s.poll(ctx, "kube-apiserver /readyz", func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/readyz?verbose", nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return true, nil
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return false, fmt.Errorf("%s: %s", resp.Status, b)
	})
	if err != nil {
		return fmt.Errorf("%w\n%s:\n%s", err, s.LogPath(APIServer), tailFile(s.LogPath(APIServer), 15))
	}
	return nil
}
