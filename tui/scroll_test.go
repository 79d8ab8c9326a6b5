package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/widgets"
)

func TestScrollKey(t *testing.T) {
	km := keys.Default()
	cases := []struct {
		key      string
		from     int
		pos      int
		want     int
		consumed bool
	}{
		{"up", widgets.FromTop, 5, 4, true}, {"down", widgets.FromTop, 5, 6, true},
		{"pgup", widgets.FromTop, 5, -5, true}, {"pgdown", widgets.FromTop, 5, 15, true},
		{"g", widgets.FromTop, 5, 0, true}, {"G", widgets.FromTop, 5, 40, true},
		{"up", widgets.FromEnd, 5, 6, true}, {"down", widgets.FromEnd, 5, 4, true},
		{"pgup", widgets.FromEnd, 5, 15, true}, {"pgdown", widgets.FromEnd, 5, -5, true},
		{"g", widgets.FromEnd, 5, 40, true}, {"G", widgets.FromEnd, 5, 0, true},
		{"x", widgets.FromTop, 5, 5, false},
	}
	for _, c := range cases {
		var msg tea.KeyPressMsg
		switch c.key {
		case "up":
			msg = tea.KeyPressMsg{Code: tea.KeyUp}
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		case "pgup":
			msg = tea.KeyPressMsg{Code: tea.KeyPgUp}
		case "pgdown":
			msg = tea.KeyPressMsg{Code: tea.KeyPgDown}
		default:
			msg = tea.KeyPressMsg{Code: rune(c.key[0]), Text: c.key}
		}
		pos := c.pos
		if got := widgets.ScrollKey(km, msg, &pos, c.from, 10, 40); got != c.consumed || pos != c.want {
			t.Errorf("%s from %d at %d: consumed %v pos %d, want %v %d", c.key, c.from, c.pos, got, pos, c.consumed, c.want)
		}
	}
}
