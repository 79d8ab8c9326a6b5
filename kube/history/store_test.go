package history

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func entry(obj string, i int) Entry {
	return Entry{Time: now.Add(time.Duration(i) * time.Second), Ref: Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: obj},
		What: WhatReplicas, Subject: "small", From: fmt.Sprint(i), To: fmt.Sprint(i + 1),
		Author: &Author{Who: WhoKubectl, Manager: "kubectl-patch"}}
}

func tos(es []Entry) string {
	var l []string
	for _, e := range es {
		l = append(l, e.To)
	}
	return strings.Join(l, ",")
}

// Both backends keep the same bounds.
func eachStore(t *testing.T, o StoreOptions, f func(t *testing.T, s *Store)) {
	t.Run("file", func(t *testing.T) {
		s, err := Open(filepath.Join(t.TempDir(), FileName), o)
		if err != nil || s.Note() != "" {
			t.Fatalf("Open: %v, note %q", err, s.Note())
		}
		defer s.Close()
		f(t, s)
	})
	t.Run("memory", func(t *testing.T) { f(t, Memory(o, "test")) })
}

func TestStorePerObjectBound(t *testing.T) {
	eachStore(t, StoreOptions{MaxPerObject: 3}, func(t *testing.T, s *Store) {
		for i := range 5 {
			if err := s.Append([]Entry{entry("a", i), entry("b", i)}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Query(Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "a"}, time.Time{})
		if err != nil || tos(got) != "3,4,5" {
			t.Errorf("a's timeline = %q (%v), want the newest 3: 3,4,5", tos(got), err)
		}
		if got[0].Author == nil || got[0].Author.Manager != "kubectl-patch" {
			t.Errorf("author lost: %+v", got[0].Author)
		}
		if st, _ := s.Stats(); st.Entries != 6 {
			t.Errorf("stats %+v, want 6 entries", st)
		}
		since, _ := s.Query(Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "a"}, now.Add(4*time.Second))
		if tos(since) != "5" {
			t.Errorf("since +4s = %q, want 5", tos(since))
		}
		if none, _ := s.Query(Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "c"}, time.Time{}); len(none) != 0 {
			t.Errorf("c's timeline = %v, want none", none)
		}
	})
}

func TestStoreTotalBoundDropsTheOldest(t *testing.T) {
	eachStore(t, StoreOptions{MaxEntries: 4}, func(t *testing.T, s *Store) {
		for i := range 6 {
			obj := "a"
			if i%2 == 1 {
				obj = "b"
			}
			if err := s.Append([]Entry{entry(obj, i)}); err != nil {
				t.Fatal(err)
			}
		}
		a, _ := s.Query(Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "a"}, time.Time{})
		b, _ := s.Query(Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "b"}, time.Time{})
		if tos(a) != "3,5" || tos(b) != "4,6" {
			t.Errorf("a = %q, b = %q; want the newest 4 in all: a 3,5 and b 4,6", tos(a), tos(b))
		}
		if st, _ := s.Stats(); st.Entries != 4 {
			t.Errorf("stats %+v, want 4 entries", st)
		}
	})
	eachStore(t, StoreOptions{MaxBytes: 2000}, func(t *testing.T, s *Store) {
		for i := range 100 {
			if err := s.Append([]Entry{entry("a", i)}); err != nil {
				t.Fatal(err)
			}
		}
		st, _ := s.Stats()
		if st.Bytes > 2000 || st.Entries == 0 || st.Entries >= 100 {
			t.Errorf("stats %+v, want at most 2000 bytes and some entries kept", st)
		}
		a, _ := s.Query(Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "a"}, time.Time{})
		if len(a) != st.Entries || a[len(a)-1].To != "100" {
			t.Errorf("kept %d (last %q), want %d ending with the newest", len(a), tos(a[len(a)-1:]), st.Entries)
		}
	})
}

func TestStoreSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", FileName)
	s, err := Open(path, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append([]Entry{entry("a", 0), entry("a", 1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query(Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "a"}, time.Time{}); err != ErrClosed {
		t.Errorf("Query after Close: %v, want ErrClosed", err)
	}
	s2, err := Open(path, StoreOptions{})
	if err != nil || s2.Note() != "" {
		t.Fatalf("reopen: %v %q", err, s2.Note())
	}
	defer s2.Close()
	if err := s2.Append([]Entry{entry("a", 2)}); err != nil {
		t.Fatal(err)
	}
	got, _ := s2.Query(Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "a"}, time.Time{})
	if tos(got) != "1,2,3" {
		t.Errorf("after a restart: %q, want 1,2,3", tos(got))
	}
}

// A second raydar on the same state directory does not hang: it waits
// LockTimeout, then keeps its history in memory and says so.
func TestStoreSecondWriterFallsBackToMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	first, err := Open(path, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	start := time.Now()
	second, err := Open(path, StoreOptions{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the second Open took %s", d)
	}
	if second.Path() != "" || !strings.Contains(second.Note(), "in memory") || !strings.Contains(second.Note(), "recorded by another raydar") {
		t.Errorf("second store: path %q, note %q; want in memory, saying the file is in use", second.Path(), second.Note())
	}
	if err := second.Append([]Entry{entry("a", 0)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := second.Query(Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "a"}, time.Time{}); len(got) != 1 {
		t.Errorf("the memory store holds %d entries, want 1", len(got))
	}
	// raydar history reads the file while the first one records.
	if err := first.Append([]Entry{entry("a", 7)}); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Query(Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "a"}, time.Time{})
	if err != nil || tos(got) != "8" {
		t.Errorf("a reader beside the writer read %q (%v), want 8", tos(got), err)
	}
	if err := r.Append([]Entry{entry("a", 1)}); err == nil {
		t.Error("a reader appended")
	}
	// The second one (a TUI beside an operator) shows the file's record
	// with its own, oldest first.
	ref := Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "a"}
	if got, err := second.Query(ref, time.Time{}); err != nil || tos(got) != "1,8" {
		t.Errorf("the second store shows %q (%v), want its own 1 and the file's 8", tos(got), err)
	}
	// A change both saw (the first stamps it 2 s later) is shown once.
	seen := entry("a", 0)
	seen.Time = seen.Time.Add(2 * time.Second)
	if err := first.Append([]Entry{seen}); err != nil {
		t.Fatal(err)
	}
	if got, err := second.Query(ref, time.Time{}); err != nil || tos(got) != "1,8" {
		t.Errorf("after the first recorded the same change: %q (%v), want 1,8", tos(got), err)
	}
	if _, err := OpenReader(filepath.Join(t.TempDir(), FileName)); !errors.Is(err, ErrNoHistory) {
		t.Errorf("OpenReader of nothing: %v, want ErrNoHistory", err)
	}
}

// TestStoreUnwritableDirFallsBackToMemory: a history directory the user
// cannot write leaves the store in memory, with a note saying so. Root
// writes anywhere, so as root the test runs again in a child process as
// nobody (asNonRoot).
func TestStoreUnwritableDirFallsBackToMemory(t *testing.T) {
	if asNonRoot(t) {
		return
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	s, err := Open(filepath.Join(dir, "x", FileName), StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Path() != "" || !strings.Contains(s.Note(), "in memory") {
		t.Errorf("path %q note %q, want in memory", s.Path(), s.Note())
	}
}

// BenchmarkStoreAppend appends batches of 64 entries (the recorder writes
// what has queued up in one transaction) and reports entries/s and the
// bytes per entry on disk.
func BenchmarkStoreAppend(b *testing.B) {
	path := filepath.Join(b.TempDir(), FileName)
	s, err := Open(path, StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	batch := make([]Entry, 64)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range batch {
			batch[j] = entry(fmt.Sprintf("cluster-%d", (i*64+j)%200), i*64+j)
		}
		if err := s.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	st, _ := s.Stats()
	fi, _ := os.Stat(path)
	b.ReportMetric(float64(b.N*64)/b.Elapsed().Seconds(), "entries/s")
	if st.Entries > 0 {
		b.ReportMetric(float64(st.Bytes)/float64(st.Entries), "B/entry")
		b.ReportMetric(float64(fi.Size())/float64(st.Entries), "file-B/entry")
	}
}

// BenchmarkStoreAppendFull appends to a store at its bounds (so that each
// append also drops as many of the oldest entries), in batches of the
// recorder's maxBatch and of 512 (its batch before), and reports how much
// an append raises the process's resident memory while it runs (the
// pages of the file it maps, bbolt's nodes): its peak RSS, reset before
// each append through /proc/self/clear_refs.
func BenchmarkStoreAppendFull(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("the peak RSS cannot be reset here: %v", err)
	}
	for _, n := range []int{maxBatch, 512} {
		b.Run(fmt.Sprint("batch=", n), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), FileName), StoreOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			// 5,000 objects' timelines, past DefaultMaxEntries.
			const objects = 5000
			fill := make([]Entry, 512)
			for i := 0; i*len(fill) < DefaultMaxEntries*6/5; i++ {
				for j := range fill {
					fill[j] = entry(fmt.Sprint("pod-", (i*len(fill)+j)%objects), i*len(fill)+j)
				}
				if err := s.Append(fill); err != nil {
					b.Fatal(err)
				}
			}
			batch := make([]Entry, n)
			var sum, most int64
			appends := 0
			for b.Loop() {
				for j := range batch {
					batch[j] = entry(fmt.Sprint("pod-", (appends*n*7+j*13)%objects), appends*n+j)
				}
				_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
				before := statusKiB(b, "VmRSS")
				if err := s.Append(batch); err != nil {
					b.Fatal(err)
				}
				d := statusKiB(b, "VmHWM") - before
				sum, most, appends = sum+d, max(most, d), appends+1
			}
			b.ReportMetric(float64(sum)/float64(appends)/1024, "MiB-RSS-added/append")
			b.ReportMetric(float64(most)/1024, "MiB-RSS-added-max")
			b.ReportMetric(float64(appends*n)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// statusKiB is a "<field>: <n> kB" line of /proc/self/status.
func statusKiB(b *testing.B, field string) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// nobody is the user a root test process drops to (asNonRoot).
const nobody = 65534

// asNonRootEnv marks the child process asNonRoot starts.
const asNonRootEnv = "RAYDAR_TEST_AS_NONROOT"

// asNonRoot runs t's test again as nobody in a child process when this one
// runs as root, and reports whether it did (then the caller returns: the
// child's result is t's). As any other user it returns false and the test
// runs here. The test binary is copied where nobody can execute it (go
// test builds it in a directory only its user can read); the child's
// TMPDIR is a directory nobody owns.
func asNonRoot(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv(asNonRootEnv) != "" {
			t.Logf("running as uid %d (dropped from root by the parent test process)", os.Geteuid())
		}
		return false
	}
	if os.Getenv(asNonRootEnv) != "" {
		t.Fatalf("%s is set but this process is still root", asNonRootEnv)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "history-as-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	tmp := filepath.Join(dir, "tmp")
	for _, err := range []error{os.Chmod(dir, 0o755), os.WriteFile(filepath.Join(dir, "history.test"), bin, 0o755),
		os.Mkdir(tmp, 0o700), os.Chown(tmp, nobody, nobody)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(dir, "history.test"), "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), asNonRootEnv+"=1", "TMPDIR="+tmp, "HOME="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	t.Logf("as root: ran the test again as uid %d (nobody):\n%s", nobody, out)
	if err != nil {
		t.Fatalf("the test as uid %d: %v", nobody, err)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()+" ") {
		t.Fatalf("the test as uid %d did not pass (skipped or not run)", nobody)
	}
	return true
}
