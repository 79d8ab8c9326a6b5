package raycluster

// mTLS between a cluster's Ray pods (spec.tlsOptions.enabled), behind
// KubeRay's RayClusterMTLS gate (controller/features), as KubeRay v1.7.0
// does it (ray-operator/controllers/ray/raycluster_mtls_controller.go,
// common/pod.go, utils/util.go, utils/validation.go; line numbers are
// v1.7.0's):
//
//   - mTLS is on when the gate is on and tlsOptions.enabled is true
//     (utils/util.go:807-812); with the gate off any tlsOptions, even
//     enabled: false, is refused naming the gate (utils/validation.go:
//     323-325, unsupported.go here);
//   - cert-manager objects, in the cluster's namespace, in this order,
//     each created once and never changed afterwards except the two leaf
//     Certificates (raycluster_mtls_controller.go:97-115):
//     Issuer ray-selfsigned-issuer-<cluster> (selfSigned: {}, :195-205);
//     Certificate ray-ca-certificate-<cluster> (isCA, commonName
//     ray-ca-<cluster>, RSA 4096, duration 87600h, renewBefore 720h,
//     usages cert sign and crl sign, issued by the self-signed Issuer,
//     secret <cluster>-ca-secret-<first 8 chars of the cluster's UID>,
//     :210-257, util.go:819-822); Issuer ray-ca-issuer-<cluster> (ca:
//     secretName the CA's secret, :261-273); Certificates
//     ray-head-cert-<cluster> and ray-worker-cert-<cluster> (secrets
//     ray-head-secret-<cluster>, ray-worker-secret-<cluster>; duration
//     2160h, renewBefore 360h; usages digital signature, key encipherment,
//     server auth, client auth; issued by the CA Issuer, :279-421,
//     :515-522). The head's dnsNames are localhost and the head Service's
//     FQDN, sorted (:288-293); the workers' localhost (:366-367);
//     ipAddresses are 127.0.0.1 and the pod IPs of the cluster's live pods
//     of that node type (not terminating, not Succeeded/Failed), sorted
//     and de-duplicated (:423-446, :563-569), so a head cert does not
//     change when workers scale;
//   - every object is labelled app.kubernetes.io/name=kuberay,
//     app.kubernetes.io/created-by=kuberay-operator,
//     app.kubernetes.io/component=<selfsigned-issuer, ca-certificate,
//     ca-issuer, head-certificate, worker-certificate>, ray.io/cluster
//     (:585-593), with a controller owner reference to the cluster; a leaf
//     Certificate whose labels differ, or whose dnsNames or ipAddresses
//     differ as sets, gets the desired labels and spec (:335-348,
//     :556-561), with a Normal MTLSCertificatesUpdated Event;
//   - the Secret cert-manager writes for each Certificate gets a
//     (non-controller) owner reference to that Certificate, so it goes
//     with it, and the Certificate with the cluster (:137-157);
//   - no pod is created until both leaf Certificates are Ready at their
//     current generation and both Secrets hold tls.crt, tls.key and ca.crt
//     (raycluster_controller.go:1905-1938, the pod paths :1047, :1186,
//     :1406); while they are not, a Normal MTLSCertsNotReady Event, then
//     MTLSPKIReady (:117-130); a leaf or CA certificate that expires
//     within 24 hours gives a Warning MTLSCertificateExpiringSoon
//     (:471-491); a failed step gives a Warning MTLSFailedToReconcile
//     "Failed to reconcile mTLS <step>: <error>" and ends the steps
//     (:108-115);
//   - the pods (configureTLS, common/pod.go:428-538, SetContainerTLSConfig
//     :540-580): a Secret volume ray-tls from the node type's Secret; on the
//     Ray container, the autoscaler sidecar (:260-272) and the workers'
//     wait-gcs-ready, the env RAY_USE_TLS=1, RAY_TLS_SERVER_CERT,
//     RAY_TLS_SERVER_KEY, RAY_TLS_CA_CERT (/etc/ray/tls/{tls.crt,tls.key,
//     ca.crt}) and a read-only mount of ray-tls at /etc/ray/tls, each only
//     where absent; and, first of the init containers, wait-for-tls-ip-san,
//     which waits until the mounted certificate names the pod's IP;
//   - validation (utils/validation.go:446-527): with mTLS on, the Ray
//     container of the head and of each group, and autoscalerOptions, may
//     not set those four env vars nor mount a volume named ray-tls or at
//     /etc/ray/tls;
//   - cert-manager not installed (its cert-manager.io/v1 Issuer and
//     Certificate kinds not served): KubeRay refuses the cluster with a
//     Warning InvalidRayClusterSpec "tlsOptions requires cert-manager, but
//     cert-manager is not installed" (raycluster_controller.go:196-203);
//     raydar refuses it the same way, with its refusal condition
//     (ReplicaFailure/ValidationFailed) besides, and looks again on every
//     pass (controller-runtime's REST mapper rediscovers a kind it did not
//     know), so installing cert-manager later lets the cluster start.
//
// Where raydar differs: KubeRay runs a separate mTLS controller beside its
// RayCluster controller, which polls (30s while certificates are pending,
// every minute after, :30-33) and does not watch pods, so a new pod's IP
// reaches its certificate within a minute. raydar does these steps in the
// cluster's own pass, before the pods, which runs on every pod change, so
// the IP is added at once; it does not watch cert-manager's objects (that
// would need their CRDs at start-up) and instead comes back every second
// while certificates are pending (backing off to KubeRay's 30 s while they
// stay so, holdPodsForMTLS), every minute after, as KubeRay does. The
// pod IPs are those of the pods the cluster controls (KubeRay lists by the
// ray.io/cluster and ray.io/node-type labels). A leaf Certificate another
// owner controls is not taken over: Warning MTLSFailedToReconcile, as
// KubeRay's SetControllerReference fails on it. A cluster refused for
// another reason gets no mTLS objects (KubeRay's separate controller makes
// them anyway), as it gets nothing else. raydar also holds pods
// while it has just changed a Certificate this pass (its Ready is for the
// previous generation), which KubeRay's check does too, one pass later.
//
// cert-manager's API: raydar does not import
// github.com/cert-manager/cert-manager (v1.19.4, what KubeRay uses): its
// certmanager/v1 package pulls in the ACME types and with them
// sigs.k8s.io/gateway-api and more into go.mod, for five fields. The
// small typed structs below carry exactly the fields KubeRay sets and
// reads, under cert-manager's JSON names, and travel as unstructured
// objects (no scheme registration, nothing cached), read live.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// KubeRay v1.7.0's mTLS names (utils/constant.go:162-179).
const (
	EnvRayUseTLS        = "RAY_USE_TLS"
	EnvRayTLSServerCert = "RAY_TLS_SERVER_CERT"
	EnvRayTLSServerKey  = "RAY_TLS_SERVER_KEY"
	EnvRayTLSCACert     = "RAY_TLS_CA_CERT"
	TLSVolumeName       = "ray-tls"
	TLSMountPath        = "/etc/ray/tls"
	// WaitTLSContainerName is the init container that waits for the pod's
	// IP in its certificate (common/pod.go:497).
	WaitTLSContainerName = kit.WaitTLSContainerName
)

