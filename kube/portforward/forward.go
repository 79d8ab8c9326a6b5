package portforward

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/tools/portforward"
)

// ErrPortInUse is matched (errors.Is) by the error of a forward whose local
// port is taken.
var ErrPortInUse = errors.New("local port already in use")

// PortInUseError says that the local side of Port cannot be listened on:
// Address:Port is taken by another program (or another forward).
type PortInUseError struct {
	Address string
	Port    Port
	Err     error
}

// Error names the address in use and suggests another local port.
func (e *PortInUseError) Error() string {
	return fmt.Sprintf("local port %s is already in use (another port-forward or program listens there); "+
		"pick another local port, e.g. --port %d:%d", joinHostPort(e.Address, e.Port.Local), e.Port.Local+1, e.Port.Remote)
}

// Is makes errors.Is(err, ErrPortInUse) true.
func (e *PortInUseError) Is(target error) bool { return target == ErrPortInUse }

// Unwrap returns the listen error.
func (e *PortInUseError) Unwrap() error { return e.Err }

// connWait bounds how long a local connection made while the forward
// reconnects waits for the new stream before it is closed.
const connWait = 30 * time.Second

// Forward is one supervised forward; see the package doc. Get one from
// Manager.Start.
type Forward struct {
	id        int
	m         *Manager
	spec      Spec
	listeners []net.Listener

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	reqID  atomic.Int64

	changed chan struct{}

	mu     sync.Mutex
	state  State
	sess   *session
	sessCh chan struct{} // closed when sess is set
	conns  map[net.Conn]struct{}
	done   bool
}

// session is one stream connection to one pod.
type session struct {
	conn httpstream.Connection
	pod  *corev1.Pod
	once sync.Once
	err  error         // why it broke, set once
	bad  chan struct{} // closed when err is set
}

// fail records why the session broke and closes it.
func (s *session) fail(err error) {
	s.once.Do(func() {
		s.err = err
		close(s.bad)
	})
	_ = s.conn.Close()
}

// listen binds every local port, or none: a port in use is a
// *PortInUseError.
func listen(address string, ports []Port) ([]net.Listener, []Port, error) {
	var ls []net.Listener
	out := make([]Port, len(ports))
	for i, p := range ports {
		l, err := net.Listen("tcp", joinHostPort(address, p.Local))
		if err != nil {
			for _, l := range ls {
				_ = l.Close()
			}
			if errors.Is(err, syscall.EADDRINUSE) {
				return nil, nil, &PortInUseError{Address: address, Port: p, Err: err}
			}
			return nil, nil, fmt.Errorf("listening on %s: %w", joinHostPort(address, p.Local), err)
		}
		ls = append(ls, l)
		out[i] = p
		out[i].Local = l.Addr().(*net.TCPAddr).Port
	}
	return ls, out, nil
}

// State is the forward's state now; it never blocks on I/O.
func (f *Forward) State() State {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.state
	s.Ports = append([]Port(nil), s.Ports...)
	return s
}

// Changed receives (coalesced) after every state change.
func (f *Forward) Changed() <-chan struct{} { return f.changed }

// ID is the forward's number in its Manager.
func (f *Forward) ID() int { return f.id }

func (f *Forward) update(change func(State) State) {
	f.mu.Lock()
	f.state = change(f.state)
	f.mu.Unlock()
	f.notify()
}

func (f *Forward) notify() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
	f.m.notify()
}

// start runs the supervisor and the accept loops.
func (f *Forward) start() {
	ports := append([]Port(nil), f.state.Ports...) // before any goroutine changes state
	for i, l := range f.listeners {
		f.wg.Add(1)
		go func() { defer f.wg.Done(); f.accept(l, ports[i]) }()
	}
	f.wg.Add(1)
	go func() { defer f.wg.Done(); f.supervise() }()
}

// stop ends the forward and waits for all its goroutines.
func (f *Forward) stop() {
	f.mu.Lock()
	if f.done {
		f.mu.Unlock()
		f.wg.Wait()
		return
	}
	f.done = true
	sess := f.sess
	conns := make([]net.Conn, 0, len(f.conns))
	for c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	f.cancel()
	for _, l := range f.listeners {
		_ = l.Close()
	}
	if sess != nil {
		_ = sess.conn.Close()
	}
	for _, c := range conns {
		_ = c.Close()
	}
	f.wg.Wait()
	f.update(func(s State) State { return s.stopped(time.Now()) })
}

// supervise makes streams, watches them, and makes them again when they
// break, until the forward stops or RBAC refuses it.
func (f *Forward) supervise() {
	failures := 0
	for {
		if d := f.m.opts.Backoff.Delay(failures); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-f.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		s, err := f.connect()
		if f.ctx.Err() != nil {
			if s != nil {
				_ = s.conn.Close()
			}
			return
		}
		if err != nil {
			f.update(func(st State) State { return st.broke(err, time.Now()) })
			var fe *ForbiddenError
			if errors.As(err, &fe) {
				f.update(func(st State) State { st = st.stopped(time.Now()); st.Phase = Failed; return st })
				return
			}
			failures = nextFailures(failures, 0)
			continue
		}
		upAt := time.Now()
		f.setSession(s)
		err = f.watch(s)
		f.clearSession(s)
		_ = s.conn.Close()
		if f.ctx.Err() != nil {
			return
		}
		f.update(func(st State) State { return st.broke(err, time.Now()) })
		failures = nextFailures(failures, time.Since(upAt))
	}
}

