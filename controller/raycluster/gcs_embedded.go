package raycluster

// The embedded rocksdb GCS storage of gcsFaultToleranceOptions.backend
// rocksdb, behind KubeRay's GCSFaultToleranceEmbeddedStorage gate
// (controller/features), as KubeRay v1.7.0 does it (ray-operator/
// controllers/ray/; line numbers are v1.7.0's):
//
//   - the head pod (configureEmbeddedFT, common/pod.go:175-211, called from
//     configureGCSFaultTolerance :102-110 instead of the Redis settings):
//     RAY_gcs_storage=rocksdb and RAY_gcs_storage_path=/data/gcs on the Ray
//     container unless set (validation refuses them anyway), a mount of
//     volume "gcs-storage" at /data/gcs with storage.subPath, and that
//     volume: the claim storage.claimName, else "<cluster>-gcs-pvc"
//     (utils/util.go:784-793, utils/constant.go:206-215). No ray start flag
//     changes. As with Redis, the head is annotated ray.io/ft-enabled=true
//     and workers get RAY_gcs_rpc_server_reconnect_timeout_s=600; no Redis
//     env, no external storage namespace, no clean-up finalizer and no
//     clean-up Job (a stale finalizer of a cluster that was Redis-backed is
//     dropped on deletion, raycluster_controller.go:229-246);
//   - the claim (reconcileGCSStoragePVC, raycluster_controller.go:657-792;
//     common/gcs_ft.go BuildGCSStoragePVC), before the pods
//     (reconcileFuncs :359-370):
//   - storage.claimName: the user's claim, never created, changed or
//     owned; when it is missing a Warning FailedToCreatePVC says the head
//     will not start until it exists, and the pods are made anyway (their
//     head waits, Pending);
//   - else "<cluster>-gcs-pvc", labelled ray.io/cluster only, accessModes
//     storage.accessModes (default [ReadWriteOnce]), storage.size (default
//     1Gi) requested, storage.storageClassName (default: none, the cluster's
//     default class), controlled by the RayCluster so it goes with it,
//     except with storage.deletionPolicy Retain: then no owner reference,
//     and the claim (and the GCS state) outlives the cluster. Created once
//     with a Normal CreatedPVC Event; a failure is a Warning
//     FailedToCreatePVC and no pod is made in that pass. One that exists
//     (a Retain claim of an earlier cluster of that name, or made since) is
//     adopted as it is: a size, class (when the spec names one) or access
//     modes that differ are a Warning FailedToCreatePVC each pass (a claim
//     is not reconfigured in place), and its controller reference is
//     brought in line with deletionPolicy (removed for Retain, set
//     otherwise, so a changed policy takes effect).
//
// Where raydar differs: KubeRay watches the claims it owns; raydar reads
// the one claim of a rocksdb cluster live in each of its passes (as it
// reads an Ingress), so a claim deleted by hand is made again at the
// cluster's next pass rather than at once. Setting the controller
// reference on a claim another object controls is an error in KubeRay's
// pass, with no Event; raydar says so by a Warning FailedToCreatePVC, and
// holds the pods back as that error does.
//
// With the gate off KubeRay refuses the rocksdb backend
// (utils/validation.go:335-338), and so does raydar (unsupported.go), by
// the gate's name; the claim is then neither read nor written.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// KubeRay v1.7.0's claim Event reasons (utils/constant.go:526-527).
const (
	EventCreatedPVC        = "CreatedPVC"
	EventFailedToCreatePVC = "FailedToCreatePVC"
)

// embeddedGCS: the cluster's GCS fault tolerance uses the rocksdb backend
// (utils.IsGCSFaultToleranceEmbedded, utils/util.go:779-782).
func embeddedGCS(rc *rayv1.RayCluster) bool {
	o := rc.Spec.GcsFaultToleranceOptions
	return o != nil && o.Backend == rayv1.GcsFTBackendRocksDB
}

// embeddedGCSOn: the gate is on and the cluster uses the rocksdb backend,
// so its claim is reconciled.
func embeddedGCSOn(rc *rayv1.RayCluster, cfg BuildConfig) bool {
	return cfg.Features.Enabled(features.GCSFaultToleranceEmbeddedStorage) && embeddedGCS(rc)
}

// GCSStoragePVCName is the claim of the cluster's GCS store: storage.claimName,
// else "<cluster>-gcs-pvc" (utils.GetGCSStoragePVCName).
func GCSStoragePVCName(rc *rayv1.RayCluster) string {
	if s := userGCSClaim(rc); s != "" {
		return s
	}
	return rc.Name + rayv1.GCSStoragePVCSuffix
}

// userGCSClaim is storage.claimName, "" when the claim is managed.
func userGCSClaim(rc *rayv1.RayCluster) string {
	if o := rc.Spec.GcsFaultToleranceOptions; o != nil && o.Storage != nil {
		return o.Storage.ClaimName
	}
	return ""
}

// retainGCSClaim: storage.deletionPolicy is Retain (gcsStorageRetainOnDeletion).
func retainGCSClaim(rc *rayv1.RayCluster) bool {
	s := rc.Spec.GcsFaultToleranceOptions.Storage
	return s != nil && s.DeletionPolicy != nil && *s.DeletionPolicy == rayv1.RetainGCSStorageDeletionPolicy
}