// KubeRay v1.7.0's mTLS Event reasons (utils/constant.go:548-552).
const (
	EventMTLSPKIReady                = "MTLSPKIReady"
	EventMTLSCertsNotReady           = "MTLSCertsNotReady"
	EventMTLSFailedToReconcile       = "MTLSFailedToReconcile"
	EventMTLSCertificatesUpdated     = "MTLSCertificatesUpdated"
	EventMTLSCertificateExpiringSoon = "MTLSCertificateExpiringSoon"
)

// cert-manager's group and kinds.
const (
	CertManagerGroup = "cert-manager.io"
	KindIssuer       = "Issuer"
	KindCertificate  = "Certificate"
)

var (
	// IssuerGVK is cert-manager's Issuer kind.
	IssuerGVK = schema.GroupVersionKind{Group: CertManagerGroup, Version: "v1", Kind: KindIssuer}
	// CertificateGVK is cert-manager's Certificate kind.
	CertificateGVK = schema.GroupVersionKind{Group: CertManagerGroup, Version: "v1", Kind: KindCertificate}
)

// Durations of the certificates (raycluster_mtls_controller.go:234-239,
// :303-304) and how often the pass comes back.
const (
	caDuration            = 24 * time.Hour * 3650
	caRenewBefore         = 24 * time.Hour * 30
	leafDuration          = 2160 * time.Hour
	leafRenewBefore       = 360 * time.Hour
	expiryWarning         = 24 * time.Hour
	mtlsPendingRequeue    = time.Second
	mtlsPendingMaxRequeue = 30 * time.Second
	mtlsPeriodicRequeue   = time.Minute
)

// Issuer is cert-manager's cert-manager.io/v1 Issuer, with the fields
// KubeRay sets.
type Issuer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              IssuerSpec `json:"spec"`
}

// IssuerSpec is the one issuer config KubeRay uses per Issuer.
type IssuerSpec struct {
	SelfSigned *SelfSignedIssuer `json:"selfSigned,omitempty"`
	CA         *CAIssuer         `json:"ca,omitempty"`
}

// SelfSignedIssuer is cert-manager's selfSigned issuer (no fields set).
type SelfSignedIssuer struct{}

// CAIssuer signs with the key pair in SecretName.
type CAIssuer struct {
	SecretName string `json:"secretName"`
}

// Certificate is cert-manager's cert-manager.io/v1 Certificate, with the
// fields KubeRay sets and reads.
type Certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CertificateSpec   `json:"spec"`
	Status            CertificateStatus `json:"status,omitempty"`
}

// CertificateSpec is a Certificate's spec, under cert-manager's field names.
type CertificateSpec struct {
	CommonName  string                 `json:"commonName,omitempty"`
	Duration    *metav1.Duration       `json:"duration,omitempty"`
	RenewBefore *metav1.Duration       `json:"renewBefore,omitempty"`
	DNSNames    []string               `json:"dnsNames,omitempty"`
	IPAddresses []string               `json:"ipAddresses,omitempty"`
	SecretName  string                 `json:"secretName"`
	IssuerRef   IssuerReference        `json:"issuerRef"`
	IsCA        bool                   `json:"isCA,omitempty"`
	Usages      []string               `json:"usages,omitempty"`
	PrivateKey  *CertificatePrivateKey `json:"privateKey,omitempty"`
}

