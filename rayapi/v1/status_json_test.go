package v1

import (
	"encoding/json"
	"testing"
)

// TestEmptyStatusJSON: the statuses serialise as KubeRay v1.7.0's types do
// (apis/ray/v1: resource.Quantity and struct fields are never omitted by
// encoding/json, omitempty or not), so a full status write stores KubeRay's
// "0" quantities and {} structs. A JSON merge patch computed between two
// such values drops every field the two share, "0" included: write
// statuses whole, as KubeRay does (Status().Update).
func TestEmptyStatusJSON(t *testing.T) {
	const cluster = `{"desiredCPU":"0","desiredMemory":"0","desiredGPU":"0","desiredTPU":"0","head":{}}`
	for _, tt := range []struct {
		name string
		v    any
		want string
	}{
		{"RayClusterStatus", RayClusterStatus{}, cluster},
		{"RayJobStatus", RayJobStatus{}, `{"rayJobInfo":{},"rayClusterStatus":` + cluster + `}`},
		{"RayServiceStatuses", RayServiceStatuses{},
			`{"activeServiceStatus":{"rayClusterStatus":` + cluster + `},"pendingServiceStatus":{"rayClusterStatus":` + cluster + `}}`},
	} {
		b, err := json.Marshal(tt.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, b, tt.want)
		}
	}
}
