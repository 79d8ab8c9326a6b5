package controller

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/raycluster"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The sandbox tests of two of KubeRay v1.7.0's alpha features, each on
// v1.7.0's own sample (controller/testdata/kuberay-v1.7.0, unchanged): the
// history server collector (RayClusterHistoryServer) and the embedded
// rocksdb GCS store (GCSFaultToleranceEmbeddedStorage).

// TestIntegrationHistoryCollector applies v1.7.0's history server sample
// with the gate on: the cluster becomes ready, and its head and worker each
// run the collector beside Ray, sharing /tmp/ray, Ray sending its events
// to it; nothing else is made for it.
func TestIntegrationHistoryCollector(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, func(o *Options) { o.FeatureGates = features.MustParse("RayClusterHistoryServer=true") })
	createRC(t, v170Sample(t, "ray-cluster.historyserver.yaml", ns))
	waitReady(t, ns, "raycluster-historyserver", 1)
	heads, workers := clusterPods(t, ns, "raycluster-historyserver")
	if len(heads) != 1 || len(workers) != 1 {
		t.Fatalf("%d heads, %d workers", len(heads), len(workers))
	}
	for _, p := range append(heads, workers...) {
		cs := p.Spec.Containers
		if len(cs) != 2 || cs[1].Name != "ray-history-collector" || cs[1].Image != "quay.io/kuberay/collector:nightly" {
			t.Fatalf("pod %s containers %+v", p.Name, cs)
		}
		c, ray := cs[1], cs[0]
		role := "Worker"
		if p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode) {
			role = "Head"
		}
		for name, want := range map[string]string{"RAY_CLUSTER_NAME": "raycluster-historyserver", "RAY_CLUSTER_NAMESPACE": ns,
			"RAY_ROLE": role, "EVENTS_PORT": "8084", "STORAGE_BACKEND": "GCS", "GCS_BUCKET": "my-gcs-bucket",
			"FQ_RAY_IP": "raycluster-historyserver-head-svc." + ns + ".svc.cluster.local"} {
			if e := fixture.EnvOf(&c, name); e == nil || e.Value != want {
				t.Errorf("pod %s collector %s = %+v, want %q", p.Name, name, e, want)
			}
		}
		if e := fixture.EnvOf(&ray, "RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR"); e == nil || e.Value != "http://localhost:8084/v1/events" {
			t.Errorf("pod %s: Ray's events go to %+v", p.Name, e)
		}
		mounted := func(c corev1.Container) bool {
			for _, m := range c.VolumeMounts {
				if m.Name == "ray-logs" && m.MountPath == "/tmp/ray" {
					return true
				}
			}
			return false
		}
		if !mounted(c) || !mounted(ray) {
			t.Errorf("pod %s: /tmp/ray not shared: ray %+v collector %+v", p.Name, ray.VolumeMounts, c.VolumeMounts)
		}
	}
	// No Secret, ServiceAccount or Role for the collector (KubeRay makes none).
	sas, err := kc.CoreV1().ServiceAccounts(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(sas.Items) != 1 { // the namespace's default
		t.Errorf("ServiceAccounts %v, %v", sas, err)
	}
	secrets, err := kc.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(secrets.Items) != 0 {
		t.Errorf("Secrets %v, %v", secrets, err)
	}
	roles, err := kc.RbacV1().Roles(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(roles.Items) != 0 {
		t.Errorf("Roles %v, %v", roles, err)
	}
}

// TestIntegrationHistoryCollectorGateOff: with the gate off (the default)
// the sample is refused, naming the gate, and nothing is made.
func TestIntegrationHistoryCollectorGateOff(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	refusedWithGateOff(t, ns, "ray-cluster.historyserver.yaml", "spec.historyServerOptions", features.RayClusterHistoryServer, nil)
}

// bindClaim plays the part of the persistent volume controller, which the
// sandbox does not run: a PersistentVolume for the claim, both marked
// Bound, so the scheduler places the pod that mounts it.
func bindClaim(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	pvc, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:            pvc.Spec.AccessModes,
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + ns + "-" + name}},
			ClaimRef:               &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: name, UID: pvc.UID},
		},
	}
	if pv, err = kc.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
	pv.Status.Phase = corev1.VolumeBound
	if _, err := kc.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc.Spec.VolumeName = pv.Name
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
	if pvc, err = kc.CoreV1().PersistentVolumeClaims(ns).Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: pvc.Spec.AccessModes,
		Capacity: corev1.ResourceList{corev1.ResourceStorage: size}}
	if _, err := kc.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationEmbeddedGCS applies v1.7.0's embedded GCS FT sample with
