package history

import (
	"runtime"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestRecorderWritesAndClosesCleanly(t *testing.T) {
	before := runtime.NumGoroutine()
	s := Memory(StoreOptions{}, "test")
	a := NewAuthors()
	r := NewRecorder(s, RecorderOptions{Authors: a, Now: func() time.Time { return now }})
	old := cluster(func(rc *rayv1.RayCluster) { rc.ResourceVersion = "1" })
	scaled := cluster(func(rc *rayv1.RayCluster) {
		rc.ResourceVersion = "2"
		rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](4)
	})
	a.note(scaled.UID, Written{ResourceVersion: "2", Scale: &Author{Who: WhoKubectl, Manager: "kubectl-patch"}})
	ref := Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "train"}
	v0 := r.Version(ref)
	r.Observe(old, scaled)
	r.Observe(pod(), nil)
	deadline := time.Now().Add(30 * time.Second)
	for r.Version(ref) < v0+2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // polling the writer, with a deadline
	}
	got, err := s.Query(ref, time.Time{})
	if err != nil || lines(got) != "worker group small: replicas 1 → 4 by kubectl (kubectl-patch)\npod train-small-abc deleted (was Running)" {
		t.Fatalf("recorded %q (%v)", lines(got), err)
	}
	r.Close()
	r.Close()
	r.Observe(old, scaled) // after Close: ignored, no panic
	if r.Dropped() != 0 || r.Written() != 2 {
		t.Errorf("dropped %d written %d, want 0 and 2", r.Dropped(), r.Written())
	}
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before: the writer leaked", n, before)
	}
}

func TestRecorderCountsWhatItCannotWrite(t *testing.T) {
	s := Memory(StoreOptions{}, "test")
	s.Close()
	r := NewRecorder(s, RecorderOptions{})
	r.Observe(nil, cluster())
	r.Close() // drains the queue: the append fails on the closed store
	if r.Dropped() != 1 || r.Written() != 0 {
		t.Errorf("dropped %d written %d, want 1 and 0", r.Dropped(), r.Written())
	}
}

// One machine's record holds every cluster raydar watched from it: a
// RayCluster default/train of one API server is not the default/train of
// another (a fresh sandbox showed an older sandbox's timeline), on disk as
// in memory.
func TestRecorderFilesEntriesUnderItsServer(t *testing.T) {
	for _, disk := range []bool{false, true} {
		s := Memory(StoreOptions{}, "test")
		if disk {
			var err error
			if s, err = Open(t.TempDir()+"/history.db", StoreOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		a := NewRecorder(s, RecorderOptions{Server: "https://127.0.0.1:6443", Now: func() time.Time { return now }})
		b := NewRecorder(s, RecorderOptions{Server: "https://127.0.0.1:7443", Now: func() time.Time { return now }})
		a.Observe(nil, cluster())
		a.Observe(pod(), nil)
		b.Observe(pod(), nil)
		a.Close()
		b.Close()
		ref := Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "train"}
		gotA, errA := a.Entries(ref)
		gotB, errB := b.Entries(ref)
		if errA != nil || errB != nil || len(gotA) != 2 || len(gotB) != 1 {
			t.Fatalf("disk %v: server a %q (%v), server b %q (%v)", disk, lines(gotA), errA, lines(gotB), errB)
		}
		if gotB[0].Server != "https://127.0.0.1:7443" || a.Version(ref) == b.Version(ref) {
			t.Fatalf("disk %v: entry filed under %q; versions a %d b %d", disk, gotB[0].Server, a.Version(ref), b.Version(ref))
		}
		if got, err := s.Query(ref, time.Time{}); err != nil || len(got) != 0 {
			t.Fatalf("disk %v: a query naming no server sees %q (%v)", disk, lines(got), err)
		}
		s.Close()
	}
}
