package table

import (
	"strings"
	"testing"
)

func TestSelectedRowIsTheRowAsShown(t *testing.T) {
	m := newTable(80, 10, sample()...)
	if got := strings.Join(m.SelectedRow(), "|"); got != "alpha|b|pending|note-alpha|1m" {
		t.Errorf("wide: SelectedRow = %q, want every column with the live age", got)
	}
	// Scoped to one namespace and too narrow for NOTE: neither is shown,
	// neither is copied; a long name is not cut to its column.
	m = newTable(32, 10, item{id: "9", ns: "a", name: "a-rather-long-cluster-name", status: "ready"})
	m.SetNamespace("a")
	if got := strings.Join(m.SelectedRow(), "|"); got != "a-rather-long-cluster-name|ready|0m" {
		t.Errorf("narrow: SelectedRow = %q", got)
	}
	if got := newTable(80, 10).SelectedRow(); got != nil {
		t.Errorf("empty table: SelectedRow = %q, want nil", got)
	}
}