// the gate on: the claim <cluster>-gcs-pvc is made as v1.7.0 makes it,
// before the head pod, which mounts it at /data/gcs with the rocksdb env;
// once the claim is bound the cluster becomes ready; the claim goes with
// the cluster. A Retain cluster's claim stays.
func TestIntegrationEmbeddedGCS(t *testing.T) {
	t.Parallel() // its own namespace and operator; it mostly waits on claims and garbage collection
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, func(o *Options) { o.FeatureGates = features.MustParse("GCSFaultToleranceEmbeddedStorage=true") })
	ctx := context.Background()
	const name, claim = "raycluster-embedded-gcs-ft", "raycluster-embedded-gcs-ft-gcs-pvc"
	createRC(t, v170Sample(t, "ray-cluster.embedded-gcs-ft.yaml", ns))
	var pvc *corev1.PersistentVolumeClaim
	eventually(t, 30*time.Second, "the claim and the head pod", func() (bool, string) {
		var err error
		pvc, err = kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		heads, _ := clusterPods(t, ns, name)
		return err == nil && len(heads) == 1, fmt.Sprintf("claim: %v; %d heads", err, len(heads))
	})
	rc := getRC(t, ns, name)
	tr := true
	wantMeta := metav1.ObjectMeta{Name: claim, Namespace: ns, Labels: map[string]string{"ray.io/cluster": name},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: name, UID: rc.UID, Controller: &tr, BlockOwnerDeletion: &tr}}}
	gotMeta := metav1.ObjectMeta{Name: pvc.Name, Namespace: pvc.Namespace, Labels: pvc.Labels, OwnerReferences: pvc.OwnerReferences}
	if !reflect.DeepEqual(gotMeta, wantMeta) {
		t.Errorf("claim metadata\n got %+v\nwant %+v", gotMeta, wantMeta)
	}
	if !reflect.DeepEqual(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) || pvc.Spec.StorageClassName != nil ||
		pvc.Spec.Resources.Requests.Storage().Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("claim spec %+v", pvc.Spec)
	}
	heads, _ := clusterPods(t, ns, name)
	head := heads[0]
	if pvc.CreationTimestamp.After(head.CreationTimestamp.Time) {
		t.Errorf("claim made at %v, after the head pod (%v)", pvc.CreationTimestamp, head.CreationTimestamp)
	}
	ray := head.Spec.Containers[0]
	if e := fixture.EnvOf(&ray, "RAY_gcs_storage"); e == nil || e.Value != "rocksdb" {
		t.Errorf("RAY_gcs_storage %+v", e)
	}
	if e := fixture.EnvOf(&ray, "RAY_gcs_storage_path"); e == nil || e.Value != "/data/gcs" {
		t.Errorf("RAY_gcs_storage_path %+v", e)
	}
	found := false
	for _, v := range head.Spec.Volumes {
		found = found || (v.Name == "gcs-storage" && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim)
	}
	if !found {
		t.Errorf("head volumes %+v", head.Spec.Volumes)
	}
	waitEvent(t, ns, name, raycluster.EventCreatedPVC, "Created GCS storage PVC "+ns+"/"+claim)

	bindClaim(t, ns, claim)
	waitReady(t, ns, name, 1)

	// A second cluster with deletionPolicy Retain: its claim has no owner.
	keep := v170Sample(t, "ray-cluster.embedded-gcs-ft.yaml", ns)
	keep.Name = "keep"
	keep.Spec.GcsFaultToleranceOptions.Storage.DeletionPolicy = fixture.Ptr(rayv1.RetainGCSStorageDeletionPolicy)
	createRC(t, keep)
	eventually(t, 30*time.Second, "the Retain claim", func() (bool, string) {
		p, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "keep-gcs-pvc", metav1.GetOptions{})
		return err == nil && len(p.OwnerReferences) == 0, fmt.Sprintf("%v %+v", err, p)
	})

	// Both clusters deleted: the garbage collector deletes the owned claim
	// (the sandbox runs no pvc-protection controller to lift the
	// kubernetes.io/pvc-protection finalizer, so it is gone or going); the
	// Retain one stays.
	for _, n := range []string{name, "keep"} {
		if err := cl.Delete(ctx, getRC(t, ns, n)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 60*time.Second, "the owned claim deleted with its cluster", func() (bool, string) {
		p, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return err == nil && p.DeletionTimestamp != nil, fmt.Sprintf("%v %+v", err, p.ObjectMeta)
	})
	consistently(t, 2*time.Second, "the Retain claim kept", func() (bool, string) {
		p, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "keep-gcs-pvc", metav1.GetOptions{})
		return err == nil && p.DeletionTimestamp == nil, fmt.Sprintf("%v", err)
	})
}

