package v1

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of two of KubeRay v1.7.0's alpha features: the history server
// collector (spec.historyServerOptions, gate RayClusterHistoryServer) and
// the embedded rocksdb GCS storage (gcsFaultToleranceOptions.backend
// rocksdb, gate GCSFaultToleranceEmbeddedStorage). Line numbers are
// v1.7.0's ray-operator/controllers/ray/utils/validation.go. The gates
// themselves are not checked here (rayapi knows no gates): with a gate off
// the controller refuses the field by name
// (controller/raycluster/unsupported.go), as v1.7.0 does first.

// CollectorContainerName is the history server collector sidecar's
// container name (utils/constant.go:358-359).
const CollectorContainerName = "ray-history-collector"

// The collector's environment (utils/constant.go:217-243): those KubeRay
// sets itself, and the storage backend settings it checks.
const (
	EnvPodIP               = "POD_IP"
	EnvRayRole             = "RAY_ROLE"
	EnvOwnerKind           = "OWNER_KIND"
	EnvOwnerName           = "OWNER_NAME"
	EnvEventsPort          = "EVENTS_PORT"
	EnvFQRayIP             = "FQ_RAY_IP"
	EnvRayClusterName      = "RAY_CLUSTER_NAME"
	EnvRayClusterNamespace = "RAY_CLUSTER_NAMESPACE"

	envStorageBackend               = "STORAGE_BACKEND"
	envGCSBucket                    = "GCS_BUCKET"
	envS3Region                     = "S3_REGION"
	envAzureStorageConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
	envAzureStorageAccountURL       = "AZURE_STORAGE_ACCOUNT_URL"
	envAzureStorageAuthMode         = "AZURE_STORAGE_AUTH_MODE"
	envAliyunBucket                 = "OSS_BUCKET"
	envAliyunEndpoint               = "OSS_ENDPOINT"
	envAliyunRegion                 = "OSS_REGION"
)

// The embedded GCS store's env, volume and mount (utils/constant.go:147-148,
// :206-215).
const (
	EnvRayGcsStorage     = "RAY_gcs_storage"
	EnvRayGcsStoragePath = "RAY_gcs_storage_path"
	// GCSStorageVolumeName is the head pod's volume of the store.
	GCSStorageVolumeName = "gcs-storage"
	// GCSStorageMountPath is where the head's Ray container mounts it.
	GCSStorageMountPath = "/data/gcs"
	// GCSStorageRocksDBValue is RAY_gcs_storage's value.
	GCSStorageRocksDBValue = "rocksdb"
	// GCSStoragePVCSuffix makes the managed claim's name, <cluster>-gcs-pvc.
	GCSStoragePVCSuffix = "-gcs-pvc"
	// GCSStorageDefaultSize is the managed claim's default size.
	GCSStorageDefaultSize = "1Gi"
)

// collectorManagedEnv are the collector's env names KubeRay sets and a user
// may not (validation.go:1049-1062).
var collectorManagedEnv = []string{EnvPodIP, EnvFQRayIP, EnvRayClusterName, EnvRayClusterNamespace,
	EnvRayRole, EnvOwnerKind, EnvOwnerName, EnvEventsPort}

