package podexec

import (
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
	input cancelreader.CancelReader
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
	input, err := cancelreader.NewReader(f)
	if err != nil {
		return nil, false, err
	}
	state, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		input.Close()
		return nil, false, err
	}
	return &Terminal{in: f, state: state, input: input, sizes: newSizeQueue(sizeFd)}, true, nil
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
		t.input.Cancel()
		t.sizes.stop()
		err = term.Restore(int(t.in.Fd()), t.state)
		t.input.Close()
	})
	return err
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
