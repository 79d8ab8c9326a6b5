package raycluster

// The one list of what raydar accepts in ray.io/v1 but does not implement.
// A field here is refused, never ignored: the object is not reconciled into
// anything (no pods, no cluster, no upgrade), a Warning Event with KubeRay's
// validation reason says why, and the status names the field (RayCluster:
// ReplicaFailure/ValidationFailed; RayJob: jobDeploymentStatus
// ValidationFailed; RayService: Ready False/ValidationFailed). A user must
// never believe they have mTLS, isolation or fault tolerance they do not
// have. It also holds the rules that make an implemented feature
// impossible to honour (ray.io/enable-serve-service without a serve port;
// a template container named as one of the operator's sidecars,
// poddefaults.go).
//
// RayJob and RayService carry a RayClusterSpec and pass their annotations
// on to the clusters they create, so they are refused as a whole, before
// any cluster exists.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/raydar/raydar/controller/features"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// NotImplemented is the prefix of every refusal's detail.
const NotImplemented = "not implemented by raydar, so this object is not reconciled: "

// Refuse is the refusal of the field at p, saying what raydar does not
// implement (missing).
func Refuse(p *field.Path, missing string) *field.Error {
	return field.Forbidden(p, NotImplemented+missing)
}

// gateOff refuses a field implemented behind a KubeRay feature gate that is
// off, naming the gate and what would be missing.
func gateOff(p *field.Path, gate features.Gate, missing string) *field.Error {
	return field.Forbidden(p, fmt.Sprintf("requires the %s feature gate, which is off (raydar operator --feature-gates %s=true); %s, and this object is not reconciled",
		gate, gate, missing))
}

// UnsupportedClusterSpec lists the unimplemented fields of a RayClusterSpec
// at p and of the annotations that reach the cluster at annPath, with
// raydar's default feature gates (all four gated fields off, so refused:
// tlsOptions, networkPolicy, historyServerOptions, the rocksdb backend).
func UnsupportedClusterSpec(spec *rayv1.RayClusterSpec, annotations map[string]string, p, annPath *field.Path) field.ErrorList {
	return UnsupportedClusterSpecWith(spec, annotations, p, annPath, BuildConfig{})
}

// UnsupportedClusterSpecWith is UnsupportedClusterSpec under the operator's
// build configuration cfg: its pod defaults (a template container named as
// one of their sidecars, which no pod could hold: SidecarConflicts) and
// its gates g:
// with RayClusterNetworkPolicy on, spec.networkPolicy is implemented
// (networkpolicy.go) and not refused; with RayClusterMTLS on,
// spec.tlsOptions (mtls.go), checked as KubeRay checks it; with
// RayClusterHistoryServer on, spec.historyServerOptions
// (historyserver.go); with GCSFaultToleranceEmbeddedStorage on, the rocksdb
// GCS backend (gcs_embedded.go).
func UnsupportedClusterSpecWith(spec *rayv1.RayClusterSpec, annotations map[string]string, p, annPath *field.Path, cfg BuildConfig) field.ErrorList {
	g := cfg.Features
	errs := SidecarConflicts(spec, p, cfg.PodDefaults)
	if spec.TLSOptions != nil && !g.Enabled(features.RayClusterMTLS) {
		// KubeRay v1.7.0 refuses it too without the gate, even with
		// enabled: false (utils/validation.go:323-325).
		errs = append(errs, gateOff(p.Child("tlsOptions"), features.RayClusterMTLS,
			"no certificates are issued, so traffic between the Ray pods would be unencrypted"))
	}
	// With the gate on: KubeRay's checks of the TLS env and mounts (mtls.go).
	errs = append(errs, ValidateTLSOptions(spec, p, g)...)
	if spec.NetworkPolicy != nil && !g.Enabled(features.RayClusterNetworkPolicy) {
		// KubeRay v1.7.0 refuses it too without the gate
		// (utils/validation.go:315-318).
		errs = append(errs, gateOff(p.Child("networkPolicy"), features.RayClusterNetworkPolicy,
			"no NetworkPolicies are created, so the pods would not be isolated"))
	}
	if spec.HistoryServerOptions != nil && !g.Enabled(features.RayClusterHistoryServer) {
		// KubeRay v1.7.0 refuses it too without the gate
		// (utils/validation.go:260-263); with it, historyserver.go.
		errs = append(errs, gateOff(p.Child("historyServerOptions"), features.RayClusterHistoryServer,
			"no history server collector sidecar would be added"))
	}
	if o := spec.GcsFaultToleranceOptions; o != nil && o.Backend == rayv1.GcsFTBackendRocksDB {
		if !g.Enabled(features.GCSFaultToleranceEmbeddedStorage) {
			// KubeRay v1.7.0 refuses it too without the gate
			// (utils/validation.go:335-338); with it, gcs_embedded.go.
			errs = append(errs, gateOff(p.Child("gcsFaultToleranceOptions", "backend"), features.GCSFaultToleranceEmbeddedStorage,
				"no embedded rocksdb GCS storage (claim at /data/gcs) would be made, so GCS state would not survive a head restart"))
		}
	} else if o != nil && o.Storage != nil {
		// KubeRay refuses it too: the volume is the rocksdb backend's.
		errs = append(errs, field.Forbidden(p.Child("gcsFaultToleranceOptions", "storage"),
			"applies only to the rocksdb backend; with redis no volume would be made"))
	}
	if wantsServeService(annotations) && len(ServePorts(spec)) == 0 {
		// Implemented (serve_service.go), but impossible without a port.
		errs = append(errs, field.Invalid(annPath.Key(rayv1.EnableServeServiceKey), rayv1.EnableServeServiceTrue,
			"the head's Ray container declares ports but none named serve or serve-*, so <cluster>-serve-svc cannot be made "+
				"(KubeRay then creates no pods either)"))
	}
	return errs
}

// UnsupportedRayCluster lists what a RayCluster asks for that raydar does
// not implement, with raydar's default feature gates.
func UnsupportedRayCluster(rc *rayv1.RayCluster) field.ErrorList {
	return UnsupportedRayClusterWith(rc, BuildConfig{})
}

// UnsupportedRayClusterWith is UnsupportedRayCluster under the operator's
// build configuration cfg (its gates and pod defaults).
func UnsupportedRayClusterWith(rc *rayv1.RayCluster, cfg BuildConfig) field.ErrorList {
	return UnsupportedClusterSpecWith(&rc.Spec, rc.Annotations, field.NewPath("spec"), field.NewPath("metadata", "annotations"), cfg)
}
