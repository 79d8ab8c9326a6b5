package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/kube/raydash/addrbook"
	"github.com/raydar/raydar/kube/redact"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui"
)

// The token canary (issue 48, "no token anywhere on screen or in logs"): a
// RayCluster, a RayJob, a RayService and a RayCronJob whose Ray auth token
// (authOptions mode token, the user's Secret) is a unique string, also
// given literally as the head's RAY_AUTH_TOKEN, as an --auth-token flag of
// the jobs' entrypoints and kept in kubectl's last-applied copy, brought up by raydar's operator on the sandbox's
// simulated heads (which require that token on every dashboard call). Then
// every place raydar shows or writes something about them is searched for
// that string: each read sub-command in each -o format, the TUI's screens
// of those objects (lists, detail pages, describe pages, Ray logs, pod
// logs, the history blocks), the operator's log (stderr and
// --log-file-path), the TUI's log file, and the Kubernetes Events.
//
// A second namespace (echoWorld) has dashboards that answer with the
// request's headers echoed in a 500 body, the x-ray-authorization header
// among them: the same places must show that answer with the token
// redacted (kube/redact.Text, applied by kube/raydash), in the RayJob's and
// RayService's conditions and Events, the operator's log, raydar why and
// ray-logs, and the TUI's pages.
//
// Where a place prints the token's field (the objects' YAML and JSON, the
// describe pages) or the echo, it must show it redacted, so that a place
// that stopped showing it at all does not pass as clean.

// canaryPlace is one place searched: its name and what it showed.
type canaryPlace struct{ name, text string }

// canaryWorld is the canary's objects in one namespace.
type canaryWorld struct {
	token, ns                   string
	cluster, job, service, cron string
	jobCluster, serviceCluster  string
	kubeconfig                  string
	tuiLogFile                  string
	env                         *whyEnv
	// session is the TUI's connection the screens are drawn from; logger
	// writes its log file.
	session *session
	logger  logr.Logger
}

const canarySecret = "canary-auth"

// canaryToken is "canary-" and 16 random bytes in hex: a string no output
// holds by chance.
func canaryToken(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "canary-" + hex.EncodeToString(b)
}

// canarySpec is a cluster spec with token auth from the canary Secret and
// the token also given literally to the head (a user may: the controller
// then keeps the user's RAY_AUTH_TOKEN, as KubeRay does).
func canarySpec(ns, token string) rayv1.RayClusterSpec {
	spec := whyCluster(ns, "x").Spec
	spec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, SecretName: ptr.To(canarySecret)}
	head := &spec.HeadGroupSpec.Template.Spec.Containers[0]
	head.Env = append(head.Env, corev1.EnvVar{Name: "RAY_AUTH_TOKEN", Value: token}, corev1.EnvVar{Name: "RAY_AUTH_MODE", Value: "token"})
	return spec
}

// lastApplied gives obj kubectl apply's copy of itself.
func lastApplied(t *testing.T, obj client.Object) {
	t.Helper()
	gvks, _, err := scheme.New().ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	c := obj.DeepCopyObject().(client.Object)
	c.GetObjectKind().SetGroupVersionKind(gvks[0])
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	obj.SetAnnotations(map[string]string{redact.LastAppliedAnnotation: string(b)})
}

