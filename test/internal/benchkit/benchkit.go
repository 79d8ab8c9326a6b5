// Package benchkit holds what the benchmarks under test/bench share: a
// fixed pool of parallel clients, integer lists read from the environment
// and the machine's load average for their logs.
package benchkit

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Clients is how many parallel clients Parallel runs.
const Clients = 8

// Parallel runs f(0..n-1) on Clients goroutines and returns when all are
// done. An error is reported with tb.Error and ends that client; the
// others go on.
func Parallel(tb testing.TB, n int, f func(int) error) {
	var wg sync.WaitGroup
	var next atomic.Int64
	for range Clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					tb.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// EnvInts reads the environment variable name as a comma-separated list of
// positive integers, def when it is unset or empty; anything else fails tb.
func EnvInts(tb testing.TB, name string, def []int) []int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			tb.Fatalf("%s=%q: want positive integers separated by commas", name, v)
		}
		out = append(out, n)
	}
	return out
}

// LoadAverage is /proc/loadavg's first three fields, "unknown" when it
// cannot be read.
func LoadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
