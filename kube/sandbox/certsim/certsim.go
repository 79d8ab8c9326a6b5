// Package certsim plays cert-manager's part in the sandbox: for each
// cert-manager.io/v1 Certificate it writes the Secret the Certificate asks
// for (tls.crt, tls.key, ca.crt: real x509 from crypto/x509, with the
// Certificate's common name, DNS and IP SANs, usages and duration, signed
// by the CA its Issuer or ClusterIssuer describes: selfSigned, or ca with
// the key pair of a Secret) and sets the Certificate's Ready condition at
// its generation, so pods that mount the Secret can start. It also reads
// the CRDs of cert-manager's Issuer, ClusterIssuer and Certificate, which
// `make tools` writes from cert-manager's Go module into the sandbox's
// tools directory (ReadCRDs; CRDs for tests). `raydar sandbox` and
// `raydar demo` install them and start a Sim.
//
// Like cert-manager (its default, --enable-certificate-owner-ref=false) it
// writes Secrets without owner references, and keeps those others add. It
// watches Certificates and Secrets, and reissues when the Secret is
// missing (deleted too), lacks a key, or its certificate no longer matches
// the spec (common name, SANs, isCA, issuer), and then bumps
// status.revision; it does not renew on a timer, implement ACME,
// Vault or the other issuers, nor write CertificateRequests. A Certificate
// it cannot issue yet (its Issuer, or a CA Secret, is missing) is retried
// with back-off, and says why in a Ready False condition.
//
// Start it beside the sandbox the way headsim is started (a caller's
// rest.Config and namespace); Close stops it.
package certsim

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/simkit"
)

// Module and Version are the cert-manager Go module whose CRDs the
// sandbox installs: the version KubeRay v1.7.0 builds against.
const (
	Module  = "github.com/cert-manager/cert-manager"
	Version = "v1.19.4"
)

// crdFiles are the CRDs of the kinds KubeRay's mTLS uses (Issuer,
// Certificate) and ClusterIssuer, which an issuerRef may name, in
// deploy/crds of the module.
var crdFiles = []string{"cert-manager.io_issuers.yaml", "cert-manager.io_clusterissuers.yaml", "cert-manager.io_certificates.yaml"}

// CRDFile is where `make tools` (hack/build-tools.sh) writes those CRDs,
// relative to the sandbox's tools directory: one YAML stream whose first
// line names the module and version ("# cert-manager v1.19.4 ...").
var CRDFile = filepath.Join("crds", "cert-manager.yaml")

// ErrNoCRDFile is wrapped by ReadCRDs when the tools directory has no
// CRDFile (a tools directory built before `make tools` wrote it).
var ErrNoCRDFile = errors.New("no cert-manager CRD file")

