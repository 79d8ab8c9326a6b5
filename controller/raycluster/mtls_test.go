package raycluster

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

var mtlsGate = features.MustParse("RayClusterMTLS=true")

// mtlsSample is KubeRay v1.7.0's config/samples/ray-cluster.mtls.yaml
// (v170Sample), with a UID as long as an API server's, whose first 8
// characters name the CA's Secret.
func mtlsSample(t *testing.T) *rayv1.RayCluster {
	rc := v170Sample(t, "ray-cluster.mtls.yaml")
	rc.UID = "0123abcd-5678-90ef-1234-567890abcdef"
	return rc
}

// TestMTLSObjects: the Issuers and Certificates for the sample are those
// v1.7.0's raycluster_mtls_controller.go writes (spelled out here from
// :177-421 and utils/util.go:819-853), and survive the trip through
// unstructured under cert-manager's field names.
func TestMTLSObjects(t *testing.T) {
	rc := mtlsSample(t)
	tr := true
	owner := []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "raycluster-mtls", UID: rc.UID, Controller: &tr, BlockOwnerDeletion: &tr}}
	labels := func(component string) map[string]string {
		return map[string]string{"app.kubernetes.io/name": "kuberay", "app.kubernetes.io/created-by": "kuberay-operator",
			"app.kubernetes.io/component": component, "ray.io/cluster": "raycluster-mtls"}
	}
	labelsAny := func(component string) map[string]any {
		out := map[string]any{}
		for k, v := range labels(component) {
			out[k] = v
		}
		return out
	}
	ss, ca := BuildMTLSIssuers(rc)
	wantSS := map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
		"metadata": map[string]any{"name": "ray-selfsigned-issuer-raycluster-mtls", "namespace": "ns", "labels": labelsAny("selfsigned-issuer")},
		"spec":     map[string]any{"selfSigned": map[string]any{}}}
	wantCA := map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
		"metadata": map[string]any{"name": "ray-ca-issuer-raycluster-mtls", "namespace": "ns", "labels": labelsAny("ca-issuer")},
		"spec":     map[string]any{"ca": map[string]any{"secretName": "raycluster-mtls-ca-secret-0123abcd"}}}
	for _, c := range []struct {
		got  any
		want map[string]any
	}{{ss, wantSS}, {ca, wantCA}} {
		u, err := ToUnstructured(c.got)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(u.GetOwnerReferences(), owner) {
			t.Errorf("%s owner %v", u.GetName(), u.GetOwnerReferences())
		}
		unstructured.RemoveNestedField(u.Object, "metadata", "ownerReferences")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		if !reflect.DeepEqual(u.Object, c.want) {
			t.Errorf("issuer:\n got %v\nwant %v", u.Object, c.want)
		}
	}

	caCert := BuildCACertificate(rc)
	wantCASpec := map[string]any{"secretName": "raycluster-mtls-ca-secret-0123abcd", "isCA": true, "commonName": "ray-ca-raycluster-mtls",
		"privateKey": map[string]any{"algorithm": "RSA", "size": int64(4096)}, "duration": "87600h0m0s", "renewBefore": "720h0m0s",
		"usages":    []any{"cert sign", "crl sign"},
		"issuerRef": map[string]any{"name": "ray-selfsigned-issuer-raycluster-mtls", "kind": "Issuer", "group": "cert-manager.io"}}
	pod := func(ip string, head bool, phase corev1.PodPhase, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: ip, Labels: kit.PodLabels(rc.Name, rayv1.WorkerNode, "small-group", nil)},
			Status: corev1.PodStatus{PodIP: ip, Phase: phase}}
		if head {
			p.Labels = kit.PodLabels(rc.Name, rayv1.HeadNode, "headgroup", nil)
		}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
		}
		return p
	}
	pods := []*corev1.Pod{pod("10.0.0.9", true, corev1.PodRunning, false), pod("10.0.0.2", false, corev1.PodRunning, false),
		pod("10.0.0.1", false, corev1.PodPending, false), pod("10.0.0.7", false, corev1.PodFailed, false),
		pod("10.0.0.8", false, corev1.PodRunning, true), pod("", false, corev1.PodPending, false)}
	head := BuildLeafCertificate(rc, true, livePodIPs(pods, true), cfgWith(mtlsGate))
	worker := BuildLeafCertificate(rc, false, livePodIPs(pods, false), cfgWith(mtlsGate))
	leaf := func(secret string, dns, ips []any) map[string]any {
		return map[string]any{"secretName": secret, "duration": "2160h0m0s", "renewBefore": "360h0m0s", "dnsNames": dns, "ipAddresses": ips,
			"usages":    []any{"digital signature", "key encipherment", "server auth", "client auth"},
			"issuerRef": map[string]any{"name": "ray-ca-issuer-raycluster-mtls", "kind": "Issuer", "group": "cert-manager.io"}}
	}
	for _, c := range []struct {
		cert       *Certificate
		name, comp string
		spec       map[string]any
	}{
		{caCert, "ray-ca-certificate-raycluster-mtls", "ca-certificate", wantCASpec},
		{head, "ray-head-cert-raycluster-mtls", "head-certificate", leaf("ray-head-secret-raycluster-mtls",
			[]any{"localhost", "raycluster-mtls-head-svc.ns.svc.cluster.local"}, []any{"10.0.0.9", "127.0.0.1"})},
		{worker, "ray-worker-cert-raycluster-mtls", "worker-certificate", leaf("ray-worker-secret-raycluster-mtls",
			[]any{"localhost"}, []any{"10.0.0.1", "10.0.0.2", "127.0.0.1"})},
	} {
		u, err := ToUnstructured(c.cert)
		if err != nil {
			t.Fatal(err)
		}
		if u.GetAPIVersion() != "cert-manager.io/v1" || u.GetKind() != "Certificate" || u.GetName() != c.name || u.GetNamespace() != "ns" ||
			!reflect.DeepEqual(u.GetLabels(), labels(c.comp)) || !reflect.DeepEqual(u.GetOwnerReferences(), owner) {
			t.Errorf("%s: meta %v %v %v %v", c.name, u.GetAPIVersion(), u.GetName(), u.GetLabels(), u.GetOwnerReferences())
		}
		if spec := u.Object["spec"]; !reflect.DeepEqual(spec, c.spec) {
			t.Errorf("%s spec:\n got %v\nwant %v", c.name, spec, c.spec)
		}
		back := &Certificate{}
		if err := FromUnstructured(u, back); err != nil || !reflect.DeepEqual(back.Spec, c.cert.Spec) {
			t.Errorf("%s: round trip %v %+v", c.name, err, back.Spec)
		}
	}
}

