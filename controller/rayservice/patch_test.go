package rayservice

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The status patch always carries activeServiceStatus and
// pendingServiceStatus whole, as KubeRay's Status().Update stores them
// (empty ones included), and still deletes what went away.
func TestRayServiceStatusPatch(t *testing.T) {
	// json.Marshal of the zero value, as KubeRay's client sends it (the
	// same struct shapes: resource.Quantity and HeadInfo are not omitted).
	const empty = `{"rayClusterStatus":{"desiredCPU":"0","desiredGPU":"0","desiredMemory":"0","desiredTPU":"0","head":{}}}`
	withApps := func(s *rayv1.RayServiceStatus) {
		s.RayClusterName = "svc-a"
		s.Applications = map[string]rayv1.AppStatus{"app1": {Status: "RUNNING"}}
		s.RayClusterStatus.DesiredCPU = resource.MustParse("2")
	}
	for _, tc := range []struct {
		name             string
		orig, obj        func(*rayv1.RayService)
		active, pending  string
		wantNumEndpoints any // nil: absent from the patch
	}{
		{name: "both empty and unchanged: still written",
			obj:    func(rs *rayv1.RayService) { rs.Status.NumServeEndpoints = 1 },
			active: empty, pending: empty, wantNumEndpoints: float64(1)},
		{name: "pending filled in",
			obj:    func(rs *rayv1.RayService) { withApps(&rs.Status.PendingServiceStatus) },
			active: empty,
			pending: `{"applicationStatuses":{"app1":{"status":"RUNNING"}},"rayClusterName":"svc-a",` +
				`"rayClusterStatus":{"desiredCPU":"2","desiredGPU":"0","desiredMemory":"0","desiredTPU":"0","head":{}}}`},
		{name: "pending gone: its fields deleted",
			orig:   func(rs *rayv1.RayService) { withApps(&rs.Status.PendingServiceStatus) },
			active: empty,
			pending: `{"applicationStatuses":null,"rayClusterName":null,` +
				`"rayClusterStatus":{"desiredCPU":"0","desiredGPU":"0","desiredMemory":"0","desiredTPU":"0","head":{}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := testService()
			if tc.orig != nil {
				tc.orig(orig)
			}
			obj := orig.DeepCopy()
			obj.Status.PendingServiceStatus = rayv1.RayServiceStatus{}
			if tc.obj != nil {
				tc.obj(obj)
			}
			p, err := statusPatch(orig, obj)
			if err != nil {
				t.Fatal(err)
			}
			data, err := p.Data(obj)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Status map[string]json.RawMessage `json:"status"`
			}
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			if a := string(got.Status["activeServiceStatus"]); a != tc.active {
				t.Errorf("activeServiceStatus %s, want %s", a, tc.active)
			}
			if pe := string(got.Status["pendingServiceStatus"]); pe != tc.pending {
				t.Errorf("pendingServiceStatus %s, want %s", pe, tc.pending)
			}
			var n any
			if raw, ok := got.Status["numServeEndpoints"]; ok {
				_ = json.Unmarshal(raw, &n)
			}
			if n != tc.wantNumEndpoints {
				t.Errorf("numServeEndpoints %v, want %v (the rest of the patch as a merge patch)", n, tc.wantNumEndpoints)
			}
		})
	}
}
