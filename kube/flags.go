package kube

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Flags are the kubectl flags every raydar command accepts.
type Flags struct {
	Kubeconfig string
	// Context is one kubeconfig context, or, for the commands that watch a
	// fleet (the TUI, get), a comma-separated list of them.
	Context       string
	Namespace     string
	AllNamespaces bool
	// AllContexts opens every context of the kubeconfig (AddFleetTo), or
	// only those ContextPatterns match when it has any.
	AllContexts bool
	// ContextPatterns narrow --all-contexts (path.Match patterns over the
	// whole context name): the config file's contexts list.
	ContextPatterns []string
	// ContextPatternsFrom names where ContextPatterns come from, for errors.
	ContextPatternsFrom string
	// DisableCompression asks the API server for uncompressed responses
	// (kubectl's --disable-compression). It can only turn compression off:
	// a kubeconfig cluster's disable-compression: true stays in force
	// whatever the flag says, as with kubectl.
	DisableCompression bool
}

// AddTo registers the flags with kubectl's names and shorthands.
func (f *Flags) AddTo(fs *pflag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.Context, "context", "", "the kubeconfig context to use (raydar and raydar get: a comma-separated list opens several at once)")
	fs.StringVarP(&f.Namespace, "namespace", "n", "", "namespace (default: the context's namespace)")
	fs.BoolVarP(&f.AllNamespaces, "all-namespaces", "A", false, "all namespaces")
	fs.BoolVar(&f.DisableCompression, "disable-compression", false, "if true, opt out of response compression for all requests to the server")
}

// AddFleetTo registers --all-contexts, for the commands that can watch
// several contexts at once (the TUI and get); their --context then takes a
// comma-separated list.
func (f *Flags) AddFleetTo(fs *pflag.FlagSet) {
	fs.BoolVar(&f.AllContexts, "all-contexts", false, "every context of the kubeconfig at once (only those the config file's contexts: list names, when it has one)")
}

// ErrSeveralContexts is Resolve's error when the flags name more than one
// context: the command acts on one.
var ErrSeveralContexts = errors.New("this command acts on one context")

// Fleet reports whether the flags ask for more than one context (a comma
// in --context, or --all-contexts).
func (f *Flags) Fleet() bool {
	return f.AllContexts || strings.Contains(f.Context, ",")
}

// ContextNames lists the contexts the flags open, in the order given: the
// --context list, every context of the kubeconfig with --all-contexts (in
// name order; those ContextPatterns match when there are any), or the one
// current context (""). A name the kubeconfig does
// not have, an empty or repeated list entry, and --all-contexts with
// --context are errors that name them.
func (f *Flags) ContextNames() ([]string, error) {
	if f.AllContexts && f.Context != "" {
		return nil, errors.New("--all-contexts and --context name the contexts twice: give one of them")
	}
	if !f.Fleet() {
		return []string{f.Context}, nil
	}
	have, err := f.Contexts()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	if f.AllContexts {
		if len(have) == 0 {
			return nil, errors.New("--all-contexts: the kubeconfig has no contexts")
		}
		if len(f.ContextPatterns) == 0 {
			return have, nil
		}
		var out []string
		for _, n := range have {
			if slices.ContainsFunc(f.ContextPatterns, func(p string) bool { ok, _ := path.Match(p, n); return ok }) {
				out = append(out, n)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("--all-contexts: no context of the kubeconfig (%s) matches the contexts of %s (%s)",
				strings.Join(have, ", "), f.ContextPatternsFrom, strings.Join(f.ContextPatterns, ", "))
		}
		return out, nil
	}
	var out []string
	for _, n := range strings.Split(f.Context, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			return nil, fmt.Errorf("--context %q: an empty context name in the list", f.Context)
		case slices.Contains(out, n):
			return nil, fmt.Errorf("--context %q: context %s is named twice", f.Context, n)
		case !slices.Contains(have, n):
			return nil, fmt.Errorf("--context %q: the kubeconfig has no context %q (it has: %s)", f.Context, n, strings.Join(have, ", "))
		}
		out = append(out, n)
	}
	return out, nil
}

// ResolveAll resolves each context ContextNames lists, with the same
// namespace flags; the first that fails is the error, naming its context.
func (f *Flags) ResolveAll() ([]*Target, error) {
	names, err := f.ContextNames()
	if err != nil {
		return nil, err
	}
	out := make([]*Target, 0, len(names))
	for _, n := range names {
		one := *f
		one.Context, one.AllContexts = n, false
		t, err := one.Resolve()
		if err != nil {
			if n != "" {
				return nil, fmt.Errorf("context %s: %w", n, err)
			}
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
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
// Flags naming several contexts (Fleet) are ErrSeveralContexts.
func (f *Flags) Resolve() (*Target, error) {
	if f.Fleet() {
		asked := "--all-contexts"
		if !f.AllContexts {
			asked = fmt.Sprintf("--context %q", f.Context)
		}
		return nil, fmt.Errorf("%w: %s names several; name one with --context", ErrSeveralContexts, asked)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.Kubeconfig != "" {
		rules.ExplicitPath = f.Kubeconfig
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	if f.Namespace != "" {
		overrides.Context.Namespace = f.Namespace
	}
	overrides.ClusterInfo.DisableCompression = f.DisableCompression
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
