// Package features owns raydar's feature gates: KubeRay v1.7.0's gate names
// and defaults (ray-operator/pkg/features/features.go), what raydar does with
// each, and the parser of the --feature-gates flag of `raydar operator`,
// `raydar-operator` and the TUI's embedded loop.
//
// # Why here
//
// A gate changes what the reconcile loop does (whether spec.networkPolicy is
// refused or made into NetworkPolicies), and nothing below it: rayapi's
// validation is the same whatever the gates (KubeRay's gate check is a
// refusal, kept with raydar's other refusals in
// controller/raycluster/unsupported.go), and kube (the connection, the
// watch) knows no gates. So the gates live in the controller layer
// (kube/layers_test.go: rayapi < kube < controller, tui, cmd), in a package
// of their own that imports nothing of raydar: controller (Options),
// controller/kit (Shared, which hands them to every kind) and the commands
// (cmd/internal/operatorcmd, cmd/raydar) import it; the TUI (tui/...) never
// needs it.
//
// # Why not k8s.io/component-base/featuregate
//
// component-base v0.37.2 is in the module graph but not in go.mod: using
// its featuregate package adds it and OpenTelemetry's otel and otel/trace
// modules to go.mod, and its metrics registry and emulated-version
// machinery to the operator binary, for a "Name=true,Other=false" parser.
// And raydar needs more than a known/unknown check: a gate KubeRay has may
// be one raydar implements (RayClusterNetworkPolicy, RayClusterMTLS,
// KubernetesWAS), one it always behaves as on (RayClusterStatusConditions:
// turning it off is refused), or one it does not implement (turning it on
// is refused), each refused by name. Parse does both in one small function with
// featuregate's syntax (comma-separated Name=bool, spaces trimmed,
// strconv.ParseBool's values; several flags add up).
package features
