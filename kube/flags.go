package kube

import (
	"fmt"
	"sort"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Flags are the kubectl flags every raydar command accepts.
type Flags struct {
	Kubeconfig    string
	Context       string
	Namespace     string
	AllNamespaces bool
}

// AddTo registers the flags with kubectl's names and shorthands.
func (f *Flags) AddTo(fs *pflag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.Context, "context", "", "the kubeconfig context to use")
	fs.StringVarP(&f.Namespace, "namespace", "n", "", "namespace (default: the context's namespace)")
	fs.BoolVarP(&f.AllNamespaces, "all-namespaces", "A", false, "all namespaces")
}

// Target is a resolved connection: where to talk and as whom.
type Target struct {
	Config      *rest.Config
	ContextName string
	Server      string
	// Namespace is the namespace to act in; for list views "" means all
	// namespaces when AllNamespaces is set.
	Namespace     string
	AllNamespaces bool
	// User is the kubeconfig user name of the context (for audit records).
	User string
}

// Resolve loads the kubeconfig the way kubectl does and applies the flags.
func (f *Flags) Resolve() (*Target, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.Kubeconfig != "" {
		rules.ExplicitPath = f.Kubeconfig
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	if f.Namespace != "" {
		overrides.Context.Namespace = f.Namespace
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig namespace: %w", err)
	}
	ctxName := raw.CurrentContext
	if f.Context != "" {
		ctxName = f.Context
	}
	t := &Target{Config: cfg, ContextName: ctxName, Server: cfg.Host, Namespace: ns, AllNamespaces: f.AllNamespaces}
	if c, ok := raw.Contexts[ctxName]; ok && c != nil {
		t.User = c.AuthInfo
	}
	// Interactive use needs headroom: the defaults (5 QPS) throttle list+watch start-up.
	cfg.QPS, cfg.Burst = 50, 100
	return t, nil
}

// Contexts lists the context names of the kubeconfig the flags point at.
func (f *Flags) Contexts() ([]string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.Kubeconfig != "" {
		rules.ExplicitPath = f.Kubeconfig
	}
	raw, err := rules.Load()
	if err != nil {
		return nil, err
	}
	return contextNames(raw), nil
}

func contextNames(c *clientcmdapi.Config) []string {
	out := make([]string, 0, len(c.Contexts))
	for n := range c.Contexts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
