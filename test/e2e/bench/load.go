package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/test/internal/procstat"
)

// setRestarts changes a pod's first container's restart count: a change
// the pods view shows (RESTARTS).
func (m *measurement) setRestarts(ctx context.Context, i, j, n int) error {
	patch := fmt.Sprintf(`[{"op":"replace","path":"/status/containerStatuses/0/restartCount","value":%d}]`, n)
	_, err := m.cs.CoreV1().Pods(m.d.nsOf(i)).Patch(ctx, m.d.podName(i, j), types.JSONPatchType, []byte(patch), metav1.PatchOptions{}, "status")
	return err
}

// restartBase is where the restart counts this run writes start: each run
// of one data set writes its own (a patch to the value a pod has already
// changes nothing, and the screen would not move).
func (m *measurement) restartBase() int { return m.seq * 1_000_000 }

// steady measures the bytes of a full repaint (a resize away and back)
// and of steady updates: the restart count of the second row's pod.
func (m *measurement) steady(ctx context.Context) error {
	logf("repaint and steady updates")
	rec := m.term.rec
	// The pod patched below is the second row: from the top (lost or
	// coalesced j/k keys may have scrolled the list).
	if err := m.term.send("g"); err != nil {
		return err
	}
	rec.quiet(300*time.Millisecond, 10*time.Second)
	if out, err := m.term.tmux("resize-window", "-t", "tui", "-x", "121", "-y", "40"); err != nil {
		return fmt.Errorf("tmux resize-window: %v: %s", err, out)
	}
	rec.quiet(500*time.Millisecond, 10*time.Second)
	t := time.Now()
	if out, err := m.term.tmux("resize-window", "-t", "tui", "-x", "120", "-y", "40"); err != nil {
		return fmt.Errorf("tmux resize-window: %v: %s", err, out)
	}
	if _, ok := rec.waitOutput(t, 5*time.Second); !ok {
		return fmt.Errorf("nothing drawn in 5 s after a resize")
	}
	rec.quiet(500*time.Millisecond, 10*time.Second)
	m.repaint, _, _ = rec.since(t, time.Time{})
	for k := range 10 {
		rec.quiet(300*time.Millisecond, 5*time.Second)
		t := time.Now()
		if err := m.setRestarts(ctx, 0, min(1, m.d.workersOf(0)), m.restartBase()+k+1); err != nil {
			return err
		}
		if _, ok := rec.waitOutput(t, 15*time.Second); !ok {
			return fmt.Errorf("a visible pod's restart count changed and nothing was drawn in 15 s; the screen:\n%s", m.term.screen())
		}
		rec.quiet(150*time.Millisecond, 5*time.Second)
		n, _, _ := rec.since(t, time.Time{})
		m.updates = append(m.updates, n)
	}
	return nil
}

// patchLoad patches random pods' restart counts at 50/s for the run's
// duration, with a CPU profile of the first 30 s.
func (m *measurement) patchLoad(ctx context.Context) {
	logf("50 pod patches/s for %s", m.c.duration)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		secs := min(int(m.c.duration/time.Second), 30)
		m.profile("cpu-patches.pb.gz", fmt.Sprintf("profile?seconds=%d", secs))
	}()
	c0, _ := procstat.CPU(m.term.pid)
	b0 := m.term.rec.bytes()
	work := make(chan [3]int, 100)
	var mu sync.Mutex
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range work {
				err := m.setRestarts(ctx, w[0], w[1], w[2])
				mu.Lock()
				m.patches++
				if err != nil {
					m.patchErrs++
				}
				mu.Unlock()
			}
		}()
	}
	tick := time.NewTicker(20 * time.Millisecond)
	end := time.After(m.c.duration)
loop:
	for n := m.restartBase() + 100; ; n++ {
		select {
		case <-ctx.Done():
			break loop
		case <-end:
			break loop
		case <-tick.C:
			i := rand.IntN(m.d.clusters)
			work <- [3]int{i, rand.IntN(1 + m.d.workersOf(i)), n}
		}
	}
	tick.Stop()
	close(work)
	c1, _ := procstat.CPU(m.term.pid)
	m.patchCPU, m.patchBytes = c1-c0, m.term.rec.bytes()-b0
	m.load["patches"] = loadAvg()
	wg.Wait()
}

// countLists counts raydar's LIST requests in the audit log: before the
// first full screen (the initial lists) and after it.
func (m *measurement) countLists(sb *sandbox.Sandbox) error {
	evs, err := sb.AuditEvents()
	if err != nil {
		return err
	}
	for _, e := range evs {
		if e.Verb != "list" || !strings.HasPrefix(e.UserAgent, "raydar/") || e.RequestReceivedTimestamp.Before(m.started) {
			continue
		}
		if e.RequestReceivedTimestamp.After(m.rendered) {
			m.listsAfter++
			m.listsAfterURIs = append(m.listsAfterURIs, e.RequestURI)
		} else {
			m.listsBefore++
		}
	}
	return nil
}

func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func perMin(v float64, d time.Duration) float64 { return v * float64(time.Minute) / float64(d) }

