package refusable

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server serves one handler on one address until Close. Create it with
// Listen. Its methods are safe for concurrent use.
type Server struct {
	handler http.Handler
	addr    string

	mu       sync.Mutex
	srv      *http.Server
	refusing bool
	closed   bool
	wg       sync.WaitGroup // Serve goroutines
}

// Listen listens on addr (port 0 picks a free port) and serves handler.
func Listen(addr string, handler http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{handler: handler, addr: ln.Addr().String()}
	s.serve(ln)
	return s, nil
}

// serve starts serving on ln. s.mu must be held, or s not shared yet.
func (s *Server) serve(ln net.Listener) {
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	s.srv = srv
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = srv.Serve(ln) // returns on Close
	}()
}

// Addr is the address the server listens on (host:port, the port resolved).
func (s *Server) Addr() string { return s.addr }

// URL is "http://" + Addr.
func (s *Server) URL() string { return "http://" + s.addr }

// SetRefuse closes the listener and every open connection (on=true), so that
// connections are refused, or listens again on the same address (on=false).
// It does nothing when already so, or after Close.
func (s *Server) SetRefuse(on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || on == s.refusing {
		return nil
	}
	if on {
		s.srv.Close()
		s.refusing = true
		return nil
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listening again on %s: %w", s.addr, err)
	}
	s.serve(ln)
	s.refusing = false
	return nil
}

// Close stops serving for good and waits for the serving goroutines to
// return (handlers still running are not waited for). It is safe to call
// more than once.
func (s *Server) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		s.srv.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