func TestTokenCanary(t *testing.T) {
	needSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the history file and the audit log
	w := &canaryWorld{token: canaryToken(t), cluster: "canary-rc", job: "canary-rj", service: "canary-rs", cron: "canary-rcj"}
	w.tuiLogFile = filepath.Join(t.TempDir(), "raydar.log")
	w.env = newSimEnv(t, ctx, nil)
	w.ns, w.kubeconfig = w.env.ns, w.env.kubeconfig

	// The TUI's session, as `raydar` makes it, its embedded reconcile loop
	// reconciling the namespace (the echo's is reconciled by `raydar
	// operator`: both loggers are searched), recording history and
	// logging to its log file.
	stopTUI := w.startSession(t, ctx)

	echo := newEchoWorld(t, ctx, w.token)

	w.create(t, ctx)
	w.waitUp(t, ctx)

	var places []canaryPlace
	places = append(places, w.mutate(t)...)
	places = append(places, w.cli(t)...)
	places = append(places, w.screens(t, ctx)...)
	places = append(places, w.events(t, ctx)...)
	places = append(places, echo.run(t, ctx, w.token, w.logger)...)
	stopTUI() // flushes the history and closes the TUI's log file
	places = append(places, w.env.history(t, w)...)
	if db, err := os.ReadFile(history.DefaultPathOrEmpty()); err != nil || len(db) == 0 {
		t.Errorf("the history file: %d bytes, %v", len(db), err)
	} else {
		places = append(places, canaryPlace{"the history file (its bytes)", string(db)})
	}
	b, err := os.ReadFile(w.tuiLogFile)
	if err != nil || !strings.Contains(string(b), "raycluster") {
		t.Errorf("the TUI's log file has no line of its reconcile loop (%v):\n%s", err, b)
	}
	places = append(places, canaryPlace{"the TUI's --log-file (its reconcile loop's too)", string(b)})
	auditPath, err := actions.DefaultAuditLogPath()
	if err != nil {
		t.Fatal(err)
	}
	audit, err := os.ReadFile(auditPath)
	if err != nil || len(audit) == 0 {
		t.Errorf("the audit log: %d bytes, %v", len(audit), err)
	}
	places = append(places, canaryPlace{"the audit log", string(audit)})
	echo.stopOperator()
	echoLog, err := os.ReadFile(echo.logFile)
	if err != nil || len(echoLog) == 0 {
		t.Errorf("the echo operator's --log-file-path: %d bytes, %v", len(echoLog), err)
	}
	places = append(places, canaryPlace{"echo: the operator's stderr", echo.operatorLog.String()}, canaryPlace{"echo: the operator's --log-file-path", string(echoLog)})

	// Where the token's fields are printed, they must show, redacted: else
	// the canary did not look where the token would be.
	shown := redact.Redacted(len(w.token))
	for _, p := range places {
		printsObject := strings.HasPrefix(p.name, "raydar get ") && !strings.HasSuffix(p.name, "-o table")
		if (printsObject || strings.Contains(p.name, "describe")) && !strings.Contains(p.name, "echo:") && !strings.Contains(p.text, shown) {
			t.Errorf("%s does not show the token's field (%s): the canary did not see it:\n%s", p.name, shown, p.text)
		}
	}
	leaks := 0
	for _, p := range places {
		if i := strings.Index(p.text, w.token); i >= 0 {
			leaks++
			t.Errorf("LEAK in %s: %q", p.name, excerpt(p.text, i, len(w.token)))
		}
	}
	t.Logf("searched %d places for the token; %d show it", len(places), leaks)
	if testing.Verbose() {
		names := make([]string, len(places))
		for i, p := range places {
			names[i] = fmt.Sprintf("%s (%d bytes, %d redacted values)", p.name, len(p.text), strings.Count(p.text, "<redacted "))
		}
		sort.Strings(names)
		t.Logf("places:\n  %s", strings.Join(names, "\n  "))
	}
}

// excerpt is the text around a hit, on one line.
func excerpt(s string, i, n int) string {
	from, to := max(0, i-80), min(len(s), i+n+40)
	return strings.ReplaceAll(s[from:to], "\n", "⏎")
}

func (w *canaryWorld) create(t *testing.T, ctx context.Context) {
	t.Helper()
	ns, tok := w.ns, w.token
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: canarySecret},
		Data: map[string][]byte{"auth_token": []byte(tok)}}
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.cluster}, Spec: canarySpec(ns, tok)}
	jobSpec := canarySpec(ns, tok)
	rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.job},
		Spec: rayv1.RayJobSpec{Entrypoint: "python job.py --auth-token " + tok, RayClusterSpec: &jobSpec,
			RuntimeEnvYAML: "env_vars:\n  RAY_AUTH_TOKEN: " + tok + "\n  OMP_NUM_THREADS: \"1\"\n"}}
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.service},
		Spec: rayv1.RayServiceSpec{RayClusterSpec: canarySpec(ns, tok), ServeConfigV2: "applications:\n  - name: llm\n    import_path: llm.app:model\n    route_prefix: /\n" +
			"    runtime_env:\n      env_vars: {RAY_AUTH_TOKEN: \"" + tok + "\", OMP_NUM_THREADS: \"1\"}\n"}}
	cronSpec := canarySpec(ns, tok)
	cj := &rayv1.RayCronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.cron},
		Spec: rayv1.RayCronJobSpec{Schedule: "0 2 29 2 *", JobTemplate: rayv1.RayJobSpec{Entrypoint: "python nightly.py --auth-token=" + tok, RayClusterSpec: &cronSpec}}}
	for _, o := range []client.Object{rc, rj, rs, cj} {
		lastApplied(t, o)
	}
	create(t, ctx, sec, rc, rj, rs, cj)
}

