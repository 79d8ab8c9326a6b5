package widgets

import (
	"testing"

	"github.com/raydar/raydar/kube/gauges"
)

func TestSparkline(t *testing.T) {
	pts := []gauges.Point{{V: 0}, {V: 50}, {V: 100}, {V: 120}}
	if got := Sparkline(pts, 10, 100, false); got != "▁▄██" { // above the top is the top
		t.Errorf("got %q", got)
	}
	if got := Sparkline(pts, 2, 100, true); got != "##" { // the newest points only
		t.Errorf("plain, width 2: %q", got)
	}
	if got := Sparkline(pts[:2], 5, 0, false); got != "▁█" { // scaled to the largest
		t.Errorf("auto scale: %q", got)
	}
}