// CertificatePrivateKey is a Certificate's private key: algorithm and size.
type CertificatePrivateKey struct {
	Algorithm string `json:"algorithm,omitempty"`
	Size      int    `json:"size,omitempty"`
}

// IssuerReference names the Issuer of a Certificate.
type IssuerReference struct {
	Name  string `json:"name"`
	Kind  string `json:"kind,omitempty"`
	Group string `json:"group,omitempty"`
}

// CertificateStatus is a Certificate's status: the conditions and the expiry.
type CertificateStatus struct {
	Conditions []CertificateCondition `json:"conditions,omitempty"`
	NotAfter   *metav1.Time           `json:"notAfter,omitempty"`
}

// CertificateCondition is one of a Certificate's conditions.
type CertificateCondition struct {
	Type               string       `json:"type"`
	Status             string       `json:"status"`
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	Reason             string       `json:"reason,omitempty"`
	Message            string       `json:"message,omitempty"`
	ObservedGeneration int64        `json:"observedGeneration,omitempty"`
}

// ToUnstructured is obj (an *Issuer or *Certificate) as the API server
// takes it.
func ToUnstructured(obj any) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	return u, nil
}

// FromUnstructured decodes u into out (an *Issuer or *Certificate).
func FromUnstructured(u *unstructured.Unstructured, out any) error {
	b, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// MTLSEnabled reports whether the RayClusterMTLS gate is on and
// spec.tlsOptions.enabled is true (utils/util.go:807-812).
func MTLSEnabled(spec *rayv1.RayClusterSpec, g features.Gates) bool {
	return g.Enabled(features.RayClusterMTLS) && spec != nil && spec.TLSOptions != nil &&
		spec.TLSOptions.Enabled != nil && *spec.TLSOptions.Enabled
}

func mtlsOn(rc *rayv1.RayCluster, cfg BuildConfig) bool { return MTLSEnabled(&rc.Spec, cfg.Features) }

// SelfSignedIssuerName, CACertificateName, CAIssuerName, CASecretName,
// TLSCertificateName and TLSSecretName are the names of the cluster's mTLS
// objects (utils/util.go:819-853).

// SelfSignedIssuerName names the cluster's self-signed Issuer, which signs
// its CA Certificate.
func SelfSignedIssuerName(cluster string) string { return "ray-selfsigned-issuer-" + cluster }

// CACertificateName names the cluster's CA Certificate.
func CACertificateName(cluster string) string { return "ray-ca-certificate-" + cluster }

// CAIssuerName names the cluster's CA Issuer, which signs the leaf
// Certificates with the CA's key pair.
func CAIssuerName(cluster string) string { return "ray-ca-issuer-" + cluster }

// CASecretName is <cluster>-ca-secret-<first 8 characters of the UID>: a
// cluster re-created under the same name gets a new CA. (KubeRay slices
// the UID unchecked; a UID shorter than 8, never made by an API server, is
// used whole here.)
func CASecretName(cluster string, uid types.UID) string {
	s := string(uid)
	if len(s) > 8 {
		s = s[:8]
	}
	return cluster + "-ca-secret-" + s
}

// TLSCertificateName names the head's (head true) or the workers' leaf
// Certificate.
func TLSCertificateName(cluster string, head bool) string {
	if head {
		return "ray-head-cert-" + cluster
	}
	return "ray-worker-cert-" + cluster
}

// TLSSecretName names the Secret of the head's (head true) or the workers'
// leaf Certificate.
func TLSSecretName(cluster string, head bool) string {
	if head {
		return "ray-head-secret-" + cluster
	}
	return "ray-worker-secret-" + cluster
}

// mtlsLabels are the labels of every mTLS object (:585-593).
func mtlsLabels(cluster, component string) map[string]string {
	return map[string]string{
		rayv1.KubernetesApplicationNameLabelKey: rayv1.ApplicationName,
		rayv1.KubernetesCreatedByLabelKey:       rayv1.ComponentName,
		"app.kubernetes.io/component":           component,
		rayv1.RayClusterLabelKey:                cluster,
	}
}

func mtlsMeta(rc *rayv1.RayCluster, name, component string) metav1.ObjectMeta {
	return childMeta(rc, name, mtlsLabels(rc.Name, component))
}

func caIssuerRef(cluster string) IssuerReference {
	return IssuerReference{Name: CAIssuerName(cluster), Kind: KindIssuer, Group: CertManagerGroup}
}

// leafUsages are the leaf certificates' key usages (:515-522).
func leafUsages() []string {
	return []string{"digital signature", "key encipherment", "server auth", "client auth"}
}

// BuildMTLSIssuers are the self-signed Issuer and the CA Issuer.
func BuildMTLSIssuers(rc *rayv1.RayCluster) (selfSigned, ca *Issuer) {
	tm := metav1.TypeMeta{APIVersion: IssuerGVK.GroupVersion().String(), Kind: KindIssuer}
	selfSigned = &Issuer{TypeMeta: tm, ObjectMeta: mtlsMeta(rc, SelfSignedIssuerName(rc.Name), "selfsigned-issuer"),
		Spec: IssuerSpec{SelfSigned: &SelfSignedIssuer{}}}
	ca = &Issuer{TypeMeta: tm, ObjectMeta: mtlsMeta(rc, CAIssuerName(rc.Name), "ca-issuer"),
		Spec: IssuerSpec{CA: &CAIssuer{SecretName: CASecretName(rc.Name, rc.UID)}}}
	return selfSigned, ca
}

var certTypeMeta = metav1.TypeMeta{APIVersion: CertificateGVK.GroupVersion().String(), Kind: KindCertificate}

// BuildCACertificate is the cluster's CA Certificate (:210-257).
func BuildCACertificate(rc *rayv1.RayCluster) *Certificate {
	return &Certificate{TypeMeta: certTypeMeta, ObjectMeta: mtlsMeta(rc, CACertificateName(rc.Name), "ca-certificate"),
		Spec: CertificateSpec{
			SecretName:  CASecretName(rc.Name, rc.UID),
			IsCA:        true,
			CommonName:  "ray-ca-" + rc.Name,
			PrivateKey:  &CertificatePrivateKey{Algorithm: "RSA", Size: 4096},
			Duration:    &metav1.Duration{Duration: caDuration},
			RenewBefore: &metav1.Duration{Duration: caRenewBefore},
			Usages:      []string{"cert sign", "crl sign"},
			IssuerRef:   IssuerReference{Name: SelfSignedIssuerName(rc.Name), Kind: KindIssuer, Group: CertManagerGroup},
		}}
}

// BuildLeafCertificate is the head's (head true) or the workers' leaf
// Certificate naming podIPs (:279-421).
func BuildLeafCertificate(rc *rayv1.RayCluster, head bool, podIPs []string, cfg BuildConfig) *Certificate {
	component, dns := "worker-certificate", []string{"localhost"}
	if head {
		component = "head-certificate"
		dns = append(dns, kit.HeadFQDN(rc, cfg.ClusterDomain))
	}
	dns = uniqueSorted(dns)
	return &Certificate{TypeMeta: certTypeMeta, ObjectMeta: mtlsMeta(rc, TLSCertificateName(rc.Name, head), component),
		Spec: CertificateSpec{
			SecretName:  TLSSecretName(rc.Name, head),
			Duration:    &metav1.Duration{Duration: leafDuration},
			RenewBefore: &metav1.Duration{Duration: leafRenewBefore},
			DNSNames:    dns,
			IPAddresses: normalizeIPs(podIPs),
			Usages:      leafUsages(),
			IssuerRef:   caIssuerRef(rc.Name),
		}}
}

// uniqueSorted is s sorted without duplicates.
func uniqueSorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return slices.Compact(out)
}