// configureEmbeddedFT wires the head pod to its store (configureEmbeddedFT,
// common/pod.go:175-211): the env, the mount and the claim's volume.
func configureEmbeddedFT(rc *rayv1.RayCluster, spec *corev1.PodSpec, ray *corev1.Container) {
	setEnv(ray, corev1.EnvVar{Name: rayv1.EnvRayGcsStorage, Value: rayv1.GCSStorageRocksDBValue})
	setEnv(ray, corev1.EnvVar{Name: rayv1.EnvRayGcsStoragePath, Value: rayv1.GCSStorageMountPath})
	subPath := ""
	if s := rc.Spec.GcsFaultToleranceOptions.Storage; s != nil {
		subPath = s.SubPath
	}
	ray.VolumeMounts = append(ray.VolumeMounts, corev1.VolumeMount{Name: rayv1.GCSStorageVolumeName, MountPath: rayv1.GCSStorageMountPath, SubPath: subPath})
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: rayv1.GCSStorageVolumeName, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: GCSStoragePVCName(rc)},
	}})
}

// BuildGCSStoragePVC is the managed claim (common/gcs_ft.go
// BuildGCSStoragePVC), controlled by the cluster unless deletionPolicy is
// Retain (raycluster_controller.go:755-764).
func BuildGCSStoragePVC(rc *rayv1.RayCluster) *corev1.PersistentVolumeClaim {
	s := rc.Spec.GcsFaultToleranceOptions.Storage
	modes := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	size := resource.MustParse(rayv1.GCSStorageDefaultSize)
	var class *string
	if s != nil {
		if len(s.AccessModes) > 0 {
			modes = slices.Clone(s.AccessModes)
		}
		if s.Size != nil {
			size = s.Size.DeepCopy()
		}
		if s.StorageClassName != nil {
			c := *s.StorageClassName
			class = &c
		}
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: childMeta(rc, GCSStoragePVCName(rc), map[string]string{rayv1.RayClusterLabelKey: rc.Name}),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			StorageClassName: class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if retainGCSClaim(rc) {
		// The claim, and the GCS state, outlive the cluster.
		pvc.OwnerReferences = nil
	}
	return pvc
}

// gcsStoragePVCDrift names what differs between the managed claim wanted
// and the one that exists, "" when nothing that matters does
// (gcsStoragePVCDrift, raycluster_controller.go:819-851): the requested
// size, the class when the spec names one, the access modes as a multiset.
func gcsStoragePVCDrift(desired, existing *corev1.PersistentVolumeClaim) string {
	var diffs []string
	want := desired.Spec.Resources.Requests[corev1.ResourceStorage]
	got := existing.Spec.Resources.Requests[corev1.ResourceStorage]
	if want.Cmp(got) != 0 {
		diffs = append(diffs, fmt.Sprintf("requested size %s != current %s", want.String(), got.String()))
	}
	deref := func(s *string) string {
		if s == nil {
			return "<default>"
		}
		return *s
	}
	if desired.Spec.StorageClassName != nil && deref(desired.Spec.StorageClassName) != deref(existing.Spec.StorageClassName) {
		diffs = append(diffs, fmt.Sprintf("storageClassName %s != current %s", deref(desired.Spec.StorageClassName), deref(existing.Spec.StorageClassName)))
	}
	a, b := slices.Clone(desired.Spec.AccessModes), slices.Clone(existing.Spec.AccessModes)
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		diffs = append(diffs, fmt.Sprintf("accessModes %v != current %v", desired.Spec.AccessModes, existing.Spec.AccessModes))
	}
	return strings.Join(diffs, "; ")
}

// sameOwner: ref names rc by API group, kind and name (controller-runtime's
// referSameObject, which SetControllerReference and
// RemoveControllerReference match by; the UID is not compared).
func sameOwner(ref metav1.OwnerReference, rc *rayv1.RayCluster) bool {
	return ref.Kind == rayv1.KindRayCluster && ref.Name == rc.Name && strings.HasPrefix(ref.APIVersion, rayv1.GroupVersion.Group+"/")
}

// gcsStoragePVCOwnerUpdate brings an existing managed claim's controller
// reference in line with deletionPolicy (reconcileGCSStoragePVCOwnerRef,
// raycluster_controller.go:794-817): nil when it already is, an error
// when the claim has another controller and the cluster must become it.
func gcsStoragePVCOwnerUpdate(rc *rayv1.RayCluster, pvc *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	controlled := kit.ControllerUID(pvc.OwnerReferences) == string(rc.UID)
	retain := retainGCSClaim(rc)
	switch {
	case retain && controlled:
		upd := pvc.DeepCopy()
		upd.OwnerReferences = slices.DeleteFunc(upd.OwnerReferences, func(r metav1.OwnerReference) bool { return sameOwner(r, rc) })
		return upd, nil
	case !retain && !controlled:
		if c := metav1.GetControllerOfNoCopy(pvc); c != nil && !sameOwner(*c, rc) {
			return nil, fmt.Errorf("GCS storage PVC %s/%s is already controlled by %s %s; it cannot be owned by this RayCluster "+
				"(set deletionPolicy Retain or claimName to use it as it is, or delete it)", pvc.Namespace, pvc.Name, c.Kind, c.Name)
		}
		upd := pvc.DeepCopy()
		upd.OwnerReferences = append(slices.DeleteFunc(upd.OwnerReferences, func(r metav1.OwnerReference) bool { return sameOwner(r, rc) }),
			kit.OwnerRef(rc))
		return upd, nil
	}
	return nil, nil
}