// ReadCRDs reads cert-manager's Issuer, ClusterIssuer and Certificate CRDs
// from toolsDir/CRDFile, where `make tools` puts them; it refuses a file
// of another version than Version. It needs no go tool: `raydar sandbox`
// and `raydar demo` load the CRDs with it.
func ReadCRDs(toolsDir string) ([]byte, error) {
	p := filepath.Join(toolsDir, CRDFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("certsim: %w: %s is missing (`make tools` writes it)", ErrNoCRDFile, p)
	}
	if err != nil {
		return nil, fmt.Errorf("certsim: %w", err)
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	if want := "# cert-manager " + Version + " "; !strings.HasPrefix(string(first), want) {
		return nil, fmt.Errorf("certsim: %s is not cert-manager %s's CRDs (its first line is %q; `make tools` rewrites it)", p, Version, first)
	}
	return b, nil
}

// ModuleCRDs is the same YAML stream read from deploy/crds of the module
// Module@Version, which `go mod download` fetches into the module cache
// (once; offline afterwards, a tenth of a second a call). It runs the go
// tool, so only tests use it: CRDs falls back to it for a tools directory
// built before `make tools` wrote CRDFile.
func ModuleCRDs() ([]byte, error) {
	cmd := exec.Command("go", "mod", "download", "-json", Module+"@"+Version)
	cmd.Dir = os.TempDir() // outside any module: nothing is added to a go.mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("certsim: go mod download %s@%s: %v: %s", Module, Version, err, strings.TrimSpace(stderr.String()))
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, fmt.Errorf("certsim: go mod download %s@%s: %w", Module, Version, err)
	}
	if info.Error != "" || info.Dir == "" {
		return nil, fmt.Errorf("certsim: go mod download %s@%s: %s", Module, Version, info.Error)
	}
	b := bytes.NewBufferString("# cert-manager " + Version + " (from " + Module + "@" + Version + " deploy/crds, by certsim.ModuleCRDs)\n")
	for _, f := range crdFiles {
		data, err := os.ReadFile(filepath.Join(info.Dir, "deploy", "crds", f))
		if err != nil {
			return nil, fmt.Errorf("certsim: %w", err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.Bytes(), nil
}

// CRDs is what tests install: ReadCRDs(toolsDir), or, when the tools
// directory has no CRDFile yet, ModuleCRDs (the go tool is there when tests
// run; `make test` runs `make tools` first, so there it is the file).
func CRDs(toolsDir string) ([]byte, error) {
	b, err := ReadCRDs(toolsDir)
	if errors.Is(err, ErrNoCRDFile) {
		return ModuleCRDs()
	}
	return b, err
}

// CRDObjects are CRDs(toolsDir) decoded, for Sandbox.InstallCRDs.
func CRDObjects(toolsDir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	b, err := CRDs(toolsDir)
	if err != nil {
		return nil, err
	}
	return DecodeCRDs(b)
}

// DecodeCRDs decodes a YAML stream of CRDs (ReadCRDs') with the sandbox's
// own decoder (sandbox.ParseCRDs), for Sandbox.InstallCRDs, and refuses a
// stream without exactly cert-manager's three.
func DecodeCRDs(b []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := sandbox.ParseCRDs(b)
	if err != nil {
		return nil, fmt.Errorf("certsim: decoding cert-manager's CRDs: %w", err)
	}
	if len(out) != len(crdFiles) {
		return nil, fmt.Errorf("certsim: %d CRDs in cert-manager's stream, want %d (%v)", len(out), len(crdFiles), crdFiles)
	}
	return out, nil
}

// The kinds certsim reads.
var (
	certificates   = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}
	issuers        = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "issuers"}
	clusterIssuers = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "clusterissuers"}
)

// Options configure a Sim.
type Options struct {
	// Config is the API server connection.
	Config *rest.Config
	// Namespace restricts the Sim to one namespace; "" watches all.
	Namespace string
	// ClusterResourceNamespace holds the CA Secrets of ClusterIssuers
	// (cert-manager's --cluster-resource-namespace); default
	// "cert-manager".
	ClusterResourceNamespace string
	// Now is the clock of the certificates' validity; default time.Now.
	Now func() time.Time
	// Logf receives one line per issued certificate.
	Logf func(format string, args ...any)
}

// Sim issues the Certificates it sees. Create it with Start.
type Sim struct {
	opts Options
	cs   kubernetes.Interface
	dyn  dynamic.Interface
	inf  toolscache.SharedIndexInformer
	q    *simkit.Queue
	// secrets watches Secrets, so a Secret deleted or changed under its
	// Certificate is reissued as by cert-manager.
	secrets toolscache.SharedIndexInformer
	loop    *simkit.Loop

	mu     sync.Mutex
	issued int
}

