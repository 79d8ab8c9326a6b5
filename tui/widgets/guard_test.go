package widgets

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

// TestProtectedBadgeHasItsOwnColour: the badge is drawn in the Protected
// style, which colours it; without colour its words say it.
func TestProtectedBadgeHasItsOwnColour(t *testing.T) {
	apply := func(string) tea.Cmd { return nil }
	st := styles.Default()
	v := NewWriteConfirm(st, keys.Default(), Guard{Context: "prod-eu", Protected: true, Name: "rc"}, "Delete RayCluster ml/rc", nil, "", apply).View(80)
	badge := st.Protected.Render(" PROTECTED context prod-eu ")
	if badge == " PROTECTED context prod-eu " || !strings.Contains(v, badge) {
		t.Fatalf("no coloured badge in:\n%q", v)
	}
	plain := NewWriteConfirm(styles.Plain(), keys.Default(), Guard{Context: "dev", Name: "rc"}, "Delete RayCluster ml/rc", nil, "", apply).View(80)
	if !strings.Contains(plain, "context: dev") || strings.Contains(plain, "PROTECTED") || strings.Contains(plain, "to confirm") {
		t.Fatalf("an unprotected context's dialog:\n%s", plain)
	}
}
