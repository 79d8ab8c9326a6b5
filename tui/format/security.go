package format

import (
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/styles"
)

// Security is the security line of a detail page: the verdict first (in
// the warning colour when the cluster is open, so a truncated line still
// says it), then auth, mTLS, network policy and exposure; the words are
// rayapi/why's, the same `raydar why` prints.
func Security(st *styles.Styles, s why.Security) string {
	v := s.Verdict()
	if !s.Closed() {
		v = st.Class(styles.Warn).Render(v)
	}
	return v + "  " + st.Faint.Render(s.Items())
}

// Security is the describe page's security field, one line as on the
// detail pages (`raydar why` spells out each reason the cluster is open).
func (d *Describer) Security(s why.Security) {
	d.Field("Security", s.Verdict()+"  "+s.Items())
}
