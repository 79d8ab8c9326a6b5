package certsim

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestIssueChain: the CA and leaf certificates of KubeRay's mTLS specs
// (raycluster_mtls_controller.go:226-249, :301-313) parse, carry the
// Certificate's names, SANs, usages and duration, and the leaf verifies
// against the CA for both server and client auth, as Ray's gRPC mTLS
// needs.
func TestIssueChain(t *testing.T) {
	now := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	ca := &certSpec{CommonName: "ray-ca-c", SecretName: "c-ca-secret-01234567", IsCA: true, Duration: "87600h0m0s",
		Usages: []string{"cert sign", "crl sign"}}
	ca.PrivateKey = &struct {
		Algorithm string `json:"algorithm"`
		Size      int    `json:"size"`
	}{"RSA", 4096}
	caPEM, caKeyPEM, err := issue(ca, nil, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	caCert, caKey, err := ParseKeyPair(caPEM, caKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if !caCert.IsCA || caCert.Subject.CommonName != "ray-ca-c" || caCert.KeyUsage&x509.KeyUsageCertSign == 0 ||
		caCert.NotAfter.Sub(now) != 87600*time.Hour || !bytes.Equal(caCert.RawIssuer, caCert.RawSubject) {
		t.Fatalf("CA: isCA %v CN %q usage %v notAfter %v", caCert.IsCA, caCert.Subject.CommonName, caCert.KeyUsage, caCert.NotAfter)
	}
	if block, _ := pem.Decode(caKeyPEM); block == nil || block.Type != "RSA PRIVATE KEY" {
		t.Fatalf("CA key is not PKCS#1 PEM")
	}

	leaf := &certSpec{SecretName: "ray-head-secret-c", Duration: "2160h0m0s",
		DNSNames:    []string{"c-head-svc.ns.svc.cluster.local", "localhost"},
		IPAddresses: []string{"10.0.0.9", "127.0.0.1"},
		Usages:      []string{"digital signature", "key encipherment", "server auth", "client auth"}}
	leafPEM, leafKeyPEM, err := issue(leaf, caKey, caCert, now)
	if err != nil {
		t.Fatal(err)
	}
	cert, _, err := ParseKeyPair(leafPEM, leafKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, ip := range cert.IPAddresses {
		ips = append(ips, ip.String())
	}
	if cert.IsCA || !slices.Equal(cert.DNSNames, leaf.DNSNames) || !slices.Equal(ips, leaf.IPAddresses) ||
		cert.NotAfter.Sub(now) != 2160*time.Hour || cert.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment {
		t.Fatalf("leaf: isCA %v DNS %v IP %v notAfter %v usage %v", cert.IsCA, cert.DNSNames, ips, cert.NotAfter, cert.KeyUsage)
	}
	roots := x509.NewCertPool()
	roots.AddCert(caCert)
	for _, use := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		for _, name := range []string{"c-head-svc.ns.svc.cluster.local", "10.0.0.9", "127.0.0.1"} {
			if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, CurrentTime: now.Add(time.Hour), KeyUsages: []x509.ExtKeyUsage{use}}); err != nil {
				t.Errorf("leaf does not verify for %s (%v): %v", name, use, err)
			}
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "10.0.0.10", CurrentTime: now.Add(time.Hour)}); err == nil {
		t.Error("leaf verifies for an IP it does not name")
	}

	// matches: the issued Secret is up to date for its spec, not for a
	// spec with another IP.
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{annCertName: "ray-head-cert-c", annIssuerKind: "Issuer"}},
		Data: map[string][]byte{"tls.crt": leafPEM, "tls.key": leafKeyPEM, "ca.crt": caPEM}}
	if !matches(sec, "ray-head-cert-c", leaf) {
		t.Error("the issued Secret does not match its own spec")
	}
	moved := *leaf
	moved.IPAddresses = []string{"10.0.0.10", "127.0.0.1"}
	if matches(sec, "ray-head-cert-c", &moved) {
		t.Error("the Secret matches a spec with another IP: no reissue")
	}
}

