package table

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// FuzzParseFilter types arbitrary text into the filter prompt (/) and
// matches the result against an arbitrary row.
//
// Invariants: nothing panics; a filter that parses keeps the text it was
// typed as (the prompt shows it back) and parses again to a filter that
// matches the same rows; "!x" matches exactly the rows "x" does not; a
// plain-text filter (the fast substring path), and an expression that is
// first checked for the literal it requires, match exactly what the
// case-insensitive regular expression alone matches; a label selector prints to
// a selector that parses back to itself; a refused filter says which part
// (filter or label selector) is wrong.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		"", "alp", "ALPHA", "!charlie", "! ", "!", "ray-.*", "^head$", "(", "[a-", `\d+`, "a|b", "(?i)x", "(?-i)X",
		"-l", "-l ", "-l app=ray", "-l app==ray,tier!=gpu", "-l env in (prod,dev)", "-l !app", "-l app notin (a)",
		"-l\tapp", "-l =x", "-l a=b=c", "ß", "K", "ſ", "İ", "\xff",
		"worker-0000[1-3]", "(?-i)AL.ha", "al+p{2,}h", "(al)ph.", "s.", "k.*head", "ray|head", "x?alpha",
	} {
		f.Add(s, "Alpha ray-head Running", "app", "ray")
	}
	// testdata/fuzz/FuzzParseFilter holds what this target found: the
	// substring fast path and the case-insensitive expression disagreed on
	// letters Unicode folds specially (İ matched "i"; "s" missed "ſ").
	f.Fuzz(func(t *testing.T, s, row, k, v string) {
		lower := strings.ToLower(row)
		lbls := map[string]string{k: v}
		flt, err := ParseFilter(s)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "filter: ") && !strings.HasPrefix(msg, "label selector: ") {
				t.Fatalf("ParseFilter(%q) refused without saying what: %q", s, msg)
			}
			return
		}
		got := flt.Match(lower, lbls)
		if strings.TrimSpace(s) == "" {
			if !flt.Empty() || !got {
				t.Fatalf("blank filter %q must match every row", s)
			}
			return
		}
		if flt.String() != s {
			t.Fatalf("ParseFilter(%q).String() = %q", s, flt.String())
		}
		again, err := ParseFilter(flt.String())
		if err != nil || again.Match(lower, lbls) != got {
			t.Fatalf("re-parsing %q: err %v, match %v, first match %v", s, err, again.Match(lower, lbls), got)
		}
		if flt.sel != nil {
			sel, err := labels.Parse(flt.sel.String())
			if err != nil || sel.String() != flt.sel.String() {
				t.Fatalf("selector %q prints as %q, which parses back as %v (%v)", s, flt.sel.String(), sel, err)
			}
			return
		}
		t0 := strings.TrimSpace(s)
		if !strings.HasPrefix(t0, "!") {
			inv, err := ParseFilter("!" + t0)
			if err != nil {
				t.Fatalf("%q parses but !%q does not: %v", t0, t0, err)
			}
			if inv.Match(lower, lbls) == got {
				t.Fatalf("row %q: %q and !%q both match=%v", row, t0, t0, got)
			}
		}
		if flt.lit != "" || flt.need != "" || flt.reASCII != nil {
			if re := flt.re.MatchString(lower) != flt.invert; re != got {
				t.Fatalf("filter %q on row %q: the substring path (literal %q, required %q) says %v, the expression %v", s, row, flt.lit, flt.need, got, re)
			}
		}
	})
}
