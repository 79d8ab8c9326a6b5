package table

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

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
	raw string
	lit string // lower-case literal: no regex syntax in the text
	re  *regexp.Regexp
	// need is a lower-case ASCII literal every match of re contains
	// ("worker-0000" of worker-0000[1-3]): an ASCII row without it is
	// decided without running re (the backtracker, case-folding every
	// rune, was most of a filter over 100,000 rows).
	need string
	// reASCII is re for lower-case ASCII rows without case folding (see
	// lowerLiterals); nil when re has a non-ASCII literal.
	reASCII *regexp.Regexp
	invert  bool
	sel     labels.Selector
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
	} else if p, err := syntax.Parse("(?i)"+t, syntax.Perl); err == nil {
		p = p.Simplify()
		f.need = requiredLiteral(p)
		if lowerLiterals(p) {
			// the same expression for ASCII rows, its literals in lower case
			// without case folding: the matcher can then scan for a
			// literal prefix (strings.Index) instead of trying the
			// backtracker at every position of every row
			f.reASCII, _ = regexp.Compile(p.String())
		}
	}
	return f, nil
}

// lowerLiterals rewrites re's case-folded literals to their lower case
// without folding, reporting false (re half rewritten: discard it) if a
// literal is not ASCII. On a lower-case ASCII text the result matches
// exactly where re does: a folded ASCII letter can only meet its lower
// case there, and classes already hold every case the parser folded in.
func lowerLiterals(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for i, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return false
			}
			if re.Flags&syntax.FoldCase != 0 && 'A' <= r && r <= 'Z' {
				re.Rune[i] = r + 'a' - 'A'
			}
		}
		re.Flags &^= syntax.FoldCase
	}
	for _, sub := range re.Sub {
		if !lowerLiterals(sub) {
			return false
		}
	}
	return true
}

// requiredLiteral is the longest ASCII literal, in lower case, that every
// match of re contains ("" if none is known). Only literals, sequences,
// groups and repetitions of at least one are looked into; anything else
// (alternation, classes, optional parts) requires nothing.
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if !isASCII(s) {
			return ""
		}
		return strings.ToLower(s)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if l := requiredLiteral(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
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
	return f.match(lowerText, isASCII(lowerText), lbls)
}

// match is Match for a text already known to be ASCII or not (a row's is
// checked once, when it is projected).
func (f Filter) match(lowerText string, ascii bool, lbls map[string]string) bool {
	switch {
	case f.sel != nil:
		return f.sel.Matches(labels.Set(lbls))
	case f.lit != "" && ascii:
		return strings.Contains(lowerText, f.lit) != f.invert
	case f.re != nil:
		if f.need != "" && ascii && !strings.Contains(lowerText, f.need) {
			return f.invert // (?i) folds only non-ASCII runes onto ASCII letters
		}
		if f.reASCII != nil && ascii {
			return f.reASCII.MatchString(lowerText) != f.invert
		}
		return f.re.MatchString(lowerText) != f.invert
	}
	return true
}

// visible reports whether an entry passes the namespace scope and the filter.
func (m *Model[V]) visible(e *entry[V]) bool {
	if m.ns != "" && e.meta.Namespace != m.ns {
		return false
	}
	return m.filter.match(e.text, e.ascii, e.meta.Labels)
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
	old := m.filter
	m.filter = f
	if m.order != nil && narrows(old, f) {
		m.refilterRows()
		return nil
	}
	m.rebuild()
	return nil
}

// narrows reports whether every row next matches also matches prev: both
// plain text, next containing prev (a key typed onto the filter), so only
// the rows shown need a look.
func narrows(prev, next Filter) bool {
	return prev.lit != "" && next.lit != "" && !prev.invert && !next.invert && strings.Contains(next.lit, prev.lit)
}

// refilterRows re-filters the visible rows alone (see narrows).
func (m *Model[V]) refilterRows() {
	before := m.screenRow()
	n := len(m.rows)
	if m.text.usable(m.rowsGen) {
		m.rows = narrowRows(&m.text, m.rows, m.filter)
		m.rowsGen++
		m.text.gen = m.rowsGen
	} else {
		m.rows = m.filterInto(m.rows[:0], m.rows)
	}
	clear(m.rows[len(m.rows):n])
	m.follow(before)
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