// normalizeIPs is 127.0.0.1 and the pod IPs, sorted, without duplicates
// or empties (:563-569).
func normalizeIPs(ips []string) []string {
	out := []string{"127.0.0.1"}
	for _, ip := range ips {
		if ip != "" {
			out = append(out, ip)
		}
	}
	return uniqueSorted(out)
}

// livePodIPs are the IPs of the live pods among pods of the head (head
// true) or of the workers (:423-446).
func livePodIPs(pods []*corev1.Pod, head bool) []string {
	var ips []string
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if kit.IsHeadPod(p) != head || p.Status.PodIP == "" {
			continue
		}
		ips = append(ips, p.Status.PodIP)
	}
	return ips
}

// sameSet: a and b hold the same strings, and as many (:539-554): with b
// de-duplicated, as the desired lists are, a stored list with a duplicate
// counts as different.
func sameSet(a, b []string) bool {
	return slices.Equal(uniqueSorted(a), uniqueSorted(b)) && len(a) == len(b)
}

// certificateReady: Ready True at the Certificate's generation (:529-537).
func certificateReady(c *Certificate) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == "Ready" {
			return cond.Status == string(metav1.ConditionTrue) && cond.ObservedGeneration == c.Generation
		}
	}
	return false
}

// mtlsKeys are the keys a leaf Secret must hold before pods start
// (raycluster_controller.go:1926).
var mtlsKeys = []string{"tls.crt", "tls.key", "ca.crt"}

// mtlsObserved is what observe read of a cluster's mTLS objects, live.
type mtlsObserved struct {
	// CertManager: the API server serves cert-manager.io/v1 Issuers and
	// Certificates. Nothing else is read without it.
	CertManager bool
	Issuers     map[string]*Issuer      // by name; absent: not found
	Certs       map[string]*Certificate // by name
	// Secrets are the Secrets of the three Certificates, by name.
	Secrets map[string]*corev1.Secret
	// PendingSince: since when this process has seen the certificates
	// pending with nothing changed (Reconciler.mtlsPending); zero when not.
	PendingSince time.Time
}

// mtlsPlan is the mTLS part of a plan, in KubeRay's step order.
type mtlsPlan struct {
	// Steps are the creates and updates, in order; act stops at the
	// first that fails.
	Steps []mtlsStep
	// OwnSecrets are the Secrets to give an owner reference to their
	// Certificate.
	OwnSecrets []secretOwner
	// Foreign names a leaf Certificate another owner controls.
	Foreign []string
	// Ready: both leaf Certificates are Ready at their generation, this
	// pass changes neither, and both Secrets hold their keys.
	Ready bool
	// Expiring are the Warnings of certificates expiring within 24h.
	Expiring []expiring
}

