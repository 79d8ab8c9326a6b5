package keys

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

func press(s string) tea.KeyPressMsg {
	r := []rune(s)
	return tea.KeyPressMsg{Code: r[0], Text: s}
}

func TestDefaultHasNoDuplicates(t *testing.T) {
	if err := Default().Check(); err != nil {
		t.Fatal(err)
	}
}

func TestPathFollowsXDG(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	p, err := Path()
	if err != nil || p != "/cfg/raydar/keys.yaml" {
		t.Fatalf("Path() = %q, %v", p, err)
	}
	t.Setenv("XDG_CONFIG_HOME", "relative/dir") // ignored per the XDG spec
	t.Setenv("HOME", "/home/u")
	p, err = Path()
	if err != nil || p != "/home/u/.config/raydar/keys.yaml" {
		t.Fatalf("Path() = %q, %v", p, err)
	}
}

func TestLoadMissingFileGivesDefaults(t *testing.T) {
	km, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(km.Up.Keys(), Default().Up.Keys()) {
		t.Fatalf("Up = %v", km.Up.Keys())
	}
}

func TestLoadDefaultReadsXDGFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	writeFile(t, filepath.Join(dir, "raydar", "keys.yaml"), "keys:\n  help: F1\n")
	km, err := LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	if got := km.Help.Keys(); !reflect.DeepEqual(got, []string{"F1"}) {
		t.Fatalf("Help keys = %v", got)
	}
}

func TestLoadRebinds(t *testing.T) {
	p := filepath.Join(t.TempDir(), "keys.yaml")
	writeFile(t, p, `
keys:
  up: [i, up]
  down: [e, down]
  refresh: []
  sort-status: T
actions:
  delete: ["ctrl+x"]
`)
	km, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if !key.Matches(press("i"), km.Up) || key.Matches(press("k"), km.Up) {
		t.Fatalf("up not rebound: %v", km.Up.Keys())
	}
	if km.Up.Help().Key != "i/up" || km.Up.Help().Desc != "up" {
		t.Fatalf("help = %+v", km.Up.Help())
	}
	if km.Refresh.Enabled() {
		t.Fatal("refresh: [] must unbind")
	}
	if !key.Matches(press("T"), km.SortStatus) {
		t.Fatal("single-string form not accepted")
	}
	def := key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "delete"))
	if got := km.Action("delete", def); !reflect.DeepEqual(got.Keys(), []string{"ctrl+x"}) || got.Help().Desc != "delete" {
		t.Fatalf("action override = %v %+v", got.Keys(), got.Help())
	}
	if got := km.Action("scale", def); !reflect.DeepEqual(got.Keys(), []string{"ctrl+d"}) {
		t.Fatalf("action default = %v", got.Keys())
	}
}

func TestLoadBadFiles(t *testing.T) {
	cases := map[string]struct{ body, want string }{
		"bad yaml":      {"keys: [unclosed", "invalid YAML"},
		"unknown name":  {"keys:\n  jump: [x]\n", `unknown binding "jump"`},
		"unknown field": {"bindings:\n  up: [x]\n", "invalid YAML"},
		"not a list":    {"keys:\n  up: {a: b}\n", "want a key name or a list"},
		"empty key":     {"keys:\n  up: [\"\"]\n", `up: invalid key name ""`},
		"duplicate":     {"keys:\n  up: [j]\n", `key "j" is bound to both up and down`},
		"action blank":  {"actions:\n  x: [\" \"]\n", "action x: invalid key name"},
		"bare n":        {"keys:\n  up: n\n", `quote the key ("n")`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "keys.yaml")
			writeFile(t, p, c.body)
			_, err := Load(p)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("error %q should name the file and contain %q", err, c.want)
			}
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir() // a directory is not a readable file
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckSeesActionClash(t *testing.T) {
	b := key.NewBinding(key.WithKeys("j"))
	err := Default().Check(Named{Name: "scale", Binding: &b})
	if err == nil || !strings.Contains(err.Error(), "down and scale") {
		t.Fatalf("err = %v", err)
	}
}

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSortAndSearchMayShareKeys(t *testing.T) {
	km := Default()
	if km.SortName.Keys()[0] != km.SearchPrev.Keys()[0] {
		t.Fatalf("the defaults no longer share N: %v %v", km.SortName.Keys(), km.SearchPrev.Keys())
	}
	if err := km.Check(); err != nil {
		t.Fatalf("sort and search sharing N: %v", err)
	}
	km.RayLogs = key.NewBinding(key.WithKeys("N"))
	if err := km.Check(); err == nil || !strings.Contains(err.Error(), `"N" is bound to both sort-name and ray-logs`) {
		t.Fatalf("a clash with a sort key outside search: %v", err)
	}
}