// waitUp waits until the cluster and the service's are ready and the job
// has succeeded: every dashboard call of the operator carried the token
// (the simulated heads refuse calls without it).
func (w *canaryWorld) waitUp(t *testing.T, ctx context.Context) {
	t.Helper()
	eventuallyCluster(t, ctx, w.ns, w.cluster, func(rc *rayv1.RayCluster) bool { return rc.Status.State == rayv1.Ready })
	for ctx.Err() == nil {
		rj, rs := &rayv1.RayJob{}, &rayv1.RayService{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: w.job}, rj); err != nil {
			t.Fatal(err)
		}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: w.service}, rs); err != nil {
			t.Fatal(err)
		}
		w.jobCluster, w.serviceCluster = rj.Status.RayClusterName, rs.Status.ActiveServiceStatus.RayClusterName
		if rj.Status.JobStatus == rayv1.JobStatusSucceeded && w.serviceCluster != "" &&
			metaTrue(rs.Status.Conditions, string(rayv1.RayServiceReady)) {
			return
		}
		pollPause(ctx)
	}
	b, _ := os.ReadFile(w.tuiLogFile)
	t.Fatalf("the RayJob did not succeed or the RayService did not get ready; the TUI's log:\n%s", b)
}

func metaTrue(cs []metav1.Condition, typ string) bool {
	for _, c := range cs {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// mutate runs the write sub-commands on the canary's objects, each in
// every -o format where it can be run again: their results, their Events
// (searched with the others) and the audit log (searched at the end). The
// trigger creates a RayJob from the RayCronJob's jobTemplate: the token is
// in its spec too.
func (w *canaryWorld) mutate(t *testing.T) []canaryPlace {
	t.Helper()
	var out []canaryPlace
	run := func(args ...string) {
		t.Helper()
		r := raydar(t, "", append([]string{"--kubeconfig", w.kubeconfig, "-n", w.ns}, args...)...)
		name := "raydar " + strings.Join(args, " ")
		if r.err != nil {
			t.Errorf("%s: %v\n%s", name, r.err, r.stderr)
		}
		out = append(out, canaryPlace{name, r.printed()})
	}
	for i, o := range []string{"table", "json", "yaml"} {
		run("scale", w.cluster, "cpu", "--replicas", fmt.Sprint(i+2), "--max", "5", "--yes", "-o", o)
		run("suspend", "raycronjob", w.cron, "--yes", "-o", o)
		run("resume", "raycronjob", w.cron, "--yes", "-o", o)
	}
	run("trigger", w.cron, "--yes", "-o", "yaml")
	return out
}

// cli runs every read sub-command on the canary's objects in every -o
// format: get (each resource, all and by name, -A), why, ray-logs.
func (w *canaryWorld) cli(t *testing.T) []canaryPlace {
	t.Helper()
	var out []canaryPlace
	run := func(args ...string) {
		t.Helper()
		r := raydar(t, "", append([]string{"--kubeconfig", w.kubeconfig, "-n", w.ns}, args...)...)
		name := "raydar " + strings.Join(args, " ")
		if r.err != nil {
			t.Errorf("%s: %v\n%s", name, r.err, r.stderr)
		}
		if strings.TrimSpace(r.stdout) == "" {
			t.Errorf("%s printed nothing (stderr %q)", name, r.stderr)
		}
		out = append(out, canaryPlace{name, r.printed()})
	}
	formats := []string{"table", "json", "yaml"}
	for res, name := range map[string]string{"clusters": w.cluster, "jobs": w.job, "services": w.service, "cronjobs": w.cron, "workers": w.cluster} {
		for _, o := range formats {
			run("get", res, "-o", o)
			run("get", res, name, "-o", o)
			run("get", res, "-A", "-o", o)
		}
	}
	for kind, name := range map[string]string{"cluster": w.cluster, "job": w.job, "service": w.service} {
		for _, o := range formats {
			run("why", kind, name, "-o", o)
		}
	}
	for _, o := range formats {
		run("ray-logs", w.cluster, "-o", o)
		run("ray-logs", "--job", w.job, "-o", o)
	}
	run("ray-logs", w.cluster, "raylet.out")
	return out
}

// history runs raydar history on each object (after the TUI's session,
// which recorded it, has closed its store).
func (e *whyEnv) history(t *testing.T, w *canaryWorld) []canaryPlace {
	t.Helper()
	var out []canaryPlace
	for kind, name := range map[string]string{"cluster": w.cluster, "job": w.job, "service": w.service, "cronjob": w.cron} {
		for _, o := range []string{"table", "json"} {
			args := []string{"--kubeconfig", w.kubeconfig, "-n", w.ns, "history", kind, name, "-o", o}
			r := raydar(t, "", args...)
			if r.err != nil {
				t.Errorf("raydar history %s %s: %v\n%s", kind, name, r.err, r.stderr)
			}
			out = append(out, canaryPlace{"raydar " + strings.Join(args[4:], " "), r.printed()})
		}
	}
	return out
}

// events are the Kubernetes Events of the namespace (raydar's operator's
// and the TUI's actions'), every field a person reads.
func (w *canaryWorld) events(t *testing.T, ctx context.Context) []canaryPlace {
	t.Helper()
	var l corev1.EventList
	if err := cl.List(ctx, &l, client.InNamespace(w.ns)); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) == 0 {
		t.Fatal("no Events in the namespace: the operator emitted none")
	}
	return []canaryPlace{{fmt.Sprintf("the namespace's %d Events", len(l.Items)), eventsText(t, l.Items)}}
}

// eventsText is Events as JSON, unescaped ("<redacted …>" as printed).
func eventsText(t *testing.T, evs []corev1.Event) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(evs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// printed is all a run printed: stdout, stderr and the error main prints.
func (r cliResult) printed() string {
	s := r.stdout + r.stderr
	if r.err != nil {
		s += "error: " + r.err.Error() + "\n"
	}
	return s
}

// startSession connects as `raydar` does, with its log file and history.
func (w *canaryWorld) startSession(t *testing.T, ctx context.Context) (stop func()) {
	t.Helper()
	flags := kube.Flags{Kubeconfig: w.kubeconfig, Namespace: w.ns}
	target, err := flags.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	book, err := sandboxBookFor(flags)
	if err != nil || book == nil {
		t.Fatalf("the sandbox's address book: %v", err)
	}
	logger, closeLog, err := openLog(w.tuiLogFile)
	if err != nil {
		t.Fatal(err)
	}
	store := history.OpenOrMemory(history.DefaultPathOrEmpty(), logger)
	s, err := connect(ctx, target, sessionConfig{logger: logger, history: store, book: book,
		reconcile: true, operator: controller.Options{Namespaces: []string{w.ns}}})
	if err != nil {
		t.Fatal(err)
	}
	w.session, w.logger = s, logger
	done := false
	stop = func() {
		if done {
			return
		}
		done = true
		s.Close()
		_ = store.Close()
		closeLog()
		// openLog set the process's controller-runtime and klog loggers.
		ctrllog.SetLogger(logr.Discard())
		klog.ClearLogger()
	}
	t.Cleanup(stop)
	return stop
}

// canaryTUI is the TUI on a session, in teatest, 250 columns and 700
// lines: every page whole.
type canaryTUI struct {
	t   *testing.T
	tm  *teatest.TestModel
	out []canaryPlace
}

// newCanaryTUI starts the TUI on s (synced first) in namespace ns, on the
// clusters list.
func newCanaryTUI(t *testing.T, ctx context.Context, s *session, ns string) *canaryTUI {
	t.Helper()
	for !s.src.Synced() {
		if ctx.Err() != nil {
			t.Fatal("the TUI's cache did not sync")
		}
		pollPause(ctx)
	}
	opts := tui.Options{Session: s.Session(ns), Actions: tui.DefaultActions(*s.deps), NoColor: true, StartView: tui.ClustersView}
	app, err := tui.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(250, 700),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii), tea.WithEnvironment([]string{"TERM=xterm-256color"}), tea.WithFilter(canaryProbe)))
	t.Cleanup(func() { _ = tm.Quit() })
	return &canaryTUI{t: t, tm: tm}
}

