package rayservice

import (
	"testing"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/raycluster"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestIncrementalUpgradeNotRefused: NewClusterWithIncrementalUpgrade is
// implemented (incremental.go), so no gate value makes it unsupported.
func TestIncrementalUpgradeNotRefused(t *testing.T) {
	inc := rayv1.NewClusterWithIncrementalUpgrade
	rs := &rayv1.RayService{}
	rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: &inc}
	for _, gates := range []string{"", "RayServiceIncrementalUpgrade=true", "RayServiceIncrementalUpgrade=false"} {
		if errs := UnsupportedWith(rs, raycluster.BuildConfig{Features: features.MustParse(gates)}); len(errs) != 0 {
			t.Errorf("gates %q: refused: %v", gates, errs)
		}
	}
}
