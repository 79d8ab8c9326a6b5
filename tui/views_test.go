package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/exp/teatest/v2"
)

// Golden snapshots of every view and the help, at 100×30 and 80×24. Run
// `go test ./tui -run TestSnapshots -update` after an intended change.
func TestSnapshots(t *testing.T) {
	logs := JobLogsFunc(func(_ context.Context, ns, name string) (string, error) {
		var b strings.Builder
		for i := 1; i <= 40; i++ {
			fmt.Fprintf(&b, "%s/%s: epoch %d loss=%.3f\n", ns, name, i, 1.0/float64(i))
		}
		return b.String(), nil
	})
	cases := []struct {
		name string
		w, h int
		keys []string
		wait string // text to wait for before quitting (async results)
	}{
		{"clusters", 100, 30, nil, ""},
		{"clusters_80x24", 80, 24, nil, ""},
		{"jobs", 100, 30, []string{":rj", "<enter>"}, ""},
		{"services", 100, 30, []string{":rs", "<enter>"}, ""},
		{"pods", 100, 30, []string{":pods", "<enter>"}, ""},
		{"pods_80x24", 80, 24, []string{":pods", "<enter>"}, ""},
		{"cluster_detail", 100, 30, []string{"G", "<enter>"}, ""},
		{"cluster_detail_80x24", 80, 24, []string{"G", "<enter>"}, ""},
		{"job_detail", 100, 30, []string{":rj", "<enter>", "G", "<enter>"}, "epoch 40 "},
		{"service_detail", 100, 30, []string{":rs", "<enter>", "<enter>"}, ""},
		{"help", 100, 30, []string{"?"}, ""},
		{"help_80x24", 80, 24, []string{"?"}, ""},
		{"help_cluster_detail", 100, 30, []string{"<enter>", "?"}, ""},
		{"command_prompt", 100, 30, []string{":ra", "<tab>"}, ""},
		{"filter_prompt", 100, 30, []string{"/", "train|note"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tm, _ := start(t, Options{Session: Session{Logs: logs}}, c.w, c.h)
			typeKeys(tm, c.keys...)
			if c.wait != "" {
				waitScreen(t, tm, c.wait)
			}
			screen, _ := finalScreen(t, tm)
			requireSize(t, screen, c.w, c.h)
			requireGolden(t, screen)
		})
	}
}

// TestNoColorIsPlainASCII: --no-color draws no escape codes and no
// non-ASCII glyphs; the selected row still carries a marker.
func TestNoColorIsPlainASCII(t *testing.T) {
	tm, _ := start(t, Options{NoColor: true}, 80, 24)
	typeKeys(tm, "j", "<space>")
	_ = tm.Quit()
	m := tm.FinalModel(t).(*App)
	content := m.View().Content
	for i, r := range content {
		if r == '\x1b' || r > unicode.MaxASCII {
			t.Fatalf("non-ASCII %q at %d in:\n%s", r, i, content)
		}
	}
	if !strings.Contains(content, "\n> notebook ") { // space marked and moved down
		t.Fatalf("no textual cursor:\n%s", content)
	}
	if !strings.Contains(content, "\n *fruit-raycluste") {
		t.Fatalf("no mark on the marked row:\n%s", content)
	}
	requireGolden(t, content)
}

// TestColorViewHasStyles: the colour style sheet does style the output
// (the renderer then downsamples to the terminal's profile).
func TestColorViewHasStyles(t *testing.T) {
	tm, _ := start(t, Options{}, 80, 24)
	_ = tm.Quit()
	m := tm.FinalModel(t, teatest.WithFinalTimeout(teatestTimeout)).(*App)
	if !strings.Contains(m.View().Content, "\x1b[") {
		t.Fatal("no styling in colour mode")
	}
}
