package styles

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// dodgerblue is #1e90ff in the escape codes of a true-colour foreground.
const dodgerblueFg = "38;2;30;144;255"

// TestSkinChangesColours: a skin file's colours reach the styles the TUI
// draws with, under k9s' names and raydar's own, through YAML anchors as
// k9s' skins write them; what it does not name keeps the built-in's.
func TestSkinChangesColours(t *testing.T) {
	s := Dark()
	before := s.HeaderKey.Render("x")
	err := ApplySkin(s, []byte(`
blue: &blue dodgerblue
k9s:
  frame:
    title:
      fgColor: *blue
    crumbs:
      activeColor: "#ff0000"
  views:
    table:
      cursorBgColor: "236"
      header:
        fgColor: papayawhip
raydar:
  status:
    okColor: brightgreen
`))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ got, want string }{
		"title":        {s.Title.Render("x"), dodgerblueFg},
		"active crumb": {s.CrumbActive.Render("x"), "48;2;255;0;0"},
		"cursor":       {s.Selected.Render("x"), "48;5;236"},
		"table header": {s.TableHeader.Render("x"), "38;2;255;239;213"},
		"ok status":    {s.Class(OK).Render("x"), "92"},
	} {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("%s: %q lacks %q", name, c.got, c.want)
		}
	}
	if strings.Contains(s.Selected.Render("x"), "\x1b[7") {
		t.Error("a cursor colour kept the reverse video, which swaps it")
	}
	if got := s.HeaderKey.Render("x"); got != before {
		t.Errorf("info.sectionColor not set, yet the header keys changed: %q, was %q", got, before)
	}
}

// TestBadSkinRefused: an unknown key, a bad colour, a section that is not
// one, a stray top-level key: each refused, naming the key and its line;
// Load adds the file.
func TestBadSkinRefused(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"k9s:\n  body:\n    bgColor: black\n", "line 3: unknown key k9s.body.bgColor (raydar reads under k9s.body: logoColor)"},
		{"k9s:\n  frame:\n    titel:\n      fgColor: red\n", "line 3: unknown key k9s.frame.titel (raydar reads under k9s.frame: border, crumbs, menu, status, title)"},
		{"k9s:\n  frame:\n    title:\n      fgColor: bluish\n", `line 4: k9s.frame.title.fgColor: bad colour "bluish"`},
		{"k9s:\n  frame:\n    title:\n      fgColor: \"#12345\"\n", `k9s.frame.title.fgColor: bad colour "#12345"`},
		{"k9s:\n  frame:\n    title:\n      fgColor: 256\n", `k9s.frame.title.fgColor: bad colour "256"`},
		{"k9s:\n  frame:\n    title:\n      fgColor: [red]\n", "line 4: k9s.frame.title.fgColor: want a colour"},
		{"k9s:\n  frame: red\n", "line 2: k9s.frame: want a mapping of keys"},
		{"k9S:\n  body:\n    logoColor: red\n", "line 1: unknown key k9S"},
		{"foreground: \"#abb2bf\"\n", "line 1: unknown key foreground"},
		{"k9s: [\n", "invalid YAML"},
		{"- red\n", "want a mapping with a k9s or raydar section"},
	} {
		err := ApplySkin(Dark(), []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want %q", c.yaml, err, c.want)
		}
	}
	path := filepath.Join(t.TempDir(), "skin.yaml")
	if err := os.WriteFile(path, []byte("k9s:\n  body:\n    bgColor: black\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("dark", path); err == nil || !strings.Contains(err.Error(), "skin file "+path+": line 3: unknown key k9s.body.bgColor") {
		t.Fatalf("Load: %v", err)
	}
}

