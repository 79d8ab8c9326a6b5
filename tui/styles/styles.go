// Package styles owns the TUI's look: the one Styles struct every component
// receives, the glyphs it draws with, the built-in skins (dark, light) and
// the skin file that changes their colours (skin.yaml, k9s' key names;
// skin.go), and the mapping from a Kubernetes/Ray status word to a status
// class. Nothing else in tui/ creates lipgloss styles.
package styles

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// Glyphs are the non-letter characters the TUI draws. Plain() swaps them for
// ASCII so a --no-color session on a dumb terminal shows no boxes.
type Glyphs struct {
	Cursor   string // marks the selected row (must not rely on colour)
	Mark     string // marks a row marked with space
	Ellipsis string // tail of a truncated cell
	Rule     string // horizontal rule of the title bar
	Asc      string // sort ascending
	Desc     string // sort descending
	Sep      string // separator between header fields
	// Port-forward states in the header summary and the forwards view.
	FwdUp, FwdRetry, FwdFailed string
	// A fleet view's context states in the header: connected and synced,
	// syncing or reconnecting, lost.
	CtxOk, CtxRetry, CtxFailed string
}

// Class is the status class of a row or a value; it picks the colour.
type Class int

// Status classes.
const (
	Neutral Class = iota
	OK
	Pending
	Warn
	Bad
	Done // completed successfully, no longer live
)

// Styles is the single style sheet of the TUI.
type Styles struct {
	// Plain is true for --no-color: no escape codes, ASCII glyphs.
	Plain  bool
	Glyphs Glyphs

	Logo        lipgloss.Style
	HeaderKey   lipgloss.Style
	HeaderValue lipgloss.Style
	HintKey     lipgloss.Style
	HintText    lipgloss.Style

	Title        lipgloss.Style // resource name in the title bar
	TitleCounter lipgloss.Style
	TitleFilter  lipgloss.Style
	Rule         lipgloss.Style

	TableHeader lipgloss.Style
	Selected    lipgloss.Style
	Marked      lipgloss.Style

	Crumb       lipgloss.Style
	CrumbActive lipgloss.Style

	FlashInfo lipgloss.Style
	FlashWarn lipgloss.Style
	FlashErr  lipgloss.Style
	Prompt    lipgloss.Style
	Busy      lipgloss.Style

	Section lipgloss.Style // section heading in detail views
	Label   lipgloss.Style // "key:" in detail views
	Faint   lipgloss.Style

	HelpGroup lipgloss.Style
	HelpKey   lipgloss.Style
	HelpDesc  lipgloss.Style

	Dialog lipgloss.Style
	// Protected is the badge naming a protected context in a write's
	// confirmation (raydar's config file, issue 25).
	Protected lipgloss.Style

	classes [Done + 1]lipgloss.Style
}

// Default is the colour style sheet without a skin: Dark.
func Default() *Styles { return Dark() }

// Dark is the default skin. It uses the 16 ANSI colours only, so the
// user's terminal theme decides the actual shades; the program's colour
// profile downsamples further if needed. Its yellows and cyans suit a dark
// background best.
func Dark() *Styles {
	s := &Styles{
		Glyphs: Glyphs{
			Cursor: "▶", Mark: "●", Ellipsis: "…", Rule: "─",
			Asc: "↑", Desc: "↓", Sep: "│",
			FwdUp: "↑", FwdRetry: "⟳", FwdFailed: "✗",
			CtxOk: "✓", CtxRetry: "⟳", CtxFailed: "✗",
		},
	}
	b := lipgloss.NewStyle()
	s.Logo = b.Foreground(lipgloss.Cyan).Bold(true)
	s.HeaderKey = b.Foreground(lipgloss.Yellow)
	s.HeaderValue = b.Bold(true)
	s.HintKey = b.Foreground(lipgloss.Blue).Bold(true)
	s.HintText = b.Faint(true)
	s.Title = b.Foreground(lipgloss.Cyan).Bold(true)
	s.TitleCounter = b.Foreground(lipgloss.Magenta).Bold(true)
	s.TitleFilter = b.Foreground(lipgloss.Yellow)
	s.Rule = b.Foreground(lipgloss.BrightBlack)
	s.TableHeader = b.Bold(true)
	s.Selected = b.Reverse(true)
	s.Marked = b.Foreground(lipgloss.BrightCyan)
	s.Crumb = b.Faint(true)
	s.CrumbActive = b.Foreground(lipgloss.Black).Background(lipgloss.Cyan)
	s.FlashInfo = b.Foreground(lipgloss.Green)
	s.FlashWarn = b.Foreground(lipgloss.Yellow)
	s.FlashErr = b.Foreground(lipgloss.Red).Bold(true)
	s.Prompt = b.Foreground(lipgloss.Cyan).Bold(true)
	s.Busy = b.Foreground(lipgloss.Magenta)
	s.Section = b.Foreground(lipgloss.Cyan).Bold(true)
	s.Label = b.Foreground(lipgloss.Yellow)
	s.Faint = b.Faint(true)
	s.HelpGroup = b.Foreground(lipgloss.Cyan).Bold(true)
	s.HelpKey = b.Foreground(lipgloss.Blue).Bold(true)
	s.HelpDesc = b
	s.Dialog = b.Border(lipgloss.RoundedBorder()).Padding(0, 1)
	s.Protected = b.Foreground(lipgloss.BrightWhite).Background(lipgloss.Red).Bold(true)
	s.classes = [...]lipgloss.Style{
		Neutral: b,
		OK:      b.Foreground(lipgloss.Green),
		Pending: b.Foreground(lipgloss.Yellow),
		Warn:    b.Foreground(lipgloss.BrightYellow),
		Bad:     b.Foreground(lipgloss.Red),
		Done:    b.Foreground(lipgloss.BrightBlack),
	}
	return s
}