// Start watches Certificates and returns once the watch has synced.
func Start(ctx context.Context, opts Options) (*Sim, error) {
	if opts.ClusterResourceNamespace == "" {
		opts.ClusterResourceNamespace = "cert-manager"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	c, err := simkit.NewClients(opts.Config, "certsim", nil)
	if err != nil {
		return nil, err
	}
	loop := simkit.NewLoop(ctx, "certsim", opts.Logf)
	s := &Sim{opts: opts, cs: c.Kube, dyn: c.Dynamic, loop: loop, q: loop.NewQueue()}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.Dynamic, 0, opts.Namespace, nil)
	s.inf = f.ForResource(certificates).Informer()
	if _, err := s.inf.AddEventHandler(s.q.Handler()); err != nil {
		return nil, err
	}
	if err := s.inf.AddIndexers(toolscache.Indexers{bySecret: secretIndex}); err != nil {
		return nil, err
	}
	s.secrets = informers.NewSharedInformerFactoryWithOptions(c.Kube, 0, informers.WithNamespace(opts.Namespace)).Core().V1().Secrets().Informer()
	secretChanged := func(obj any) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		key, err := toolscache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			return
		}
		certs, _ := s.inf.GetIndexer().ByIndex(bySecret, key)
		for _, c := range certs {
			s.q.AddObject(c)
		}
	}
	if _, err := s.secrets.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(_, o any) { secretChanged(o) }, DeleteFunc: secretChanged}); err != nil {
		return nil, err
	}
	if !loop.Watch(ctx, s.inf, s.secrets) {
		s.Close()
		return nil, errors.New("certsim: the Certificate and Secret watches did not sync (are cert-manager's CRDs installed? see CRDs)")
	}
	loop.Work(s.q, 1, s.work)
	return s, nil
}

// bySecret indexes Certificates by the Secret they ask for ("ns/name").
const bySecret = "secret"

func secretIndex(obj any) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, nil
	}
	name, _, _ := unstructured.NestedString(u.Object, "spec", "secretName")
	if name == "" {
		return nil, nil
	}
	return []string{u.GetNamespace() + "/" + name}, nil
}

// Close stops the Sim and waits for it.
func (s *Sim) Close() {
	s.loop.Stop()
}

// Issued is the number of certificates written so far.
func (s *Sim) Issued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

// work syncs one Certificate.
func (s *Sim) work(ctx context.Context, key string) (time.Duration, error) {
	if err := s.sync(ctx, key); !apierrors.IsConflict(err) {
		return 0, err
	}
	// The Certificate changed since the cache's copy (its Secret's event
	// can come first): the newer version's event syncs it again.
	return 0, nil
}

// certSpec is what certsim reads of a Certificate (cert-manager's names).
type certSpec struct {
	CommonName  string   `json:"commonName"`
	DNSNames    []string `json:"dnsNames"`
	IPAddresses []string `json:"ipAddresses"`
	SecretName  string   `json:"secretName"`
	IsCA        bool     `json:"isCA"`
	Usages      []string `json:"usages"`
	Duration    string   `json:"duration"`
	IssuerRef   struct {
		Name, Kind, Group string
	} `json:"issuerRef"`
	PrivateKey *struct {
		Algorithm string `json:"algorithm"`
		Size      int    `json:"size"`
	} `json:"privateKey"`
}

// Annotations cert-manager writes on a Secret it issues.
const (
	annCertName   = "cert-manager.io/certificate-name"
	annIssuerName = "cert-manager.io/issuer-name"
	annIssuerKind = "cert-manager.io/issuer-kind"
	annIssuerGrp  = "cert-manager.io/issuer-group"
	annCommonName = "cert-manager.io/common-name"
	annAltNames   = "cert-manager.io/alt-names"
	annIPSANs     = "cert-manager.io/ip-sans"
)

