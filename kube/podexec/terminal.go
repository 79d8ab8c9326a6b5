package podexec

import (
	"errors"
	"io"
	"os"
	"sync"

	"github.com/muesli/cancelreader"
	"golang.org/x/term"
	"k8s.io/client-go/tools/remotecommand"
)

// Terminal is the local terminal of a TTY session: MakeTerminal puts it
// in raw mode (keys such as ctrl+c go to the remote shell, not to raydar),
// reports its size and every change of it, and reads its input through a
// reader that Close cancels, so no goroutine keeps reading the terminal
// after the session.
type Terminal struct {
	in    *os.File
	state *term.State
	input *input
	sizes *sizeQueue
	once  sync.Once
}

// MakeTerminal returns the Terminal of in and out when in is a terminal
// (false otherwise: no TTY session then). The size is out's when out is a
// terminal, in's otherwise.
func MakeTerminal(in io.Reader, out io.Writer) (*Terminal, bool, error) {
	f, ok := in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, false, nil
	}
	sizeFd := int(f.Fd())
	if o, ok := out.(*os.File); ok && term.IsTerminal(int(o.Fd())) {
		sizeFd = int(o.Fd())
	}
	r, err := cancelreader.NewReader(f)
	if err != nil {
		return nil, false, err
	}
	state, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		r.Close()
		return nil, false, err
	}
	return &Terminal{in: f, state: state, input: &input{r: r}, sizes: newSizeQueue(sizeFd)}, true, nil
}

// Input is the terminal's input, to give to Streams.In.
func (t *Terminal) Input() io.Reader { return t.input }

// Sizes is the terminal's size, then its changes, for Streams.Sizes.
func (t *Terminal) Sizes() remotecommand.TerminalSizeQueue { return t.sizes }

// Close restores the terminal's mode and stops reading it and watching
// its size. Safe to call twice.
func (t *Terminal) Close() error {
	var err error
	t.once.Do(func() {
		t.input.cancel()
		t.sizes.stop()
		err = term.Restore(int(t.in.Fd()), t.state)
	})
	return err
}

// input is the terminal's input as the exec reads it (remotecommand's
// stdin goroutine, which outlives the session): a cancelreader, cancelled
// when the session ends, and closed only once no Read is in it. Closing
// it under a Read would free its epoll descriptor while that Read waits
// on it; the next descriptor opened (the TUI's own reader's) can take its
// number, and the stray Read would then wake on, and take, the TUI's next
// key.
type input struct {
	r       cancelreader.CancelReader
	mu      sync.Mutex
	reading int
	done    bool // cancelled
	closed  bool
}

func (in *input) Read(p []byte) (int, error) {
	in.mu.Lock()
	if in.done {
		in.mu.Unlock()
		return 0, io.EOF
	}
	in.reading++
	in.mu.Unlock()
	n, err := in.r.Read(p)
	in.mu.Lock()
	in.reading--
	in.closeIfIdle()
	in.mu.Unlock()
	if errors.Is(err, cancelreader.ErrCanceled) {
		// The session is over: the end of its input, not a failure
		// (remotecommand logs any other error).
		return n, io.EOF
	}
	return n, err
}

// cancel ends the Read in progress (and every later one) and closes the
// reader once no Read is in it.
func (in *input) cancel() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.done = true
	in.r.Cancel()
	in.closeIfIdle()
}

// closeIfIdle closes the reader once cancelled and no Read is in it.
// Called with in.mu held.
func (in *input) closeIfIdle() {
	if in.done && in.reading == 0 && !in.closed {
		in.closed = true
		_ = in.r.Close()
	}
}

// sizeQueue is a remotecommand.TerminalSizeQueue: the size at start, then
// one per change (resize.go's platform part says which signal).
type sizeQueue struct {
	fd      int
	changed chan struct{}
	done    chan struct{}
	last    remotecommand.TerminalSize
	first   bool
	stopOne sync.Once
	unwatch func()
}

func newSizeQueue(fd int) *sizeQueue {
	q := &sizeQueue{fd: fd, changed: make(chan struct{}, 1), done: make(chan struct{}), first: true}
	q.unwatch = watchResize(q.changed)
	return q
}

func (q *sizeQueue) size() (remotecommand.TerminalSize, bool) {
	w, h, err := term.GetSize(q.fd)
	if err != nil || w <= 0 || h <= 0 {
		return remotecommand.TerminalSize{}, false
	}
	return remotecommand.TerminalSize{Width: uint16(w), Height: uint16(h)}, true
}

// Next returns the size at the first call, then waits for a change; nil
// once stopped.
func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	for {
		if q.first {
			q.first = false
			if s, ok := q.size(); ok {
				q.last = s
				return &s
			}
		}
		select {
		case <-q.done:
			return nil
		case <-q.changed:
		}
		if s, ok := q.size(); ok && s != q.last {
			q.last = s
			return &s
		}
	}
}

func (q *sizeQueue) stop() {
	q.stopOne.Do(func() {
		q.unwatch()
		close(q.done)
	})
}
