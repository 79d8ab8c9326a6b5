package table

import "testing"

// The literal an expression filter requires is looked for before the
// expression runs: it must be one every match contains, and the longest
// such run of plain text; "" where nothing is known.
func TestRequiredLiteral(t *testing.T) {
	for _, tc := range []struct{ filter, need string }{
		{"worker-0000[1-3]", "worker-0000"},
		{"n2.*NS1", "ns1"},
		{"(head)+-x", "head"},
		{"(ab){2}c", "ab"},
		{"ray|head", ""},
		{"x?alpha", "alpha"},
		{"(alpha)?beta", "beta"},
		{"ab*c", "a"},
		{"straße.*ok", "ok"},
		{`\d+`, ""},
		{"!pend.ng", "pend"},
	} {
		f, err := ParseFilter(tc.filter)
		if err != nil {
			t.Fatalf("%q: %v", tc.filter, err)
		}
		if f.need != tc.need {
			t.Errorf("%q: requires %q; want %q", tc.filter, f.need, tc.need)
		}
	}
}
