// Package benchkit holds what the benchmarks under test/bench share: a
// fixed pool of parallel clients, integer lists read from the environment
// the machine's load average for their logs, and quantiles of measured
// durations.
package benchkit

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// Quantile is the q-quantile (0 < q ≤ 1) of ds by nearest rank: the
// smallest value such that at least q of the values are at or below it
// (the median of 1..10 is 5, its p90 is 9). 0 for no values. ds is not
// modified.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(float64(len(s))*q + 0.999999999)
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}
