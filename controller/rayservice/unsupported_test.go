package rayservice

import (
	"testing"

	"github.com/raydar/raydar/controller/features"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestIncrementalUpgradeRefusedWhateverTheGate backs what the
// --feature-gates help and docs/kuberay-compatibility.md say of
// RayServiceIncrementalUpgrade: accepted either way, and a RayService
// asking for NewClusterWithIncrementalUpgrade is refused alike with the
// gate on (the default) or off.
func TestIncrementalUpgradeRefusedWhateverTheGate(t *testing.T) {
	inc := rayv1.NewClusterWithIncrementalUpgrade
	rs := &rayv1.RayService{}
	rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: &inc}
	for _, gates := range []string{"", "RayServiceIncrementalUpgrade=true", "RayServiceIncrementalUpgrade=false"} {
		errs := UnsupportedWith(rs, features.MustParse(gates))
		if len(errs) != 1 || errs[0].Field != "spec.upgradeStrategy.type" {
			t.Errorf("gates %q: %v, want the one refusal of spec.upgradeStrategy.type", gates, errs)
		}
	}
}
