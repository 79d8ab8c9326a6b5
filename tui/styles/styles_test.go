package styles

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
)

func TestPlainIsASCIIAndUnstyled(t *testing.T) {
	s := Plain()
	g := reflect.ValueOf(s.Glyphs)
	for i := range g.NumField() {
		v := g.Field(i).String()
		if v == "" {
			t.Errorf("glyph %s is empty", g.Type().Field(i).Name)
		}
		for _, r := range v {
			if r > unicode.MaxASCII {
				t.Errorf("glyph %s = %q is not ASCII", g.Type().Field(i).Name, v)
			}
		}
	}
	for _, st := range []string{s.Selected.Render("x"), s.Class(Bad).Render("x"), s.FlashErr.Render("x")} {
		if st != "x" {
			t.Errorf("plain style rendered %q", st)
		}
	}
	if b, a := Codes(s.Selected); b != "" || a != "" {
		t.Errorf("plain codes %q %q", b, a)
	}
}

func TestCodesWrapLikeRender(t *testing.T) {
	s := Default()
	b, a := Codes(s.Class(Bad))
	if got, want := b+"boom"+a, s.Class(Bad).Render("boom"); got != want {
		t.Fatalf("Codes: %q, Render: %q", got, want)
	}
	if !strings.HasPrefix(b, "\x1b[") {
		t.Fatalf("no escape code: %q", b)
	}
}

func TestClassOf(t *testing.T) {
	cases := map[string]Class{
		"ready": OK, "RUNNING": OK, "Running": OK, "HEALTHY": OK,
		"SUCCEEDED": Done, "Complete": Done,
		"pending": Pending, "Initializing": Pending, "ContainerCreating": Pending, "DEPLOYING": Pending,
		"suspended": Warn, "UNHEALTHY": Warn, "CrashLoopBackOff": Warn,
		"FAILED": Bad, "DEPLOY_FAILED": Bad, "ValidationFailed": Bad,
		"": Neutral, "whatever": Neutral,
	}
	for in, want := range cases {
		if got := ClassOf(in); got != want {
			t.Errorf("ClassOf(%q) = %v, want %v", in, got, want)
		}
	}
	if Default().Class(Class(99)).Render("x") != "x" {
		t.Error("unknown class should be unstyled")
	}
}
