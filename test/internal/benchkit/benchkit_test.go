package benchkit

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Parallel calls f once for each index, and an error fails the test.
func TestParallel(t *testing.T) {
	var mu sync.Mutex
	var got []int
	Parallel(t, 100, func(i int) error {
		mu.Lock()
		got = append(got, i)
		mu.Unlock()
		return nil
	})
	slices.Sort(got)
	for i, v := range got {
		if v != i {
			t.Fatalf("indices %v, want 0..99 once each", got)
		}
	}
	if len(got) != 100 {
		t.Fatalf("%d calls, want 100", len(got))
	}
	ft := &fakeTB{TB: t}
	Parallel(ft, 3, func(i int) error { return errors.New("boom") })
	if !ft.failed {
		t.Error("an error from f did not fail the test")
	}
}

type fakeTB struct {
	testing.TB
	mu     sync.Mutex
	failed bool
}

func (f *fakeTB) Error(...any) { f.mu.Lock(); f.failed = true; f.mu.Unlock() }

// EnvInts reads a list, and falls back to the default when unset.
func TestEnvInts(t *testing.T) {
	t.Setenv("BENCHKIT_TEST", "")
	if got := EnvInts(t, "BENCHKIT_TEST", []int{7}); !slices.Equal(got, []int{7}) {
		t.Errorf("unset: %v, want [7]", got)
	}
	t.Setenv("BENCHKIT_TEST", "100, 300,1000")
	if got := EnvInts(t, "BENCHKIT_TEST", nil); !slices.Equal(got, []int{100, 300, 1000}) {
		t.Errorf("got %v, want [100 300 1000]", got)
	}
}

// LoadAverage is /proc/loadavg's three load figures.
func TestLoadAverage(t *testing.T) {
	if got := LoadAverage(); len(strings.Fields(got)) != 3 {
		t.Errorf("LoadAverage = %q, want three fields", got)
	}
}

// Quantile by nearest rank: the median and p90 of 1..10 s are 5 and 9 s,
// of one value that value, of none 0; the input keeps its order.
func TestQuantile(t *testing.T) {
	var ds []time.Duration
	for i := 10; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Second)
	}
	if got := Quantile(ds, 0.5); got != 5*time.Second {
		t.Errorf("median = %s, want 5s", got)
	}
	if got := Quantile(ds, 0.9); got != 9*time.Second {
		t.Errorf("p90 = %s, want 9s", got)
	}
	if got := Quantile(ds, 1); got != 10*time.Second {
		t.Errorf("p100 = %s, want 10s", got)
	}
	if ds[0] != 10*time.Second {
		t.Errorf("Quantile sorted its input: ds[0] = %s", ds[0])
	}
	if got := Quantile(ds[:1], 0.9); got != 10*time.Second {
		t.Errorf("p90 of one value = %s, want 10s", got)
	}
	if got := Quantile(nil, 0.5); got != 0 {
		t.Errorf("median of none = %s, want 0", got)
	}
}
