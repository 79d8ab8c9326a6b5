package format

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/table"
)

// ObjMeta is what the table sorts, filters and colours an object's row by:
// its namespace, name, age, labels and status word (classed by
// styles.ClassOf).
func ObjMeta(o client.Object, status string) table.Meta {
	return table.Meta{
		Namespace: o.GetNamespace(),
		Name:      o.GetName(),
		Created:   o.GetCreationTimestamp().Time,
		Status:    status,
		Class:     styles.ClassOf(status),
		Labels:    o.GetLabels(),
	}
}

// AgeColumn is the AGE column's header.
func AgeColumn() table.Column {
	return table.Column{Title: "AGE", Width: 5, Right: true, Sort: table.ByAge}
}
