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
}

func newLogBuffer(max int) *logBuffer { return &logBuffer{max: max} }

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max {
		cut := len(b.buf) - b.max
		b.dropped += int64(cut)
		b.buf = append(b.buf[:0], b.buf[cut:]...)
	}
	return len(p), nil
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
