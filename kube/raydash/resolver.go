package raydash

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Resolver hands out a dashboard client for a RayCluster. Implementations
// are safe for concurrent use.
type Resolver interface {
	ClientFor(ctx context.Context, cluster *rayv1.RayCluster) (*dashboard.Client, error)
}

// AddressBook maps a RayCluster to the base URL of its dashboard. The
// sandbox implements it (kube/sandbox/headsim): its simulated heads listen on
// loopback ports, not on the cluster network.
type AddressBook interface {
	// DashboardURL returns the dashboard's base URL ("http://127.0.0.1:41234")
	// of the RayCluster namespace/name, and false while it has none (no
	// Ready head pod).
	DashboardURL(namespace, name string) (string, bool)
}

// SecretReader reads a Secret (for the Ray auth token).
type SecretReader interface {
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// SecretsFromReader adapts a controller-runtime reader. Pass a live reader
// (manager.GetAPIReader()), not the cache: caching every Secret of the
// cluster for a few tokens would be wasteful and needs list/watch rights.
func SecretsFromReader(r client.Reader) SecretReader { return readerSecrets{r} }

// SecretsFromClientset adapts a client-go clientset.
func SecretsFromClientset(cs kubernetes.Interface) SecretReader { return clientsetSecrets{cs} }

type readerSecrets struct{ r client.Reader }

func (s readerSecrets) GetSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	sec := &corev1.Secret{}
	if err := s.r.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, sec); err != nil {
		return nil, err
	}
	return sec, nil
}

type clientsetSecrets struct{ cs kubernetes.Interface }

func (s clientsetSecrets) GetSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	return s.cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
}

// Mode is the way a Resolver reaches dashboards.
type Mode string

// Modes.
const (
	// ModeAuto picks ModeAddressBook when an AddressBook is given,
	// ModeServiceDNS when running in a pod, else ModeServiceProxy.
	ModeAuto Mode = ""
	// ModeServiceDNS uses http://<head-svc>.<ns>.svc.<domain>:<port>.
	ModeServiceDNS Mode = "service-dns"
	// ModeServiceProxy goes through the API server's service proxy.
	ModeServiceProxy Mode = "service-proxy"
	// ModeAddressBook asks the AddressBook (the sandbox).
	ModeAddressBook Mode = "address-book"
)

// AuthTokenKey is the key of the Ray auth token in the cluster's Secret.
const AuthTokenKey = "auth_token"

// DefaultTokenTTL is how long a token read from a Secret is reused.
const DefaultTokenTTL = 30 * time.Second

// ErrNoKubernetesToken is returned when a cluster uses Kubernetes token auth
// and the caller's credentials carry no bearer token to send it.
var ErrNoKubernetesToken = errors.New("the cluster uses Kubernetes token auth (authOptions.enableK8sTokenAuth): its dashboard " +
	"accepts only a Kubernetes bearer token allowed the verb ray:write on the RayCluster, and these credentials carry none " +
	"(client certificate or exec plugin); use a kubeconfig with a ServiceAccount token")

// ErrNoDashboard is returned when the cluster has no reachable dashboard
// address yet (no head Service known, or, in the sandbox, no Ready head pod). It wraps
// dashboard.ErrUnavailable, so callers treat it like a refused connection.
var ErrNoDashboard = fmt.Errorf("no dashboard address for the cluster: %w", dashboard.ErrUnavailable)