// expiring is a certificate's expiry Warning.
type expiring struct{ Name, Message string }

// mtlsStep is one create or update of KubeRay's steps.
type mtlsStep struct {
	Name   string // KubeRay's step name: "self-signed issuer", …
	Object any    // *Issuer or *Certificate
	Update bool
	IPs    []string // for an update's Event
}

// secretOwner is a Secret and the Certificate it should be owned by.
type secretOwner struct {
	Secret *corev1.Secret
	Cert   *Certificate
}

// certOwnerRef is the (non-controller) owner reference a Secret gets to
// its Certificate, as controllerutil.SetOwnerReference writes it.
func certOwnerRef(c *Certificate) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: CertificateGVK.GroupVersion().String(), Kind: KindCertificate, Name: c.Name, UID: c.UID}
}

// secretOwned: s has the owner reference to c.
func secretOwned(s *corev1.Secret, c *Certificate) bool {
	return slices.ContainsFunc(s.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == c.UID })
}

// decideMTLS plans the cluster's cert-manager objects when mTLS is on, and
// whether pods may be created.
func decideMTLS(o *observed) *mtlsPlan {
	rc := o.Cluster
	if !mtlsOn(rc, o.Config) || o.MTLS == nil || !o.MTLS.CertManager {
		return nil
	}
	m := o.MTLS
	p := &mtlsPlan{}
	selfSigned, caIssuer := BuildMTLSIssuers(rc)
	ca := BuildCACertificate(rc)
	addSecretOwner := func(c *Certificate) {
		if s := m.Secrets[c.Spec.SecretName]; s != nil && c.UID != "" && !secretOwned(s, c) {
			p.OwnSecrets = append(p.OwnSecrets, secretOwner{Secret: s, Cert: c})
		}
	}
	if m.Issuers[selfSigned.Name] == nil {
		p.Steps = append(p.Steps, mtlsStep{Name: "self-signed issuer", Object: selfSigned})
	}
	if ex := m.Certs[ca.Name]; ex == nil {
		p.Steps = append(p.Steps, mtlsStep{Name: "CA certificate", Object: ca})
	} else {
		addSecretOwner(ex)
	}
	if m.Issuers[caIssuer.Name] == nil {
		p.Steps = append(p.Steps, mtlsStep{Name: "CA issuer", Object: caIssuer})
	}
	p.Ready = true
	for _, head := range []bool{true, false} {
		want := BuildLeafCertificate(rc, head, livePodIPs(o.Pods, head), o.Config)
		ex := m.Certs[want.Name]
		switch {
		case ex == nil:
			p.Steps = append(p.Steps, mtlsStep{Name: leafStep(head), Object: want})
			p.Ready = false
			continue
		case kit.ControllerUID(ex.OwnerReferences) != string(rc.UID):
			p.Foreign = append(p.Foreign, ex.Name)
			p.Ready = false
			continue
		case !maps.Equal(ex.Labels, want.Labels) || !sameSet(ex.Spec.DNSNames, want.Spec.DNSNames) ||
			!sameSet(ex.Spec.IPAddresses, want.Spec.IPAddresses):
			upd := *ex
			upd.Labels, upd.Spec = want.Labels, want.Spec
			upd.OwnerReferences = slices.Clone(ex.OwnerReferences)
			p.Steps = append(p.Steps, mtlsStep{Name: leafStep(head), Object: &upd, Update: true, IPs: want.Spec.IPAddresses})
			p.Ready = false
		case !certificateReady(ex):
			p.Ready = false
		}
		addSecretOwner(ex)
		s := m.Secrets[want.Spec.SecretName]
		if s == nil || slices.ContainsFunc(mtlsKeys, func(k string) bool { _, ok := s.Data[k]; return !ok }) {
			p.Ready = false
		}
	}
	if p.Ready {
		for _, name := range []string{TLSCertificateName(rc.Name, true), TLSCertificateName(rc.Name, false), CACertificateName(rc.Name)} {
			c := m.Certs[name]
			if c == nil || c.Status.NotAfter == nil {
				continue
			}
			if left := c.Status.NotAfter.Sub(o.Now); left < expiryWarning {
				p.Expiring = append(p.Expiring, expiring{name, fmt.Sprintf("TLS certificate %s expires in %.1f hours; Ray does not hot-reload certs so a pod restart will be needed after renewal",
					name, left.Hours())})
			}
		}
	}
	return p
}

// holdPodsForMTLS keeps the pods planned from being created while the
// certificates are not ready, and sets when the pass comes back: every
// minute once ready; while pending, every second, backing off when they
// stay pending with nothing changed (since o.MTLS.PendingSince, and no
// change this pass) to a fifth of the time waited, up to KubeRay's 30 s
// (raycluster_mtls_controller.go:31), so a cert-manager that does not
// answer is not polled every second forever.
func holdPodsForMTLS(o *observed, p *plan) {
	m := p.MTLS
	if m == nil {
		return
	}
	after := mtlsPeriodicRequeue
	if !m.Ready {
		p.CreatePods = nil
		after = mtlsPendingRequeue
		if since := o.MTLS.PendingSince; len(m.Steps) == 0 && !since.IsZero() {
			after = min(max(o.Now.Sub(since)/5, mtlsPendingRequeue), mtlsPendingMaxRequeue)
		}
	}
	if p.RequeueAfter == 0 || after < p.RequeueAfter {
		p.RequeueAfter = after
	}
}

