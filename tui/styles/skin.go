package styles

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"golang.org/x/image/colornames"
	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/raydar/raydar/kube"
)

// Skins: a built-in style sheet (dark, the default, or light: --skin,
// RAYDAR_SKIN) whose colours $XDG_CONFIG_HOME/raydar/skin.yaml may change.
// The file uses k9s' skin names where the meaning is the same (k9s:
// body, info, prompt, help, frame, views) and raydar's own for what k9s
// has no name for (raydar:). Every key is checked: an unknown key, a value
// that is not a colour, or a section that is not a mapping refuses the
// file, naming the key, its line and the file. Top-level keys other than
// k9s and raydar may only hold a YAML anchor's colour, as k9s' skins
// define their palette (foreground: &fg "#abb2bf").

// Builtins are the built-in skins' names, the default first.
var Builtins = []string{"dark", "light"}

// Builtin is the built-in skin named name ("" is the default, dark).
func Builtin(name string) (*Styles, error) {
	switch name {
	case "", "dark":
		return Dark(), nil
	case "light":
		return Light(), nil
	}
	return nil, fmt.Errorf("unknown skin %q (built in: %s)", name, strings.Join(Builtins, ", "))
}

// SkinPath is the skin file's path: $XDG_CONFIG_HOME/raydar/skin.yaml, or
// ~/.config/raydar/skin.yaml (beside keys.yaml).
func SkinPath() (string, error) { return kube.ConfigFile("skin.yaml") }

// LoadDefault is the built-in skin named builtin with the colours of the
// skin file at SkinPath() (a missing file changes nothing).
func LoadDefault(builtin string) (*Styles, error) {
	p, err := SkinPath()
	if err != nil {
		return nil, err
	}
	return Load(builtin, p)
}

// Load is the built-in skin named builtin with the colours of the skin
// file at path. A missing file is not an error; any other problem
// (unreadable file, bad YAML, unknown key, bad colour) is, naming path.
func Load(builtin, path string) (*Styles, error) {
	s, err := Builtin(builtin)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("skin file %s: %w", path, err)
	}
	if err := ApplySkin(s, data); err != nil {
		return nil, fmt.Errorf("skin file %s: %w", path, err)
	}
	return s, nil
}

// setter changes one colour of a style sheet.
type setter func(s *Styles, c color.Color)

func fg(f func(s *Styles) *lipgloss.Style) setter {
	return func(s *Styles, c color.Color) { st := f(s); *st = st.Foreground(c) }
}

func bg(f func(s *Styles) *lipgloss.Style) setter {
	return func(s *Styles, c color.Color) { st := f(s); *st = st.Background(c) }
}

func both(fs ...setter) setter {
	return func(s *Styles, c color.Color) {
		for _, f := range fs {
			f(s, c)
		}
	}
}

func class(k Class) setter {
	return func(s *Styles, c color.Color) { s.classes[k] = s.classes[k].Foreground(c) }
}

// cursor sets the selected row's colours: an explicit colour turns the
// reverse video off (it would swap them).
func cursor(background bool) setter {
	return func(s *Styles, c color.Color) {
		s.Selected = s.Selected.Reverse(false)
		if background {
			s.Selected = s.Selected.Background(c)
		} else {
			s.Selected = s.Selected.Foreground(c)
		}
	}
}

// skinKeys are the keys a skin file may set, by their path.
var skinKeys = map[string]setter{
	// k9s' names, for what they mean in k9s.
	"k9s.body.logoColor":              fg(func(s *Styles) *lipgloss.Style { return &s.Logo }),
	"k9s.info.sectionColor":           fg(func(s *Styles) *lipgloss.Style { return &s.HeaderKey }),
	"k9s.info.fgColor":                fg(func(s *Styles) *lipgloss.Style { return &s.HeaderValue }),
	"k9s.prompt.fgColor":              fg(func(s *Styles) *lipgloss.Style { return &s.Prompt }),
	"k9s.prompt.bgColor":              bg(func(s *Styles) *lipgloss.Style { return &s.Prompt }),
	"k9s.help.fgColor":                fg(func(s *Styles) *lipgloss.Style { return &s.HelpDesc }),
	"k9s.help.keyColor":               fg(func(s *Styles) *lipgloss.Style { return &s.HelpKey }),
	"k9s.help.sectionColor":           fg(func(s *Styles) *lipgloss.Style { return &s.HelpGroup }),
	"k9s.frame.border.fgColor":        both(fg(func(s *Styles) *lipgloss.Style { return &s.Rule }), func(s *Styles, c color.Color) { s.Dialog = s.Dialog.BorderForeground(c) }),
	"k9s.frame.menu.fgColor":          fg(func(s *Styles) *lipgloss.Style { return &s.HintText }),
	"k9s.frame.menu.keyColor":         fg(func(s *Styles) *lipgloss.Style { return &s.HintKey }),
	"k9s.frame.crumbs.fgColor":        both(fg(func(s *Styles) *lipgloss.Style { return &s.Crumb }), fg(func(s *Styles) *lipgloss.Style { return &s.CrumbActive })),
	"k9s.frame.crumbs.bgColor":        bg(func(s *Styles) *lipgloss.Style { return &s.Crumb }),
	"k9s.frame.crumbs.activeColor":    bg(func(s *Styles) *lipgloss.Style { return &s.CrumbActive }),
	"k9s.frame.title.fgColor":         fg(func(s *Styles) *lipgloss.Style { return &s.Title }),
	"k9s.frame.title.counterColor":    fg(func(s *Styles) *lipgloss.Style { return &s.TitleCounter }),
	"k9s.frame.title.filterColor":     fg(func(s *Styles) *lipgloss.Style { return &s.TitleFilter }),
	"k9s.frame.status.pendingColor":   class(Pending),
	"k9s.frame.status.errorColor":     both(class(Bad), fg(func(s *Styles) *lipgloss.Style { return &s.FlashErr })),
	"k9s.frame.status.completedColor": class(Done),
	"k9s.views.table.cursorFgColor":   cursor(false),
	"k9s.views.table.cursorBgColor":   cursor(true),
	"k9s.views.table.markColor":       fg(func(s *Styles) *lipgloss.Style { return &s.Marked }),
	"k9s.views.table.header.fgColor":  fg(func(s *Styles) *lipgloss.Style { return &s.TableHeader }),
	"k9s.views.table.header.bgColor":  bg(func(s *Styles) *lipgloss.Style { return &s.TableHeader }),
	"raydar.status.okColor":           class(OK),
	"raydar.status.warnColor":         class(Warn),
	"raydar.flash.infoColor":          fg(func(s *Styles) *lipgloss.Style { return &s.FlashInfo }),
	"raydar.flash.warnColor":          fg(func(s *Styles) *lipgloss.Style { return &s.FlashWarn }),
	"raydar.detail.sectionColor":      fg(func(s *Styles) *lipgloss.Style { return &s.Section }),
	"raydar.detail.labelColor":        fg(func(s *Styles) *lipgloss.Style { return &s.Label }),
	"raydar.busyColor":                fg(func(s *Styles) *lipgloss.Style { return &s.Busy }),
	"raydar.protected.fgColor":        fg(func(s *Styles) *lipgloss.Style { return &s.Protected }),
	"raydar.protected.bgColor":        bg(func(s *Styles) *lipgloss.Style { return &s.Protected }),
}