// Options configure New.
type Options struct {
	// Mode forces a way; default ModeAuto.
	Mode Mode
	// Config is the API server connection, needed by ModeServiceProxy.
	Config *rest.Config
	// AddressBook, when set, makes ModeAuto pick ModeAddressBook.
	AddressBook AddressBook
	// Secrets reads auth Secrets. Without it, clusters in token mode get a
	// client without a token (calls then fail as unauthorized).
	Secrets SecretReader
	// ClusterDomain for ModeServiceDNS. Default $CLUSTER_DOMAIN, else
	// cluster.local.
	ClusterDomain string
	// HeadServiceName names a cluster's head Service. Default: the
	// cluster's status.head.serviceName. The controller passes its
	// naming rule (controller.HeadServiceName) so that a cluster whose
	// status is not written yet is still reachable.
	HeadServiceName func(*rayv1.RayCluster) string
	// Timeout per dashboard call; default the dashboard package's
	// (2 s direct, 10 s through the proxy).
	Timeout time.Duration
	// TokenTTL: see DefaultTokenTTL.
	TokenTTL time.Duration
	// KubernetesToken is the bearer token sent to the dashboard of a
	// cluster with Kubernetes token auth (authOptions.enableK8sTokenAuth):
	// such a dashboard accepts no Secret's token, only a Kubernetes token
	// whose identity the API server reviews and allows the verb ray:write
	// on that RayCluster. Default: Config's own bearer token (BearerToken,
	// else the file BearerTokenFile, read on each call so a rotated token is
	// sent at once; TokenTTL caches Secrets, not this), so the
	// caller acts as itself; an identity without one (a client certificate,
	// an exec plugin) gets ErrNoKubernetesToken.
	KubernetesToken func(ctx context.Context, rc *rayv1.RayCluster) (string, error)
	// Getenv replaces os.Getenv (tests).
	Getenv func(string) string
	// Now replaces time.Now (tests).
	Now func() time.Time
}

// ClusterResolver is the Resolver New returns.
type ClusterResolver struct {
	opts  Options
	mode  Mode
	proxy dashboard.Doer // the API server's HTTP client (ModeServiceProxy)

	mu     sync.Mutex
	tokens map[types.NamespacedName]cachedToken
}

type cachedToken struct {
	token   string
	fetched time.Time
}

var _ Resolver = (*ClusterResolver)(nil)

// New returns a Resolver that reaches dashboards in the way opts say.
func New(opts Options) (*ClusterResolver, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = DefaultTokenTTL
	}
	if opts.ClusterDomain == "" {
		opts.ClusterDomain = opts.Getenv("CLUSTER_DOMAIN")
	}
	if opts.KubernetesToken == nil {
		opts.KubernetesToken = configBearerToken(opts.Config)
	}
	if opts.ClusterDomain == "" {
		opts.ClusterDomain = "cluster.local"
	}
	r := &ClusterResolver{opts: opts, tokens: map[types.NamespacedName]cachedToken{}}
	r.mode = opts.Mode
	if r.mode == ModeAuto {
		switch {
		case opts.AddressBook != nil:
			r.mode = ModeAddressBook
		case InCluster(opts.Getenv):
			r.mode = ModeServiceDNS
		default:
			r.mode = ModeServiceProxy
		}
	}
	switch r.mode {
	case ModeAddressBook:
		if opts.AddressBook == nil {
			return nil, errors.New("raydash: ModeAddressBook needs an AddressBook")
		}
	case ModeServiceDNS:
	case ModeServiceProxy:
		if opts.Config == nil {
			return nil, errors.New("raydash: reaching dashboards through the API server's service proxy needs a rest.Config")
		}
		hc, err := rest.HTTPClientFor(opts.Config)
		if err != nil {
			return nil, fmt.Errorf("raydash: API server HTTP client: %w", err)
		}
		r.proxy = hc
	default:
		return nil, fmt.Errorf("raydash: unknown mode %q", opts.Mode)
	}
	return r, nil
}

// InCluster reports whether this process runs in a Kubernetes pod: the
// kubelet sets KUBERNETES_SERVICE_HOST in every container.
func InCluster(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	return getenv("KUBERNETES_SERVICE_HOST") != ""
}

// Mode is the way this Resolver reaches dashboards.
func (r *ClusterResolver) Mode() Mode { return r.mode }

