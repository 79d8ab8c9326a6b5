package raycluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

var embeddedOn = features.MustParse("GCSFaultToleranceEmbeddedStorage=true")

// KubeRay v1.7.0's embedded GCS FT sample with the gate on: the head's Ray
// container gets the rocksdb env first (before BuildPod's), the store's
// mount after the user's, the claim's volume after the user's
// (configureEmbeddedFT, common/pod.go:175-211); workers get the reconnect
// timeout only; nothing of Redis anywhere.
func TestEmbeddedGCSOfTheSample(t *testing.T) {
	rc := v170Sample(t, "ray-cluster.embedded-gcs-ft.yaml")
	if errs := append(rayv1.ValidateRayCluster(rc), UnsupportedRayClusterWith(rc, BuildConfig{Features: embeddedOn})...); len(errs) != 0 {
		t.Fatalf("the sample is refused with the gate on: %v", errs)
	}
	head, worker := samplePods(rc, cfgWith(embeddedOn))
	ray := head.Spec.Containers[0]
	if d := cmp.Diff([]corev1.EnvVar{{Name: "RAY_gcs_storage", Value: "rocksdb"}, {Name: "RAY_gcs_storage_path", Value: "/data/gcs"}}, ray.Env[:2]); d != "" {
		t.Errorf("the head's first env (-want +got):\n%s", d)
	}
	wantMounts := []corev1.VolumeMount{{Name: "ray-logs", MountPath: "/tmp/ray"}, {Name: "gcs-storage", MountPath: "/data/gcs"},
		{Name: "shared-mem", MountPath: "/dev/shm"}}
	if d := cmp.Diff(wantMounts, ray.VolumeMounts); d != "" {
		t.Errorf("head mounts (-want +got):\n%s", d)
	}
	var vols []string
	for _, v := range head.Spec.Volumes {
		vols = append(vols, v.Name)
	}
	if strings.Join(vols, ",") != "ray-logs,gcs-storage,shared-mem" || head.Spec.Volumes[1].PersistentVolumeClaim == nil ||
		*head.Spec.Volumes[1].PersistentVolumeClaim != (corev1.PersistentVolumeClaimVolumeSource{ClaimName: "raycluster-embedded-gcs-ft-gcs-pvc"}) {
		t.Errorf("head volumes %v: %+v", vols, head.Spec.Volumes)
	}
	if head.Annotations[rayv1.RayFTEnabledAnnotationKey] != "true" {
		t.Errorf("head ray.io/ft-enabled %q", head.Annotations[rayv1.RayFTEnabledAnnotationKey])
	}
	for _, n := range []string{"RAY_REDIS_ADDRESS", "RAY_external_storage_namespace", "REDIS_PASSWORD"} {
		if fixture.EnvOf(&ray, n) != nil {
			t.Errorf("head has %s", n)
		}
	}
	if _, ok := head.Annotations[rayv1.RayExternalStorageNSAnnotationKey]; ok {
		t.Error("head has the external storage namespace annotation")
	}
	w := worker.Spec.Containers[0]
	if e := fixture.EnvOf(&w, "RAY_gcs_rpc_server_reconnect_timeout_s"); e == nil || e.Value != "600" {
		t.Errorf("worker reconnect timeout %+v", e)
	}
	if fixture.EnvOf(&w, "RAY_gcs_storage") != nil || len(worker.Spec.Volumes) != 1 {
		t.Errorf("worker has the store: env %v volumes %+v", envNamesOf(w.Env), worker.Spec.Volumes)
	}

	// The managed claim (common/gcs_ft.go BuildGCSStoragePVC, owned as
	// raycluster_controller.go:755-764 sets it).
	tr := true
	want := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "raycluster-embedded-gcs-ft-gcs-pvc", Namespace: "ns",
			Labels: map[string]string{"ray.io/cluster": "raycluster-embedded-gcs-ft"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "raycluster-embedded-gcs-ft",
				UID: "c-uid", Controller: &tr, BlockOwnerDeletion: &tr}}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}
	if d := cmp.Diff(want, BuildGCSStoragePVC(rc)); d != "" {
		t.Errorf("claim (-want +got):\n%s", d)
	}
}