// moduleCRDs are ModuleCRDs decoded; the test skips, saying why, where
// the module cannot be had (no network, not in the module cache).
func moduleCRDs(t *testing.T) ([]byte, []*apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	b, err := ModuleCRDs()
	if err != nil {
		t.Skipf("cert-manager's module is not available here (no network and not in the module cache): %v", err)
	}
	crds, err := DecodeCRDs(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, crds
}

// TestCRDs: cert-manager's module gives the Issuer, ClusterIssuer and
// Certificate CRDs of cert-manager.io/v1, with Certificate's status
// subresource (certsim writes Ready there).
func TestCRDs(t *testing.T) {
	_, crds := moduleCRDs(t)
	got := map[string]bool{}
	for _, crd := range crds {
		got[crd.Name] = true
		if crd.Name == "certificates.cert-manager.io" {
			var served bool
			for _, v := range crd.Spec.Versions {
				served = served || (v.Name == "v1" && v.Served && v.Subresources != nil && v.Subresources.Status != nil)
			}
			if !served {
				t.Error("Certificate v1 is not served with a status subresource")
			}
		}
	}
	if len(crds) != 3 {
		t.Errorf("%d CRDs, want 3", len(crds))
	}
	for _, n := range []string{"issuers.cert-manager.io", "clusterissuers.cert-manager.io", "certificates.cert-manager.io"} {
		if !got[n] {
			t.Errorf("CRD %s missing; got %v", n, got)
		}
	}
}

// TestReadCRDs: the sandbox's loader reads the tools directory's file and
// nothing else: a missing file is ErrNoCRDFile naming the path and `make
// tools`, a file of another version is refused, the file as `make tools`
// writes it gives the module's CRDs; CRDs (the tests' loader) falls back
// to the module only for a missing file.
func TestReadCRDs(t *testing.T) {
	b, want := moduleCRDs(t)
	dir := t.TempDir()
	_, err := ReadCRDs(dir)
	if !errors.Is(err, ErrNoCRDFile) || !strings.Contains(err.Error(), filepath.Join(dir, CRDFile)) || !strings.Contains(err.Error(), "make tools") {
		t.Errorf("ReadCRDs of an empty tools dir: %v", err)
	}
	if got, err := CRDs(dir); err != nil || !bytes.Equal(got, b) {
		t.Errorf("CRDs of an empty tools dir: %v; want the module's stream", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "crds"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := bytes.Replace(b, []byte(Version), []byte("v1.18.0"), 1)
	if err := os.WriteFile(filepath.Join(dir, CRDFile), old, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCRDs(dir); err == nil || errors.Is(err, ErrNoCRDFile) || !strings.Contains(err.Error(), "v1.18.0") {
		t.Errorf("ReadCRDs of a v1.18.0 file: %v", err)
	}
	if _, err := CRDs(dir); err == nil {
		t.Error("CRDs fell back to the module for a file of another version")
	}
	if err := os.WriteFile(filepath.Join(dir, CRDFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCRDs(dir)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := DecodeCRDs(got)
	if err != nil || !reflect.DeepEqual(crds, want) {
		t.Errorf("the file's CRDs differ from the module's (%v)", err)
	}
}

// TestToolsDirCRDs: the file `make tools` (hack/build-tools.sh) wrote into
// $RAYDAR_TOOLS_DIR holds exactly the module's three CRDs at Version.
func TestToolsDirCRDs(t *testing.T) {
	dir := os.Getenv("RAYDAR_TOOLS_DIR")
	if dir == "" {
		t.Skip("RAYDAR_TOOLS_DIR is not set: no tools directory to check")
	}
	b, err := ReadCRDs(dir)
	if errors.Is(err, ErrNoCRDFile) {
		t.Skipf("%v: this tools directory was built before `make tools` wrote cert-manager's CRDs", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeCRDs(b)
	if err != nil {
		t.Fatal(err)
	}
	_, want := moduleCRDs(t)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s differs from cert-manager %s's module CRDs", filepath.Join(dir, CRDFile), Version)
	}
}
