package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/tui/keys"
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
		{"up", fromTop, 5, 4, true}, {"down", fromTop, 5, 6, true},
		{"pgup", fromTop, 5, -5, true}, {"pgdown", fromTop, 5, 15, true},
		{"g", fromTop, 5, 0, true}, {"G", fromTop, 5, 40, true},
		{"up", fromEnd, 5, 6, true}, {"down", fromEnd, 5, 4, true},
		{"pgup", fromEnd, 5, 15, true}, {"pgdown", fromEnd, 5, -5, true},
		{"g", fromEnd, 5, 40, true}, {"G", fromEnd, 5, 0, true},
		{"x", fromTop, 5, 5, false},
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
		if got := scrollKey(km, msg, &pos, c.from, 10, 40); got != c.consumed || pos != c.want {
			t.Errorf("%s from %d at %d: consumed %v pos %d, want %v %d", c.key, c.from, c.pos, got, pos, c.consumed, c.want)
		}
	}
}
