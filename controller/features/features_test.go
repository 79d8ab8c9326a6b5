package features

import (
	"slices"
	"strings"
	"testing"
)

func TestDefaultsAreKubeRaysButForWhatRaydarAlwaysDoes(t *testing.T) {
	var zero Gates
	for _, s := range All {
		if s.Support != Always && !s.OnByDefault && s.Default() != s.KubeRayDefault {
			t.Errorf("%s: raydar's default %t differs from KubeRay v1.7.0's %t", s.Name, s.Default(), s.KubeRayDefault)
		}
		if zero.Enabled(s.Name) != s.Default() {
			t.Errorf("zero Gates: %s = %t, want the default %t", s.Name, zero.Enabled(s.Name), s.Default())
		}
	}
	if zero.Enabled(RayClusterNetworkPolicy) {
		t.Error("RayClusterNetworkPolicy is on by default; KubeRay v1.7.0 has it alpha and off")
	}
	if !zero.Enabled(RayCronJob) {
		t.Error("RayCronJob is off by default; raydar has always reconciled RayCronJobs")
	}
	if len(All) != 11 {
		t.Errorf("%d gates, KubeRay v1.7.0 has 11", len(All))
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		in      string
		wantErr string // "" accepted
		on, off []Gate
	}{
		{in: ""},
		{in: "RayClusterNetworkPolicy=true", on: []Gate{RayClusterNetworkPolicy}},
		{in: " RayClusterNetworkPolicy = true , RayCronJob=true ", on: []Gate{RayClusterNetworkPolicy, RayCronJob}},
		{in: "RayClusterNetworkPolicy=false", off: []Gate{RayClusterNetworkPolicy}},
		{in: "RayClusterStatusConditions=true,RayJobDeletionPolicy=1,RayMultiHostIndexing=t", on: []Gate{RayClusterStatusConditions, RayJobDeletionPolicy, RayMultiHostIndexing}},
		{in: "RayServiceIncrementalUpgrade=false", off: []Gate{RayServiceIncrementalUpgrade}},
		{in: "RayServiceIncrementalUpgrade=true", on: []Gate{RayServiceIncrementalUpgrade}},
		{in: "SidecarSubmitterRestart=false,RayClusterMTLS=false", off: []Gate{SidecarSubmitterRestart, RayClusterMTLS}},
		{in: "NoSuchGate=true", wantErr: `unknown feature gate "NoSuchGate": KubeRay v1.7.0's gates are RayClusterStatusConditions,`},
		{in: "raycronjob=true", wantErr: `unknown feature gate "raycronjob"`},
		{in: "RayClusterNetworkPolicy", wantErr: `feature gate "RayClusterNetworkPolicy": missing =true or =false`},
		{in: "RayClusterNetworkPolicy=yes", wantErr: `feature gate RayClusterNetworkPolicy: invalid value "yes"`},
		{in: "RayClusterMTLS=true", on: []Gate{RayClusterMTLS}},
		{in: "RayClusterHistoryServer=true", on: []Gate{RayClusterHistoryServer}},
		{in: "RayClusterHistoryServer=false", off: []Gate{RayClusterHistoryServer}},
		{in: "GCSFaultToleranceEmbeddedStorage=true,RayClusterHistoryServer=false", on: []Gate{GCSFaultToleranceEmbeddedStorage}, off: []Gate{RayClusterHistoryServer}},
		{in: "SidecarSubmitterRestart=true", on: []Gate{SidecarSubmitterRestart}},
		{in: "KubernetesWAS=true", on: []Gate{KubernetesWAS}},
		{in: "RayCronJob=false", off: []Gate{RayCronJob}},
		{in: "RayClusterStatusConditions=false", wantErr: "feature gate RayClusterStatusConditions=false: raydar cannot turn it off"},
		{in: "RayJobDeletionPolicy=false", wantErr: "feature gate RayJobDeletionPolicy=false: raydar cannot turn it off"},
		{in: "RayMultiHostIndexing=false", wantErr: "feature gate RayMultiHostIndexing=false: raydar cannot turn it off"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			g, err := Parse(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) = %v, want an error starting %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			for _, n := range tc.on {
				if !g.Enabled(n) {
					t.Errorf("%s off, want on", n)
				}
			}
			for _, n := range tc.off {
				if g.Enabled(n) {
					t.Errorf("%s on, want off", n)
				}
			}
		})
	}
}

// The flag given twice adds up; a refused value leaves what was set before.
func TestSetAddsUpAndARefusalChangesNothing(t *testing.T) {
	var g Gates
	if err := g.Set("RayClusterNetworkPolicy=true"); err != nil {
		t.Fatal(err)
	}
	if err := g.Set("RayCronJob=true"); err != nil {
		t.Fatal(err)
	}
	if err := g.Set("RayClusterNetworkPolicy=false,RayClusterStatusConditions=false"); err == nil {
		t.Fatal("RayClusterStatusConditions=false accepted")
	}
	if !g.Enabled(RayClusterNetworkPolicy) {
		t.Error("a refused --feature-gates turned RayClusterNetworkPolicy off")
	}
	if got, want := g.String(), "RayClusterNetworkPolicy=true,RayCronJob=true"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	eff := g.Effective()
	if !strings.HasPrefix(eff, "RayClusterStatusConditions=true,") || !strings.Contains(eff, ",RayClusterNetworkPolicy=true,") ||
		!strings.Contains(eff, ",RayClusterMTLS=false,") || strings.Count(eff, "=") != len(All) {
		t.Errorf("Effective() = %q", eff)
	}
	if _, err := Parse(eff); err != nil {
		t.Errorf("Parse(Effective()): %v", err)
	}
}

// A gate raydar does not implement (none of KubeRay v1.7.0's; a later
// KubeRay's would be one) is refused turned on, by name, and taken off.
func TestNotImplementedRefused(t *testing.T) {
	saved := All
	t.Cleanup(func() { All = saved })
	All = append(slices.Clone(saved), Spec{Name: "LaterGate", Stage: "Alpha", Support: NotImplemented, Why: "not in raydar yet"})
	if _, err := Parse("LaterGate=true"); err == nil || !strings.HasPrefix(err.Error(), "feature gate LaterGate=true: not implemented by raydar") {
		t.Errorf("LaterGate=true: %v", err)
	}
	if g, err := Parse("LaterGate=false"); err != nil || g.Enabled("LaterGate") {
		t.Errorf("LaterGate=false: %v", err)
	}
}