// sync issues one Certificate if its Secret does not match it, and sets
// Ready.
func (s *Sim) sync(ctx context.Context, key string) error {
	obj, exists, err := s.inf.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return err
	}
	u := obj.(*unstructured.Unstructured)
	var spec certSpec
	if err := fromMap(u.Object["spec"], &spec); err != nil {
		return err
	}
	ns := u.GetNamespace()
	secret, err := s.cs.CoreV1().Secrets(ns).Get(ctx, spec.SecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		secret, err = nil, nil
	}
	if err != nil {
		return err
	}
	if secret != nil && matches(secret, u.GetName(), &spec) {
		return s.setReady(ctx, u, secret, "")
	}
	signer, parent, caPEM, err := s.issuer(ctx, ns, &spec)
	if err != nil {
		_ = s.setNotReady(ctx, u, err.Error())
		return err
	}
	certPEM, keyPEM, err := issue(&spec, signer, parent, s.opts.Now())
	if err != nil {
		return err
	}
	if parent == nil {
		caPEM = certPEM // self-signed: its own CA
	}
	data := map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM, "ca.crt": caPEM}
	ann := map[string]string{annCertName: u.GetName(), annIssuerName: spec.IssuerRef.Name, annIssuerKind: kindOf(&spec),
		annIssuerGrp: groupOf(&spec), annCommonName: spec.CommonName, annAltNames: strings.Join(spec.DNSNames, ","), annIPSANs: strings.Join(spec.IPAddresses, ",")}
	if secret == nil {
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: spec.SecretName, Namespace: ns, Annotations: ann,
			Labels: map[string]string{"controller.cert-manager.io/fao": "true"}}, Type: corev1.SecretTypeTLS, Data: data}
		if secret, err = s.cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			return err
		}
	} else {
		upd := secret.DeepCopy()
		if upd.Annotations == nil {
			upd.Annotations = map[string]string{}
		}
		for k, v := range ann {
			upd.Annotations[k] = v
		}
		upd.Data = data
		if secret, err = s.cs.CoreV1().Secrets(ns).Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.issued++
	s.mu.Unlock()
	s.opts.Logf("certsim: issued %s/%s into Secret %s (DNS %v, IP %v)", ns, u.GetName(), spec.SecretName, spec.DNSNames, spec.IPAddresses)
	return s.setReady(ctx, u, secret, "issued")
}

func kindOf(spec *certSpec) string {
	if spec.IssuerRef.Kind == "" {
		return "Issuer"
	}
	return spec.IssuerRef.Kind
}

func groupOf(spec *certSpec) string {
	if spec.IssuerRef.Group == "" {
		return "cert-manager.io"
	}
	return spec.IssuerRef.Group
}

func fromMap(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// matches: the Secret holds the three keys and a certificate that is what
// spec asks for, from the named Certificate's issuer.
func matches(secret *corev1.Secret, name string, spec *certSpec) bool {
	for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey, "ca.crt"} {
		if len(secret.Data[k]) == 0 {
			return false
		}
	}
	if secret.Annotations[annCertName] != name || secret.Annotations[annIssuerName] != spec.IssuerRef.Name ||
		secret.Annotations[annIssuerKind] != kindOf(spec) {
		return false
	}
	block, _ := pem.Decode(secret.Data[corev1.TLSCertKey])
	if block == nil {
		return false
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return false
	}
	var ips []string
	for _, ip := range c.IPAddresses {
		ips = append(ips, ip.String())
	}
	return c.Subject.CommonName == spec.CommonName && c.IsCA == spec.IsCA &&
		sameSet(c.DNSNames, spec.DNSNames) && sameSet(ips, normIPs(spec.IPAddresses))
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func normIPs(in []string) []string {
	var out []string
	for _, s := range in {
		if ip := net.ParseIP(s); ip != nil {
			out = append(out, ip.String())
		}
	}
	return out
}

// issuer resolves spec's issuerRef: for selfSigned no signer (the
// certificate signs itself); for ca the CA Secret's certificate and key.
func (s *Sim) issuer(ctx context.Context, ns string, spec *certSpec) (crypto.Signer, *x509.Certificate, []byte, error) {
	if g := groupOf(spec); g != "cert-manager.io" {
		return nil, nil, nil, fmt.Errorf("issuer group %q is not cert-manager.io: certsim issues only for cert-manager's own issuers", g)
	}
	var u *unstructured.Unstructured
	var err error
	secretNS := ns
	switch kindOf(spec) {
	case "Issuer":
		u, err = s.dyn.Resource(issuers).Namespace(ns).Get(ctx, spec.IssuerRef.Name, metav1.GetOptions{})
	case "ClusterIssuer":
		u, err = s.dyn.Resource(clusterIssuers).Get(ctx, spec.IssuerRef.Name, metav1.GetOptions{})
		secretNS = s.opts.ClusterResourceNamespace
	default:
		return nil, nil, nil, fmt.Errorf("issuer kind %q is neither Issuer nor ClusterIssuer", spec.IssuerRef.Kind)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s %q: %w", kindOf(spec), spec.IssuerRef.Name, err)
	}
	if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "selfSigned"); ok {
		return nil, nil, nil, nil
	}
	caSecret, ok, _ := unstructured.NestedString(u.Object, "spec", "ca", "secretName")
	if !ok {
		return nil, nil, nil, fmt.Errorf("%s %q is neither selfSigned nor ca: certsim issues for those two only", kindOf(spec), spec.IssuerRef.Name)
	}
	sec, err := s.cs.CoreV1().Secrets(secretNS).Get(ctx, caSecret, metav1.GetOptions{})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the CA Secret %s/%s of %s %q: %w", secretNS, caSecret, kindOf(spec), spec.IssuerRef.Name, err)
	}
	cert, key, err := ParseKeyPair(sec.Data[corev1.TLSCertKey], sec.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the CA Secret %s/%s: %w", secretNS, caSecret, err)
	}
	return key, cert, sec.Data[corev1.TLSCertKey], nil
}

