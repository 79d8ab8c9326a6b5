package sandbox

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Authorization and identities.
//
// The sandbox's kube-apiserver always authorizes with RBAC
// (--authorization-mode=RBAC, set explicitly below rather than left to
// envtest's default), and always issues ServiceAccount tokens through the
// TokenRequest API: --service-account-issuer, --service-account-key-file
// and --service-account-signing-key-file point at a signing key pair
// generated with the sandbox's certificates (envtest makes it in
// <StateDir>/pki, sa-signer.crt and sa-signer.key). The admin identity of
// Config and KubeconfigPath is a client certificate in system:masters, so
// it is never refused; every other identity gets what RBAC grants it.
//
// With Options.Audit the API server also writes an audit log (audit.go).

// configureAuth sets the API server's authorization and, with
// Options.Audit, its audit log.
func (s *Sandbox) configureAuth(env *envtest.Environment) error {
	args := env.ControlPlane.APIServer.Configure()
	args.Set("authorization-mode", "RBAC")
	if !s.opts.Audit {
		return nil
	}
	policy := filepath.Join(s.StateDir, auditPolicyName)
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return fmt.Errorf("sandbox: writing the audit policy: %w", err)
	}
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", s.AuditLogPath())
	args.Set("audit-log-format", "json")
	// One file: the default 100 MB rotation would split a long run's log
	// (ReadAudit reads rotated files too, should it happen).
	args.Set("audit-log-maxsize", "10000")
	return nil
}

// writeKubeconfig writes an admin kubeconfig for cfg (client
// certificates): context and cluster name, user name-admin. Distinct names
// keep two sandboxes' entries apart in a merged KUBECONFIG (a:b), where the
// first file's entry of a name wins (kubectl's merge rule,
// clientcmd.ClientConfigLoadingRules.Load).
func writeKubeconfig(path, name string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name+"-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name + "-admin", Namespace: corev1.NamespaceDefault}
	kc.CurrentContext = name
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("sandbox: writing kubeconfig: %w", err)
	}
	return nil
}

// ServiceAccountToken returns a token for the ServiceAccount ns/name from
// the TokenRequest API, valid for ttl (at least 10 minutes: the API
// server's minimum).
func (s *Sandbox) ServiceAccountToken(ctx context.Context, ns, name string, ttl time.Duration) (string, error) {
	secs := int64(max(ttl, 10*time.Minute) / time.Second)
	tr, err := s.clients.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("sandbox: token for ServiceAccount %s/%s: %w", ns, name, err)
	}
	if tr.Status.Token == "" {
		return "", fmt.Errorf("sandbox: token for ServiceAccount %s/%s: the API server returned none", ns, name)
	}
	return tr.Status.Token, nil
}

// TokenConfig is a client configuration that authenticates with a bearer
// token (a ServiceAccount's) instead of the admin certificate.
func (s *Sandbox) TokenConfig(token string) *rest.Config {
	return &rest.Config{
		Host:            s.Config.Host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.Config.CAData},
		QPS:             s.Config.QPS,
		Burst:           s.Config.Burst,
	}
}

// WriteTokenKubeconfig writes a kubeconfig that authenticates with token,
// its context's namespace set to namespace, for kubectl and raydar; its
// context and cluster are named as the admin kubeconfig's (ContextName). The
// kubeconfig's user is named after the token's subject
// (system:serviceaccount:NS:NAME), which is what raydar shows as the user.
func (s *Sandbox) WriteTokenKubeconfig(path, token, namespace string) error {
	if token == "" {
		return errors.New("sandbox: WriteTokenKubeconfig: empty token")
	}
	name := s.ContextName
	user := tokenSubject(token)
	if user == "" {
		user = name + "-token"
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: s.Config.Host, CertificateAuthorityData: s.Config.CAData}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user, Namespace: namespace}
	kc.CurrentContext = name
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("sandbox: writing kubeconfig: %w", err)
	}
	return nil
}

// tokenSubject is the "sub" claim of a JWT, unverified (it only names the
// kubeconfig's user; the API server verifies the token), or "".
func tokenSubject(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	if json.Unmarshal(b, &claims) != nil {
		return ""
	}
	return claims.Sub
}
