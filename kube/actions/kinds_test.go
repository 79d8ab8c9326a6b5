package actions_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/rayapi/kinds"
)

// The kind an action is about is written as its API kind in the CLI's JSON
// and the audit log, and a reference read back is the one written.
func TestObjectRefJSONNamesTheAPIKind(t *testing.T) {
	for _, k := range kinds.Ray {
		ref := actions.ObjectRef{Kind: k, Namespace: "ns", Name: "x"}
		b, err := json.Marshal(actions.Result{Object: ref, Plan: &actions.SuspendPlan{Kind: k}})
		if err != nil {
			t.Fatal(err)
		}
		if want := `"object":{"kind":"` + k.Kind + `","namespace":"ns","name":"x"}`; !strings.Contains(string(b), want) ||
			!strings.Contains(string(b), `"plan":{"kind":"`+k.Kind+`"`) {
			t.Errorf("%s", b)
		}
		var back struct{ Object actions.ObjectRef }
		if err := json.Unmarshal(b, &back); err != nil || back.Object != ref {
			t.Errorf("read back %+v, %v; want %+v", back.Object, err, ref)
		}
	}
	var ref actions.ObjectRef
	if err := json.Unmarshal([]byte(`{"kind":"Pod","namespace":"ns","name":"x"}`), &ref); err == nil || !strings.Contains(err.Error(), `"Pod"`) {
		t.Errorf("a Pod reference read as %+v, %v; want an error naming Pod", ref, err)
	}
}