// decideGCSStoragePVC plans the claim of a rocksdb cluster with the gate on:
// a Warning when the user's claim is missing; the managed claim created
// when missing, else its drift reported and its owner aligned.
func decideGCSStoragePVC(o *observed, p *plan) {
	rc := o.Cluster
	if !embeddedGCSOn(rc, o.Config) {
		return
	}
	ex := o.GCSStoragePVC
	if name := userGCSClaim(rc); name != "" {
		if ex == nil {
			p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: EventFailedToCreatePVC, Action: "Validate",
				Message: fmt.Sprintf("GcsFaultToleranceOptions.Storage.ClaimName %q not found in namespace %s; the head Pod will not start until it exists",
					name, rc.Namespace)})
		}
		return
	}
	want := BuildGCSStoragePVC(rc)
	if ex == nil {
		p.CreateGCSStoragePVC = want
		return
	}
	if drift := gcsStoragePVCDrift(want, ex); drift != "" {
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: EventFailedToCreatePVC, Action: "Update",
			Message: fmt.Sprintf("GCS storage PVC %s/%s already exists and cannot be reconfigured in place (%s); delete the PVC to recreate it with the new settings",
				ex.Namespace, ex.Name, drift)})
	}
	upd, err := gcsStoragePVCOwnerUpdate(rc, ex)
	if err != nil {
		p.GCSStoragePVCBlocked = err.Error()
		return
	}
	p.UpdateGCSStoragePVC = upd
}

// getGCSStoragePVC reads the claim of a rocksdb cluster live (claims are not
// cached: only these clusters pay the read); nil when it does not exist.
func (r *Reconciler) getGCSStoragePVC(ctx context.Context, rc *rayv1.RayCluster) (*corev1.PersistentVolumeClaim, error) {
	if !embeddedGCSOn(rc, r.cfg) || rc.DeletionTimestamp != nil {
		return nil, nil
	}
	pvc := &corev1.PersistentVolumeClaim{}
	err := r.api.Get(ctx, types.NamespacedName{Namespace: rc.Namespace, Name: GCSStoragePVCName(rc)}, pvc)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading PersistentVolumeClaim %s: %w", GCSStoragePVCName(rc), err)
	}
	return pvc, nil
}

// applyGCSStoragePVC writes the planned claim, with KubeRay's Events; it
// reports whether the pods may be written (KubeRay's pass ends at a claim
// it could not create or own, before reconcilePods).
func (r *Reconciler) applyGCSStoragePVC(ctx context.Context, rc *rayv1.RayCluster, p *plan, out *outcome) bool {
	if msg := p.GCSStoragePVCBlocked; msg != "" {
		out.fail(EventFailedToCreatePVC, msg)
		return false
	}
	if pvc := p.CreateGCSStoragePVC; pvc != nil {
		err := r.client.Create(ctx, pvc)
		switch {
		case err == nil:
			r.events.Emit(rc, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: EventCreatedPVC, Action: "Create",
				Message: fmt.Sprintf("Created GCS storage PVC %s/%s", pvc.Namespace, pvc.Name)})
		case apierrors.IsAlreadyExists(err):
			// Made since it was read: as KubeRay, read it and align its
			// owner (raycluster_controller.go:767-774).
			ex := &corev1.PersistentVolumeClaim{}
			if err := r.api.Get(ctx, types.NamespacedName{Namespace: pvc.Namespace, Name: pvc.Name}, ex); err != nil {
				out.fail(EventFailedToCreatePVC, fmt.Sprintf("Failed to create GCS storage PVC %s/%s, %v", pvc.Namespace, pvc.Name, err))
				return false
			}
			upd, err := gcsStoragePVCOwnerUpdate(rc, ex)
			if err != nil {
				out.fail(EventFailedToCreatePVC, err.Error())
				return false
			}
			p.UpdateGCSStoragePVC = upd
		default:
			if kit.Ambiguous(err) {
				out.ambiguous = true
			}
			out.fail(EventFailedToCreatePVC, fmt.Sprintf("Failed to create GCS storage PVC %s/%s, %v", pvc.Namespace, pvc.Name, err))
			return false
		}
	}
	if upd := p.UpdateGCSStoragePVC; upd != nil {
		if err := r.client.Update(ctx, upd); err != nil {
			out.fail(EventFailedToCreatePVC, fmt.Sprintf("Failed to update the owner of GCS storage PVC %s/%s, %v", upd.Namespace, upd.Name, err))
			return false
		}
	}
	return true
}
