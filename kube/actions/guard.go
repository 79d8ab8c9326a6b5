package actions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/kube"
)

// The guardrails of raydar's config file ($XDG_CONFIG_HOME/raydar/config.yaml):
// contexts it marks protected take a write only when the object's name was
// typed to confirm it; contexts it marks read-only take none. Both are
// decided here, in run, for the TUI and the CLI alike.

// ErrProtected is matched (errors.Is) by every *ProtectedError.
var ErrProtected = errors.New("protected context")

// ProtectedError is returned by every apply method on a protected context
// (Options.Protected) when the context carries no confirmation naming the
// object (WithConfirmation).
type ProtectedError struct {
	Context string
	// Why says where the context was marked protected ("in PATH").
	Why    string
	Object ObjectRef
	// Given is the confirmation given ("": none).
	Given string
}

// Error says that the object is in a protected context and what
// confirmation was missing.
func (e *ProtectedError) Error() string {
	given := "no confirmation was given"
	if e.Given != "" {
		given = fmt.Sprintf("the confirmation %q is not its name", e.Given)
	}
	why := ""
	if e.Why != "" {
		why = " " + e.Why
	}
	return fmt.Sprintf("context %s is protected%s: %s refused, %s; confirm with the object's name (--confirm %s); nothing was changed",
		e.Context, why, e.Object, given, e.Object.Name)
}

// Is makes errors.Is(err, ErrProtected) true.
func (e *ProtectedError) Is(target error) bool { return target == ErrProtected }

type confirmationKey struct{}

// WithConfirmation returns ctx carrying what the person typed to confirm a
// write on a protected context: it must equal the object's name.
func WithConfirmation(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, confirmationKey{}, name)
}

func confirmationFrom(ctx context.Context) string {
	s, _ := ctx.Value(confirmationKey{}).(string)
	return s
}

// Protected reports whether writes need the object's name typed to confirm
// them (Options.Protected).
func (a *Actions) Protected() bool { return a.opts.Protected }

// Context is the kubeconfig context the actions write to.
func (a *Actions) Context() string { return a.opts.Context }

// ReadOnlyReason says why every mutation is refused ("" with --readonly or
// when they are not).
func (a *Actions) ReadOnlyReason() string { return a.opts.ReadOnlyReason }

// CheckConfirmation is the protected-context rule: nil unless the context is
// protected and confirmation is not exactly ref's name. run applies it to
// every write; the CLI asks it before its preview, so that a refusal comes
// before the question.
func (a *Actions) CheckConfirmation(ref ObjectRef, confirmation string) error {
	if !a.opts.Protected || confirmation == ref.Name {
		return nil
	}
	return &ProtectedError{Context: a.opts.Context, Why: a.opts.ProtectedWhy, Object: ref, Given: confirmation}
}

// Policy is the guardrails part of raydar's config file:
//
//	protected: ["prod-*", "eu-main"]   # writes need the object's name typed
//	readonly: ["prod-eu"]              # no writes at all, as --readonly
//	contexts: ["prod-*", "dev"]        # what --all-contexts opens
//
// Entries are context names or path.Match patterns ("*" matches any run of
// characters but "/", "?" one, "[a-z]" a class).
type Policy struct {
	// Path is the file the policy was read from ("" for none).
	Path      string   `json:"-"`
	Protected []string `json:"protected,omitempty"`
	ReadOnly  []string `json:"readonly,omitempty"`
	// Contexts are the contexts --all-contexts opens (kube.Flags'
	// ContextPatterns); none: every context of the kubeconfig.
	Contexts []string `json:"contexts,omitempty"`
}

// ConfigPath is raydar's config file: $XDG_CONFIG_HOME/raydar/config.yaml,
// or ~/.config/raydar/config.yaml when XDG_CONFIG_HOME is unset or relative
// (beside keys.yaml).
func ConfigPath() (string, error) {
	return kube.ConfigFile("config.yaml")
}

// LoadPolicy reads the policy at path; a missing file is an empty policy.
// A bad file (YAML, unknown key, bad pattern) is an error naming path: a
// guardrail that silently does not apply is worse than none.
func LoadPolicy(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Policy{Path: path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	p.Path = path
	return p, nil
}

// LoadDefaultPolicy reads the policy at ConfigPath().
func LoadDefaultPolicy() (*Policy, error) {
	path, err := ConfigPath()
	if err != nil {
		return nil, err
	}
	return LoadPolicy(path)
}

// ParsePolicy parses the YAML of a config file.
func ParsePolicy(data []byte) (*Policy, error) {
	var p Policy
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	for _, l := range []struct {
		key string
		pat []string
	}{{"protected", p.Protected}, {"readonly", p.ReadOnly}, {"contexts", p.Contexts}} {
		for _, pat := range l.pat {
			if pat == "" {
				return nil, fmt.Errorf("%s: empty context pattern", l.key)
			}
			if _, err := path.Match(pat, ""); err != nil {
				return nil, fmt.Errorf("%s: context pattern %q: %w", l.key, pat, err)
			}
		}
	}
	return &p, nil
}

// matches reports the first pattern of pats that context matches.
func matches(pats []string, context string) (string, bool) {
	for _, pat := range pats {
		if ok, _ := path.Match(pat, context); ok {
			return pat, true
		}
	}
	return "", false
}

// Apply sets o's guardrails for context: ReadOnly with ReadOnlyReason when
// a readonly entry matches it, Protected with ProtectedWhy when a protected
// entry does. A nil policy changes nothing.
func (p *Policy) Apply(context string, o *Options) {
	if p == nil || context == "" {
		return
	}
	where := p.Path
	if where == "" {
		where = "the config file"
	}
	if pat, ok := matches(p.ReadOnly, context); ok {
		o.ReadOnly = true
		o.ReadOnlyReason = fmt.Sprintf("context %s is read-only in %s", context, where)
		if pat != context {
			o.ReadOnlyReason += fmt.Sprintf(" (%q)", pat)
		}
	}
	if pat, ok := matches(p.Protected, context); ok {
		o.Protected = true
		o.ProtectedWhy = "in " + where
		if pat != context {
			o.ProtectedWhy += fmt.Sprintf(" (%q)", pat)
		}
	}
}