// TestMTLSPods: the sample's head and worker pods carry configureTLS's
// volume, env, mounts and init container, in KubeRay's order; the gate
// off (or enabled false) changes nothing.
func TestMTLSPods(t *testing.T) {
	rc := mtlsSample(t)
	head := BuildPod(rc, PodBuild{Name: "h", Head: true}, "x", cfgWith(mtlsGate))
	worker := BuildPod(rc, PodBuild{Name: "w", Group: &rc.Spec.WorkerGroupSpecs[0]}, "x", cfgWith(mtlsGate))

	mount := corev1.VolumeMount{Name: "ray-tls", MountPath: "/etc/ray/tls", ReadOnly: true}
	env := []corev1.EnvVar{{Name: "RAY_USE_TLS", Value: "1"}, {Name: "RAY_TLS_SERVER_CERT", Value: "/etc/ray/tls/tls.crt"},
		{Name: "RAY_TLS_SERVER_KEY", Value: "/etc/ray/tls/tls.key"}, {Name: "RAY_TLS_CA_CERT", Value: "/etc/ray/tls/ca.crt"}}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	wait := func(pod *corev1.Pod) corev1.Container {
		return corev1.Container{Name: "wait-for-tls-ip-san", Image: "rayproject/ray:2.55.1", Command: []string{"sh", "-c"},
			Args: []string{strings.Replace(waitTLSScript, "%s", "/etc/ray/tls/tls.crt", 1)},
			Env: []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
				{Name: "FQ_RAY_IP", Value: "raycluster-mtls-head-svc.ns.svc.cluster.local"}, {Name: "RAY_IP", Value: "raycluster-mtls-head-svc"}},
			VolumeMounts: []corev1.VolumeMount{mount},
			Resources:    corev1.ResourceRequirements{Limits: res, Requests: res}}
	}
	for _, c := range []struct {
		name   string
		pod    *corev1.Pod
		secret string
		inits  []string
	}{
		{"head", head, "ray-head-secret-raycluster-mtls", []string{"wait-for-tls-ip-san"}},
		{"worker", worker, "ray-worker-secret-raycluster-mtls", []string{"wait-for-tls-ip-san", "wait-gcs-ready"}},
	} {
		spec := c.pod.Spec
		var vols []string
		for _, v := range spec.Volumes {
			vols = append(vols, v.Name)
		}
		// ray-tls after the template's volumes, before BuildPod's shared memory.
		if !reflect.DeepEqual(vols, []string{"ray-tls", kit.SharedMemVolume}) || spec.Volumes[0].Secret == nil || spec.Volumes[0].Secret.SecretName != c.secret {
			t.Errorf("%s volumes %v %+v", c.name, vols, spec.Volumes[0])
		}
		var inits []string
		for _, ic := range spec.InitContainers {
			inits = append(inits, ic.Name)
		}
		if !reflect.DeepEqual(inits, c.inits) {
			t.Fatalf("%s init containers %v, want %v", c.name, inits, c.inits)
		}
		if got, want := spec.InitContainers[0], wait(c.pod); !reflect.DeepEqual(got, want) {
			t.Errorf("%s wait-for-tls-ip-san:\n got %+v\nwant %+v", c.name, got, want)
		}
		ray := spec.Containers[0]
		at := slices.IndexFunc(ray.Env, func(e corev1.EnvVar) bool { return e.Name == "RAY_USE_TLS" })
		if at < 0 || !reflect.DeepEqual(ray.Env[at:at+4], env) {
			t.Errorf("%s Ray container env %v", c.name, ray.Env)
		}
		if !hasMount(ray.VolumeMounts, mount) {
			t.Errorf("%s Ray container mounts %v", c.name, ray.VolumeMounts)
		}
	}
	gcs := worker.Spec.InitContainers[1]
	if at := slices.IndexFunc(gcs.Env, func(e corev1.EnvVar) bool { return e.Name == "RAY_USE_TLS" }); at < 0 ||
		!reflect.DeepEqual(gcs.Env[at:at+4], env) || !hasMount(gcs.VolumeMounts, mount) {
		t.Errorf("wait-gcs-ready env %v mounts %v", gcs.Env, gcs.VolumeMounts)
	}

	t.Run("autoscaler sidecar, before autoscalerOptions' own", func(t *testing.T) {
		rc := mtlsSample(t)
		rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
		rc.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{Env: []corev1.EnvVar{{Name: "MINE", Value: "1"}},
			VolumeMounts: []corev1.VolumeMount{{Name: "mine", MountPath: "/mine"}}}
		pod := BuildPod(rc, PodBuild{Name: "h", Head: true}, "x", cfgWith(mtlsGate))
		i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == rayv1.AutoscalerContainerName })
		as := pod.Spec.Containers[i]
		n := len(as.Env)
		if !reflect.DeepEqual(as.Env[n-5:n-1], env) || as.Env[n-1].Name != "MINE" {
			t.Errorf("autoscaler env %v", as.Env)
		}
		var mounts []string
		for _, m := range as.VolumeMounts {
			mounts = append(mounts, m.Name)
		}
		if !reflect.DeepEqual(mounts, []string{"ray-tls", "mine", kit.RayLogsVolume}) {
			t.Errorf("autoscaler mounts %v", mounts)
		}
	})
	t.Run("gate off or enabled false: no TLS", func(t *testing.T) {
		off := BuildPod(rc, PodBuild{Name: "h", Head: true}, "x", DefaultBuildConfig())
		rc2 := mtlsSample(t)
		rc2.Spec.TLSOptions.Enabled = fixture.Ptr(false)
		disabled := BuildPod(rc2, PodBuild{Name: "h", Head: true}, "x", cfgWith(mtlsGate))
		for _, p := range []*corev1.Pod{off, disabled} {
			if len(p.Spec.InitContainers) != 0 || envExists(p.Spec.Containers[0].Env, "RAY_USE_TLS") || len(p.Spec.Volumes) != 1 {
				t.Errorf("TLS without mTLS on: %v %v", p.Spec.InitContainers, p.Spec.Volumes)
			}
		}
	})
}

