package widgets

import (
	"strings"

	"github.com/raydar/raydar/kube/gauges"
)

// Sparkline is a one-line chart of a series: the last width points, one
// cell each, scaled to [0, top] (top <= 0: the largest value shown), in
// the eight block glyphs (ASCII " .:-=+*#" when plain). A small widget of
// our own rather than a chart library: one line of runes is all the pages
// draw, and it needs no second rendering model beside the table.
func Sparkline(pts []gauges.Point, width int, top float64, plain bool) string {
	if width <= 0 || len(pts) == 0 {
		return ""
	}
	if len(pts) > width {
		pts = pts[len(pts)-width:]
	}
	if top <= 0 {
		for _, p := range pts {
			top = max(top, p.V)
		}
	}
	levels := []rune("▁▂▃▄▅▆▇█")
	if plain {
		levels = []rune(" .:-=+*#")
	}
	var b strings.Builder
	for _, p := range pts {
		i := 0
		if top > 0 {
			i = int(p.V / top * float64(len(levels)-1))
		}
		b.WriteRune(levels[max(0, min(i, len(levels)-1))])
	}
	return b.String()
}