// certManagerMissing is the refusal of a cluster asking for mTLS where
// cert-manager is not installed (raycluster_controller.go:196-203).
func certManagerMissing() *field.Error {
	return field.Forbidden(field.NewPath("spec", "tlsOptions"),
		"tlsOptions requires cert-manager, but cert-manager is not installed (the API server serves no cert-manager.io/v1 Issuers and Certificates); "+
			"no certificates can be issued, so this object is not reconciled")
}

// ValidateTLSOptions is KubeRay's validateTLSOptions (utils/validation.go:
// 446-527) for a spec with mTLS on: the Ray containers and
// autoscalerOptions may not set the TLS env nor mount ray-tls or
// /etc/ray/tls. p is the spec's path.
func ValidateTLSOptions(spec *rayv1.RayClusterSpec, p *field.Path, g features.Gates) field.ErrorList {
	if !MTLSEnabled(spec, g) {
		return nil
	}
	var errs field.ErrorList
	forbidden := []string{EnvRayUseTLS, EnvRayTLSServerCert, EnvRayTLSServerKey, EnvRayTLSCACert}
	const managed = " - the operator manages TLS configuration automatically"
	container := func(c *corev1.Container, cp *field.Path, where string) {
		for i, e := range c.Env {
			if slices.Contains(forbidden, e.Name) {
				errs = append(errs, field.Forbidden(cp.Child("env").Index(i),
					fmt.Sprintf("cannot set %s environment variable in %s when tlsOptions is set%s", e.Name, where, managed)))
			}
		}
		errs = append(errs, tlsMountConflicts(c.VolumeMounts, cp.Child("volumeMounts"), where, managed)...)
	}
	if cs := spec.HeadGroupSpec.Template.Spec.Containers; len(cs) > 0 {
		container(&cs[rayv1.RayContainerIndex], p.Child("headGroupSpec", "template", "spec", "containers").Index(rayv1.RayContainerIndex), "head Pod")
	}
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		if cs := g.Template.Spec.Containers; len(cs) > 0 {
			container(&cs[rayv1.RayContainerIndex], p.Child("workerGroupSpecs").Index(i).Child("template", "spec", "containers").Index(rayv1.RayContainerIndex),
				fmt.Sprintf("worker group %q", g.GroupName))
		}
	}
	if o := spec.AutoscalerOptions; o != nil {
		ap := p.Child("autoscalerOptions")
		for i, e := range o.Env {
			if slices.Contains(forbidden, e.Name) {
				errs = append(errs, field.Forbidden(ap.Child("env").Index(i),
					fmt.Sprintf("cannot set %s environment variable in autoscalerOptions.env when tlsOptions is set - the operator manages TLS configuration for the autoscaler automatically", e.Name)))
			}
		}
		errs = append(errs, tlsMountConflicts(o.VolumeMounts, ap.Child("volumeMounts"), "autoscalerOptions.volumeMounts", managed)...)
	}
	return errs
}

// tlsMountConflicts: mounts named ray-tls or at /etc/ray/tls.
func tlsMountConflicts(mounts []corev1.VolumeMount, p *field.Path, where, managed string) field.ErrorList {
	var errs field.ErrorList
	for i, m := range mounts {
		switch {
		case m.Name == TLSVolumeName:
			errs = append(errs, field.Forbidden(p.Index(i), fmt.Sprintf("cannot use volume mount named %q in %s when tlsOptions is set%s", TLSVolumeName, where, managed)))
		case m.MountPath == TLSMountPath:
			errs = append(errs, field.Forbidden(p.Index(i), fmt.Sprintf("cannot use volume mount at path %q in %s when tlsOptions is set%s", TLSMountPath, where, managed)))
		}
	}
	return errs
}

// readMTLS reads the cluster's mTLS objects live (they are not cached:
// watching them would need cert-manager's CRDs at start-up); nil when mTLS
// is off or the cluster is being deleted (the garbage collector removes
// them).
func (r *Reconciler) readMTLS(ctx context.Context, rc *rayv1.RayCluster) (*mtlsObserved, error) {
	if !mtlsOn(rc, r.cfg) || rc.DeletionTimestamp != nil {
		return nil, nil
	}
	m := &mtlsObserved{Issuers: map[string]*Issuer{}, Certs: map[string]*Certificate{}, Secrets: map[string]*corev1.Secret{}}
	if v, ok := r.mtlsPending.Load(rc.UID); ok {
		m.PendingSince = v.(time.Time)
	}
	for _, gvk := range []schema.GroupVersionKind{IssuerGVK, CertificateGVK} {
		if _, err := r.client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			if meta.IsNoMatchError(err) {
				return m, nil
			}
			return nil, fmt.Errorf("looking up cert-manager's %ss: %w", gvk.Kind, err)
		}
	}
	m.CertManager = true
	get := func(gvk schema.GroupVersionKind, name string, out any) (bool, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		err := r.api.Get(ctx, types.NamespacedName{Namespace: rc.Namespace, Name: name}, u)
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("reading %s %s: %w", gvk.Kind, name, err)
		}
		return true, FromUnstructured(u, out)
	}
	for _, name := range []string{SelfSignedIssuerName(rc.Name), CAIssuerName(rc.Name)} {
		is := &Issuer{}
		if ok, err := get(IssuerGVK, name, is); err != nil {
			return nil, err
		} else if ok {
			m.Issuers[name] = is
		}
	}
	for _, name := range []string{CACertificateName(rc.Name), TLSCertificateName(rc.Name, true), TLSCertificateName(rc.Name, false)} {
		c := &Certificate{}
		if ok, err := get(CertificateGVK, name, c); err != nil {
			return nil, err
		} else if ok {
			m.Certs[name] = c
		}
	}
	for _, name := range []string{CASecretName(rc.Name, rc.UID), TLSSecretName(rc.Name, true), TLSSecretName(rc.Name, false)} {
		s := &corev1.Secret{}
		err := r.api.Get(ctx, types.NamespacedName{Namespace: rc.Namespace, Name: name}, s)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading Secret %s: %w", name, err)
		default:
			m.Secrets[name] = s
		}
	}
	return m, nil
}