// Light is the skin for a light background: no yellow, cyan or bright
// colours, which wash out on white, but dark shades of the 256-colour
// palette (which terminal themes leave as they are).
func Light() *Styles {
	s := Dark()
	b := lipgloss.NewStyle()
	blue, purple, orange, green, red, grey, white :=
		lipgloss.Color("25"), lipgloss.Color("90"), lipgloss.Color("130"), lipgloss.Color("28"),
		lipgloss.Color("160"), lipgloss.Color("244"), lipgloss.Color("231")
	s.Logo = b.Foreground(blue).Bold(true)
	s.HeaderKey = b.Foreground(orange)
	s.HintKey = b.Foreground(blue).Bold(true)
	s.Title = b.Foreground(blue).Bold(true)
	s.TitleCounter = b.Foreground(purple).Bold(true)
	s.TitleFilter = b.Foreground(orange)
	s.Rule = b.Foreground(grey)
	s.Marked = b.Foreground(purple).Bold(true)
	s.CrumbActive = b.Foreground(white).Background(blue)
	s.FlashInfo = b.Foreground(green)
	s.FlashWarn = b.Foreground(orange)
	s.FlashErr = b.Foreground(red).Bold(true)
	s.Prompt = b.Foreground(blue).Bold(true)
	s.Busy = b.Foreground(purple)
	s.Section = b.Foreground(blue).Bold(true)
	s.Label = b.Foreground(orange)
	s.HelpGroup = b.Foreground(blue).Bold(true)
	s.HelpKey = b.Foreground(purple).Bold(true)
	s.Protected = b.Foreground(white).Background(red).Bold(true)
	s.classes[OK] = b.Foreground(green)
	s.classes[Pending] = b.Foreground(orange)
	s.classes[Warn] = b.Foreground(lipgloss.Color("166"))
	s.classes[Bad] = b.Foreground(red)
	s.classes[Done] = b.Foreground(grey)
	return s
}

// Plain is the --no-color style sheet: every style renders text unchanged and
// every glyph is ASCII.
func Plain() *Styles {
	b := lipgloss.NewStyle()
	s := &Styles{
		Plain: true,
		Glyphs: Glyphs{
			Cursor: ">", Mark: "*", Ellipsis: "~", Rule: "-",
			Asc: "^", Desc: "v", Sep: "|",
			FwdUp: "+", FwdRetry: "~", FwdFailed: "x",
			CtxOk: "ok", CtxRetry: "~", CtxFailed: "x",
		},
		Logo: b, HeaderKey: b, HeaderValue: b, HintKey: b, HintText: b,
		Title: b, TitleCounter: b, TitleFilter: b, Rule: b, TableHeader: b,
		Selected: b, Marked: b, Crumb: b, CrumbActive: b, FlashInfo: b,
		FlashWarn: b, FlashErr: b, Prompt: b, Busy: b, Section: b, Label: b,
		Faint: b, HelpGroup: b, HelpKey: b, HelpDesc: b, Protected: b,
		Dialog: b.Border(lipgloss.ASCIIBorder()).Padding(0, 1),
	}
	return s
}

// Codes returns the escape codes a style puts before and after text, so
// hot paths can wrap many strings without calling Render each time. For a
// plain style both are empty. Only for styles without padding, borders or
// widths.
func Codes(st lipgloss.Style) (before, after string) {
	r := st.Render("X")
	i := strings.Index(r, "X")
	if i < 0 {
		return "", ""
	}
	return r[:i], r[i+1:]
}

// Class returns the style of a status class.
func (s *Styles) Class(c Class) lipgloss.Style {
	if c < 0 || int(c) >= len(s.classes) {
		return lipgloss.NewStyle()
	}
	return s.classes[c]
}

// ClassOf maps a status word (RayCluster state, RayJob status, pod phase,
// condition reason…) to a class. Unknown words are Neutral.
func ClassOf(status string) Class {
	switch strings.ToLower(status) {
	case "ready", "running", "healthy", "true", "available", "active":
		return OK
	case "succeeded", "complete", "completed", "stopped", "terminated":
		return Done
	case "pending", "initializing", "deploying", "waiting", "creating",
		"containercreating", "new", "upgrading", "suspending", "retrying",
		"deploy_failed_retrying", "updating", "scheduling", "unknown", "":
		if status == "" {
			return Neutral
		}
		return Pending
	case "suspended", "unhealthy", "notready", "false", "crashloopbackoff":
		return Warn
	case "failed", "failure", "error", "deploy_failed", "validationfailed",
		"evicted", "oomkilled", "imagepullbackoff", "errimagepull":
		return Bad
	}
	return Neutral
}