func TestEmbeddedGCSStorageOptions(t *testing.T) {
	rc := v170Sample(t, "ray-cluster.embedded-gcs-ft.yaml")
	q := resource.MustParse("5Gi")
	rc.Spec.GcsFaultToleranceOptions.Storage = &rayv1.GcsEmbeddedStorage{Size: &q, StorageClassName: fixture.Ptr("ssd"),
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, SubPath: "clusters/a",
		DeletionPolicy: fixture.Ptr(rayv1.RetainGCSStorageDeletionPolicy)}
	pvc := BuildGCSStoragePVC(rc)
	if len(pvc.OwnerReferences) != 0 || *pvc.Spec.StorageClassName != "ssd" || pvc.Spec.AccessModes[0] != corev1.ReadWriteMany ||
		pvc.Spec.Resources.Requests.Storage().String() != "5Gi" {
		t.Errorf("Retain claim %+v", pvc)
	}
	head, _ := samplePods(rc, cfgWith(embeddedOn))
	if m := head.Spec.Containers[0].VolumeMounts[1]; m.Name != "gcs-storage" || m.SubPath != "clusters/a" {
		t.Errorf("mount %+v", m)
	}
	rc.Spec.GcsFaultToleranceOptions.Storage = &rayv1.GcsEmbeddedStorage{ClaimName: "mine"}
	head, _ = samplePods(rc, cfgWith(embeddedOn))
	if c := head.Spec.Volumes[1].PersistentVolumeClaim; c == nil || c.ClaimName != "mine" {
		t.Errorf("claimName: volume %+v", head.Spec.Volumes[1])
	}
}

// decide plans the claim as reconcileGCSStoragePVC does.
func TestDecideGCSStoragePVC(t *testing.T) {
	obs := func(mut func(*rayv1.RayCluster), ex *corev1.PersistentVolumeClaim) (*observed, *plan) {
		rc := v170Sample(t, "ray-cluster.embedded-gcs-ft.yaml")
		if mut != nil {
			mut(rc)
		}
		o := obsOf(rc, nil)
		o.Config = cfgWith(embeddedOn)
		o.GCSStoragePVC = ex
		return o, decide(o)
	}
	retain := func(rc *rayv1.RayCluster) {
		rc.Spec.GcsFaultToleranceOptions.Storage.DeletionPolicy = fixture.Ptr(rayv1.RetainGCSStorageDeletionPolicy)
	}
	t.Run("missing: created, with the pods", func(t *testing.T) {
		o, p := obs(nil, nil)
		if p.CreateGCSStoragePVC == nil || p.CreateGCSStoragePVC.Name != "raycluster-embedded-gcs-ft-gcs-pvc" || len(p.CreatePods) == 0 {
			t.Fatalf("claim %v, %d pods", p.CreateGCSStoragePVC, len(p.CreatePods))
		}
		o.Config = DefaultBuildConfig()
		if p := decide(o); p.CreateGCSStoragePVC != nil || len(p.Invalid) == 0 || len(p.CreatePods) != 0 {
			t.Fatalf("gate off: claim %v, invalid %v", p.CreateGCSStoragePVC, p.Invalid)
		}
	})
	t.Run("ours, as wanted: nothing", func(t *testing.T) {
		o, _ := obs(nil, nil)
		_, p := obs(nil, BuildGCSStoragePVC(o.Cluster))
		if p.CreateGCSStoragePVC != nil || p.UpdateGCSStoragePVC != nil || p.GCSStoragePVCBlocked != "" || len(p.Events) != 0 {
			t.Fatalf("plan %+v", p)
		}
	})
	t.Run("drifted: a Warning, adopted as it is", func(t *testing.T) {
		o, _ := obs(nil, nil)
		ex := BuildGCSStoragePVC(o.Cluster)
		ex.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		ex.Spec.StorageClassName = fixture.Ptr("standard") // the default class, resolved: no drift
		_, p := obs(nil, ex)
		if len(p.Events) != 1 || p.Events[0].Reason != "FailedToCreatePVC" || !strings.Contains(p.Events[0].Message,
			"GCS storage PVC ns/raycluster-embedded-gcs-ft-gcs-pvc already exists and cannot be reconfigured in place (requested size 1Gi != current 2Gi)") {
			t.Fatalf("events %+v", p.Events)
		}
		if p.UpdateGCSStoragePVC != nil || len(p.CreatePods) == 0 {
			t.Fatalf("update %v, %d pods", p.UpdateGCSStoragePVC, len(p.CreatePods))
		}
	})
	t.Run("Retain: our controller reference removed; DeleteWithCluster: set", func(t *testing.T) {
		o, _ := obs(nil, nil)
		ours := BuildGCSStoragePVC(o.Cluster)
		_, p := obs(retain, ours)
		if p.UpdateGCSStoragePVC == nil || len(p.UpdateGCSStoragePVC.OwnerReferences) != 0 {
			t.Fatalf("Retain: update %+v", p.UpdateGCSStoragePVC)
		}
		orphan := ours.DeepCopy()
		orphan.OwnerReferences = nil
		_, p = obs(nil, orphan)
		if p.UpdateGCSStoragePVC == nil || kit.ControllerUID(p.UpdateGCSStoragePVC.OwnerReferences) != "c-uid" {
			t.Fatalf("adopt: update %+v", p.UpdateGCSStoragePVC)
		}
		_, p = obs(retain, orphan)
		if p.UpdateGCSStoragePVC != nil {
			t.Fatalf("Retain, unowned: update %+v", p.UpdateGCSStoragePVC)
		}
	})
	t.Run("another controller: the claim blocked (TestReconcileGCSStoragePVC: pods held back)", func(t *testing.T) {
		o, _ := obs(nil, nil)
		theirs := BuildGCSStoragePVC(o.Cluster)
		theirs.OwnerReferences = []metav1.OwnerReference{kit.ControllerRef("StatefulSet", "db", "db-uid")}
		theirs.OwnerReferences[0].APIVersion = "apps/v1"
		_, p := obs(nil, theirs)
		if !strings.Contains(p.GCSStoragePVCBlocked, "already controlled by StatefulSet db") {
			t.Fatalf("blocked %q", p.GCSStoragePVCBlocked)
		}
	})
	t.Run("claimName: never created; missing is a Warning and the pods are made", func(t *testing.T) {
		byo := func(rc *rayv1.RayCluster) {
			rc.Spec.GcsFaultToleranceOptions.Storage = &rayv1.GcsEmbeddedStorage{ClaimName: "mine"}
		}
		_, p := obs(byo, nil)
		if p.CreateGCSStoragePVC != nil || len(p.CreatePods) == 0 || len(p.Events) != 1 || p.Events[0].Action != "Validate" ||
			p.Events[0].Message != `GcsFaultToleranceOptions.Storage.ClaimName "mine" not found in namespace ns; the head Pod will not start until it exists` {
			t.Fatalf("claim %v, %d pods, events %+v", p.CreateGCSStoragePVC, len(p.CreatePods), p.Events)
		}
		mine := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "ns"}}
		_, p = obs(byo, mine)
		if p.UpdateGCSStoragePVC != nil || len(p.Events) != 0 {
			t.Fatalf("the user's claim touched: %+v %+v", p.UpdateGCSStoragePVC, p.Events)
		}
	})
	t.Run("deleted with a stale Redis clean-up finalizer: dropped at once", func(t *testing.T) {
		o, _ := obs(nil, nil)
		o.Cluster.Finalizers = []string{rayv1.GCSFaultToleranceRedisCleanupFinalizer}
		now := metav1.NewTime(fixture.T0)
		o.Cluster.DeletionTimestamp = &now
		if p := decide(o); !p.RemoveFinalizer || p.CreateJob != nil {
			t.Fatalf("remove %t, job %v", p.RemoveFinalizer, p.CreateJob)
		}
	})
}

