package controller

// The one list of what raydar accepts in ray.io/v1 but does not implement.
// A field here is refused, never ignored: the object is not reconciled into
// anything (no pods, no cluster, no upgrade), a Warning Event with KubeRay's
// validation reason says why, and the status names the field (RayCluster:
// ReplicaFailure/ValidationFailed; RayJob: jobDeploymentStatus
// ValidationFailed; RayService: Ready False/ValidationFailed). A user must
// never believe they have mTLS, isolation or fault tolerance they do not
// have. It also holds the one rule that makes an implemented feature
// impossible to honour (ray.io/enable-serve-service without a serve port).
//
// RayJob and RayService carry a RayClusterSpec and pass their annotations
// on to the clusters they create, so they are refused as a whole, before
// any cluster exists.

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// notImplemented is the prefix of every refusal's detail.
const notImplemented = "not implemented by raydar, so this object is not reconciled: "

func refuse(p *field.Path, missing string) *field.Error {
	return field.Forbidden(p, notImplemented+missing)
}

// unsupportedClusterSpec lists the unimplemented fields of a RayClusterSpec
// at p and of the annotations that reach the cluster at annPath.
func unsupportedClusterSpec(spec *rayv1.RayClusterSpec, annotations map[string]string, p, annPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.TLSOptions != nil {
		errs = append(errs, refuse(p.Child("tlsOptions"),
			"no mTLS between Ray pods (KubeRay's RayClusterMTLS gate, cert-manager certificates); traffic would be unencrypted"))
	}
	if spec.NetworkPolicy != nil {
		errs = append(errs, refuse(p.Child("networkPolicy"),
			"no NetworkPolicies are created (KubeRay's RayClusterNetworkPolicy gate); the pods would not be isolated"))
	}
	if spec.HistoryServerOptions != nil {
		errs = append(errs, refuse(p.Child("historyServerOptions"),
			"no history server collector sidecar (KubeRay's RayClusterHistoryServer gate)"))
	}
	if o := spec.GcsFaultToleranceOptions; o != nil && o.Backend == rayv1.GcsFTBackendRocksDB {
		errs = append(errs, refuse(p.Child("gcsFaultToleranceOptions", "backend"),
			"no embedded rocksdb GCS storage (KubeRay's GCSFaultToleranceEmbeddedStorage gate: PVC at /data/gcs); GCS state would not survive a head restart"))
	} else if o != nil && o.Storage != nil {
		// KubeRay refuses it too: the volume is the rocksdb backend's.
		errs = append(errs, field.Forbidden(p.Child("gcsFaultToleranceOptions", "storage"),
			"applies only to the rocksdb backend; with redis no volume would be made"))
	}
	if o := spec.AuthOptions; o != nil && o.EnableK8sTokenAuth != nil && *o.EnableK8sTokenAuth {
		errs = append(errs, refuse(p.Child("authOptions", "enableK8sTokenAuth"),
			"no Kubernetes-delegated token auth (RAY_ENABLE_K8S_TOKEN_AUTH, projected ServiceAccount token); use authOptions.mode token with a Secret"))
	}
	if wantsServeService(annotations) && len(servePorts(spec)) == 0 {
		// Implemented (serve_service.go), but impossible without a port.
		errs = append(errs, field.Invalid(annPath.Key(rayv1.EnableServeServiceKey), rayv1.EnableServeServiceTrue,
			"the head's Ray container declares ports but none named serve or serve-*, so <cluster>-serve-svc cannot be made "+
				"(KubeRay then creates no pods either)"))
	}
	return errs
}

// unsupportedRayCluster lists what a RayCluster asks for that raydar does
// not implement.
func unsupportedRayCluster(rc *rayv1.RayCluster) field.ErrorList {
	return unsupportedClusterSpec(&rc.Spec, rc.Annotations, field.NewPath("spec"), field.NewPath("metadata", "annotations"))
}

// unsupportedRayJob lists what a RayJob asks for, in itself or in the
// cluster it would create, that raydar does not implement. A job on a
// selected cluster creates none: that cluster answers for itself.
func unsupportedRayJob(rj *rayv1.RayJob) field.ErrorList {
	if rj.Spec.RayClusterSpec == nil || rj.Spec.UsesClusterSelector() {
		return nil
	}
	return unsupportedClusterSpec(rj.Spec.RayClusterSpec, rj.Annotations,
		field.NewPath("spec", "rayClusterSpec"), field.NewPath("metadata", "annotations"))
}

// unsupportedRayService lists what a RayService asks for, in itself or in
// its clusters, that raydar does not implement.
func unsupportedRayService(rs *rayv1.RayService) field.ErrorList {
	errs := unsupportedClusterSpec(&rs.Spec.RayClusterSpec, rs.Annotations,
		field.NewPath("spec", "rayClusterConfig"), field.NewPath("metadata", "annotations"))
	if u := rs.Spec.UpgradeStrategy; u != nil && u.Type != nil && *u.Type == rayv1.NewClusterWithIncrementalUpgrade {
		errs = append(errs, refuse(field.NewPath("spec", "upgradeStrategy", "type"),
			"no incremental upgrade (Gateway API Gateway and HTTPRoute, traffic shifted step by step); the current cluster keeps serving and no upgrade starts"))
	}
	return errs
}
