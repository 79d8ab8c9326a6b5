package rayhead

import (
	"bytes"
	"sync"
)

// logBuffer keeps the last max bytes written to it. It is an io.Writer safe
// for concurrent use (stdout and stderr of a job write to the same one).
type logBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte // grows to 2*max before it is compacted to max
	dropped int64  // bytes dropped from the front so far
	// changed, when set, is told after every write (the log API's
	// followers wait on it).
	changed *notifier
}

func newLogBuffer(max int) *logBuffer { return &logBuffer{max: max} }

// newFileBuffer is a log buffer for one of the head's log files: writes
// wake the head's followers.
func (h *Head) newFileBuffer() *logBuffer {
	return &logBuffer{max: h.opts.MaxLogBytes, changed: &h.logsChanged}
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max {
		cut := len(b.buf) - b.max
		b.dropped += int64(cut)
		b.buf = append(b.buf[:0], b.buf[cut:]...)
	}
	if b.changed != nil {
		b.changed.notify()
	}
	return len(p), nil
}

// snapshot returns the kept output and the offset of its end in all that
// was ever written (the offset only grows).
func (b *logBuffer) snapshot() (string, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf), b.dropped + int64(len(b.buf))
}

// notifier wakes every waiter at once: wait returns a channel that is
// closed by the next notify.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *notifier) notify() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}

// String returns the kept output. When older output has been dropped, it
// starts at a line boundary so the first line is not a fragment.
func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.buf
	if len(out) > b.max {
		out = out[len(out)-b.max:]
	}
	if len(out) < len(b.buf) || b.dropped > 0 {
		if i := bytes.IndexByte(out, '\n'); i >= 0 && i < len(out)-1 {
			out = out[i+1:]
		}
	}
	return string(out)
}

// tail returns at most n bytes from the end of the kept output.
func (b *logBuffer) tail(n int) string {
	s := b.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}