func hasMount(ms []corev1.VolumeMount, m corev1.VolumeMount) bool {
	return slices.ContainsFunc(ms, func(x corev1.VolumeMount) bool { return reflect.DeepEqual(x, m) })
}

// TestMTLSRefusalAndValidation: with the gate off any tlsOptions is
// refused naming the gate; with it on the sample passes and KubeRay's
// forbidden env and mounts are refused where they are.
func TestMTLSRefusalAndValidation(t *testing.T) {
	rc := mtlsSample(t)
	errs := UnsupportedRayCluster(rc)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "spec.tlsOptions: Forbidden: requires the RayClusterMTLS feature gate") ||
		!strings.Contains(errs[0].Error(), "--feature-gates RayClusterMTLS=true") {
		t.Fatalf("gate off: %v", errs)
	}
	if errs := UnsupportedRayClusterWith(rc, BuildConfig{Features: mtlsGate}); len(errs) != 0 {
		t.Fatalf("gate on, the sample refused: %v", errs)
	}
	cases := []struct {
		name string
		mod  func(*rayv1.RayCluster)
		want string
	}{
		{"head env", func(rc *rayv1.RayCluster) {
			rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "RAY_USE_TLS", Value: "0"}}
		}, "spec.headGroupSpec.template.spec.containers[0].env[0]: Forbidden: cannot set RAY_USE_TLS environment variable in head Pod when tlsOptions is set"},
		{"worker mount path", func(rc *rayv1.RayCluster) {
			rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "x", MountPath: "/etc/ray/tls"}}
		}, `spec.workerGroupSpecs[0].template.spec.containers[0].volumeMounts[0]: Forbidden: cannot use volume mount at path "/etc/ray/tls" in worker group "small-group"`},
		{"head mount name", func(rc *rayv1.RayCluster) {
			rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "ray-tls", MountPath: "/x"}}
		}, `cannot use volume mount named "ray-tls" in head Pod`},
		{"autoscaler env", func(rc *rayv1.RayCluster) {
			rc.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{Env: []corev1.EnvVar{{Name: "RAY_TLS_CA_CERT", Value: "/x"}}}
		}, "spec.autoscalerOptions.env[0]: Forbidden: cannot set RAY_TLS_CA_CERT environment variable in autoscalerOptions.env when tlsOptions is set"},
		{"autoscaler mount", func(rc *rayv1.RayCluster) {
			rc.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{VolumeMounts: []corev1.VolumeMount{{Name: "ray-tls", MountPath: "/y"}}}
		}, `spec.autoscalerOptions.volumeMounts[0]: Forbidden: cannot use volume mount named "ray-tls" in autoscalerOptions.volumeMounts`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := mtlsSample(t)
			c.mod(rc)
			errs := UnsupportedRayClusterWith(rc, BuildConfig{Features: mtlsGate})
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) {
				t.Fatalf("errors %v, want %q", errs, c.want)
			}
			rc.Spec.TLSOptions.Enabled = fixture.Ptr(false)
			if errs := UnsupportedRayClusterWith(rc, BuildConfig{Features: mtlsGate}); len(errs) != 0 {
				t.Fatalf("enabled false: %v", errs)
			}
		})
	}
}

