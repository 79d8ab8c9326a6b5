package portforward

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Failed is the phase of a forward that gave up, because retrying cannot
// help (RBAC refused it); LastError says why. Its local ports are released.
const Failed Phase = "Failed"

// Options configure a Manager.
type Options struct {
	// Config reaches the API server; Clientset is built from it when nil.
	Config    *rest.Config
	Clientset kubernetes.Interface
	// Backoff between reconnects; default DefaultBackoff.
	Backoff Backoff
	// CheckInterval is how often an open stream's pod is checked (still
	// there, same UID, running, for a head ready); default 2s.
	CheckInterval time.Duration
}

// Manager holds the forwards of one raydar process. Close it when done.
type Manager struct {
	opts    Options
	changed chan struct{}

	mu       sync.Mutex
	nextID   int
	forwards map[int]*Forward
	closed   bool
}

// NewManager returns a Manager; it does no I/O.
func NewManager(opts Options) (*Manager, error) {
	if opts.Config == nil {
		return nil, errors.New("portforward: no rest.Config")
	}
	if opts.Clientset == nil {
		cs, err := kubernetes.NewForConfig(opts.Config)
		if err != nil {
			return nil, fmt.Errorf("portforward: %w", err)
		}
		opts.Clientset = cs
	}
	if opts.Backoff == (Backoff{}) {
		opts.Backoff = DefaultBackoff
	}
	if opts.CheckInterval <= 0 {
		opts.CheckInterval = 2 * time.Second
	}
	return &Manager{opts: opts, changed: make(chan struct{}, 1), forwards: map[int]*Forward{}}, nil
}

// Changed receives (coalesced) after a change of any forward, a start or a
// stop.
func (m *Manager) Changed() <-chan struct{} { return m.changed }

func (m *Manager) notify() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// Start listens on the local ports of spec and starts supervising. It
// returns at once after listening: a local port in use is a
// *PortInUseError (errors.Is ErrPortInUse) and nothing is started. The
// streams are made in the background; watch State.
func (m *Manager) Start(spec Spec) (*Forward, error) {
	if spec.Address == "" {
		spec.Address = "127.0.0.1"
	}
	if err := spec.check(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("portforward: manager closed")
	}
	ls, ports, err := listen(spec.Address, spec.Ports)
	if err != nil {
		return nil, err
	}
	m.nextID++
	ctx, cancel := context.WithCancel(context.Background())
	f := &Forward{
		id: m.nextID, m: m, spec: spec, listeners: ls, ctx: ctx, cancel: cancel,
		changed: make(chan struct{}, 1),
		sessCh:  make(chan struct{}),
		conns:   map[net.Conn]struct{}{},
		state: State{
			ID: m.nextID, Target: spec.describe(), Namespace: spec.Namespace, Cluster: spec.Cluster, Pod: spec.Pod,
			Ports: ports, Address: spec.Address, Phase: Connecting, Since: time.Now(),
		},
	}
	m.forwards[f.id] = f
	f.start()
	m.notify()
	return f, nil
}

// Stop ends one forward and forgets it.
func (m *Manager) Stop(id int) error {
	m.mu.Lock()
	f, ok := m.forwards[id]
	delete(m.forwards, id)
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("portforward: no forward %d", id)
	}
	f.stop()
	m.notify()
	return nil
}

// Snapshot is every forward's state, by ID; it never blocks on I/O.
func (m *Manager) Snapshot() []State {
	m.mu.Lock()
	fs := make([]*Forward, 0, len(m.forwards))
	for _, f := range m.forwards {
		fs = append(fs, f)
	}
	m.mu.Unlock()
	out := make([]State, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.State())
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// Close stops every forward and returns once all their goroutines ended.
// Start fails afterwards.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	fs := m.forwards
	m.forwards = map[int]*Forward{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Add(1)
		go func() { defer wg.Done(); f.stop() }()
	}
	wg.Wait()
	m.notify()
}