func (m *measurement) report() string {
	var b strings.Builder
	host, _ := hostname()
	n := max(m.c.contexts, 1)
	if n > 1 {
		fmt.Fprintf(&b, "## raydar TUI end to end: %d contexts × %d pods / %d RayClusters (the fleet view), view %s, tmux 120×40, runs of %s\n\n", n, m.d.pods(), m.d.allClusters(), m.c.view, m.c.duration)
	} else {
		fmt.Fprintf(&b, "## raydar TUI end to end: %d pods / %d RayClusters (shape %s, workers %s, big cluster %d), view %s, tmux 120×40, runs of %s\n\n", m.d.pods(), m.d.allClusters(), m.c.shape, m.c.workers, m.d.big, m.c.view, m.c.duration)
	}
	fmt.Fprintf(&b, "%s, %s, load average (1 min) at start %s", time.Now().UTC().Format("2006-01-02 15:04 UTC"), host, m.load["start"])
	if m.c.settle > 0 {
		fmt.Fprintf(&b, "; idle measured once the newest pod was %s old", m.c.settle)
	}
	if m.c.linkDelay > 0 {
		fmt.Fprintf(&b, "; behind a pty proxy delaying each direction by %s (RTT %s)", m.c.linkDelay, 2*m.c.linkDelay)
	}
	if m.c.raydar != "" {
		fmt.Fprintf(&b, "; binary %s", m.binary)
	}
	if m.c.screenOnOutput {
		fmt.Fprint(&b, "; the pane read at the launch only after output")
	}
	if m.seq > 0 {
		fmt.Fprintf(&b, "; run %d on this data set", m.seq+1)
	}
	fmt.Fprint(&b, "\n\n")
	fmt.Fprintf(&b, "| figure | value | load |\n|---|---|---|\n")
	row := func(name, v, load string) { fmt.Fprintf(&b, "| %s | %s | %s |\n", name, v, load) }
	row("cache synced after start", ms(m.synced.Sub(m.started)), m.load["start"])
	row("first full render after sync", ms(m.rendered.Sub(m.synced)), m.load["start"])
	row("launch → first full screen", ms(m.rendered.Sub(m.started)), m.load["start"])
	if m.c.openBig {
		row(fmt.Sprintf("cluster page of %s (%d workers): Enter → full page (the figures below are on that page)", bigCluster, m.d.big), ms(m.pageOpen), m.load["start"])
	}
	row("CPU from start to full screen: raydar / kube-apiserver", fmt.Sprintf("%s / %s", ms(m.launchCPU), ms(m.launchAPICPU)), m.load["start"])
	row("CPU from start to full screen: the harness (with its tmux clients) / the tmux server / the whole machine (2 cores)", fmt.Sprintf("%s / %s / %s", ms(m.launchSelfCPU), ms(m.launchTmuxCPU), ms(m.launchBusy)), m.load["start"])
	row("peak RSS (VmHWM) at the first full screen", fmt.Sprintf("%.1f MB", float64(m.launchHWM)/1024), m.load["start"])
	row("RSS after sync / peak RSS (VmHWM)", fmt.Sprintf("%.1f MB / %.1f MB (%.1f KB per pod at peak)", float64(m.rssSynced)/1024, float64(m.hwm)/1024, float64(m.hwm)/float64(n*m.d.pods())), m.load["patches"])
	row("RSS after sync: anonymous / file-backed (the binary)", fmt.Sprintf("%.1f MB / %.1f MB", float64(m.anonSynced)/1024, float64(m.fileSynced)/1024), m.load["start"])
	row("idle CPU per minute", fmt.Sprintf("%.2f s", perMin(m.idleCPU.Seconds(), m.c.duration)), m.load["idle"])
	row("idle bytes to the terminal", fmt.Sprintf("%.1f B/s", float64(m.idleBytes)/m.c.duration.Seconds()), m.load["idle"])
	row("key → screen p50 / p90 / p99", fmt.Sprintf("%s / %s / %s (%d samples)", ms(pct(m.keyLat, .5)), ms(pct(m.keyLat, .9)), ms(pct(m.keyLat, .99)), len(m.keyLat)), m.load["keys"])
	if len(m.keyBytes) > 0 {
		kb := slices.Clone(m.keyBytes)
		sort.Ints(kb)
		row("bytes per cursor move (j/k) p50 / p90 / max", fmt.Sprintf("%d / %d / %d B", kb[len(kb)/2], kb[len(kb)*9/10], kb[len(kb)-1]), m.load["keys"])
	}
	if len(m.updates) > 0 {
		u := slices.Clone(m.updates)
		sort.Ints(u)
		med := u[len(u)/2]
		row("bytes per steady update / full repaint", fmt.Sprintf("%d B / %d B (%.1f %%)", med, m.repaint, 100*float64(med)/float64(max(m.repaint, 1))), m.load["keys"])
	}
	row("sort (S/N) p50 / max", fmt.Sprintf("%s / %s (%d)", ms(pct(m.sortLat, .5)), ms(pct(m.sortLat, 1)), len(m.sortLat)), m.load["sort/filter"])
	row("filter, per typed character, p50 / max", fmt.Sprintf("%s / %s (%d)", ms(pct(m.filtLat, .5)), ms(pct(m.filtLat, 1)), len(m.filtLat)), m.load["sort/filter"])
	row("CPU per minute under 50 pod patches/s", fmt.Sprintf("%.2f s (%d patches, %d failed; %.0f B/s drawn)", perMin(m.patchCPU.Seconds(), m.c.duration), m.patches, m.patchErrs, float64(m.patchBytes)/m.c.duration.Seconds()), m.load["patches"])
	row("LIST requests: initial / after the first render", fmt.Sprintf("%d / %d %v", m.listsBefore, m.listsAfter, m.listsAfterURIs), m.load["patches"])
	if m.wire != "" {
		fmt.Fprintf(&b, "\n%s", m.wire)
	}
	fmt.Fprintf(&b, "\nProfiles (go tool pprof): %s/{cpu-start,heap-synced,heap-end,cpu-idle,cpu-sortfilter,cpu-patches}.pb.gz (kept with -keep)\n", m.dir)
	return b.String()
}