// applyMTLS writes the planned mTLS objects in KubeRay's order, stopping
// at the first failure, gives the Secrets their owner references and says
// how the certificates stand; it reports false on a failure (the pass
// writes no pods, as after any child's failure). Certificates not ready
// yet hold back only the pod creations (decide dropped them), not the
// deletions, as KubeRay checks them on its creation paths only.
func (r *Reconciler) applyMTLS(ctx context.Context, rc *rayv1.RayCluster, p *plan, out *outcome) bool {
	m := p.MTLS
	if m == nil {
		return true
	}
	r.notePending(rc, m)
	fail := func(step string, err error) bool {
		if kit.Ambiguous(err) {
			out.ambiguous = true
		}
		out.fail(EventMTLSFailedToReconcile, fmt.Sprintf("Failed to reconcile mTLS %s: %v", step, err))
		return false
	}
	if len(m.Foreign) > 0 {
		name := m.Foreign[0]
		return fail(certStepName(rc, name), fmt.Errorf("Certificate %s/%s is controlled by another owner, not by RayCluster %s", rc.Namespace, name, rc.Name))
	}
	for _, st := range m.Steps {
		u, err := ToUnstructured(st.Object)
		if err != nil {
			return fail(st.Name, err)
		}
		if st.Update {
			err = r.client.Update(ctx, u)
			if apierrors.IsConflict(err) {
				// cert-manager wrote its status since it was read: no
				// Warning, the pass comes back in a second (not Ready) and
				// compares afresh; no pod is written meanwhile.
				log.FromContext(ctx).V(1).Info("mTLS certificate changed since read; next pass retries", "certificate", u.GetName())
				return false
			}
		} else {
			err = r.client.Create(ctx, u)
			if apierrors.IsAlreadyExists(err) {
				// Made since it was read: the next pass compares it.
				err = nil
			}
		}
		if err != nil {
			return fail(st.Name, err)
		}
		if st.Update {
			// "Updated head certificate SANs (IPs: [...])"
			r.events.Emit(rc, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: EventMTLSCertificatesUpdated, Action: "Update",
				Message: fmt.Sprintf("Updated %s SANs (IPs: %v)", st.Name, st.IPs)})
		}
	}
	for _, so := range m.OwnSecrets {
		s := so.Secret.DeepCopy()
		s.OwnerReferences = append(s.OwnerReferences, certOwnerRef(so.Cert))
		if err := r.client.Update(ctx, s); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fail(certStepName(rc, so.Cert.Name), err)
		}
	}
	if !m.Ready {
		r.events.EmitOnce(rc, "mtls", kit.Event{Type: corev1.EventTypeNormal, Reason: EventMTLSCertsNotReady, Action: "Reconcile",
			Message: "Waiting for cert-manager to issue mTLS certificates"})
		return true
	}
	r.events.EmitOnce(rc, "mtls", kit.Event{Type: corev1.EventTypeNormal, Reason: EventMTLSPKIReady, Action: "Reconcile",
		Message: "mTLS PKI is ready: CA, head, and worker certificates issued"})
	for _, e := range m.Expiring {
		r.events.EmitOnce(rc, "mtls-expiry/"+e.Name, kit.Event{Type: corev1.EventTypeWarning,
			Reason: EventMTLSCertificateExpiringSoon, Action: "Reconcile", Message: e.Message})
	}
	return true
}

// notePending remembers since when the cluster's certificates have been
// pending with nothing changed, for holdPodsForMTLS's back-off: forgotten
// once they are ready, started afresh by a change this pass makes.
func (r *Reconciler) notePending(rc *rayv1.RayCluster, m *mtlsPlan) {
	switch {
	case m.Ready:
		r.mtlsPending.Delete(rc.UID)
	case len(m.Steps) > 0:
		r.mtlsPending.Store(rc.UID, r.now())
	default:
		r.mtlsPending.LoadOrStore(rc.UID, r.now())
	}
}

// certStepName is KubeRay's step name of a Certificate.
func certStepName(rc *rayv1.RayCluster, name string) string {
	switch name {
	case TLSCertificateName(rc.Name, true):
		return leafStep(true)
	case TLSCertificateName(rc.Name, false):
		return leafStep(false)
	}
	return "CA certificate"
}