// validateHistoryServerOptions is v1.7.0's check of historyServerOptions
// (validation.go:260-282, validateCollectorOptions :1029-1101):
// collectorOptions set, its image set, none of the env KubeRay manages,
// STORAGE_BACKEND a literal, the settings its backend needs, and no pod
// template with a container of the collector's name.
func validateHistoryServerOptions(spec *RayClusterSpec, p *field.Path) field.ErrorList {
	h := spec.HistoryServerOptions
	if h == nil {
		return nil
	}
	hp := p.Child("historyServerOptions")
	cp := hp.Child("collectorOptions")
	o := h.CollectorOptions
	if o == nil {
		return field.ErrorList{field.Required(cp, "the history server needs its collector sidecar's options")}
	}
	var errs field.ErrorList
	if o.Image == nil || *o.Image == "" {
		errs = append(errs, field.Required(cp.Child("image"), "the collector's image"))
	}
	// KubeRay reads the last entry of a name (a map); so does env.
	env := map[string]corev1.EnvVar{}
	for i, e := range o.Env {
		env[e.Name] = e
		if slices.Contains(collectorManagedEnv, e.Name) {
			errs = append(errs, field.Forbidden(cp.Child("env").Index(i).Child("name"),
				e.Name+" is managed by KubeRay and injected into the collector container"))
		}
	}
	hasValue := func(name string) bool {
		e, ok := env[name]
		return ok && (e.Value != "" || e.ValueFrom != nil)
	}
	ep := cp.Child("env")
	need := func(name, when string) {
		if !hasValue(name) {
			errs = append(errs, field.Required(ep, fmt.Sprintf("%s must be set when %s", name, when)))
		}
	}
	backend, ok := env[envStorageBackend]
	switch {
	case !ok || backend.Value == "":
		errs = append(errs, field.Required(ep, envStorageBackend+" must be set with a literal string value"))
	default:
		switch strings.ToUpper(backend.Value) {
		case "GCS":
			need(envGCSBucket, "STORAGE_BACKEND is GCS")
		case "S3":
			need(envS3Region, "STORAGE_BACKEND is S3")
		case "AZUREBLOB":
			mode := ""
			if e, ok := env[envAzureStorageAuthMode]; ok && e.Value != "" {
				mode = strings.ToLower(strings.TrimSpace(e.Value))
			}
			switch mode {
			case "connection_string":
				need(envAzureStorageConnectionString, "STORAGE_BACKEND is AZUREBLOB and AZURE_STORAGE_AUTH_MODE is connection_string")
			case "workload_identity", "default":
				need(envAzureStorageAccountURL, "STORAGE_BACKEND is AZUREBLOB and AZURE_STORAGE_AUTH_MODE is "+mode)
			default:
				if !hasValue(envAzureStorageConnectionString) && !hasValue(envAzureStorageAccountURL) {
					errs = append(errs, field.Required(ep, "either "+envAzureStorageConnectionString+" or "+envAzureStorageAccountURL+
						" must be set when STORAGE_BACKEND is AZUREBLOB"))
				}
			}
		case "ALIYUNOSS":
			need(envAliyunBucket, "STORAGE_BACKEND is ALIYUNOSS")
			need(envAliyunEndpoint, "STORAGE_BACKEND is ALIYUNOSS")
			need(envAliyunRegion, "STORAGE_BACKEND is ALIYUNOSS")
		}
		// Any other value is accepted, as in KubeRay (the collector's
		// own check).
	}
	collides := func(cs []corev1.Container, at *field.Path) {
		for i, c := range cs {
			if c.Name == CollectorContainerName {
				errs = append(errs, field.Forbidden(at.Index(i).Child("name"),
					fmt.Sprintf("must not be %q when historyServerOptions.collectorOptions is set (KubeRay adds that sidecar)", CollectorContainerName)))
			}
		}
	}
	collides(spec.HeadGroupSpec.Template.Spec.Containers, p.Child("headGroupSpec", "template", "spec", "containers"))
	for i := range spec.WorkerGroupSpecs {
		collides(spec.WorkerGroupSpecs[i].Template.Spec.Containers, p.Child("workerGroupSpecs").Index(i).Child("template", "spec", "containers"))
	}
	return errs
}

// validateEmbeddedGCSStorage is v1.7.0's check of the rocksdb backend
// (validateGcsFaultToleranceBackend, validation.go:333-369): none of the
// Redis fields, and neither the env, the volume nor the mount KubeRay
// manages in the head pod. (storage.claimName's exclusivity with the
// managed claim's fields is checked with storage, for either backend.)
func validateEmbeddedGCSStorage(spec *RayClusterSpec, headRay *corev1.Container, p *field.Path) field.ErrorList {
	ft := spec.GcsFaultToleranceOptions
	if ft == nil || ft.Backend != GcsFTBackendRocksDB {
		return nil
	}
	fp := p.Child("gcsFaultToleranceOptions")
	var errs field.ErrorList
	redis := func(set bool, name string) {
		if set {
			errs = append(errs, field.Forbidden(fp.Child(name), "cannot be set when backend is 'rocksdb'"))
		}
	}
	redis(ft.RedisAddress != "", "redisAddress")
	redis(ft.RedisUsername != nil, "redisUsername")
	redis(ft.RedisPassword != nil, "redisPassword")
	redis(ft.ExternalStorageNamespace != "", "externalStorageNamespace")
	hp := p.Child("headGroupSpec", "template", "spec")
	if headRay != nil {
		cp := hp.Child("containers").Index(RayContainerIndex)
		for i, e := range headRay.Env {
			if e.Name == EnvRayGcsStorage || e.Name == EnvRayGcsStoragePath {
				errs = append(errs, field.Forbidden(cp.Child("env").Index(i),
					e.Name+" is managed by KubeRay when the embedded GCS FT backend (rocksdb) is used"))
			}
		}
		for i, m := range headRay.VolumeMounts {
			if m.MountPath == GCSStorageMountPath || m.Name == GCSStorageVolumeName {
				errs = append(errs, field.Forbidden(cp.Child("volumeMounts").Index(i),
					fmt.Sprintf("a volume mount named %q or mounted at %s is managed by KubeRay when the embedded GCS FT backend (rocksdb) is used",
						GCSStorageVolumeName, GCSStorageMountPath)))
			}
		}
	}
	for i, v := range spec.HeadGroupSpec.Template.Spec.Volumes {
		if v.Name == GCSStorageVolumeName {
			errs = append(errs, field.Forbidden(hp.Child("volumes").Index(i),
				fmt.Sprintf("a volume named %q is managed by KubeRay when the embedded GCS FT backend (rocksdb) is used", GCSStorageVolumeName)))
		}
	}
	return errs
}