// see types keys, waits until the screen shows want, and keeps it.
func (c *canaryTUI) see(name, want string, keys ...string) {
	c.t.Helper()
	typeCanaryKeys(c.tm, keys...)
	c.out = append(c.out, canaryPlace{"TUI " + name, waitCanaryScreen(c.t, c.tm, want)})
}

// back leaves n pages (or a list's filter).
func (c *canaryTUI) back(n int) {
	for range n {
		typeCanaryKeys(c.tm, "<esc>")
	}
}

// screens drives the TUI through every page it has for the canary's
// objects and returns each screen.
func (w *canaryWorld) screens(t *testing.T, ctx context.Context) []canaryPlace {
	t.Helper()
	c := newCanaryTUI(t, ctx, w.session, w.ns)
	see, back := c.see, c.back
	rc, rs, rcj := w.ns+"/"+w.cluster, w.ns+"/"+w.service, w.ns+"/"+w.cron

	see("clusters list", w.serviceCluster)
	see("cluster page", "RayCluster "+rc, "/"+w.cluster, "<enter>", "<enter>")
	see("cluster describe", "Describe RayCluster", "d", "w")
	back(1)
	see("cluster Ray logs", "raylet.out", "L")
	see("cluster Ray log file (the first one)", "Ray log (lines", "<enter>")
	back(3)

	see("jobs list", w.job, ":rj", "<enter>")
	see("job page (its driver log inline)", "played out", "/"+w.job, "<enter>", "<enter>")
	see("job describe", "Describe RayJob", "d", "w")
	back(3) // describe, job page, the list's filter
	see("the RayCronJob's triggered job's page", "played out", "<enter>")
	back(1)

	see("services list", w.service, ":rs", "<enter>")
	see("service page", "RayService "+rs, "<enter>")
	see("service describe", "Describe RayService", "d", "w")
	back(2)

	see("cronjobs list", w.cron, ":rcj", "<enter>")
	see("cronjob describe", "Describe RayCronJob", "d", "w")
	back(1)
	see("cronjob page", "RayCronJob "+rcj, "<enter>")
	see("cronjob page: its triggered RayJob's describe", "Describe RayJob", "d", "w")
	back(2)

	see("pods list", w.cluster+"-head", ":pods", "<enter>")
	see("head pod describe", "RAY_AUTH_TOKEN", "/"+w.cluster+"-head", "<enter>", "d", "w")
	back(1)
	see("head pod logs", "Logs "+w.ns+"/"+w.cluster+"-head", "l")
	back(2)

	see("the job's cluster page", "RayCluster "+w.ns+"/"+w.jobCluster, ":rc", "<enter>", "<esc>", "/"+w.jobCluster, "<enter>", "<enter>")
	see("the job's cluster describe", "Describe RayCluster", "d", "w")
	back(3) // describe, cluster page, the list's filter
	see("the service's cluster page", "RayCluster "+w.ns+"/"+w.serviceCluster, "/"+w.serviceCluster, "<enter>", "<enter>")
	see("the service's cluster describe", "Describe RayCluster", "d", "w")
	return c.out
}

