package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// stopGrace is how long Stop waits after SIGTERM before it sends SIGKILL.
// Every component stops well within it (kube-apiserver too, as it does not
// wait for its clients: see startAPIServer); it bounds one that hangs.
const stopGrace = 5 * time.Second

// Stop stops every component, clients of the API server first (SIGTERM, then
// SIGKILL after stopGrace), waits until each one has exited, removes the
// state directory if Start created it, and reports what did not go cleanly.
// It is safe to call more than once; later calls return the first call's
// result.
func (s *Sandbox) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Sandbox) stop() error {
	var errs []error
	// The sandbox's own client, then the API server's other clients (kwok,
	// scheduler, controller-manager) side by side, then the API server and
	// etcd last.
	if s.configs != nil {
		s.configs.stop()
	}
	if len(s.procs) > 0 {
		begin := time.Now()
		var (
			mu    sync.Mutex
			wg    sync.WaitGroup
			names []string
		)
		for _, p := range s.procs {
			names = append(names, p.name)
			wg.Go(func() {
				if err := p.stop(stopGrace); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		s.logf("stopped %s in %s", strings.Join(names, ", "), since(begin))
	}
	if s.env != nil {
		begin := time.Now()
		if err := s.stopControlPlane(); err != nil {
			errs = append(errs, err)
		}
		s.logf("stopped %s and %s in %s", APIServer, Etcd, since(begin))
	}
	for _, f := range s.envLogs {
		_ = f.Close()
	}
	if s.spawner != nil {
		s.spawner.close()
	}
	if s.ownsState && s.StateDir != "" {
		if err := os.RemoveAll(s.StateDir); err != nil {
			errs = append(errs, err)
		}
	}
	if s.lock != nil {
		_ = s.lock.Close()
	}
	if len(errs) > 0 {
		return fmt.Errorf("sandbox: stop: %w", errors.Join(errs...))
	}
	return nil
}

// stopControlPlane stops kube-apiserver and then etcd through envtest
// (SIGTERM, SIGKILL after stopGrace) and returns once both have exited:
// envtest sends its SIGKILL without waiting for it to take effect.
func (s *Sandbox) stopControlPlane() error {
	var errs []error
	if err := s.env.Stop(); err != nil {
		errs = append(errs, fmt.Errorf("stopping %s and %s: %w", APIServer, Etcd, err))
	}
	binDir := filepath.Join(s.StateDir, "bin")
	for _, name := range []string{binAPIServer, binEtcd} {
		pid, ok := readPid(pidPath(binDir, name))
		if !ok {
			continue // never started
		}
		if err := waitExited(pid, stopGrace); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