// ClientFor returns a client for the cluster's dashboard. It does no I/O
// except reading the auth Secret (cached for TokenTTL) of a cluster in
// token mode; whether the dashboard answers shows on the first call.
func (r *ClusterResolver) ClientFor(ctx context.Context, rc *rayv1.RayCluster) (*dashboard.Client, error) {
	if rc == nil {
		return nil, errors.New("raydash: nil RayCluster")
	}
	var opts []dashboard.Option
	if r.opts.Timeout > 0 {
		opts = append(opts, dashboard.WithTimeout(r.opts.Timeout))
	}
	token, err := r.token(ctx, rc)
	if err != nil {
		return nil, err
	}
	if token != "" {
		opts = append(opts, dashboard.WithToken(token))
	}

	switch r.mode {
	case ModeAddressBook:
		u, ok := r.opts.AddressBook.DashboardURL(rc.Namespace, rc.Name)
		if !ok {
			return nil, fmt.Errorf("raydash: RayCluster %s/%s: %w", rc.Namespace, rc.Name, ErrNoDashboard)
		}
		return dashboard.New(u, opts...)
	case ModeServiceDNS:
		svc := r.headService(rc)
		if svc == "" {
			return nil, fmt.Errorf("raydash: RayCluster %s/%s: head Service not known yet: %w", rc.Namespace, rc.Name, ErrNoDashboard)
		}
		return dashboard.New("http://"+ServiceDNSAddress(svc, rc.Namespace, r.opts.ClusterDomain, DashboardPort(rc)), opts...)
	default: // ModeServiceProxy
		svc := r.headService(rc)
		if svc == "" {
			return nil, fmt.Errorf("raydash: RayCluster %s/%s: head Service not known yet: %w", rc.Namespace, rc.Name, ErrNoDashboard)
		}
		return dashboard.NewServiceProxy(r.opts.Config.Host, r.proxy, rc.Namespace, svc, opts...)
	}
}

func (r *ClusterResolver) headService(rc *rayv1.RayCluster) string {
	if r.opts.HeadServiceName != nil {
		if n := r.opts.HeadServiceName(rc); n != "" {
			return n
		}
	}
	return rc.Status.Head.ServiceName
}

// AuthSecretName is the Secret holding a token-mode cluster's Ray auth
// token: authOptions.secretName, else the Secret the controller generates,
// named after the cluster; "" when the cluster does not use token auth, or
// uses Kubernetes token auth, which has no Secret (K8sTokenAuth).
//
// As in KubeRay, only an explicit authOptions.mode "token" turns auth on
// (an authOptions without a mode does not), and a name longer than 50
// characters keeps its last 50 (KubeRay's utils.CheckName).
func AuthSecretName(rc *rayv1.RayCluster) string {
	o := rc.Spec.AuthOptions
	if o == nil || o.Mode != rayv1.AuthModeToken || K8sTokenAuth(rc) {
		return ""
	}
	if o.SecretName != nil && *o.SecretName != "" {
		return *o.SecretName
	}
	return GeneratedAuthSecretName(rc.Name)
}

// maxGeneratedNameLength is KubeRay's utils.CheckName limit.
const maxGeneratedNameLength = 50

// GeneratedAuthSecretName is the name of the auth Secret the controller
// creates for cluster: the cluster's name, its last 50 characters when
// longer, with a leading digit or punctuation replaced by "r".
func GeneratedAuthSecretName(cluster string) string {
	s := cluster
	if len(s) > maxGeneratedNameLength {
		s = s[len(s)-maxGeneratedNameLength:]
	}
	if s != "" && (unicode.IsDigit(rune(s[0])) || unicode.IsPunct(rune(s[0]))) {
		s = "r" + s[1:]
	}
	return s
}

// K8sTokenAuth reports whether rc's dashboard checks callers' Kubernetes
// tokens (authOptions mode token with enableK8sTokenAuth): Ray asks the API
// server to review the bearer token (TokenReview) and whether its identity
// may use the verb ray:write on rayclusters/<name> (SubjectAccessReview).
func K8sTokenAuth(rc *rayv1.RayCluster) bool {
	o := rc.Spec.AuthOptions
	return o != nil && o.Mode == rayv1.AuthModeToken && o.EnableK8sTokenAuth != nil && *o.EnableK8sTokenAuth
}