// canaryProbe answers probes inside the program's loop (race-free).
type canaryProbeMsg struct{ reply chan string }

func canaryProbe(m tea.Model, msg tea.Msg) tea.Msg {
	if p, ok := msg.(canaryProbeMsg); ok {
		p.reply <- ansi.Strip(m.(*tui.App).View().Content)
		return nil
	}
	return msg
}

// waitCanaryScreen waits until the screen shows want, and no log page on
// it is still connecting.
func waitCanaryScreen(t *testing.T, tm *teatest.TestModel, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		reply := make(chan string, 1)
		tm.Send(canaryProbeMsg{reply})
		screen := <-reply
		// A log page first says it is connecting: its lines are what
		// is searched.
		if strings.Contains(screen, want) && !strings.Contains(screen, "connecting…") {
			return screen
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q; last screen:\n%s", want, screen)
		}
		time.Sleep(10 * time.Millisecond) // a poll interval, not a synchronisation: the probe is
	}
}

// typeCanaryKeys types characters, or <enter>, <esc>.
func typeCanaryKeys(tm *teatest.TestModel, seq ...string) {
	for _, s := range seq {
		switch s {
		case "<enter>":
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		case "<esc>":
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
		default:
			tm.Type(s)
		}
	}
}

// echoDashboard is a Ray dashboard that refuses the calls that matter with
// a 500 whose body echoes the request's headers (the x-ray-authorization
// header among them), as a misconfigured proxy or a debug server does: a
// job's info is not found (so the operator submits), submitting it, Serve
// and the log API fail. It counts the calls that carried the token.
type echoDashboard struct {
	token string
	mu    sync.Mutex
	seen  map[string]int // "METHOD /path" of calls with the token
}