// leafStep is KubeRay's step name of the head's (head true) or the
// workers' leaf Certificate.
func leafStep(head bool) string {
	if head {
		return "head certificate"
	}
	return "worker certificate"
}

// addTLS is configureTLS (common/pod.go:428-538) and the autoscaler's
// SetContainerTLSConfig (:260-272) on a built pod: the ray-tls volume, the
// env and mount on the Ray container, wait-gcs-ready and the autoscaler
// (before the autoscalerOptions env and mounts, which KubeRay merges after
// it), and wait-for-tls-ip-san first of the init containers.
func addTLS(rc *rayv1.RayCluster, pod *corev1.Pod, head bool, cfg BuildConfig) {
	if !mtlsOn(rc, cfg) {
		return
	}
	spec := &pod.Spec
	if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == TLSVolumeName }) {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: TLSVolumeName,
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: TLSSecretName(rc.Name, head)}}})
	}
	ray := &spec.Containers[rayv1.RayContainerIndex]
	SetContainerTLS(ray)
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == kit.InitContainerName {
			SetContainerTLS(&spec.InitContainers[i])
		}
	}
	for i := range spec.Containers {
		if i != rayv1.RayContainerIndex && spec.Containers[i].Name == rayv1.AutoscalerContainerName && head && autoscalingEnabled(rc) {
			addAutoscalerTLS(rc, &spec.Containers[i])
		}
	}
	if slices.ContainsFunc(spec.InitContainers, func(c corev1.Container) bool { return c.Name == WaitTLSContainerName }) {
		return
	}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	wait := corev1.Container{
		Name:            WaitTLSContainerName,
		Image:           ray.Image,
		ImagePullPolicy: ray.ImagePullPolicy,
		Command:         []string{"sh", "-c"},
		Args:            []string{fmt.Sprintf(waitTLSScript, TLSMountPath+"/tls.crt")},
		SecurityContext: ray.SecurityContext.DeepCopy(),
		Env:             []corev1.EnvVar{fieldEnv("POD_IP", "status.podIP")},
		VolumeMounts:    []corev1.VolumeMount{tlsMount()},
		Resources:       corev1.ResourceRequirements{Limits: res, Requests: res.DeepCopy()},
	}
	spec.InitContainers = append([]corev1.Container{wait}, spec.InitContainers...)
}

// waitTLSScript is KubeRay's (common/pod.go:477-494), byte for byte; %s is
// the certificate's path.
const waitTLSScript = `CERT="%s"
if [ -z "${POD_IP}" ]; then
  POD_IP=$(hostname -i 2>/dev/null | awk '{print $1}')
fi
if ! command -v openssl >/dev/null 2>&1; then
  echo "openssl not found; cannot verify IP SAN" >&2
  exit 1
fi
echo "Waiting for TLS cert to include IP SAN for ${POD_IP}..."
while true; do
  if openssl x509 -in "${CERT}" -noout -text 2>/dev/null | grep -qE "IP Address:${POD_IP}([^0-9.]|$)"; then
    echo "TLS cert now includes IP SAN for ${POD_IP}"
    exit 0
  fi
  echo "IP SAN for ${POD_IP} not yet in cert, retrying in 5s..."
  sleep 5
done`

// tlsEnv is the env SetContainerTLSConfig adds, in its order.
func tlsEnv() []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: EnvRayUseTLS, Value: "1"},
		{Name: EnvRayTLSServerCert, Value: TLSMountPath + "/tls.crt"},
		{Name: EnvRayTLSServerKey, Value: TLSMountPath + "/tls.key"},
		{Name: EnvRayTLSCACert, Value: TLSMountPath + "/ca.crt"},
	}
}

// SetContainerTLS is KubeRay's SetContainerTLSConfig (common/pod.go:
// 540-580): the TLS env where absent, and the ray-tls mount unless one of
// that name or path exists.
func SetContainerTLS(c *corev1.Container) {
	for _, e := range tlsEnv() {
		setEnv(c, e)
	}
	if !slices.ContainsFunc(c.VolumeMounts, isTLSMount) {
		c.VolumeMounts = append(c.VolumeMounts, tlsMount())
	}
}

// addAutoscalerTLS puts the TLS env and mount on the autoscaler sidecar
// where KubeRay does (SetContainerTLSConfig before the autoscalerOptions
// merge, common/pod.go:260-272). ValidateTLSOptions forbids
// autoscalerOptions to set that env or mount, so checking the whole
// container is checking the sidecar's own part.
func addAutoscalerTLS(rc *rayv1.RayCluster, c *corev1.Container) {
	var mounts []corev1.VolumeMount
	if !slices.ContainsFunc(c.VolumeMounts, isTLSMount) {
		mounts = []corev1.VolumeMount{tlsMount()}
	}
	insertBeforeAutoscalerOptions(rc, c, tlsEnv(), mounts)
}

// tlsMount is the read-only mount of the ray-tls volume.
func tlsMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: TLSVolumeName, MountPath: TLSMountPath, ReadOnly: true}
}

// isTLSMount: m is named ray-tls or mounted at /etc/ray/tls.
func isTLSMount(m corev1.VolumeMount) bool {
	return m.Name == TLSVolumeName || m.MountPath == TLSMountPath
}
