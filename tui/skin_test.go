package tui

import (
	"strings"
	"testing"

	"github.com/raydar/raydar/tui/styles"
)

// skinned is the dark skin with a dodgerblue title and logo (#1e90ff).
func skinned(t *testing.T) *styles.Styles {
	t.Helper()
	s := styles.Dark()
	if err := styles.ApplySkin(s, []byte("k9s:\n  body:\n    logoColor: dodgerblue\n  frame:\n    title:\n      fgColor: dodgerblue\n")); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSkinColoursTheScreen: the skin's colours are the screen's (the
// logo and the title bar in the file's dodgerblue), and the light skin
// draws the screen otherwise than the dark one.
func TestSkinColoursTheScreen(t *testing.T) {
	const blue = "38;2;30;144;255m"
	view := func(o Options) string { return newApp(t, o).View().Content }
	if dflt := view(Options{}); strings.Contains(dflt, blue) {
		t.Fatal("the default colours already have the skin's")
	}
	screen := view(Options{Styles: skinned(t)})
	if n := strings.Count(screen, blue); n < 2 {
		t.Fatalf("the skin's colour is on %d places, want the logo and the title:\n%q", n, screen)
	}
	if view(Options{Styles: styles.Light()}) == view(Options{Styles: styles.Dark()}) {
		t.Fatal("light and dark skins draw the same screen")
	}
}

// TestNoColorWinsOverTheSkin: with NO_COLOR (--no-color) a skin changes
// nothing: no escape code at all, and the selection still shows, by its
// marker.
func TestNoColorWinsOverTheSkin(t *testing.T) {
	a := newApp(t, Options{NoColor: true, Styles: skinned(t)})
	typeApp(a, "j")
	screen := a.View().Content
	if strings.Contains(screen, "\x1b") {
		t.Fatalf("escape codes with NoColor:\n%q", screen)
	}
	if !strings.Contains(screen, "\n> fruit-rayclus") {
		t.Fatalf("no textual cursor:\n%s", screen)
	}
}