func (d *echoDashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.Contains(r.Header.Get(dashboard.AuthHeader), d.token) {
		d.mu.Lock()
		key := r.Method + " " + r.URL.Path
		if strings.HasPrefix(r.URL.Path, dashboard.JobsPath) && r.URL.Path != dashboard.JobsPath {
			key = r.Method + " " + dashboard.JobsPath + "ID"
		}
		d.seen[key]++
		d.mu.Unlock()
	}
	switch {
	case r.URL.Path == dashboard.GCSHealthPath:
		fmt.Fprint(w, dashboard.HealthyBody)
		return
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, dashboard.JobsPath) && r.URL.Path != dashboard.JobsPath:
		http.Error(w, "Job not found", http.StatusNotFound)
		return
	}
	var b strings.Builder
	b.WriteString("Traceback (most recent call last):\n  File \"proxy.py\", line 1, in handle\nRuntimeError: upstream refused the request with headers ")
	for k, vs := range r.Header {
		fmt.Fprintf(&b, "%s: %s; ", k, strings.Join(vs, ","))
	}
	http.Error(w, b.String(), http.StatusInternalServerError)
}

func (d *echoDashboard) calls(key string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seen[key]
}

// echoWorld is a second namespace whose clusters' dashboards are an
// echoDashboard, reconciled by an operator of its own (no leader
// election: the first one holds the Lease) that reaches them through an
// address book of the test's.
type echoWorld struct {
	ns, kubeconfig, book, logFile string
	dash                          *echoDashboard
	url                           string
	operatorLog                   *syncBuffer
	stopOperator                  func()
}

func newEchoWorld(t *testing.T, ctx context.Context, token string) *echoWorld {
	t.Helper()
	e := &echoWorld{ns: newNamespace(t, ctx), dash: &echoDashboard{token: token, seen: map[string]int{}}}
	srv := httptest.NewServer(e.dash)
	t.Cleanup(srv.Close)
	e.url = srv.URL
	dir := t.TempDir()
	e.kubeconfig, e.book, e.logFile = filepath.Join(dir, "kubeconfig"), filepath.Join(dir, addrbook.FileName), filepath.Join(dir, "operator.log")
	kc, err := os.ReadFile(sb.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := addrbook.Write(e.book, nil); err != nil {
		t.Fatal(err)
	}
	if err := addrbook.Advertise(e.kubeconfig, e.book); err != nil {
		t.Fatal(err)
	}
	e.operatorLog, _, e.stopOperator = startCommandAt(t, e.kubeconfig, "operator", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--watch-namespaces", e.ns, "--enable-leader-election=false", "--log-file-path", e.logFile, "--log-file-encoder", "console", "-v", "1")
	return e
}

// point makes the book send every named cluster's dashboard to the echo.
func (e *echoWorld) point(t *testing.T, clusters ...string) {
	t.Helper()
	var es []addrbook.Entry
	for _, c := range clusters {
		es = append(es, addrbook.Entry{Namespace: e.ns, Cluster: c, Dashboard: e.url, ServeProxy: e.url})
	}
	if err := addrbook.Write(e.book, es); err != nil {
		t.Fatal(err)
	}
}

// run drives the echo: a RayCluster, a RayJob submitted to it over HTTP and
// a RayService, all with the canary token, until the operator has had the
// echo for a submission and for Serve, and the RayJob's Event carries the
// echo (redacted). It returns the places that show it.
func (e *echoWorld) run(t *testing.T, ctx context.Context, token string, logger logr.Logger) []canaryPlace {
	t.Helper()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: canarySecret},
		Data: map[string][]byte{"auth_token": []byte(token)}}
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "echo-rc"}, Spec: canarySpec(e.ns, token)}
	rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "echo-rj"},
		Spec: rayv1.RayJobSpec{Entrypoint: "python job.py", SubmissionMode: rayv1.HTTPMode,
			ClusterSelector: map[string]string{rayv1.RayClusterLabelKey: "echo-rc"}}}
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "echo-rs"},
		Spec: rayv1.RayServiceSpec{RayClusterSpec: canarySpec(e.ns, token), ServeConfigV2: "applications:\n  - name: llm\n    import_path: llm.app:model\n    route_prefix: /\n"}}
	e.point(t, "echo-rc")
	create(t, ctx, sec, rc, rj, rs)

	var serviceCluster string
	for ctx.Err() == nil {
		got := &rayv1.RayService{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(rs), got); err != nil {
			t.Fatal(err)
		}
		if serviceCluster = got.Status.PendingServiceStatus.RayClusterName; serviceCluster != "" {
			break
		}
		pollPause(ctx)
	}
	e.point(t, "echo-rc", serviceCluster)
	submit, serve := http.MethodPost+" "+dashboard.JobsPath, "PUT "+dashboard.ServeApplicationsPath
	var events []corev1.Event
	for ctx.Err() == nil {
		var l corev1.EventList
		if err := cl.List(ctx, &l, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
		events = l.Items
		echoed := false
		for _, ev := range events {
			echoed = echoed || strings.Contains(ev.Message, dashboard.AuthHeader) || strings.Contains(ev.Message, "X-Ray-Authorization")
		}
		if e.dash.calls(submit) > 0 && e.dash.calls(serve)+e.dash.calls("GET "+dashboard.ServeApplicationsPath) > 0 && echoed {
			break
		}
		pollPause(ctx)
	}
	if ctx.Err() != nil {
		t.Fatalf("the operator never had the echo of a submission and of Serve, or no Event shows it: calls %v; Events %v; its log:\n%s", e.dash.seen, eventMessages(events), e.operatorLog)
	}
	t.Logf("echoed calls with the token: %v", e.dash.seen)

	out := []canaryPlace{{fmt.Sprintf("echo: the namespace's %d Events", len(events)), eventsText(t, events)}}
	cli := func(args ...string) {
		r := raydar(t, "", append([]string{"--kubeconfig", e.kubeconfig, "-n", e.ns}, args...)...)
		out = append(out, canaryPlace{"echo: raydar " + strings.Join(args, " "), r.printed()})
	}
	for _, o := range []string{"table", "json", "yaml"} {
		cli("get", "jobs", "echo-rj", "-o", o)
		cli("get", "services", "echo-rs", "-o", o)
		cli("why", "job", "echo-rj", "-o", o)
		cli("why", "service", "echo-rs", "-o", o)
		cli("ray-logs", "echo-rc", "-o", o)
	}
	cli("ray-logs", "--job", "echo-rj")
	cli("ray-logs", "echo-rc", "raylet.out")
	out = append(out, e.screens(t, ctx, logger)...)
	// Where the echo is shown, it must show redacted: else the canary did
	// not see it.
	for _, p := range out {
		if (strings.Contains(p.name, "Events") || strings.Contains(p.name, "ray-logs") || strings.Contains(p.name, " why ") ||
			strings.Contains(p.name, "refused") || strings.Contains(p.name, "job describe")) &&
			!strings.Contains(p.text, "Bearer <redacted ") {
			t.Errorf("%s does not show the echoed header, redacted: the canary did not see it:\n%s", p.name, p.text)
		}
	}
	return out
}

