// Package wanted owns the scheduling of background polls of the things
// someone is looking at, shared by kube/gauges' Poller (Ray's metrics per
// RayCluster) and kube/raydash's CapacityPoller (Ray's capacity per
// RayCluster): Want marks a key as wanted without blocking; a loop polls
// each wanted key at most every Interval, at most Concurrency polls at
// once, and drops a key (and its state) nobody wanted in Forget; Close
// cancels the polls in flight and waits for them. What a poll reads and
// what is kept of it per key (V) is the caller's.
package wanted

import (
	"context"
	"sync"
	"time"
)

// Options configure New.
type Options[K comparable, V any] struct {
	// Interval is the least time between the starts of two polls of a
	// key; Forget: a key not wanted in this long is dropped, with its
	// state, once no poll of it is in flight.
	Interval, Forget time.Duration
	// Concurrency bounds the polls in flight; 0: no bound.
	Concurrency int
	Now         func() time.Time
	// New returns the state of a key first wanted (nil: V's zero value).
	New func() V
	// Poll reads key, without the lock; the function it returns (nil:
	// none) records the result in the key's state under the lock, unless
	// the Scheduler was closed meanwhile.
	Poll func(ctx context.Context, key K) func(v *V)
	// Hold (optional): a key is not polled while Hold(state, now).
	Hold func(v *V, now time.Time) bool
}

// A Scheduler polls the keys someone wants; see the package doc.
type Scheduler[K comparable, V any] struct {
	o     Options[K, V]
	ctx   context.Context
	stop  context.CancelFunc
	kick  chan struct{}
	slots chan struct{} // nil: no bound
	wg    sync.WaitGroup

	mu     sync.Mutex
	closed bool
	keys   map[K]*entry[V]
}

type entry[V any] struct {
	wanted   time.Time // last Want
	polled   time.Time // last poll started
	inFlight bool
	v        V
}

// New returns a Scheduler whose loop is not running: Start runs it, or a
// test drives StartDue and Wait. Interval, Forget, Now and Poll are
// required.
func New[K comparable, V any](o Options[K, V]) *Scheduler[K, V] {
	ctx, stop := context.WithCancel(context.Background())
	s := &Scheduler[K, V]{o: o, ctx: ctx, stop: stop, kick: make(chan struct{}, 1), keys: map[K]*entry[V]{}}
	if o.Concurrency > 0 {
		s.slots = make(chan struct{}, o.Concurrency)
	}
	return s
}

// Start runs the loop: it wakes on a newly wanted key, on a freed slot and
// at a fifth of the shorter of Interval and Forget (10 ms to 1 s), and
// starts the polls that are due.
func (s *Scheduler[K, V]) Start() {
	tick := max(10*time.Millisecond, min(min(s.o.Interval, s.o.Forget)/5, time.Second))
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			s.StartDue()
			select {
			case <-s.ctx.Done():
				return
			case <-s.kick:
			case <-t.C:
			}
		}
	}()
}

// Want marks key as wanted (creating its state and waking the loop when it
// is new) and calls read with its state under the lock. After Close, a key
// not already kept is refused: Want returns false without calling read.
func (s *Scheduler[K, V]) Want(key K, read func(v *V)) bool {
	now := s.o.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.keys[key]
	if e == nil {
		if s.closed {
			return false
		}
		e = &entry[V]{}
		if s.o.New != nil {
			e.v = s.o.New()
		}
		s.keys[key] = e
		s.wake()
	}
	e.wanted = now
	read(&e.v)
	return true
}

// Len is the number of keys kept.
func (s *Scheduler[K, V]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}

// StartDue drops the keys nobody wanted in Forget and starts a poll of
// each key that is due, as far as slots are free (a poll that ends wakes
// the loop to start the rest).
func (s *Scheduler[K, V]) StartDue() {
	now := s.o.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	for k, e := range s.keys {
		switch {
		case now.Sub(e.wanted) > s.o.Forget && !e.inFlight:
			delete(s.keys, k)
		case e.inFlight || s.o.Hold != nil && s.o.Hold(&e.v, now):
		case e.polled.IsZero() || now.Sub(e.polled) >= s.o.Interval:
			if s.slots != nil {
				select {
				case s.slots <- struct{}{}:
				default:
					continue // every slot busy; the rest still may be forgotten
				}
			}
			e.inFlight, e.polled = true, now
			s.wg.Add(1)
			go s.poll(k, e)
		}
	}
}

func (s *Scheduler[K, V]) poll(k K, e *entry[V]) {
	defer s.wg.Done()
	record := s.o.Poll(s.ctx, k)
	if s.slots != nil {
		<-s.slots
		defer s.wake() // a slot is free: start what waits for one
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e.inFlight = false
	if s.ctx.Err() == nil && record != nil {
		record(&e.v)
	}
}

// Wait waits for the polls in flight (and the loop, once Close stopped it).
func (s *Scheduler[K, V]) Wait() { s.wg.Wait() }

// Close stops the loop and the polls in flight, and waits for them.
func (s *Scheduler[K, V]) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.wg.Wait()
}

func (s *Scheduler[K, V]) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}
