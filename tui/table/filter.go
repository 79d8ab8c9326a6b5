package table

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// Filter is a parsed row filter in k9s syntax:
//
//	text        case-insensitive regular expression on the row's columns
//	!text       rows that do NOT match the expression
//	-l k=v,k2   Kubernetes label selector (=, ==, !=, in, notin, exists, !k)
//
// The zero Filter matches every row.
type Filter struct {
	raw    string
	lit    string // lower-case literal: no regex syntax in the text
	re     *regexp.Regexp
	invert bool
	sel    labels.Selector
}

// ParseFilter parses s; an invalid expression or selector is an error and
// the caller keeps its previous filter.
func ParseFilter(s string) (Filter, error) {
	f := Filter{raw: s}
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return Filter{}, nil
	case t == "-l" || strings.HasPrefix(t, "-l ") || strings.HasPrefix(t, "-l\t"):
		q := strings.TrimSpace(strings.TrimPrefix(t, "-l"))
		if q == "" {
			return Filter{}, fmt.Errorf("label selector: empty")
		}
		sel, err := labels.Parse(q)
		if err != nil {
			return Filter{}, fmt.Errorf("label selector: %w", err)
		}
		f.sel = sel
		return f, nil
	case strings.HasPrefix(t, "!"):
		f.invert = true
		t = strings.TrimSpace(t[1:])
		if t == "" {
			return Filter{}, fmt.Errorf("filter: nothing after !")
		}
	}
	re, err := regexp.Compile("(?i)" + t)
	if err != nil {
		return Filter{}, fmt.Errorf("filter: %w", err)
	}
	f.re = re
	if regexp.QuoteMeta(t) == t && isASCII(t) {
		f.lit = strings.ToLower(t) // the fast path; (?i) folds non-ASCII letters differently
	}
	return f, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// String is the text the filter was parsed from.
func (f Filter) String() string { return f.raw }

// Empty reports whether the filter matches everything.
func (f Filter) Empty() bool { return f.re == nil && f.sel == nil }

// Match reports whether a row with the given column text (in lower case)
// and labels passes.
func (f Filter) Match(lowerText string, lbls map[string]string) bool {
	switch {
	case f.sel != nil:
		return f.sel.Matches(labels.Set(lbls))
	case f.lit != "" && isASCII(lowerText):
		return strings.Contains(lowerText, f.lit) != f.invert
	case f.re != nil:
		return f.re.MatchString(lowerText) != f.invert
	}
	return true
}

// visible reports whether an entry passes the namespace scope and the filter.
func (m *Model[V]) visible(e *entry[V]) bool {
	if m.ns != "" && e.meta.Namespace != m.ns {
		return false
	}
	return m.filter.Match(e.text, e.meta.Labels)
}

// SetFilter parses and applies a filter; on error the old filter stays.
func (m *Model[V]) SetFilter(s string) error {
	f, err := ParseFilter(s)
	if err != nil {
		return err
	}
	if f.String() == m.filter.String() {
		return nil
	}
	m.filter = f
	m.rebuild()
	return nil
}

// Filter returns the active filter text.
func (m *Model[V]) Filter() string { return m.filter.String() }

// SetNamespace scopes the table to one namespace ("" = all).
func (m *Model[V]) SetNamespace(ns string) {
	if ns == m.ns {
		return
	}
	m.ns = ns
	m.layout()
	m.rebuild()
}
