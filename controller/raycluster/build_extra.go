package raycluster

// Pure construction of the autoscaler's RBAC objects and of the GCS
// fault-tolerance Redis clean-up Job.

import (
	"github.com/raydar/raydar/controller/kit"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// buildAutoscalerRBAC returns the ServiceAccount, Role and RoleBinding the
// autoscaler sidecar runs with: it reads and patches pods (and resizes them)
// and reads and patches its RayCluster (replicas and workersToDelete). Names
// and labels are KubeRay's (common/rbac.go): the Role and RoleBinding are
// named after the cluster, the ServiceAccount after the head's service
// account (or the cluster).
func buildAutoscalerRBAC(rc *rayv1.RayCluster) []client.Object {
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name:      name,
			Namespace: rc.Namespace,
			Labels: map[string]string{
				rayv1.RayClusterLabelKey:                rc.Name,
				rayv1.KubernetesApplicationNameLabelKey: rayv1.ApplicationName,
				rayv1.KubernetesCreatedByLabelKey:       rayv1.ComponentName,
			},
			OwnerReferences: []metav1.OwnerReference{kit.OwnerRef(rc)},
		}
	}
	saName := kit.CheckName(kit.AutoscalerServiceAccountName(rc))
	roleName := kit.AutoscalerRoleName(rc)
	sa := &corev1.ServiceAccount{ObjectMeta: meta(saName)}
	role := &rbacv1.Role{
		ObjectMeta: meta(roleName),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"pods/resize"}, Verbs: []string{"patch"}},
			{APIGroups: []string{rayv1.GroupName}, Resources: []string{rayv1.ResourceRayClusters}, Verbs: []string{"get", "patch"}},
		},
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: meta(roleName),
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: saName, Namespace: rc.Namespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: roleName},
	}
	// The head template may name an existing service account; then it is
	// the user's and only the Role and RoleBinding are created.
	if rc.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName != "" {
		return []client.Object{role, rb}
	}
	return []client.Object{sa, role, rb}
}

// redisCleanupScript deletes the cluster's keys from Redis with Ray's own
// helper; it reads the address, password and namespace from the env.
const redisCleanupScript = `import os, sys
from ray._private.gcs_utils import cleanup_redis_storage
addr = os.environ.get("` + envRedisAddress + `", "")
host, _, port = addr.rpartition(":")
use_ssl = host.startswith("rediss://")
host = host.split("://", 1)[-1]
ok = cleanup_redis_storage(host=host, port=int(port or 6379),
    password=os.environ.get("` + envRedisPassword + `", ""),
    username=os.environ.get("` + envRedisUsername + `", ""),
    use_ssl=use_ssl,
    storage_namespace=os.environ["` + envExternalStorageNS + `"])
sys.exit(0 if ok is not False else 1)
`

// buildRedisCleanupJob returns the Job that deletes a deleted cluster's GCS
// state from Redis. It reuses the head pod's image, env and volumes.
func buildRedisCleanupJob(rc *rayv1.RayCluster, cfg BuildConfig) *batchv1.Job {
	head := BuildPod(rc, PodBuild{Name: "cleanup", Head: true}, "", cfg)
	ray := head.Spec.Containers[rayv1.RayContainerIndex]
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")}
	c := corev1.Container{
		Name:            kit.RedisCleanupCtrName,
		Image:           ray.Image,
		ImagePullPolicy: ray.ImagePullPolicy,
		Command:         []string{"python", "-c", redisCleanupScript},
		Env:             ray.Env,
		EnvFrom:         ray.EnvFrom,
		VolumeMounts:    ray.VolumeMounts,
		Resources:       corev1.ResourceRequirements{Limits: res, Requests: res},
		SecurityContext: ray.SecurityContext,
	}
	lbls := kit.PodLabels(rc.Name, rayv1.RedisCleanupNode, rayv1.RayNodeHeadGroupLabelValue, nil)
	var zero int32
	deadline := int64(rayv1.DefaultGCSFTDeletionTimeoutSeconds)
	spec := head.Spec
	spec.Containers = []corev1.Container{c}
	spec.InitContainers = nil
	spec.RestartPolicy = corev1.RestartPolicyNever
	// The cleanup does not need the autoscaler's account.
	if rc.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName == "" {
		spec.ServiceAccountName = ""
	}
	return &batchv1.Job{
		ObjectMeta: childMeta(rc, kit.RedisCleanupJobName(rc.Name), lbls),
		Spec: batchv1.JobSpec{
			BackoffLimit:          &zero,
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec:       spec,
			},
		},
	}
}
