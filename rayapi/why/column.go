package why

import "strconv"

// Column is the WHY column's text for causes: the first cause's summary,
// with "(+N)" when there are more; "" when there are none.
func Column(cs []Cause) string {
	switch len(cs) {
	case 0:
		return ""
	case 1:
		return cs[0].Summary
	}
	return cs[0].Summary + " (+" + strconv.Itoa(len(cs)-1) + ")"
}
