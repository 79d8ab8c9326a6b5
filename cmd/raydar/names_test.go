package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/tui"
)

// fakeAPI is an API server that knows the ray.io/v1 and core v1 resources
// (discovery) and nothing else: every other request is recorded and
// answered 404, so what a command asked for says which kind it took.
type fakeAPI struct {
	srv  *httptest.Server
	mu   sync.Mutex
	asks []string // "GET /apis/ray.io/v1/namespaces/ns/rayclusters/x"
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{}
	resources := func(gv string, rs ...kinds.Kind) map[string]any {
		var list []map[string]any
		for _, k := range rs {
			list = append(list, map[string]any{"name": k.Resource.Resource, "singularName": strings.ToLower(k.Kind), "namespaced": true,
				"kind": k.Kind, "verbs": []string{"get", "list", "watch", "create", "update", "patch", "delete"}})
		}
		list = append(list, map[string]any{"name": "events", "namespaced": true, "kind": "Event", "verbs": []string{"create", "list"}})
		return map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list}
	}
	var ray []kinds.Kind
	for _, k := range kinds.Ray {
		ray = append(ray, *k)
	}
	discovery := map[string]any{
		"/api": map[string]any{"kind": "APIVersions", "versions": []string{"v1"}},
		"/apis": map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []map[string]any{{"name": "ray.io",
			"versions": []map[string]string{{"groupVersion": "ray.io/v1", "version": "v1"}}, "preferredVersion": map[string]string{"groupVersion": "ray.io/v1", "version": "v1"}}}},
		"/api/v1":         resources("v1", *kinds.Pod),
		"/apis/ray.io/v1": resources("ray.io/v1", ray...),
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if d, ok := discovery[r.URL.Path]; ok {
			_ = json.NewEncoder(w).Encode(d)
			return
		}
		f.mu.Lock()
		f.asks = append(f.asks, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"}`)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// kubeconfig writes a kubeconfig for the server, namespace ns.
func (f *fakeAPI) kubeconfig(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: %q}}]
users: [{name: someone, user: {token: t}}]
contexts: [{name: fake, context: {cluster: fake, user: someone, namespace: ns}}]
current-context: fake
`, f.srv.URL)
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// resourceAsked is the resource of the first request since the last call
// ("rayclusters"), "" when there was none.
func (f *fakeAPI) resourceAsked() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer func() { f.asks = nil }()
	for _, a := range f.asks {
		if _, rest, ok := strings.Cut(a, "/namespaces/ns/"); ok {
			res, _, _ := strings.Cut(rest, "/")
			return res
		}
	}
	return ""
}

// TestEveryNameEverywhere walks every name a user may type for every kind
// (rayapi/kinds) through every entry point that takes a kind: raydar get,
// why, history, suspend and resume, the TUI's `:` prompt and raydar -c.
// Each takes the name as the same kind; an entry point that does not apply
// to the kind (why of a RayCronJob, suspend of a pod) refuses every spelling
// with the same words, the spelling aside.
func TestEveryNameEverywhere(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	api := newFakeAPI(t)
	kc := api.kubeconfig(t)
	run := func(args ...string) cliResult {
		return raydar(t, "", append([]string{"--kubeconfig", kc}, args...)...)
	}
	// refusals[entry point] is the one refusal (spelling replaced by NAME)
	// every spelling of every kind it does not take gets.
	refusals := map[string]string{}
	refused := func(t *testing.T, entry, name string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s %q: accepted, want it refused", entry, name)
			return
		}
		msg := strings.ReplaceAll(err.Error(), fmt.Sprintf("%q", name), `"NAME"`)
		if prev, ok := refusals[entry]; ok && prev != msg {
			t.Errorf("%s %q refused with\n  %s\nanother spelling with\n  %s", entry, name, msg, prev)
		}
		refusals[entry] = msg
	}
	histFile := filepath.Join(t.TempDir(), "history.db")
	for _, k := range kinds.All {
		for _, name := range k.Names {
			for _, spelled := range []string{name, strings.ToUpper(name[:1]) + name[1:]} {
				t.Run(k.Kind+"/"+spelled, func(t *testing.T) {
					want := k.Resource.Resource

					// raydar get NAME (every kind lists).
					r := run("get", spelled)
					if got := api.resourceAsked(); got != want {
						t.Errorf("get %s listed %q (%v), want %s", spelled, got, r.err, want)
					}

					// raydar why NAME x.
					r = run("why", spelled, "x")
					if k.Why {
						if got := api.resourceAsked(); got != want {
							t.Errorf("why %s read %q (%v), want %s", spelled, got, r.err, want)
						}
					} else {
						refused(t, "why", spelled, r.err)
					}

					// raydar history NAME x.
					r = run("history", spelled, "x", "--history-file", histFile, "-o", "json")
					if k.IsRay() {
						var js struct{ Kind string }
						if err := json.Unmarshal([]byte(r.stdout), &js); err != nil || js.Kind != k.Kind {
							t.Errorf("history %s: kind %q (%v, %v), want %s", spelled, js.Kind, err, r.err, k.Kind)
						}
					} else {
						refused(t, "history", spelled, r.err)
					}

					// raydar suspend|resume NAME x.
					for _, verb := range []string{"suspend", "resume"} {
						r = run(verb, spelled, "x", "--yes")
						if k.Suspend != nil {
							if got := api.resourceAsked(); got != want {
								t.Errorf("%s %s read %q (%v), want %s", verb, spelled, got, r.err, want)
							}
						} else {
							refused(t, verb, spelled, r.err)
						}
					}

					// raydar -c NAME opens the kind's list.
					f := tuiFlags{command: spelled}
					if v, err := f.startView(); err != nil || string(v) != want {
						t.Errorf("-c %s: %q, %v; want %s", spelled, v, err, want)
					}

					// :NAME in the TUI shows the kind's list (from another one).
					start := tui.PodsView
					if k == kinds.Pod {
						start = tui.ClustersView
					}
					app, err := tui.New(tui.Options{Store: watch.NewStore(), StartView: start, NoColor: true})
					if err != nil {
						t.Fatal(err)
					}
					app.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
					for _, r := range ":" + spelled {
						app.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
					}
					app.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
					if screen := ansi.Strip(app.View().Content); !strings.Contains(screen, k.Plural+"(all)") {
						t.Errorf(":%s did not show %s:\n%s", spelled, k.Plural, screen)
					}
				})
			}
		}
	}
	for _, entry := range []string{"why", "history", "suspend", "resume"} {
		if refusals[entry] == "" {
			t.Errorf("%s refused nothing: every kind applies?", entry)
		}
		t.Logf("%s refuses: %s", entry, refusals[entry])
	}
}
