package actions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/raydar/raydar/kube/actions"
)

// objectOf is the object each of everyAction writes: the name a protected
// context wants typed.
var objectOf = map[actions.Action]string{
	actions.ActionScale: "rc", actions.ActionDeleteWorkers: "rc", actions.ActionStopJob: "job",
	actions.ActionStopJobDirect: "job", actions.ActionSuspend: "svc", actions.ActionResume: "rc",
	actions.ActionDelete: "rc", actions.ActionTrigger: "nightly",
}

func TestProtectedContextRefusesEveryActionUntilItsNameIsConfirmed(t *testing.T) {
	pol := &actions.Policy{Path: "/home/alice/.config/raydar/config.yaml", Protected: []string{"prod-*"}}
	for action, run := range everyAction {
		t.Run(string(action), func(t *testing.T) {
			writes := 0
			funcs := interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, o ...client.PatchOption) error {
					writes++
					return c.Patch(ctx, obj, p, o...)
				},
				Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.DeleteOption) error {
					writes++
					return c.Delete(ctx, obj, o...)
				},
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.CreateOption) error {
					writes++
					return c.Create(ctx, obj, o...)
				},
			}
			opts := actions.Options{Context: "prod-eu"}
			pol.Apply("prod-eu", &opts)
			h := newHarness(t, opts, funcs, fixtures()...)
			if !h.a.Protected() {
				t.Fatal("Protected() is false on prod-eu with protected: [prod-*]")
			}
			for _, given := range []string{"", objectOf[action] + "x", strings.ToUpper(objectOf[action])} {
				r, err := run(actions.WithConfirmation(context.Background(), given), h.a)
				var pe *actions.ProtectedError
				if !errors.Is(err, actions.ErrProtected) || !errors.As(err, &pe) {
					t.Fatalf("confirmation %q: error %v; want a ProtectedError", given, err)
				}
				for _, want := range []string{"context prod-eu is protected", pol.Path, "--confirm " + objectOf[action], "nothing was changed"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("message %q does not say %q", err, want)
					}
				}
				if r.Outcome != actions.OutcomeRefused || writes != 0 || len(h.rec.got) != 0 || len(h.stopper.calls) != 0 {
					t.Fatalf("confirmation %q: outcome %s, %d writes, %d events, %d stops", given, r.Outcome, writes, len(h.rec.got), len(h.stopper.calls))
				}
			}
			if _, err := os.Stat(h.audit); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("audit log touched by refusals: %v", err)
			}
			r, err := run(actions.WithConfirmation(context.Background(), objectOf[action]), h.a)
			// resume of a cluster that runs: unchanged, past the guard all the same.
			if err != nil || (r.Outcome != actions.OutcomeApplied && r.Outcome != actions.OutcomeUnchanged) {
				t.Fatalf("confirmed with %q: %v, outcome %s", objectOf[action], err, r.Outcome)
			}
		})
	}
}

func TestReadOnlyContextFromTheConfigFileSaysWhy(t *testing.T) {
	pol, err := actions.ParsePolicy([]byte("readonly: [\"prod-eu\"]\nprotected: [\"prod-*\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	pol.Path = "/cfg/config.yaml"
	opts := actions.Options{Context: "prod-eu"}
	pol.Apply("prod-eu", &opts)
	h := newHarness(t, opts, interceptor.Funcs{}, fixtures()...)
	_, err = everyAction[actions.ActionScale](actions.WithConfirmation(context.Background(), "rc"), h.a)
	if !errors.Is(err, actions.ErrReadOnly) {
		t.Fatalf("error %v; want read-only", err)
	}
	if want := "context prod-eu is read-only in /cfg/config.yaml"; !strings.Contains(err.Error(), want) || h.a.ReadOnlyReason() != want {
		t.Fatalf("message %q, reason %q; want %q", err, h.a.ReadOnlyReason(), want)
	}

	other := actions.Options{Context: "staging"}
	pol.Apply("staging", &other)
	if other.ReadOnly || other.Protected {
		t.Fatalf("staging matched nothing yet got %+v", other)
	}
}

func TestPolicyFile(t *testing.T) {
	dir := t.TempDir()
	p, err := actions.LoadPolicy(filepath.Join(dir, "missing.yaml"))
	if err != nil || len(p.Protected)+len(p.ReadOnly) != 0 {
		t.Fatalf("missing file: %+v, %v; want an empty policy", p, err)
	}
	for name, tc := range map[string]struct{ yaml, want string }{
		"bad pattern": {"protected: [\"prod-[\"]\n", `protected: context pattern "prod-["`},
		"unknown key": {"protect: [prod]\n", "unknown field"},
		"empty entry": {"readonly: [\"\"]\n", "readonly: empty context pattern"},
		"not a list":  {"protected: {a: b}\n", "invalid YAML"},
		"bad context": {"contexts: [\"dev-[\"]\n", `contexts: context pattern "dev-["`},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := actions.LoadPolicy(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v; want it to say %q and the path", name, err, tc.want)
		}
	}
	pol := &actions.Policy{Protected: []string{"prod-*", "eu-main"}}
	for ctx, want := range map[string]bool{"prod-eu": true, "eu-main": true, "eu-main-2": false, "staging": false, "prod-": true, "team/prod-x": false} {
		var o actions.Options
		pol.Apply(ctx, &o)
		if o.Protected != want {
			t.Errorf("context %q protected=%v, want %v", ctx, o.Protected, want)
		}
	}
}