// configBearerToken is the default Options.KubernetesToken: cfg's bearer
// token, or its BearerTokenFile's content (a projected token is rotated by
// the kubelet: the file is read on each call, and ClientFor's callers keep a
// client only briefly).
func configBearerToken(cfg *rest.Config) func(context.Context, *rayv1.RayCluster) (string, error) {
	return func(_ context.Context, rc *rayv1.RayCluster) (string, error) {
		if cfg != nil && cfg.BearerToken != "" {
			return cfg.BearerToken, nil
		}
		if cfg != nil && cfg.BearerTokenFile != "" {
			b, err := os.ReadFile(cfg.BearerTokenFile)
			if err != nil {
				return "", fmt.Errorf("raydash: RayCluster %s/%s: reading the bearer token file: %w", rc.Namespace, rc.Name, err)
			}
			if t := strings.TrimSpace(string(b)); t != "" {
				return t, nil
			}
		}
		return "", fmt.Errorf("raydash: RayCluster %s/%s: %w", rc.Namespace, rc.Name, ErrNoKubernetesToken)
	}
}

// token returns the cluster's Ray auth token ("" without token auth): with
// Kubernetes token auth the caller's Kubernetes token, else the Secret's.
func (r *ClusterResolver) token(ctx context.Context, rc *rayv1.RayCluster) (string, error) {
	if K8sTokenAuth(rc) {
		return r.opts.KubernetesToken(ctx, rc)
	}
	name := AuthSecretName(rc)
	if name == "" || r.opts.Secrets == nil {
		return "", nil
	}
	key := types.NamespacedName{Namespace: rc.Namespace, Name: name}
	now := r.opts.Now()
	r.mu.Lock()
	c, ok := r.tokens[key]
	r.mu.Unlock()
	if ok && now.Sub(c.fetched) < r.opts.TokenTTL {
		return c.token, nil
	}
	sec, err := r.opts.Secrets.GetSecret(ctx, rc.Namespace, name)
	if err != nil {
		return "", fmt.Errorf("raydash: reading the Ray auth token of RayCluster %s/%s from Secret %s: %w", rc.Namespace, rc.Name, name, err)
	}
	tok := string(sec.Data[AuthTokenKey])
	if tok == "" {
		tok = sec.StringData[AuthTokenKey]
	}
	if tok == "" {
		return "", fmt.Errorf("raydash: Secret %s/%s has no %s key (the Ray auth token of RayCluster %s)", rc.Namespace, name, AuthTokenKey, rc.Name)
	}
	r.mu.Lock()
	r.tokens[key] = cachedToken{token: tok, fetched: now}
	r.mu.Unlock()
	return tok, nil
}

// ForgetToken drops a cached token, e.g. after an unauthorized answer.
func (r *ClusterResolver) ForgetToken(rc *rayv1.RayCluster) {
	name := AuthSecretName(rc)
	if name == "" {
		return
	}
	r.mu.Lock()
	delete(r.tokens, types.NamespacedName{Namespace: rc.Namespace, Name: name})
	r.mu.Unlock()
}

// DashboardPort is the head's dashboard port: status.endpoints["dashboard"]
// when the cluster reports it, else 8265.
func DashboardPort(rc *rayv1.RayCluster) int32 {
	if p, err := strconv.ParseInt(rc.Status.Endpoints[rayv1.DashboardPortName], 10, 32); err == nil && p > 0 {
		return int32(p)
	}
	return rayv1.DefaultDashboardPort
}

// ServiceDNSAddress is "<service>.<namespace>.svc.<domain>:<port>", the form
// KubeRay writes into a RayJob's status.dashboardURL (no scheme).
func ServiceDNSAddress(service, namespace, domain string, port int32) string {
	if domain == "" {
		domain = "cluster.local"
	}
	return net.JoinHostPort(service+"."+namespace+".svc."+domain, strconv.Itoa(int(port)))
}
