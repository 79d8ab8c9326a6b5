// Package grafana reads a Grafana dashboard's PromQL for the tests: which
// metrics its panels and variables query, and the labels each selects or
// groups by, so a test can check that an operator serves them without the
// names being listed by hand.
package grafana

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Queried maps each metric a dashboard queries to the labels its
// expressions select or group it by (sorted, without duplicates).
type Queried map[string][]string

// Names are the metrics, sorted.
func (q Queried) Names() []string {
	out := make([]string, 0, len(q))
	for n := range q {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

var (
	// selector is a metric name with its {label matchers}, or a metric
	// name closing a function's argument (count(x) by (...)).
	selector = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\}|\))`)
	// matcher is one label matcher: name =, !=, =~ or !~.
	matcher = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	// grouping is by (...) or without (...), whose labels the aggregated
	// metric must have, or a vector match's on (...), ignoring (...),
	// group_left (...) or group_right (...).
	grouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	// labelValues is a variable's label_values(metric{...}, label).
	labelValues = regexp.MustCompile(`label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)`)
)

// Parse reads a dashboard's JSON: every panel target's "expr" and every
// templating variable's query.
func Parse(dashboard []byte) (Queried, error) {
	var doc any
	if err := json.Unmarshal(dashboard, &doc); err != nil {
		return nil, fmt.Errorf("grafana: %w", err)
	}
	q := Queried{}
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(c, k)
			}
		case []any:
			for _, c := range x {
				walk(c, key)
			}
		case string:
			if key == "expr" || key == "definition" || key == "query" {
				q.add(x)
			}
		}
	}
	walk(doc, "")
	for n, ls := range q {
		sort.Strings(ls)
		q[n] = uniq(ls)
	}
	return q, nil
}

// add reads one expression.
func (q Queried) add(expr string) {
	for _, m := range labelValues.FindAllStringSubmatch(expr, -1) {
		q[m[1]] = append(q[m[1]], matchers(m[2])...)
		q[m[1]] = append(q[m[1]], m[3])
	}
	expr = labelValues.ReplaceAllString(expr, "")
	var groups []string
	for _, m := range grouping.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" && l != "le" {
				groups = append(groups, l)
			}
		}
	}
	expr = grouping.ReplaceAllString(expr, "")
	for _, m := range selector.FindAllStringSubmatch(expr, -1) {
		name := m[1]
		if name == "by" || name == "without" || name == "on" || name == "ignoring" {
			continue
		}
		name = strings.TrimSuffix(name, "_bucket") // a histogram's series
		q[name] = append(q[name], matchers(m[2])...)
		q[name] = append(q[name], groups...)
	}
}

// matchers are the label names of a {…} selector, le aside.
func matchers(sel string) []string {
	var out []string
	for _, m := range matcher.FindAllStringSubmatch(sel, -1) {
		if m[1] != "le" {
			out = append(out, m[1])
		}
	}
	return out
}

func uniq(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