// TestIntegrationEmbeddedGCSGateOff: with the gate off the sample is
// refused, naming the gate, and neither a claim nor a pod is made.
func TestIntegrationEmbeddedGCSGateOff(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	refusedWithGateOff(t, ns, "ray-cluster.embedded-gcs-ft.yaml", "spec.gcsFaultToleranceOptions.backend", features.GCSFaultToleranceEmbeddedStorage,
		func() (bool, string) {
			pvcs, err := kc.CoreV1().PersistentVolumeClaims(ns).List(context.Background(), metav1.ListOptions{})
			return err == nil && len(pvcs.Items) == 0, fmt.Sprintf("claims=%v err=%v", pvcs, err)
		})
}

// TestIntegrationEmbeddedGCSUserClaim: with storage.claimName the user's
// claim is used as it is: while it is missing a Warning says the head will
// not start, the pods are made anyway and mount it, and no claim is made;
// once it exists nothing is written to it.
func TestIntegrationEmbeddedGCSUserClaim(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, func(o *Options) { o.FeatureGates = features.MustParse("GCSFaultToleranceEmbeddedStorage=true") })
	ctx := context.Background()
	const name = "raycluster-embedded-gcs-ft"
	rc := v170Sample(t, "ray-cluster.embedded-gcs-ft.yaml", ns)
	rc.Spec.GcsFaultToleranceOptions.Storage = &rayv1.GcsEmbeddedStorage{ClaimName: "mine"}
	createRC(t, rc)
	waitEventOf(t, 30*time.Second, ns, rayv1.KindRayCluster, name, corev1.EventTypeWarning, raycluster.EventFailedToCreatePVC,
		`GcsFaultToleranceOptions.Storage.ClaimName "mine" not found in namespace `+ns+"; the head Pod will not start until it exists")
	eventually(t, 30*time.Second, "the head pod mounting the user's claim", func() (bool, string) {
		heads, _ := clusterPods(t, ns, name)
		if len(heads) != 1 {
			return false, fmt.Sprint(len(heads), " heads")
		}
		for _, v := range heads[0].Spec.Volumes {
			if v.Name == "gcs-storage" && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "mine" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", heads[0].Spec.Volumes)
	})
	mine := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("3Gi")}}}}
	mine, err := kc.CoreV1().PersistentVolumeClaims(ns).Create(ctx, mine, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bindClaim(t, ns, "mine")
	waitReady(t, ns, name, 1)
	pvcs, err := kc.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pvcs.Items) != 1 || len(pvcs.Items[0].OwnerReferences) != 0 || len(pvcs.Items[0].Labels) != 0 {
		t.Fatalf("claims %+v, %v: want only the user's, untouched", pvcs, err)
	}
}
