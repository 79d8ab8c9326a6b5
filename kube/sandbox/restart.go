package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// Restarting control-plane components, for fault tests: the API server and
// etcd come back on the same address with the same certificates, and etcd
// with its data, so every client (kubeconfig, Config) keeps working once
// they are up again.

// StopAPIServer stops kube-apiserver (SIGTERM, then SIGKILL after
// envtest's stop timeout); etcd and every other component keep running.
// StartAPIServer brings it back.
func (s *Sandbox) StopAPIServer() error {
	if s.env == nil {
		return errors.New("sandbox: not started")
	}
	if err := s.env.ControlPlane.APIServer.Stop(); err != nil {
		return fmt.Errorf("sandbox: stopping kube-apiserver: %w", err)
	}
	return nil
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

// RestartEtcd stops etcd (SIGTERM) and starts it again on the same client
// address with the same data directory: every object survives. The API
// server keeps running and reconnects; RestartEtcd returns once the API
// server answers /readyz again (which checks etcd).
func (s *Sandbox) RestartEtcd(ctx context.Context) error {
	if s.env == nil {
		return errors.New("sandbox: not started")
	}
	e := s.env.ControlPlane.Etcd
	if err := e.Stop(); err != nil {
		return fmt.Errorf("sandbox: stopping etcd: %w", err)
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
	return s.poll(ctx, "kube-apiserver /readyz", func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/readyz", nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}
