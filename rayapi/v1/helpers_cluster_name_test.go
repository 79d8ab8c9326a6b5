package v1

import "testing"

func TestRayJobClusterName(t *testing.T) {
	for _, tc := range []struct {
		rj   RayJob
		want string
	}{
		{RayJob{Status: RayJobStatus{RayClusterName: "made"}}, "made"},
		{RayJob{Spec: RayJobSpec{ClusterSelector: map[string]string{RayClusterLabelKey: "shared"}}}, "shared"},
		{RayJob{}, ""},
	} {
		if got := tc.rj.ClusterName(); got != tc.want {
			t.Errorf("ClusterName() = %q; want %q", got, tc.want)
		}
	}
}