// The rocksdb validations of v1.7.0 (validateGcsFaultToleranceBackend) and
// the refusal with the gate off.
func TestEmbeddedGCSRefusedAndValidated(t *testing.T) {
	rc := v170Sample(t, "ray-cluster.embedded-gcs-ft.yaml")
	errs := UnsupportedRayCluster(rc)
	if len(errs) != 1 || errs[0].Field != "spec.gcsFaultToleranceOptions.backend" ||
		!strings.Contains(errs[0].Detail, "requires the GCSFaultToleranceEmbeddedStorage feature gate") {
		t.Fatalf("gate off: %v", errs)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*rayv1.RayCluster)
		want   string
	}{
		{"redisAddress", func(rc *rayv1.RayCluster) { rc.Spec.GcsFaultToleranceOptions.RedisAddress = "redis:6379" },
			"spec.gcsFaultToleranceOptions.redisAddress: Forbidden: cannot be set when backend is 'rocksdb'"},
		{"redisPassword", func(rc *rayv1.RayCluster) {
			rc.Spec.GcsFaultToleranceOptions.RedisPassword = &rayv1.RedisCredential{Value: "x"}
		}, "spec.gcsFaultToleranceOptions.redisPassword: Forbidden"},
		{"externalStorageNamespace", func(rc *rayv1.RayCluster) { rc.Spec.GcsFaultToleranceOptions.ExternalStorageNamespace = "x" },
			"spec.gcsFaultToleranceOptions.externalStorageNamespace: Forbidden"},
		{"claimName with size", func(rc *rayv1.RayCluster) { rc.Spec.GcsFaultToleranceOptions.Storage.ClaimName = "mine" },
			"spec.gcsFaultToleranceOptions.storage.claimName: Forbidden"},
		{"RAY_gcs_storage_path set", func(rc *rayv1.RayCluster) {
			c := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
			c.Env = append(c.Env, corev1.EnvVar{Name: "RAY_gcs_storage_path", Value: "/x"})
		}, "spec.headGroupSpec.template.spec.containers[0].env[0]: Forbidden: RAY_gcs_storage_path is managed by KubeRay"},
		{"a mount at /data/gcs", func(rc *rayv1.RayCluster) {
			c := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "ray-logs", MountPath: "/data/gcs"})
		}, "spec.headGroupSpec.template.spec.containers[0].volumeMounts[1]: Forbidden"},
		{"a volume named gcs-storage", func(rc *rayv1.RayCluster) {
			v := &rc.Spec.HeadGroupSpec.Template.Spec.Volumes
			*v = append(*v, corev1.Volume{Name: "gcs-storage"})
		}, "spec.headGroupSpec.template.spec.volumes[1]: Forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := v170Sample(t, "ray-cluster.embedded-gcs-ft.yaml")
			tc.mutate(rc)
			errs := append(rayv1.ValidateRayCluster(rc), UnsupportedRayClusterWith(rc, BuildConfig{Features: embeddedOn})...)
			if !strings.Contains(errs.ToAggregate().Error(), tc.want) {
				t.Fatalf("errors %v, want one containing %q", errs, tc.want)
			}
		})
	}
}