// SkinKeys lists the keys a skin file may set, sorted.
func SkinKeys() []string {
	out := make([]string, 0, len(skinKeys))
	for k := range skinKeys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ApplySkin changes s's colours to the skin file's in data.
func ApplySkin(s *Styles, data []byte) error {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) { // an empty file changes nothing
			return nil
		}
		return fmt.Errorf("invalid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping with a k9s or raydar section", root.Line)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "k9s", "raydar":
			if err := walk(s, k.Value, v); err != nil {
				return err
			}
		default:
			// A palette entry of k9s' skins: an anchor the sections use.
			if v.Kind != yaml.ScalarNode || v.Anchor == "" {
				return fmt.Errorf("line %d: unknown key %s (a skin has the sections k9s and raydar; other top-level keys only define a YAML anchor's colour, as in `fg: &fg \"#abb2bf\"`)", k.Line, k.Value)
			}
		}
	}
	return nil
}

// walk applies the section at path (node v).
func walk(s *Styles, path string, v *yaml.Node) error {
	if v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	if v.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %s: want a mapping of keys", v.Line, path)
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		p := path + "." + k.Value
		if set, ok := skinKeys[p]; ok {
			if val.Kind == yaml.AliasNode {
				val = val.Alias
			}
			if val.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: %s: want a colour", k.Line, p)
			}
			c, err := ParseColor(val.Value)
			if err != nil {
				return fmt.Errorf("line %d: %s: %w", k.Line, p, err)
			}
			set(s, c)
			continue
		}
		if !isSection(p) {
			return fmt.Errorf("line %d: unknown key %s (%s)", k.Line, p, validUnder(path))
		}
		if err := walk(s, p, val); err != nil {
			return err
		}
	}
	return nil
}

// isSection says whether some key is under path.
func isSection(path string) bool {
	for k := range skinKeys {
		if strings.HasPrefix(k, path+".") {
			return true
		}
	}
	return false
}

// validUnder names the keys and sections right under path.
func validUnder(path string) string {
	seen := map[string]bool{}
	for k := range skinKeys {
		if rest, ok := strings.CutPrefix(k, path+"."); ok {
			seen[strings.SplitN(rest, ".", 2)[0]] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return "raydar reads under " + path + ": " + strings.Join(names, ", ")
}

var hexColor = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// basicColors are the 16 ANSI colours by name: the terminal's theme
// decides their shades.
var basicColors = map[string]color.Color{
	"black": lipgloss.Black, "red": lipgloss.Red, "green": lipgloss.Green, "yellow": lipgloss.Yellow,
	"blue": lipgloss.Blue, "magenta": lipgloss.Magenta, "cyan": lipgloss.Cyan, "white": lipgloss.White,
	"brightblack": lipgloss.BrightBlack, "brightred": lipgloss.BrightRed, "brightgreen": lipgloss.BrightGreen,
	"brightyellow": lipgloss.BrightYellow, "brightblue": lipgloss.BrightBlue, "brightmagenta": lipgloss.BrightMagenta,
	"brightcyan": lipgloss.BrightCyan, "brightwhite": lipgloss.BrightWhite,
}

// ParseColor reads a skin's colour: "default" (the terminal's own), one of
// the 16 ANSI colour names (black … white, brightblack … brightwhite), a
// 256-colour index (0-255), #rgb or #rrggbb, or a CSS/SVG colour name as
// k9s' skins use them (dodgerblue, papayawhip, …).
func ParseColor(v string) (color.Color, error) {
	n := strings.ToLower(strings.TrimSpace(v))
	if n == "default" {
		return lipgloss.NoColor{}, nil
	}
	if c, ok := basicColors[n]; ok {
		return c, nil
	}
	if hexColor.MatchString(n) {
		return lipgloss.Color(n), nil
	}
	if i, err := strconv.Atoi(n); err == nil && i >= 0 && i <= 255 {
		return lipgloss.Color(n), nil
	}
	if c, ok := colornames.Map[n]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("bad colour %q (want default, an ANSI name such as red or brightblue, 0-255, #rgb, #rrggbb or a CSS colour name such as dodgerblue)", v)
}
