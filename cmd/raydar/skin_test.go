package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
)

// TestSkinFlagAndFile: --skin picks the built-in (RAYDAR_SKIN its
// default), NO_COLOR makes --no-color the default, and a bad skin.yaml
// refuses the start, naming the key and the file, as a bad keys.yaml does.
func TestSkinFlagAndFile(t *testing.T) {
	t.Setenv("GOGC", "100") // prepare leaves the collector alone
	t.Setenv("RAYDAR_SKIN", "light")
	t.Setenv("NO_COLOR", "1")
	cmd := newRootCmd()
	if f := cmd.Flags().Lookup("skin"); f == nil || f.DefValue != "light" {
		t.Fatalf("--skin: %+v", f)
	}
	if f := cmd.Flags().Lookup("no-color"); f == nil || f.DefValue != "true" {
		t.Fatalf("--no-color with NO_COLOR set: %+v", f)
	}

	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	path := filepath.Join(dir, "raydar", "skin.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("k9s:\n  views:\n    table:\n      cursorFgColor: blurple\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &tuiFlags{skin: "dark"}
	if _, _, _, err := f.prepare(logr.Discard()); err == nil || !strings.Contains(err.Error(), "skin file "+path) ||
		!strings.Contains(err.Error(), `k9s.views.table.cursorFgColor: bad colour "blurple"`) {
		t.Fatalf("bad skin file: %v", err)
	}
	if err := os.WriteFile(path, []byte("k9s:\n  views:\n    table:\n      cursorFgColor: mediumpurple\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, stop, err := f.prepare(logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if !strings.Contains(f.styles.Selected.Render("x"), "38;2;147;112;219") {
		t.Fatalf("the skin's cursor colour is not the TUI's: %q", f.styles.Selected.Render("x"))
	}
	f.skin = "solarized"
	if _, _, _, err := f.prepare(logr.Discard()); err == nil || !strings.Contains(err.Error(), `unknown skin "solarized"`) {
		t.Fatalf("--skin solarized: %v", err)
	}
}
