package tui

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The header leaves "syncing" soon after the feed syncs, without a batch
// and well before the next 1 s tick (make bench-e2e's first full render).
func TestSyncingEndsWithoutWaitingForATick(t *testing.T) {
	var synced atomic.Bool
	opts := Options{Tick: time.Hour}
	opts.Session.Context, opts.Session.Server = "sandbox", "https://127.0.0.1:6443"
	opts.Session.Synced = synced.Load
	tm, _ := start(t, opts, 120, 20)
	waitScreen(t, tm, "syncing")
	synced.Store(true)
	deadline := time.Now().Add(teatestTimeout)
	for strings.Contains(screenNow(tm), "syncing") {
		if time.Now().After(deadline) {
			t.Fatal("still syncing with an hour-long tick and no batch")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
