package tui

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/tui/pages/raylogs"
	"github.com/raydar/raydar/tui/widgets"
)

// lineReader yields n numbered log lines, generated as they are read.
type lineReader struct {
	n, i int
	buf  []byte
}

func (r *lineReader) Read(p []byte) (int, error) {
	for len(r.buf) < len(p) && r.i < r.n {
		r.i++
		r.buf = fmt.Appendf(r.buf, "2026-03-01 11:00:00,000 INFO worker.py:42 -- step %d loss=%.6f and some more words of a log line\n", r.i, 1/float64(r.i))
	}
	if len(r.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *lineReader) Close() error { return nil }

type benchRayLogs struct{ n int }

func (b benchRayLogs) List(context.Context, string, string, dashboard.LogNode) (dashboard.LogFiles, error) {
	return nil, nil
}
func (b benchRayLogs) Open(context.Context, string, string, dashboard.LogRequest, bool) (io.ReadCloser, error) {
	return &lineReader{n: b.n}, nil
}
func (b benchRayLogs) Resolve(context.Context, string, raydash.Explanation, dashboard.LogNode) (dashboard.LogRequest, error) {
	return dashboard.LogRequest{}, nil
}

// BenchmarkRayLogFollow follows a Ray log file of 1,000,000 lines through
// the page's real machinery (the reader goroutine, the bounded logStream,
// 100 ms batches, the LogView, a frame per batch) and reports the live heap
// afterwards: what a long follow keeps is MaxPodLogLines lines, whatever
// the file's length.
func BenchmarkRayLogFollow(b *testing.B) {
	const lines = 1_000_000
	var heapAfter, heapBefore uint64
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heapBefore = ms.HeapAlloc
		a, err := New(Options{Store: watch.NewStore(), Session: Session{RayLogs: benchRayLogs{n: lines}}})
		if err != nil {
			b.Fatal(err)
		}
		a.Update(tea.WindowSizeMsg{Width: benchW, Height: benchH})
		p := raylogs.NewLogPage(a.e, "ns", "rc", nil, dashboard.LogRequest{Node: dashboard.LogNode{IP: "10.0.0.1"}, Filename: "raylet.out"}, raydash.Explanation{}, "raylet.out")
		b.StartTimer()
		a.push(p)
		cmd := p.Init()
		for cmd != nil {
			msg := cmd()
			if msg == nil {
				break
			}
			var ok bool
			cmd, ok = p.Receive(msg)
			if !ok {
				b.Fatalf("the page did not take %T", msg)
			}
			_ = p.View()
		}
		b.StopTimer()
		if !p.Ended || p.Err != nil || len(p.Lines) != widgets.MaxPodLogLines || p.Dropped+len(p.Lines) != lines {
			b.Fatalf("followed: ended %v err %v, %d kept, %d dropped", p.Ended, p.Err, len(p.Lines), p.Dropped)
		}
		if want := "step " + strconv.Itoa(lines) + " "; !strings.Contains(p.Lines[len(p.Lines)-1], want) {
			b.Fatalf("last line %q", p.Lines[len(p.Lines)-1])
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heapAfter = ms.HeapAlloc
		runtime.KeepAlive(p)
		a.pop()
		b.StartTimer()
	}
	b.ReportMetric(float64(heapAfter)/(1<<20), "heap-MB-after")
	b.ReportMetric((float64(heapAfter)-float64(heapBefore))/(1<<20), "heap-MB-growth")
}
