package tui

import (
	"strings"
	"testing"
)

// Golden snapshots of the RayCronJobs list and a RayCronJob's detail, at
// 80×24 and wide. `go test ./tui -run TestCronJobSnapshots -update`.
func TestCronJobSnapshots(t *testing.T) {
	cases := []struct {
		name string
		w, h int
		keys []string
	}{
		{"cronjobs", 160, 30, []string{":rcj", "<enter>"}},
		{"cronjobs_80x24", 80, 24, []string{":rcj", "<enter>"}},
		{"cronjob_detail", 160, 30, []string{":rcj", "<enter>", "j", "j", "<enter>", "j"}},
		{"cronjob_detail_80x24", 80, 24, []string{":rcj", "<enter>", "j", "j", "<enter>", "j"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tm, _ := start(t, Options{Store: cronFixture(), Actions: DefaultActions(ActionDeps{})}, c.w, c.h)
			typeKeys(tm, c.keys...)
			screen, _ := finalScreen(t, tm)
			lines := strings.Split(screen, "\n")
			if len(lines) != c.h {
				t.Fatalf("%d lines, want %d", len(lines), c.h)
			}
			for i, l := range lines {
				if w := len([]rune(l)); w > c.w {
					t.Fatalf("line %d is %d wide: %q", i, w, l)
				}
			}
			t.Log("\n" + screen)
			requireGolden(t, screen)
		})
	}
}
