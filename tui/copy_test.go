package tui

import (
	"bytes"
	"encoding/base64"
	"io"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestClipboardSeq: the bytes of OSC 52, plain and in tmux's passthrough,
// quoted (the goldens are readable).
func TestClipboardSeq(t *testing.T) {
	for _, tc := range []struct {
		name string
		tmux bool
	}{{"plain", false}, {"tmux", true}} {
		t.Run(tc.name, func(t *testing.T) {
			golden.RequireEqual(t, []byte(strconv.Quote(clipboardSeq("train-a\tml\t3/3", tc.tmux))+"\n"))
		})
	}
	// What the goldens hold, said once more by hand.
	b64 := base64.StdEncoding.EncodeToString([]byte("x"))
	if got := clipboardSeq("x", false); got != "\x1b]52;c;"+b64+"\a" {
		t.Errorf("plain: %q", got)
	}
	if got := clipboardSeq("x", true); got != "\x1bPtmux;\x1b\x1b]52;c;"+b64+"\a\x1b\\" {
		t.Errorf("tmux: %q", got)
	}
}

// startEnv is start with the Program's environment given (TMUX or not).
func startEnv(t *testing.T, opts Options, env []string) (*teatest.TestModel, *App) {
	t.Helper()
	opts.Now, opts.Store = clock, fixture()
	opts.Session.Context = "sandbox"
	app, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(100, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii), tea.WithEnvironment(env), tea.WithFilter(probeFilter)))
	t.Cleanup(func() { _ = tm.Quit() })
	return tm, app
}

// copied runs keys and returns what the terminal received up to a whole
// OSC 52 (or, with osc false, the whole session) and the screen.
func copied(t *testing.T, opts Options, env []string, osc bool, seq ...string) (out []byte, screen string) {
	t.Helper()
	tm, _ := startEnv(t, opts, env)
	waitScreen(t, tm, "train-a")
	typeKeys(tm, seq...)
	screen = waitScreen(t, tm, "cop")
	if osc {
		// The sequence is written when the Program runs the command, after
		// the flash may be drawn: wait for it in the byte stream.
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			out = append(out[:0], b...)
			i := bytes.Index(b, []byte("\x1b]52;c;"))
			return i >= 0 && bytes.IndexByte(b[i:], '\a') > 0
		}, teatest.WithDuration(teatestTimeout))
		return out, screen
	}
	_ = tm.Quit()
	b, err := io.ReadAll(tm.FinalOutput(t, teatestFinal()))
	if err != nil {
		t.Fatal(err)
	}
	return b, screen
}

func TestCopyNameAndRowToTheTerminal(t *testing.T) {
	plain := []string{"TERM=xterm-256color"}
	tmux := []string{"TERM=screen-256color", "TMUX=/tmp/tmux-1000/default,4242,0"}

	// c on the selected RayCluster (the last row: G): its name.
	out, screen := copied(t, Options{}, plain, true, "G", "c")
	if !bytes.Contains(out, []byte(clipboardSeq("train-a", false))) {
		t.Errorf("the terminal did not get OSC 52 with the name; output %q", out)
	}
	mustContain(t, screen, "copied train-a")

	// In tmux: the same, in its passthrough.
	out, _ = copied(t, Options{}, tmux, true, "G", "c")
	if !bytes.Contains(out, []byte(clipboardSeq("train-a", true))) {
		t.Errorf("in tmux the terminal did not get the passthrough; output %q", out)
	}

	// C: the row as shown, tab separated.
	out, screen = copied(t, Options{}, plain, true, "G", "C")
	mustContain(t, screen, "copied the row of train-a")
	i := bytes.Index(out, []byte("\x1b]52;c;"))
	if i < 0 {
		t.Fatalf("no OSC 52 in %q", out)
	}
	end := bytes.IndexByte(out[i:], '\a')
	row, err := base64.StdEncoding.DecodeString(string(out[i+len("\x1b]52;c;") : i+end]))
	if err != nil {
		t.Fatal(err)
	}
	cells := strings.Split(string(row), "\t")
	if len(cells) < 4 || cells[0] != "train-a" || cells[1] != "ml" {
		t.Errorf("copied row %q, want the row's cells from NAME and NAMESPACE on", row)
	}
}

func TestCopyDescribeYAML(t *testing.T) {
	w := newWorld(t, worldOpts{})
	out, screen := copied(t, w.opts(), []string{"TERM=xterm"}, true, "G", "d", "C")
	mustContain(t, screen, "copied the YAML of train-a")
	i := bytes.Index(out, []byte("\x1b]52;c;"))
	if i < 0 {
		t.Fatalf("no OSC 52 in %q", out)
	}
	end := bytes.IndexByte(out[i:], '\a')
	y, err := base64.StdEncoding.DecodeString(string(out[i+len("\x1b]52;c;") : i+end]))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(y), "kind: RayCluster") || !strings.Contains(string(y), "name: train-a") {
		t.Errorf("copied %q, want the describe page's YAML", y)
	}
}

func TestCopyWithoutATerminalSaysSo(t *testing.T) {
	out, screen := copied(t, Options{NoClipboard: "the output is not a terminal"}, []string{"TERM=xterm"}, false, "G", "c")
	mustContain(t, screen, "cannot copy train-a (the output is not a terminal): train-a")
	if bytes.Contains(out, []byte("\x1b]52;")) {
		t.Errorf("OSC 52 written without a terminal: %q", out)
	}
}
