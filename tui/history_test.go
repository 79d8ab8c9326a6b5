package tui

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/raydar/raydar/kube/history"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// fakeHistory answers every object with one entry naming it; bump adds an
// entry and moves the version, as the Recorder does.
type fakeHistory struct {
	mu    sync.Mutex
	v     uint64
	extra []history.Entry
	reads int
	polls int // Version calls: one per tick of a detail page
	kinds map[string]bool
}

func (f *fakeHistory) Version(history.Ref) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.polls++
	return f.v
}

func (f *fakeHistory) Entries(ref history.Ref) ([]history.Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	f.kinds[ref.Kind] = true
	es := []history.Entry{{Time: fixedNow.Add(-2 * time.Hour), Ref: ref, What: history.WhatReplicas, Subject: "cpu", From: "2", To: "4",
		Author: &history.Author{Who: history.WhoKubectl, Manager: "kubectl-patch"}}}
	return append(es, f.extra...), nil
}

func (f *fakeHistory) Note() string { return "" }

func (f *fakeHistory) bump(e history.Entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.v++
	f.extra = append(f.extra, e)
}

func (f *fakeHistory) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

func TestHistoryBlockOnEachDetailPage(t *testing.T) {
	for _, c := range []struct {
		name string
		keys []string
		kind string
		cron bool
	}{
		{"cluster", []string{"<enter>"}, rayv1.KindRayCluster, false},
		{"job", []string{":rj", "<enter>", "<enter>"}, rayv1.KindRayJob, false},
		{"service", []string{":rs", "<enter>", "<enter>"}, rayv1.KindRayService, false},
		{"cronjob", []string{":rcj", "<enter>", "<enter>"}, rayv1.KindRayCronJob, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeHistory{kinds: map[string]bool{}}
			opts := Options{Session: Session{History: f}, Tick: 20 * time.Millisecond}
			if c.cron {
				opts.Store = cronFixture()
			}
			tm, _ := start(t, opts, 140, 50)
			typeKeys(tm, c.keys...)
			screen := waitScreen(t, tm, "worker group cpu: replicas 2 → 4  by kubectl (kubectl-patch)")
			if !strings.Contains(screen, "History (this machine's record") {
				t.Errorf("no History heading:\n%s", screen)
			}
			// Ticks go on; the timeline did not change: it is not read again.
			reads := f.readCount()
			f.waitPolls(t, 5)
			if n := f.readCount(); n != reads {
				t.Errorf("read %d times on unchanged ticks, want %d", n, reads)
			}
			f.bump(history.Entry{Time: fixedNow.Add(-time.Minute), What: history.WhatPodOOMKilled, Subject: "w-1/ray-worker", To: "exit 137"})
			waitScreen(t, tm, "container w-1/ray-worker OOM-killed (exit 137)")
			f.mu.Lock()
			ok := f.kinds[c.kind]
			f.mu.Unlock()
			if !ok {
				t.Errorf("the page asked for kinds %v, want %s", f.kinds, c.kind)
			}
			_ = tm.Quit()
		})
	}
}

// waitPolls waits until the page asked for the version n more times (n
// ticks on top).
func (f *fakeHistory) waitPolls(t *testing.T, n int) {
	t.Helper()
	waitCount(t, &f.mu, &f.polls, n, "version polls")
}

// waitCount waits until the counter *c, guarded by mu, has grown by n:
// what a fake has seen the App do (ticks, polls), read under its lock.
func waitCount(t *testing.T, mu *sync.Mutex, c *int, n int, what string) {
	t.Helper()
	mu.Lock()
	want := *c + n
	mu.Unlock()
	deadline := time.Now().Add(teatestTimeout)
	for {
		mu.Lock()
		got := *c
		mu.Unlock()
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s, want %d", got, what, want)
		}
		time.Sleep(5 * time.Millisecond) // polling, with a deadline
	}
}

// TestHistoryBlockLeavesOutEarlierObjects: a timeline is kept by name, so
// a cluster deleted and created again (or one of a sandbox started again
// under its context name) has its predecessor's entries beside its own;
// the page shows this object's only and says how many it left out.
func TestHistoryBlockLeavesOutEarlierObjects(t *testing.T) {
	f := &fakeHistory{kinds: map[string]bool{}}
	f.extra = []history.Entry{{Time: fixedNow.Add(-time.Minute), Ref: history.Ref{Kind: rayv1.KindRayCluster, UID: "uid-of-an-earlier-one"},
		What: history.WhatPodOOMKilled, Subject: "old-w/ray-worker", To: "exit 137"}}
	tm, _ := start(t, Options{Session: Session{History: f}, Tick: 20 * time.Millisecond}, 160, 50)
	typeKeys(tm, "<enter>")
	screen := waitScreen(t, tm, "(1 entry of earlier objects of this name left out)")
	if !strings.Contains(screen, "worker group cpu: replicas 2 → 4") {
		t.Errorf("the object's own entry is missing:\n%s", screen)
	}
	if strings.Contains(screen, "old-w/ray-worker") {
		t.Errorf("an earlier object's entry is shown as this one's:\n%s", screen)
	}
	_ = tm.Quit()
}