// ParseKeyPair parses a PEM certificate and its PEM private key (PKCS#1,
// SEC 1 or PKCS#8).
func ParseKeyPair(certPEM, keyPEM []byte) (*x509.Certificate, crypto.Signer, error) {
	cb, _ := pem.Decode(certPEM)
	if cb == nil {
		return nil, nil, errors.New("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, nil, errors.New("no PEM private key")
	}
	if k, err := x509.ParsePKCS1PrivateKey(kb.Bytes); err == nil {
		return cert, k, nil
	}
	if k, err := x509.ParseECPrivateKey(kb.Bytes); err == nil {
		return cert, k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("private key %T cannot sign", k)
	}
	return cert, signer, nil
}

// defaultDuration is cert-manager's default certificate duration (90 days).
const defaultDuration = 90 * 24 * time.Hour

// issue makes the key and certificate spec asks for, signed by signer
// with parent (nil: self-signed), PEM-encoded as cert-manager writes them
// (an RSA key in PKCS#1, an ECDSA key in SEC 1).
func issue(spec *certSpec, signer crypto.Signer, parent *x509.Certificate, now time.Time) (certPEM, keyPEM []byte, err error) {
	algo, size := "RSA", 2048 // cert-manager's defaults
	if pk := spec.PrivateKey; pk != nil {
		if pk.Algorithm != "" {
			algo = pk.Algorithm
		}
		if pk.Size != 0 {
			size = pk.Size
		}
	}
	var key crypto.Signer
	switch algo {
	case "RSA":
		k, err := rsa.GenerateKey(rand.Reader, size)
		if err != nil {
			return nil, nil, err
		}
		key, keyPEM = k, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	case "ECDSA":
		curve := elliptic.P256()
		switch size {
		case 384:
			curve = elliptic.P384()
		case 521:
			curve = elliptic.P521()
		}
		k, err := ecdsa.GenerateKey(curve, rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, nil, err
		}
		key, keyPEM = k, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	default:
		return nil, nil, fmt.Errorf("privateKey.algorithm %q: certsim makes RSA and ECDSA keys only", algo)
	}
	d := defaultDuration
	if spec.Duration != "" {
		if d, err = time.ParseDuration(spec.Duration); err != nil {
			return nil, nil, fmt.Errorf("duration %q: %w", spec.Duration, err)
		}
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: spec.CommonName},
		NotBefore:             now.Add(-time.Minute).UTC(),
		NotAfter:              now.Add(d).UTC(),
		DNSNames:              spec.DNSNames,
		IsCA:                  spec.IsCA,
		BasicConstraintsValid: true,
	}
	for _, s := range spec.IPAddresses {
		ip := net.ParseIP(s)
		if ip == nil {
			return nil, nil, fmt.Errorf("ipAddresses: %q is not an IP", s)
		}
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	}
	usages := spec.Usages
	if len(usages) == 0 {
		usages = []string{"digital signature", "key encipherment"} // cert-manager's default
	}
	for _, u := range usages {
		switch u {
		case "digital signature":
			tmpl.KeyUsage |= x509.KeyUsageDigitalSignature
		case "key encipherment":
			tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
		case "cert sign":
			tmpl.KeyUsage |= x509.KeyUsageCertSign
		case "crl sign":
			tmpl.KeyUsage |= x509.KeyUsageCRLSign
		case "server auth":
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		case "client auth":
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
		default:
			return nil, nil, fmt.Errorf("usage %q: certsim knows digital signature, key encipherment, cert sign, crl sign, server auth, client auth", u)
		}
	}
	if spec.IsCA {
		tmpl.KeyUsage |= x509.KeyUsageCertSign // cert-manager adds it to a CA
	}
	if parent == nil {
		parent, signer = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// setReady writes Ready True at the Certificate's generation, with the
// validity of the Secret's certificate; issued bumps the revision.
func (s *Sim) setReady(ctx context.Context, u *unstructured.Unstructured, secret *corev1.Secret, issued string) error {
	block, _ := pem.Decode(secret.Data[corev1.TLSCertKey])
	if block == nil {
		return errors.New("the Secret's certificate is not PEM")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return err
	}
	gen := u.GetGeneration()
	if issued == "" && readyAt(u, gen) {
		return nil
	}
	upd := u.DeepCopy()
	st, _, _ := unstructured.NestedMap(upd.Object, "status")
	if st == nil {
		st = map[string]any{}
	}
	now := s.opts.Now().UTC().Format(time.RFC3339)
	st["conditions"] = []any{map[string]any{"type": "Ready", "status": "True", "reason": "Ready",
		"message": "Certificate is up to date and has not expired", "observedGeneration": gen, "lastTransitionTime": now}}
	st["notBefore"] = c.NotBefore.UTC().Format(time.RFC3339)
	st["notAfter"] = c.NotAfter.UTC().Format(time.RFC3339)
	st["renewalTime"] = c.NotBefore.Add(c.NotAfter.Sub(c.NotBefore) * 2 / 3).UTC().Format(time.RFC3339)
	if issued != "" {
		rev, _, _ := unstructured.NestedInt64(upd.Object, "status", "revision")
		st["revision"] = rev + 1
	}
	upd.Object["status"] = st
	_, err = s.dyn.Resource(certificates).Namespace(u.GetNamespace()).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	return err
}

// setNotReady says why a Certificate cannot be issued yet.
func (s *Sim) setNotReady(ctx context.Context, u *unstructured.Unstructured, why string) error {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "False" && m["message"] == why {
			return nil // said already: no write, so no watch event to loop on
		}
	}
	upd := u.DeepCopy()
	if err := unstructured.SetNestedSlice(upd.Object, []any{map[string]any{"type": "Ready", "status": "False", "reason": "Pending",
		"message": why, "observedGeneration": u.GetGeneration(), "lastTransitionTime": s.opts.Now().UTC().Format(time.RFC3339)}},
		"status", "conditions"); err != nil {
		return err
	}
	_, err := s.dyn.Resource(certificates).Namespace(u.GetNamespace()).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	return err
}

// readyAt: the Certificate's Ready is True at generation gen.
func readyAt(u *unstructured.Unstructured, gen int64) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			g, _ := m["observedGeneration"].(int64)
			return m["status"] == "True" && g == gen
		}
	}
	return false
}