// connect finds the pod and opens a stream connection to it.
func (f *Forward) connect() (*session, error) {
	cs := f.m.opts.Clientset
	pod, err := resolve(f.ctx, cs, f.spec)
	if err != nil {
		return nil, err
	}
	u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	d, err := dialer(f.m.opts.Config, u)
	if err != nil {
		return nil, err
	}
	conn, proto, err := d.Dial(portforward.PortForwardProtocolV1Name)
	if err != nil {
		return nil, explain(fmt.Errorf("connecting to pod %s: %w", pod.Name, err), pod.Namespace)
	}
	if proto != portforward.PortForwardProtocolV1Name {
		_ = conn.Close()
		return nil, fmt.Errorf("connecting to pod %s: the server speaks %q, not %q", pod.Name, proto, portforward.PortForwardProtocolV1Name)
	}
	return &session{conn: conn, pod: pod, bad: make(chan struct{})}, nil
}

// watch returns why the session broke (nil once the forward stops): its
// connection closed, a stream reported an error, or the pod is no longer
// the one to forward to.
func (f *Forward) watch(s *session) error {
	tick := time.NewTicker(f.m.opts.CheckInterval)
	defer tick.Stop()
	checkErrs := 0
	for {
		select {
		case <-f.ctx.Done():
			return nil
		case <-s.bad:
			return s.err
		case <-s.conn.CloseChan():
			select {
			case <-s.bad:
				return s.err
			default:
			}
			return fmt.Errorf("stream to pod %s closed (connection lost)", s.pod.Name)
		case <-tick.C:
			got, err := getPod(f.ctx, f.m.opts.Clientset, s.pod.Namespace, s.pod.Name)
			if err != nil {
				if f.ctx.Err() != nil {
					return nil
				}
				// One failed check is not a broken stream; three in a row
				// are reported as one.
				if checkErrs++; checkErrs >= 3 {
					return fmt.Errorf("checking pod %s: %w", s.pod.Name, explain(err, s.pod.Namespace))
				}
				continue
			}
			checkErrs = 0
			if why := stillGood(s.pod, got, f.spec.Cluster != ""); why != "" {
				return errors.New(why)
			}
		}
	}
}

func (f *Forward) setSession(s *session) {
	f.mu.Lock()
	f.sess = s
	close(f.sessCh)
	f.state = f.state.connected(s.pod.Name, time.Now())
	f.mu.Unlock()
	f.notify()
}

func (f *Forward) clearSession(s *session) {
	f.mu.Lock()
	if f.sess == s {
		f.sess = nil
		f.sessCh = make(chan struct{})
	}
	f.mu.Unlock()
}

// session waits for a stream connection: nil when the forward stops or none
// comes within connWait.
func (f *Forward) session() *session {
	timer := time.NewTimer(connWait)
	defer timer.Stop()
	for {
		f.mu.Lock()
		s, ch := f.sess, f.sessCh
		f.mu.Unlock()
		if s != nil {
			return s
		}
		select {
		case <-ch:
		case <-f.ctx.Done():
			return nil
		case <-timer.C:
			return nil
		}
	}
}

func (f *Forward) accept(l net.Listener, p Port) {
	for {
		c, err := l.Accept()
		if err != nil {
			if f.ctx.Err() == nil {
				f.update(func(st State) State {
					return st.broke(fmt.Errorf("local listener %s: %w", l.Addr(), err), time.Now())
				})
			}
			return
		}
		if !f.track(c) {
			_ = c.Close()
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer f.untrack(c)
			f.handle(c, p)
		}()
	}
}

func (f *Forward) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

func (f *Forward) untrack(c net.Conn) {
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
	_ = c.Close()
}

// handle copies one local connection to the remote port through a pair of
// streams (error and data), as kubectl does. An error from the pod side
// (nothing listens on the port, the pod went) breaks the session, so the
// supervisor makes a new one to the pod that is current then.
func (f *Forward) handle(c net.Conn, p Port) {
	s := f.session()
	if s == nil {
		return
	}
	headers := http.Header{}
	headers.Set(v1.StreamType, v1.StreamTypeError)
	headers.Set(v1.PortHeader, strconv.Itoa(p.Remote))
	headers.Set(v1.PortForwardRequestIDHeader, strconv.FormatInt(f.reqID.Add(1), 10))
	errStream, err := s.conn.CreateStream(headers)
	if err != nil {
		s.fail(fmt.Errorf("opening a stream to pod %s: %w", s.pod.Name, err))
		return
	}
	_ = errStream.Close() // nothing is written to it
	defer s.conn.RemoveStreams(errStream)
	errMsg := make(chan []byte, 1)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		msg, rerr := io.ReadAll(errStream)
		if rerr != nil && len(msg) == 0 {
			msg = []byte(rerr.Error())
		}
		errMsg <- msg
	}()

	headers.Set(v1.StreamType, v1.StreamTypeData)
	data, err := s.conn.CreateStream(headers)
	if err != nil {
		s.fail(fmt.Errorf("opening a stream to pod %s: %w", s.pod.Name, err))
		return
	}
	defer s.conn.RemoveStreams(data)

	remoteDone := make(chan struct{})
	localDone := make(chan struct{})
	f.wg.Add(2)
	go func() {
		defer f.wg.Done()
		defer close(remoteDone)
		_, _ = io.Copy(c, data)
	}()
	go func() {
		defer f.wg.Done()
		defer close(localDone)
		defer data.Close()
		_, _ = io.Copy(data, c)
	}()
	select {
	case <-remoteDone:
	case <-localDone:
		select {
		case <-remoteDone:
		case <-f.ctx.Done():
		case <-s.bad:
		}
	}
	_ = data.Reset()
	_ = c.Close()
	<-localDone
	<-remoteDone
	if msg := <-errMsg; len(msg) > 0 && f.ctx.Err() == nil {
		s.fail(fmt.Errorf("pod %s port %d: %s", s.pod.Name, p.Remote, msg))
	}
}
