package faults

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// APIProxy is a loopback TLS proxy in front of the API server that a test
// controls: every request through it is recorded in its Audit, and Cut
// closes every connection and stops listening (new connections are
// refused) until Restore listens again on the same port.
//
// Clients reach it with Config or Kubeconfig (its own CA, no credentials);
// it forwards with the upstream config's credentials (the sandbox's admin).
type APIProxy struct {
	// Audit records every request that went through; so does Tee when set
	// (a scenario's shared audit beside this proxy's own).
	Audit, Tee *Audit

	addr   string
	caPEM  []byte
	tlsCfg *tls.Config
	srv    *http.Server

	mu     sync.Mutex
	ln     net.Listener // nil while cut
	conns  map[net.Conn]struct{}
	closed bool
}

// NewAPIProxy listens on a free loopback port and forwards to upstream.
func NewAPIProxy(upstream *rest.Config) (*APIProxy, error) {
	target, err := url.Parse(upstream.Host)
	if err != nil {
		return nil, err
	}
	rt, err := rest.TransportFor(upstream)
	if err != nil {
		return nil, err
	}
	cert, caPEM, err := selfSigned()
	if err != nil {
		return nil, err
	}
	p := &APIProxy{
		Audit:  &Audit{},
		caPEM:  caPEM,
		tlsCfg: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}},
		conns:  map[net.Conn]struct{}{},
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
		},
		Transport:     rt,
		FlushInterval: -1, // watches stream
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	p.srv = &http.Server{
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
			rp.ServeHTTP(sw, r)
			req := Request{Method: r.Method, Path: r.URL.Path, UserAgent: r.UserAgent(), Code: sw.code, At: time.Now()}
			p.Audit.Record(req)
			if p.Tee != nil {
				p.Tee.Record(req)
			}
		}),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	return p, nil
}

func (p *APIProxy) serve(ln net.Listener) {
	p.ln = ln
	tl := tls.NewListener(&trackingListener{Listener: ln, p: p}, p.tlsCfg)
	go func() { _ = p.srv.Serve(tl) }()
}

// Addr is host:port of the proxy.
func (p *APIProxy) Addr() string { return p.addr }

// Config is a client configuration that reaches the API server through the
// proxy.
func (p *APIProxy) Config() *rest.Config {
	return &rest.Config{Host: "https://" + p.addr, TLSClientConfig: rest.TLSClientConfig{CAData: p.caPEM}, QPS: 1000, Burst: 2000}
}

// WriteKubeconfig writes a kubeconfig file that reaches the API server
// through the proxy.
func (p *APIProxy) WriteKubeconfig(path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["faults"] = &clientcmdapi.Cluster{Server: "https://" + p.addr, CertificateAuthorityData: p.caPEM}
	kc.AuthInfos["faults"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["faults"] = &clientcmdapi.Context{Cluster: "faults", AuthInfo: "faults", Namespace: "default"}
	kc.CurrentContext = "faults"
	return clientcmd.WriteToFile(*kc, path)
}

// Cut closes every open connection and the listener: until Restore, a
// connection attempt is refused. It returns how many connections it cut.
func (p *APIProxy) Cut() int {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close() // unregisters itself
	}
	return len(conns)
}

// Restore listens again on the same address.
func (p *APIProxy) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("apiproxy: closed")
	}
	if p.ln != nil {
		return nil
	}
	var (
		ln  net.Listener
		err error
	)
	// The port was ours a moment ago; binding it again can fail only
	// briefly (nothing else binds loopback ports it did not ask for).
	for range 50 {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			p.serve(ln)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("apiproxy: listening again on %s: %w", p.addr, err)
}

// Close stops the proxy for good.
func (p *APIProxy) Close() error {
	p.Cut()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	return p.srv.Close()
}

// trackingListener remembers every accepted connection so that Cut can
// close it.
type trackingListener struct {
	net.Listener
	p *APIProxy
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	if l.p.ln == nil { // cut between Accept and here
		_ = c.Close()
		return c, nil
	}
	tc := &trackedConn{Conn: c, p: l.p}
	l.p.conns[tc] = struct{}{}
	return tc, nil
}

type trackedConn struct {
	net.Conn
	p    *APIProxy
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.p.mu.Unlock()
	})
	return c.Conn.Close()
}

// statusWriter remembers the response code.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController flush streamed responses (watches).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// selfSigned makes a serving certificate for 127.0.0.1 and returns it with
// its PEM (the client's CA).
func selfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "raydar-faults-proxy"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	return cert, certPEM, err
}