// mtlsMapper serves cert-manager's kinds when withCertManager, besides
// the scheme's.
func mtlsMapper(withCertManager bool) meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for gvk := range scheme.New().AllKnownTypes() {
		m.Add(gvk, meta.RESTScopeNamespace)
	}
	if withCertManager {
		m.Add(IssuerGVK, meta.RESTScopeNamespace)
		m.Add(CertificateGVK, meta.RESTScopeNamespace)
	}
	return m
}

func mtlsReconciler(t *testing.T, withCertManager bool, objs ...client.Object) (*Reconciler, client.Client, *events.FakeRecorder) {
	return mtlsReconcilerWith(t, withCertManager, interceptor.Funcs{}, objs...)
}

func mtlsReconcilerWith(t *testing.T, withCertManager bool, funcs interceptor.Funcs, objs ...client.Object) (*Reconciler, client.Client, *events.FakeRecorder) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithRESTMapper(mtlsMapper(withCertManager)).
		WithStatusSubresource(&rayv1.RayCluster{}).
		WithIndex(&corev1.Pod{}, ownerUIDField, podOwnerUID).
		WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
	rec := events.NewFakeRecorder(100)
	r := newReconciler(c, c, rec, kit.Shared{Gate: kit.NewGate(c, true), ClusterDomain: "cluster.local", InjectProbes: true, Features: mtlsGate}, -1)
	return r, c, rec
}