// screens are the TUI's pages that show the echo: the cluster's Ray logs
// (the dashboard's refusal), the job's and the service's pages and
// describe pages (their conditions and Events), from a session of the
// TUI's through the test's address book, logging to the TUI's log file.
func (e *echoWorld) screens(t *testing.T, ctx context.Context, logger logr.Logger) []canaryPlace {
	t.Helper()
	flags := kube.Flags{Kubeconfig: e.kubeconfig, Namespace: e.ns}
	target, err := flags.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	book, err := sandboxBookFor(flags)
	if err != nil || book == nil {
		t.Fatalf("the echo's address book: %v", err)
	}
	s, err := connect(ctx, target, sessionConfig{logger: logger, book: book})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := newCanaryTUI(t, ctx, s, e.ns)
	c.see("echo: clusters list", "echo-rc")
	c.see("echo: cluster page", "RayCluster "+e.ns+"/echo-rc", "/echo-rc", "<enter>", "<enter>")
	c.see("echo: cluster Ray logs (refused)", "Ray's log files cannot be read:", "L")
	c.back(3)
	c.see("echo: job page", "RayJob "+e.ns+"/echo-rj", ":rj", "<enter>", "<enter>")
	c.see("echo: job describe", "X-Ray-Authorization", "d", "w") // its Events, with the echo
	c.back(2)
	c.see("echo: service page", "RayService "+e.ns+"/echo-rs", ":rs", "<enter>", "<enter>")
	c.see("echo: service describe", "Describe RayService", "d", "w")
	return c.out
}

func eventMessages(evs []corev1.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Reason+": "+e.Message)
	}
	return out
}
