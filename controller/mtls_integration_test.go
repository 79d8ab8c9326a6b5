package controller

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/kube/sandbox/certsim"
)

var (
	certManagerOnce sync.Once
	certManagerErr  error
)

// installCertManager installs cert-manager v1.19.4's Issuer,
// ClusterIssuer and Certificate CRDs (the tools dir's, from `make tools`;
// else its Go module's) into the shared sandbox, once.
func installCertManager(t *testing.T) {
	t.Helper()
	certManagerOnce.Do(func() {
		crds, err := certsim.CRDObjects(sb.ToolsDir)
		if err != nil {
			certManagerErr = err
			return
		}
		certManagerErr = sb.InstallCRDs(context.Background(), crds...)
	})
	if certManagerErr != nil {
		t.Fatalf("installing cert-manager's CRDs: %v", certManagerErr)
	}
}

var (
	issuersGVR = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "issuers"}
	certsGVR   = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}
)

// cmObjects lists ns's cert-manager objects of a resource labelled with
// the sample cluster, by name.
func cmObjects(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string) map[string]*unstructured.Unstructured {
	t.Helper()
	list, err := dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "ray.io/cluster=raycluster-mtls"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		out[list.Items[i].GetName()] = &list.Items[i]
	}
	return out
}

func leafOf(t *testing.T, s *corev1.Secret) (*x509.Certificate, *x509.CertPool) {
	t.Helper()
	block, _ := pem.Decode(s.Data["tls.crt"])
	if block == nil {
		t.Fatalf("Secret %s: tls.crt is not PEM", s.Name)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(s.Data["ca.crt"]) {
		t.Fatalf("Secret %s: ca.crt holds no certificate", s.Name)
	}
	return c, roots
}

// TestIntegrationMTLS applies KubeRay v1.7.0's mTLS sample with the
// RayClusterMTLS gate on and certsim playing cert-manager: the cluster
// gets v1.7.0's Issuers and Certificates, the Secrets appear with
// certificates naming the pods' IPs and verifying against the cluster's
// CA, the pods start with the TLS volume, env and init container, and
// deleting the cluster removes the Issuers, Certificates and Secrets.
func TestIntegrationMTLS(t *testing.T) {
	t.Parallel() // its own namespace, operator and certsim; it mostly waits on issuance and garbage collection
	needSandbox(t)
	installCertManager(t)
	ns := newNamespace(t)
	sim, err := certsim.Start(context.Background(), certsim.Options{Config: sb.Config, Namespace: ns, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	dyn := dynamic.NewForConfigOrDie(sb.Config)
	startOperator(t, ns, func(o *Options) { o.FeatureGates = features.MustParse("RayClusterMTLS=true") })
	createRC(t, v170Sample(t, "ray-cluster.mtls.yaml", ns))
	rc := waitReady(t, ns, "raycluster-mtls", 1)

	// The objects, as v1.7.0's raycluster_mtls_controller.go writes them.
	uid8 := string(rc.UID)[:8]
	tr := true
	owner := []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "raycluster-mtls", UID: rc.UID, Controller: &tr, BlockOwnerDeletion: &tr}}
	issuers := cmObjects(t, dyn, issuersGVR, ns)
	wantIssuers := map[string]map[string]any{
		"ray-selfsigned-issuer-raycluster-mtls": {"selfSigned": map[string]any{}},
		"ray-ca-issuer-raycluster-mtls":         {"ca": map[string]any{"secretName": "raycluster-mtls-ca-secret-" + uid8}},
	}
	if len(issuers) != 2 {
		t.Fatalf("Issuers %v", slices.Collect(maps.Keys(issuers)))
	}
	for name, spec := range wantIssuers {
		is := issuers[name]
		if is == nil || !reflect.DeepEqual(is.Object["spec"], spec) || !reflect.DeepEqual(is.GetOwnerReferences(), owner) {
			t.Errorf("Issuer %s: %v", name, is)
		}
	}
	heads, workers := clusterPods(t, ns, "raycluster-mtls")
	if len(heads) != 1 || len(workers) != 1 || heads[0].Status.PodIP == "" || workers[0].Status.PodIP == "" {
		t.Fatalf("pods: %d heads, %d workers, without IPs?", len(heads), len(workers))
	}
	headIP, workerIP := heads[0].Status.PodIP, workers[0].Status.PodIP
	fqdn := "raycluster-mtls-head-svc." + ns + ".svc.cluster.local"
	// The pods' IPs reach their certificates and the reissued Secrets.
	secrets := map[string]*corev1.Secret{}
	eventually(t, 60*time.Second, "the certificates and Secrets naming the pods' IPs", func() (bool, string) {
		certs := cmObjects(t, dyn, certsGVR, ns)
		for _, c := range []struct{ cert, secret, ip string }{
			{"ray-head-cert-raycluster-mtls", "ray-head-secret-raycluster-mtls", headIP},
			{"ray-worker-cert-raycluster-mtls", "ray-worker-secret-raycluster-mtls", workerIP},
		} {
			ips, _, _ := unstructured.NestedStringSlice(certs[c.cert].Object, "spec", "ipAddresses")
			if !reflect.DeepEqual(ips, []string{c.ip, "127.0.0.1"}) && !reflect.DeepEqual(ips, []string{"127.0.0.1", c.ip}) {
				return false, fmt.Sprintf("%s ipAddresses %v", c.cert, ips)
			}
			s, err := kc.CoreV1().Secrets(ns).Get(context.Background(), c.secret, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			leaf, _ := leafOf(t, s)
			if !slices.ContainsFunc(leaf.IPAddresses, func(ip net.IP) bool { return ip.String() == c.ip }) {
				return false, fmt.Sprintf("%s's certificate names %v", c.secret, leaf.IPAddresses)
			}
			secrets[c.secret] = s
		}
		return true, ""
	})
	certs := cmObjects(t, dyn, certsGVR, ns)
	if len(certs) != 3 {
		t.Fatalf("%d Certificates", len(certs))
	}
	ca := certs["ray-ca-certificate-raycluster-mtls"]
	caSpec := map[string]any{"secretName": "raycluster-mtls-ca-secret-" + uid8, "isCA": true, "commonName": "ray-ca-raycluster-mtls",
		"privateKey": map[string]any{"algorithm": "RSA", "size": int64(4096)}, "duration": "87600h0m0s", "renewBefore": "720h0m0s",
		"usages":    []any{"cert sign", "crl sign"},
		"issuerRef": map[string]any{"name": "ray-selfsigned-issuer-raycluster-mtls", "kind": "Issuer", "group": "cert-manager.io"}}
	if ca == nil || !reflect.DeepEqual(ca.Object["spec"], caSpec) || !reflect.DeepEqual(ca.GetOwnerReferences(), owner) ||
		ca.GetLabels()["app.kubernetes.io/component"] != "ca-certificate" {
		t.Errorf("CA Certificate %v", ca)
	}
	for name, dns := range map[string][]string{"ray-head-cert-raycluster-mtls": {"localhost", fqdn}, "ray-worker-cert-raycluster-mtls": {"localhost"}} {
		c := certs[name]
		got, _, _ := unstructured.NestedStringSlice(c.Object, "spec", "dnsNames")
		slices.Sort(dns)
		issuer, _, _ := unstructured.NestedString(c.Object, "spec", "issuerRef", "name")
		dur, _, _ := unstructured.NestedString(c.Object, "spec", "duration")
		if !reflect.DeepEqual(got, dns) || issuer != "ray-ca-issuer-raycluster-mtls" || dur != "2160h0m0s" || !reflect.DeepEqual(c.GetOwnerReferences(), owner) {
			t.Errorf("Certificate %s: dns %v issuer %s duration %s owners %v", name, got, issuer, dur, c.GetOwnerReferences())
		}
	}
	// The Secrets: owned by their Certificates, the leaves chain to the
	// cluster's CA and serve the names Ray dials.
	caSecret, err := kc.CoreV1().Secrets(ns).Get(context.Background(), "raycluster-mtls-ca-secret-"+uid8, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secrets[caSecret.Name] = caSecret
	for name, s := range secrets {
		eventually(t, 30*time.Second, "Secret "+name+" owned by its Certificate", func() (bool, string) {
			cur, err := kc.CoreV1().Secrets(ns).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, ref := range cur.OwnerReferences {
				if ref.Kind == "Certificate" && ref.APIVersion == "cert-manager.io/v1" {
					return true, ""
				}
			}
			return false, fmt.Sprint(cur.OwnerReferences)
		})
		if name == caSecret.Name {
			continue
		}
		leaf, roots := leafOf(t, s)
		if !strings.Contains(string(s.Data["ca.crt"]), strings.TrimSpace(string(caSecret.Data["tls.crt"]))) {
			t.Errorf("%s: ca.crt is not the cluster's CA", name)
		}
		dial := "localhost"
		if strings.HasPrefix(name, "ray-head") {
			dial = fqdn
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: dial, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s does not verify for %s: %v", name, dial, err)
		}
	}

	// The pods.
	for _, c := range []struct {
		pod    corev1.Pod
		secret string
		inits  []string
	}{
		{heads[0], "ray-head-secret-raycluster-mtls", []string{raycluster.WaitTLSContainerName}},
		{workers[0], "ray-worker-secret-raycluster-mtls", []string{raycluster.WaitTLSContainerName, "wait-gcs-ready"}},
	} {
		spec := c.pod.Spec
		var inits []string
		for _, ic := range spec.InitContainers {
			inits = append(inits, ic.Name)
		}
		vol := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == "ray-tls" })
		ray := spec.Containers[0]
		env := map[string]string{}
		for _, e := range ray.Env {
			env[e.Name] = e.Value
		}
		mounted := slices.ContainsFunc(ray.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "ray-tls" && m.MountPath == "/etc/ray/tls" && m.ReadOnly
		})
		if !reflect.DeepEqual(inits, c.inits) || vol < 0 || spec.Volumes[vol].Secret == nil || spec.Volumes[vol].Secret.SecretName != c.secret ||
			env["RAY_USE_TLS"] != "1" || env["RAY_TLS_SERVER_CERT"] != "/etc/ray/tls/tls.crt" || env["RAY_TLS_SERVER_KEY"] != "/etc/ray/tls/tls.key" ||
			env["RAY_TLS_CA_CERT"] != "/etc/ray/tls/ca.crt" || !mounted || c.pod.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s: phase %s inits %v volumes %v env %v mounts %v", c.pod.Name, c.pod.Status.Phase, inits, spec.Volumes, env, ray.VolumeMounts)
		}
	}
	waitEvent(t, ns, "raycluster-mtls", raycluster.EventMTLSPKIReady, "mTLS PKI is ready")

	// Deleting the cluster takes what it owns.
	if err := cl.Delete(context.Background(), rc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "the Issuers, Certificates and Secrets garbage-collected", func() (bool, string) {
		is, cs := cmObjects(t, dyn, issuersGVR, ns), cmObjects(t, dyn, certsGVR, ns)
		var left []string
		for name := range secrets {
			if _, err := kc.CoreV1().Secrets(ns).Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, name)
			}
		}
		return len(is)+len(cs)+len(left) == 0, fmt.Sprintf("issuers %d certificates %d secrets %v", len(is), len(cs), left)
	})
}

// TestIntegrationMTLSRefusedWithoutTheGate: with the gate off the sample
// is refused naming the gate, and nothing is made, neither pods nor, with
// cert-manager's kinds served, Issuers or Certificates.
func TestIntegrationMTLSRefusedWithoutTheGate(t *testing.T) {
	needSandbox(t)
	installCertManager(t)
	ns := newNamespace(t)
	dyn := dynamic.NewForConfigOrDie(sb.Config)
	startOperator(t, ns, nil)
	refusedWithGateOff(t, ns, "ray-cluster.mtls.yaml", "spec.tlsOptions", features.RayClusterMTLS, func() (bool, string) {
		is, cs := cmObjects(t, dyn, issuersGVR, ns), cmObjects(t, dyn, certsGVR, ns)
		return len(is)+len(cs) == 0, fmt.Sprintf("issuers %d certificates %d", len(is), len(cs))
	})
}