func getCert(t *testing.T, c client.Client, name string) *Certificate {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(CertificateGVK)
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: name}, u); err != nil {
		t.Fatalf("certificate %s: %v", name, err)
	}
	out := &Certificate{}
	if err := FromUnstructured(u, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// issue plays cert-manager for a leaf certificate: Ready at its
// generation and a Secret with the three keys.
func issue(t *testing.T, c client.Client, name string) {
	t.Helper()
	cert := getCert(t, c, name)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(CertificateGVK)
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: name}, u); err != nil {
		t.Fatal(err)
	}
	if u.GetUID() == "" {
		// The fake API server gives created objects no UID; the owner
		// reference needs one.
		u.SetUID(types.UID("uid-" + name))
	}
	if err := unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": "True", "observedGeneration": u.GetGeneration()}},
		"status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if err := c.Update(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: cert.Spec.SecretName, Namespace: "ns"},
		Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k"), "ca.crt": []byte("a")}}
	if err := c.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// TestReconcileMTLS runs passes against a fake API server: the PKI first,
// no pods until both leaf certificates are issued, the Secrets owned by
// their Certificates, the head's IP added to its certificate; and without
// cert-manager a refusal.
func TestReconcileMTLS(t *testing.T) {
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "raycluster-mtls"}}
	t.Run("PKI, then pods", func(t *testing.T) {
		rc := mtlsSample(t)
		r, c, rec := mtlsReconciler(t, true, rc)
		start := time.Now()
		r.now = func() time.Time { return start }
		res, err := r.Reconcile(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter != time.Second {
			t.Errorf("requeue %v while certificates are pending", res.RequeueAfter)
		}
		for _, n := range []string{"ray-ca-certificate-raycluster-mtls", "ray-head-cert-raycluster-mtls", "ray-worker-cert-raycluster-mtls"} {
			getCert(t, c, n)
		}
		pods := &corev1.PodList{}
		if err := c.List(context.Background(), pods); err != nil || len(pods.Items) != 0 {
			t.Fatalf("%d pods before the certificates are issued", len(pods.Items))
		}
		if evs := drainEvents(rec.Events); !strings.Contains(evs, "Normal MTLSCertsNotReady Waiting for cert-manager to issue mTLS certificates") {
			t.Fatalf("events:\n%s", evs)
		}
		// Nothing changes for 100 s: the pass comes back less often, up
		// to KubeRay's 30 s.
		r.now = func() time.Time { return start.Add(100 * time.Second) }
		if res, err := r.Reconcile(context.Background(), req); err != nil || res.RequeueAfter != 20*time.Second {
			t.Fatalf("requeue %v after 100 s pending, %v", res.RequeueAfter, err)
		}
		r.now = func() time.Time { return start.Add(time.Hour) }
		if res, err := r.Reconcile(context.Background(), req); err != nil || res.RequeueAfter != 30*time.Second {
			t.Fatalf("requeue %v after an hour pending, %v", res.RequeueAfter, err)
		}
		r.now = time.Now
		issue(t, c, "ray-head-cert-raycluster-mtls")
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if err := c.List(context.Background(), pods); err != nil || len(pods.Items) != 0 {
			t.Fatalf("%d pods with the worker certificate pending", len(pods.Items))
		}
		issue(t, c, "ray-worker-cert-raycluster-mtls")
		res, err = r.Reconcile(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.List(context.Background(), pods); err != nil || len(pods.Items) != 2 {
			t.Fatalf("%d pods once issued; want the head and the worker", len(pods.Items))
		}
		if res.RequeueAfter != time.Minute {
			t.Errorf("requeue %v once ready", res.RequeueAfter)
		}
		if evs := drainEvents(rec.Events); !strings.Contains(evs, "Normal MTLSPKIReady mTLS PKI is ready: CA, head, and worker certificates issued") {
			t.Fatalf("events:\n%s", evs)
		}
		s := &corev1.Secret{}
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "ray-head-secret-raycluster-mtls"}, s); err != nil {
			t.Fatal(err)
		}
		cert := getCert(t, c, "ray-head-cert-raycluster-mtls")
		if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Kind != "Certificate" || s.OwnerReferences[0].UID != cert.UID ||
			s.OwnerReferences[0].Controller != nil {
			t.Errorf("head Secret owners %+v", s.OwnerReferences)
		}

		// The head pod gets an IP: its certificate names it, and the
		// workers wait for the reissue.
		i := slices.IndexFunc(pods.Items, func(p corev1.Pod) bool { return kit.IsHeadPod(&p) })
		head := pods.Items[i]
		head.Status.PodIP, head.Status.Phase = "10.1.2.3", corev1.PodRunning
		if err := c.Status().Update(context.Background(), &head); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if got := getCert(t, c, "ray-head-cert-raycluster-mtls").Spec.IPAddresses; !reflect.DeepEqual(got, []string{"10.1.2.3", "127.0.0.1"}) {
			t.Errorf("head certificate IPs %v", got)
		}
		if evs := drainEvents(rec.Events); !strings.Contains(evs, "Normal MTLSCertificatesUpdated Updated head certificate SANs (IPs: [10.1.2.3 127.0.0.1])") {
			t.Fatalf("events:\n%s", evs)
		}
	})
	t.Run("a certificate changed meanwhile: retried without a Warning", func(t *testing.T) {
		rc := mtlsSample(t)
		conflicts, armed := 0, false
		r, c, rec := mtlsReconcilerWith(t, true, interceptor.Funcs{Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if u, ok := obj.(*unstructured.Unstructured); ok && u.GetKind() == KindCertificate && armed && conflicts == 0 {
				conflicts++
				return apierrors.NewConflict(schema.GroupResource{Group: CertManagerGroup, Resource: "certificates"}, u.GetName(), errors.New("modified"))
			}
			return cl.Update(ctx, obj, opts...)
		}}, rc)
		for range 2 {
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
		}
		issue(t, c, "ray-head-cert-raycluster-mtls")
		issue(t, c, "ray-worker-cert-raycluster-mtls")
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		pods := &corev1.PodList{}
		if err := c.List(context.Background(), pods); err != nil || len(pods.Items) != 2 {
			t.Fatalf("%d pods", len(pods.Items))
		}
		i := slices.IndexFunc(pods.Items, func(p corev1.Pod) bool { return kit.IsHeadPod(&p) })
		head := pods.Items[i]
		head.Status.PodIP = "10.1.2.3"
		if err := c.Status().Update(context.Background(), &head); err != nil {
			t.Fatal(err)
		}
		armed = true
		res, err := r.Reconcile(context.Background(), req)
		if err != nil || conflicts != 1 || res.RequeueAfter != time.Second {
			t.Fatalf("conflicts %d, result %+v, %v", conflicts, res, err)
		}
		if evs := drainEvents(rec.Events); strings.Contains(evs, "Warning") {
			t.Fatalf("a conflict gave a Warning:\n%s", evs)
		}
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if got := getCert(t, c, "ray-head-cert-raycluster-mtls").Spec.IPAddresses; !reflect.DeepEqual(got, []string{"10.1.2.3", "127.0.0.1"}) {
			t.Errorf("head certificate IPs %v after the retry", got)
		}
	})
	t.Run("no cert-manager: refused by name", func(t *testing.T) {
		rc := mtlsSample(t)
		r, c, rec := mtlsReconciler(t, false, rc)
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		pods := &corev1.PodList{}
		if err := c.List(context.Background(), pods); err != nil || len(pods.Items) != 0 {
			t.Fatalf("%d pods", len(pods.Items))
		}
		evs := drainEvents(rec.Events)
		if !strings.Contains(evs, "Warning "+ReasonInvalidSpec) || !strings.Contains(evs, "tlsOptions requires cert-manager, but cert-manager is not installed") {
			t.Fatalf("events:\n%s", evs)
		}
		got := &rayv1.RayCluster{}
		if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, string(rayv1.RayClusterReplicaFailure))
		if cond == nil || cond.Reason != ReasonValidationFailed || !strings.Contains(cond.Message, "cert-manager is not installed") {
			t.Fatalf("condition %+v", cond)
		}
	})
}
