package seed

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Defaults of Options.
const (
	DefaultBurstEvery   = 90 * time.Second
	DefaultUpgradeAfter = 45 * time.Second
)

// Options configure Seed and Drive. The zero value is the demo's.
type Options struct {
	// Namespace holds the seeded objects; DefaultNamespace when empty.
	// Seed creates it if it is missing.
	Namespace string
	// BurstEvery is the time between two bursts of demand on
	// ClusterElastic (DefaultBurstEvery); each burst's tasks run a third
	// of it.
	BurstEvery time.Duration
	// Heads reaches the simulated Ray heads (kube/sandbox/headsim's Sim),
	// where Drive submits ClusterElastic's bursts; without it there are
	// none and ClusterElastic stays at its minimum.
	Heads raydash.AddressBook
	// UpgradeAfter is how long the RayService stays Ready with no upgrade
	// in progress before Drive upgrades it again (DefaultUpgradeAfter).
	UpgradeAfter time.Duration
	// PollEvery is how often Drive reads the RayService (default 2 s).
	PollEvery time.Duration
	// GatewayClass is the GatewayClass of a Gateway API implementation in
	// the sandbox (kube/sandbox/gatewaysim's ClassName). With it the
	// RayService upgrades with NewClusterWithIncrementalUpgrade through a
	// Gateway of that class, its traffic moving in ServiceStepPercent
	// steps; without it (no Gateway API CRDs) with NewCluster, the whole
	// traffic at once.
	GatewayClass string
	// Logf receives one line per object created and per driver step (the
	// lines carry no prefix; callers add theirs).
	Logf func(format string, args ...any)
}

func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.BurstEvery <= 0 {
		o.BurstEvery = DefaultBurstEvery
	}
	if o.UpgradeAfter <= 0 {
		o.UpgradeAfter = DefaultUpgradeAfter
	}
	if o.PollEvery <= 0 {
		o.PollEvery = 2 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

// NewClient returns a client for Seed and Drive: it talks to the API server
// directly (no cache) and knows client-go's types and ray.io/v1.
func NewClient(cfg *rest.Config) (client.Client, error) {
	return client.New(cfg, client.Options{Scheme: scheme.New()})
}

// Seed creates the namespace and every object of Objects that does not exist
// yet; objects that exist, seeded earlier or made by someone else, are left
// as they are, so running it again creates nothing twice. c must know
// ray.io/v1 (NewClient); a direct client is best, since Seed reads the
// namespace's default ServiceAccount.
//
// Before creating anything it waits (up to a minute) for the namespace's
// default ServiceAccount, without which pods are rejected; if it does not
// appear Seed goes on and the reconcile loop retries the pods.
func Seed(ctx context.Context, c client.Client, opts Options) error {
	o := opts.withDefaults()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace, Labels: map[string]string{PartOfLabelKey: PartOfValue}}}
	switch err := c.Create(ctx, ns); {
	case err == nil:
		o.Logf("created namespace %s", o.Namespace)
	case apierrors.IsAlreadyExists(err):
	default:
		return fmt.Errorf("creating namespace %s: %w", o.Namespace, err)
	}
	if err := waitServiceAccount(ctx, c, o.Namespace, time.Minute); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o.Logf("%v; going on", err)
	}
	for _, obj := range Objects(o.Namespace) {
		if rs, ok := obj.(*rayv1.RayService); ok && o.GatewayClass != "" {
			IncrementalUpgrade(rs, o.GatewayClass)
		}
		kind := kindOf(c.Scheme(), obj)
		switch err := c.Create(ctx, obj); {
		case err == nil:
			o.Logf("created %s %s/%s", kind, obj.GetNamespace(), obj.GetName())
		case apierrors.IsAlreadyExists(err):
		default:
			return fmt.Errorf("creating %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return nil
}

// waitServiceAccount polls for the namespace's default ServiceAccount, which
// the controller-manager creates shortly after the namespace.
func waitServiceAccount(ctx context.Context, c client.Client, ns string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no default ServiceAccount in namespace %s after %s: %v", ns, timeout, err)
		case <-t.C:
		}
	}
}

// kindOf is obj's kind as the scheme knows it (client.Scheme()).
func kindOf(s *runtime.Scheme, obj client.Object) string {
	if gvk, err := apiutil.GVKForObject(obj, s); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