// Passes against a fake API server: the claim exists before the head pod;
// a claim that cannot be created, or that another object controls, holds
// every pod back, with a Warning.
func TestReconcileGCSStoragePVC(t *testing.T) {
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	embedded := func() *rayv1.RayCluster {
		rc := freshCluster("c", 1)
		rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB}
		return rc
	}
	t.Run("created before the head pod", func(t *testing.T) {
		var order []string
		r, c, rec := fakeReconcilerWith(t, embeddedOn, interceptor.Funcs{Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			switch obj.(type) {
			case *corev1.PersistentVolumeClaim, *corev1.Pod:
				order = append(order, obj.GetName())
			}
			return cl.Create(ctx, obj, opts...)
		}}, embedded())
		for range 2 {
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
		}
		if len(order) < 2 || order[0] != "c-gcs-pvc" || !strings.HasPrefix(order[1], "c-head-") {
			t.Fatalf("create order %v; want the claim, then the head pod", order)
		}
		pvc := &corev1.PersistentVolumeClaim{}
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "c-gcs-pvc"}, pvc); err != nil {
			t.Fatal(err)
		}
		if kit.ControllerUID(pvc.OwnerReferences) == "" {
			t.Errorf("claim not owned: %+v", pvc.OwnerReferences)
		}
		if evs := drainEvents(rec.Events); strings.Count(evs, "Normal CreatedPVC Created GCS storage PVC ns/c-gcs-pvc") != 1 {
			t.Fatalf("events:\n%s", evs)
		}
	})
	t.Run("a claim another object controls: no pods, a Warning", func(t *testing.T) {
		theirs := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c-gcs-pvc", Namespace: "ns",
			OwnerReferences: []metav1.OwnerReference{kit.ControllerRef("StatefulSet", "db", "db-uid")}}}
		theirs.OwnerReferences[0].APIVersion = "apps/v1"
		r, c, rec := fakeReconcilerWith(t, embeddedOn, interceptor.Funcs{}, embedded(), theirs)
		if _, err := r.Reconcile(context.Background(), req); err == nil {
			t.Fatal("no error: the claim must be retried")
		}
		pods := &corev1.PodList{}
		if err := c.List(context.Background(), pods); err != nil || len(pods.Items) != 0 {
			t.Fatalf("%d pods, %v; want none while the claim is another's", len(pods.Items), err)
		}
		if evs := drainEvents(rec.Events); !strings.Contains(evs, "Warning FailedToCreatePVC GCS storage PVC ns/c-gcs-pvc is already controlled by StatefulSet db") {
			t.Fatalf("events:\n%s", evs)
		}
	})
	t.Run("a claim that cannot be created: no pods, a Warning", func(t *testing.T) {
		r, c, rec := fakeReconcilerWith(t, embeddedOn, interceptor.Funcs{Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.PersistentVolumeClaim); ok {
				return errors.New("quota exceeded")
			}
			return cl.Create(ctx, obj, opts...)
		}}, embedded())
		if _, err := r.Reconcile(context.Background(), req); err == nil {
			t.Fatal("no error: the claim must be retried")
		}
		pods := &corev1.PodList{}
		if err := c.List(context.Background(), pods); err != nil || len(pods.Items) != 0 {
			t.Fatalf("%d pods, %v; want none without the claim", len(pods.Items), err)
		}
		if evs := drainEvents(rec.Events); !strings.Contains(evs, "Warning FailedToCreatePVC Failed to create GCS storage PVC ns/c-gcs-pvc, quota exceeded") {
			t.Fatalf("events:\n%s", evs)
		}
	})
}
