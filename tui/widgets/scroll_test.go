package widgets

import (
	"strings"
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
		{"up", FromTop, 5, 4, true}, {"down", FromTop, 5, 6, true},
		{"pgup", FromTop, 5, -5, true}, {"pgdown", FromTop, 5, 15, true},
		{"g", FromTop, 5, 0, true}, {"G", FromTop, 5, 40, true},
		{"up", FromEnd, 5, 6, true}, {"down", FromEnd, 5, 4, true},
		{"pgup", FromEnd, 5, 15, true}, {"pgdown", FromEnd, 5, -5, true},
		{"g", FromEnd, 5, 40, true}, {"G", FromEnd, 5, 0, true},
		{"x", FromTop, 5, 5, false},
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
		if got := ScrollKey(km, msg, &pos, c.from, 10, 40); got != c.consumed || pos != c.want {
			t.Errorf("%s from %d at %d: consumed %v pos %d, want %v %d", c.key, c.from, c.pos, got, pos, c.consumed, c.want)
		}
	}
}

func TestTextViewWrap(t *testing.T) {
	v := TextView{Lines: []string{strings.Repeat("x", 25), "short", "c", "d"}, W: 10, H: 3}
	if got := v.View(); got != "xxxxxxxxxx\nshort\nc" {
		t.Fatalf("cut: %q", got)
	}
	km := keys.Default()
	v.HandleKey(km, tea.KeyPressMsg{Code: 'w', Text: "w"})
	if got := v.View(); got != "xxxxxxxxxx\nxxxxxxxxxx\nxxxxx" {
		t.Fatalf("wrapped: %q", got)
	}
	v.HandleKey(km, tea.KeyPressMsg{Code: 'G', Text: "G"})
	if v.Top != 1 || v.View() != "short\nc\nd" {
		t.Fatalf("bottom: top %d %q", v.Top, v.View())
	}
}
