package actions

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// introduced returns the errors of after that before did not have: the spec
// rules a change breaks. Rules the object broke already (Go validation is
// stricter than the CRD, so such objects exist) do not block an unrelated
// change; they are the business of whoever wrote them.
func introduced(before, after field.ErrorList) field.ErrorList {
	seen := map[string]int{}
	for _, e := range before {
		seen[e.Error()]++
	}
	var out field.ErrorList
	for _, e := range after {
		if seen[e.Error()] > 0 {
			seen[e.Error()]--
			continue
		}
		out = append(out, e)
	}
	return out
}

// ParseCount parses what a person typed as a replica count: a whole,
// non-negative number. what names the field in messages ("replicas").
// The TUI's scale dialog validates its input with it.
func ParseCount(what, s string) (int32, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, invalidf("%s: enter a whole number", what)
	}
	n, err := strconv.ParseInt(s, 10, 32)
	switch {
	case err != nil && strings.HasPrefix(s, "-") && isDigits(s[1:]):
		return 0, invalidf("%s: %s is negative; enter 0 or more", what, s)
	case err != nil && isDigits(strings.TrimPrefix(s, "+")):
		return 0, invalidf("%s: %s is too large", what, s)
	case err != nil:
		return 0, invalidf("%s: %q is not a whole number", what, s)
	case n < 0:
		return 0, invalidf("%s: %d is negative; enter 0 or more", what, n)
	}
	return int32(n), nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// bound formats a maxReplicas value; the CRD default (MaxInt32) reads "unbounded".
func bound(n int32) string {
	if n == maxInt32 {
		return "unbounded"
	}
	return strconv.Itoa(int(n))
}

const maxInt32 = int32(^uint32(0) >> 1)

// plural returns "n word" or "n words".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
