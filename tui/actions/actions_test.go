package actions

import (
	"fmt"
	"testing"

	kubeactions "github.com/raydar/raydar/kube/actions"
	kdesc "github.com/raydar/raydar/rayapi/kinds"
)

// TestDeleteLinesCutsLongLists: a delete's confirmation lists at most
// maxDeleteDependents of what it also deletes, and counts the rest.
func TestDeleteLinesCutsLongLists(t *testing.T) {
	p := &kubeactions.DeletePlan{Kind: kdesc.RayCluster, Namespace: "ml", Name: "big"}
	for i := range 12 {
		p.Dependents = append(p.Dependents, kubeactions.Dependent{Kind: "Pod", Name: fmt.Sprintf("pod-%02d", i), Owner: "RayCluster big"})
	}
	ls := deleteLines(p)
	if ls[1] != "also deleted: 12 pods" || ls[2+maxDeleteDependents] != "  … and 4 more" || len(ls) != 3+maxDeleteDependents {
		t.Fatalf("lines %q", ls)
	}
}