// TestLoad: a missing skin file is the built-in; an empty one too; a
// built-in that does not exist is refused, naming those that do.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	s, err := Load("light", filepath.Join(dir, "skin.yaml"))
	if err != nil || s.Title.Render("x") != Light().Title.Render("x") {
		t.Fatalf("missing file: %v", err)
	}
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("dark", empty); err != nil {
		t.Fatalf("empty file: %v", err)
	}
	if _, err := Load("solarized", empty); err == nil || !strings.Contains(err.Error(), `unknown skin "solarized" (built in: dark, light)`) {
		t.Fatalf("unknown built-in: %v", err)
	}
	t.Setenv("XDG_CONFIG_HOME", dir)
	if err := os.MkdirAll(filepath.Join(dir, "raydar"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raydar", "skin.yaml"), []byte("k9s:\n  body:\n    logoColor: dodgerblue\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = LoadDefault("dark")
	if err != nil || !strings.Contains(s.Logo.Render("raydar"), dodgerblueFg) {
		t.Fatalf("LoadDefault: %v", err)
	}
}

// TestLightAvoidsWashedOutColours: the light skin differs from the dark
// one and uses no yellow, cyan or white foreground (ANSI 33/93, 36/96,
// 37/97), which a light background washes out.
func TestLightAvoidsWashedOutColours(t *testing.T) {
	l, d := Light(), Dark()
	if l.Title.Render("x") == d.Title.Render("x") {
		t.Fatal("light and dark titles are alike")
	}
	washed := regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?(33|93|36|96|37|97)m`)
	for name, r := range renderAll(l) {
		if washed.MatchString(r) {
			t.Errorf("light %s: %q", name, r)
		}
	}
}

// TestParseColor: the colour forms a skin may use.
func TestParseColor(t *testing.T) {
	for _, ok := range []string{"default", "red", "BrightBlue", "#abc", "#A0B1C2", "0", "255", "dodgerblue", "PapayaWhip"} {
		if _, err := ParseColor(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-1", "256", "#12", "#abcdefg", "reddish", "rgb(1,2,3)"} {
		if _, err := ParseColor(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// renderAll renders "x" in each of s's styles.
func renderAll(s *Styles) map[string]string {
	out := map[string]string{
		"Logo": s.Logo.Render("x"), "HeaderKey": s.HeaderKey.Render("x"), "HeaderValue": s.HeaderValue.Render("x"),
		"HintKey": s.HintKey.Render("x"), "HintText": s.HintText.Render("x"), "Title": s.Title.Render("x"),
		"TitleCounter": s.TitleCounter.Render("x"), "TitleFilter": s.TitleFilter.Render("x"), "Rule": s.Rule.Render("x"),
		"TableHeader": s.TableHeader.Render("x"), "Selected": s.Selected.Render("x"), "Marked": s.Marked.Render("x"),
		"Crumb": s.Crumb.Render("x"), "CrumbActive": s.CrumbActive.Render("x"), "FlashInfo": s.FlashInfo.Render("x"),
		"FlashWarn": s.FlashWarn.Render("x"), "FlashErr": s.FlashErr.Render("x"), "Prompt": s.Prompt.Render("x"),
		"Busy": s.Busy.Render("x"), "Section": s.Section.Render("x"), "Label": s.Label.Render("x"),
		"HelpGroup": s.HelpGroup.Render("x"), "HelpKey": s.HelpKey.Render("x"), "HelpDesc": s.HelpDesc.Render("x"),
		"Protected": s.Protected.Render("x"),
	}
	for c := Neutral; c <= Done; c++ {
		out["class "+string(rune('0'+c))] = s.Class(c).Render("x")
	}
	return out
}

// TestDocSampleSkin: the sample skin.yaml of docs/tui.md is one raydar
// takes, and it sets every key there is.
func TestDocSampleSkin(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "tui.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(doc), "## Skins")
	_, rest, _ = strings.Cut(rest, "```yaml\n")
	sample, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("no yaml block under ## Skins in docs/tui.md")
	}
	if err := ApplySkin(Dark(), []byte(sample)); err != nil {
		t.Fatalf("docs/tui.md's sample: %v", err)
	}
	for _, k := range SkinKeys() {
		parts := strings.Split(k, ".")
		if !strings.Contains(sample, parts[len(parts)-1]+":") {
			t.Errorf("the sample does not show %s", k)
		}
	}
}
