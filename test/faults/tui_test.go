package faults

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/raydar/raydar/controller"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/testobj"
)

// TestOperatorAndTUIsShareTheLease: a `raydar operator` and two `raydar`
// TUIs (each in its own terminal, its embedded reconcile loop on as by
// default) meet on the one leader election Lease, each through its own
// APIProxy so that its requests are counted apart. While the operator
// holds the Lease it alone reconciles: the TUIs read, make no mutating
// request on ray.io objects, pods or Services, and show `observer` in
// their header. The operator is SIGKILLed: exactly one TUI takes the Lease
// within the lease duration (plus a retry and slack) and reconciles a
// scale-up; the other stays an observer and still writes nothing. Both
// quit with :q and leave no process behind.
func TestOperatorAndTUIsShareTheLease(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the TUIs run in tmux: install it (apt-get install -y tmux)")
	}
	s := newScenario(t)
	ctx := context.Background()
	// Where every raydar on this cluster meets (cmd/raydar leaseNamespace).
	leaseNS := "default"
	if _, err := kc.CoreV1().Namespaces().Get(ctx, controller.DefaultLeaderElectionNamespace, metav1.GetOptions{}); err == nil {
		leaseNS = controller.DefaultLeaderElectionNamespace
	}
	leases := kc.CoordinationV1().Leases(leaseNS)
	dropLease := func() {
		if err := leases.Delete(ctx, controller.DefaultLeaderElectionID, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the Lease %s/%s: %v", leaseNS, controller.DefaultLeaderElectionID, err)
		}
	}
	dropLease() // the Lease is shared by the whole cluster: start from none
	t.Cleanup(dropLease)
	holder := func() string {
		l, err := leases.Get(ctx, controller.DefaultLeaderElectionID, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	proxy := func(id string) (*APIProxy, string) {
		p, err := NewAPIProxy(sb.Config)
		if err != nil {
			t.Fatal(err)
		}
		p.Tee = s.audit
		t.Cleanup(func() { _ = p.Close() })
		kcfg := filepath.Join(t.TempDir(), id+".kubeconfig")
		if err := p.WriteKubeconfig(kcfg); err != nil {
			t.Fatal(err)
		}
		return p, kcfg
	}

	// The operator first, so that it holds the Lease before any TUI runs.
	const opID = "op-1"
	opProxy, opKcfg := proxy(opID)
	op := startOpProc(t, procArgs{kubeconfig: opKcfg, namespace: s.ns, identity: opID, elect: true, leaseNamespace: leaseNS})
	eventually(t, time.Minute, "the operator to hold the Lease", func() (bool, string) {
		h := holder()
		return h == opID, "holder " + h
	})
	tuis := map[string]*tuiProc{}
	for _, id := range []string{"tui-a", "tui-b"} {
		p, kcfg := proxy(id)
		tuis[id] = startTUI(t, id, p, kcfg, s.ns)
	}
	for _, u := range tuis {
		u.waitRole(time.Minute, "observer (leader: "+opID+")")
	}

	// Create, scale and delete under the operator.
	create(t, testobj.Cluster(s.ns, "t0", 1))
	create(t, testobj.Cluster(s.ns, "t1", 2))
	converged(t, s.ns, "2 clusters up under the operator")
	patchRC(t, s.ns, "t0", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr(int32(3)) })
	remove(t, testobj.Cluster(s.ns, "t1", 0))
	converged(t, s.ns, "t0 scaled to 3 and t1 deleted under the operator")
	ow := opProxy.Audit.ReconcileWrites(s.ns)
	s.check("the operator reconciles while it holds the Lease", ow > 0, fmt.Sprintf("the operator made %d writes", ow))
	for id, u := range tuis {
		w := tuiWrites(u.proxy.Audit.Requests())
		t.Logf("%s while the operator leads: %s", id, w)
		s.check("a TUI makes no mutating request while an operator holds the Lease", w.objectWrites == 0,
			fmt.Sprintf("%s: %s", id, w))
		s.check("a TUI writes no Lease while an operator holds it", w.leaseWrites == 0, fmt.Sprintf("%s: %s", id, w))
		s.check("a TUI makes no write other than Leases (and access reviews, which change nothing)", w.other == 0, fmt.Sprintf("%s: %s", id, w))
		s.selfCheck("a TUI reads (its caches are warm)", w.reads > 0, fmt.Sprintf("%s: %s", id, w))
		u.waitRole(10*time.Second, "observer (leader: "+opID+")")
	}

	// Kill the operator: one TUI takes over.
	op.kill()
	killed := time.Now()
	s.fault("SIGKILL the operator %s holding the Lease of two TUIs", opID)
	patchRC(t, s.ns, "t0", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr(int32(5)) })
	var newHolder string
	eventually(t, time.Minute, "a TUI to take the Lease", func() (bool, string) {
		newHolder = holder()
		return newHolder != "" && newHolder != opID, "holder " + newHolder
	})
	took := time.Since(killed)
	// Which TUI: the one whose proxy carried a successful Lease write.
	var winners []string
	for id, u := range tuis {
		if tuiWrites(u.proxy.Audit.Requests()).leaseOK > 0 {
			winners = append(winners, id)
		}
	}
	sort.Strings(winners)
	s.check("exactly one TUI takes the Lease", len(winners) == 1, fmt.Sprintf("Lease written by %v, holder %s", winners, newHolder))
	if len(winners) != 1 {
		t.FailNow()
	}
	winner := winners[0]
	loser := map[string]string{"tui-a": "tui-b", "tui-b": "tui-a"}[winner]
	t.Logf("%s (%s) took the Lease %s after the kill", winner, newHolder, took.Round(time.Millisecond))
	tally.figure("%s: a TUI took over %s after SIGKILL of the operator (lease %s, retry %s)", t.Name(), took.Round(100*time.Millisecond), leaseDuration, retryPeriod)
	limit := takeoverLimit
	s.check("a TUI takes over within the lease duration (+ one jittered retry period)", took <= limit, fmt.Sprintf("took %s, limit %s", took, limit))
	tuis[winner].waitRole(30*time.Second, "leader")
	tuis[loser].waitRole(30*time.Second, "observer (leader: "+newHolder+")")
	converged(t, s.ns, "the scale-up under "+winner)
	ww := tuis[winner].proxy.Audit.ReconcileWrites(s.ns)
	s.check("the TUI that took the Lease reconciles", ww > 0, fmt.Sprintf("%s made %d writes", winner, ww))

	for _, id := range []string{winner, loser} {
		w := tuiWrites(tuis[id].proxy.Audit.Requests())
		t.Logf("%s at the end: %s", id, w)
		tally.figure("%s: %s %s", t.Name(), id, w)
	}
	lw := tuiWrites(tuis[loser].proxy.Audit.Requests())
	s.check("the TUI that stays an observer makes no mutating request", lw.objectWrites == 0, fmt.Sprintf("%s: %s", loser, lw))
	s.check("the observer TUI writes the Lease only when it was free (at most the election's tries)", lw.leaseOK == 0,
		fmt.Sprintf("%s: %s", loser, lw))
	s.check("no TUI write other than Leases (and access reviews, which change nothing)", lw.other == 0, fmt.Sprintf("%s: %s", loser, lw))

	s.finish(func() {
		for id, u := range tuis {
			ps := strings.Join(u.processes(), "; ")
			s.selfCheck("a running TUI's processes are seen (else none left would prove nothing)", strings.Contains(ps, raydarBin), id+": "+ps)
			u.quit()
		}
		for _, u := range tuis {
			u.waitExit(time.Minute)
		}
		for id, u := range tuis {
			msg, ok := poll(30*time.Second, func() (bool, string) {
				left := u.processes()
				return len(left) == 0, strings.Join(left, "; ")
			})
			s.check("no process of a TUI left after :q", ok, id+": "+msg)
		}
	})
}

// writeCount sorts a TUI's requests.
type writeCount struct {
	byVerb map[string]int
	reads  int
	// objectWrites are mutating requests on ray.io objects, pods and
	// Services (and anything else not below): what only a reconciler does.
	objectWrites int
	// leaseWrites are attempts on coordination.k8s.io Leases, leaseOK the
	// successful ones.
	leaseWrites, leaseOK int
	// reviews are SelfSubjectAccessReviews (questions, not writes).
	reviews int
	// other mutating requests, neither Lease nor review nor object.
	other  int
	detail []string
}

func (w writeCount) String() string {
	verbs := make([]string, 0, len(w.byVerb))
	for v, n := range w.byVerb {
		verbs = append(verbs, fmt.Sprintf("%s %d", v, n))
	}
	sort.Strings(verbs)
	s := fmt.Sprintf("requests by verb [%s]; reads %d, object writes %d, Lease write attempts %d (%d succeeded), access reviews %d, other writes %d",
		strings.Join(verbs, ", "), w.reads, w.objectWrites, w.leaseWrites, w.leaseOK, w.reviews, w.other)
	if len(w.detail) > 0 {
		s += ": " + strings.Join(w.detail, "; ")
	}
	return s
}

func tuiWrites(reqs []Request) writeCount {
	w := writeCount{byVerb: map[string]int{}}
	for _, r := range reqs {
		w.byVerb[r.Method]++
		if !r.Mutating() {
			w.reads++
			continue
		}
		switch p := r.Path; {
		case strings.HasPrefix(p, "/apis/coordination.k8s.io/") && strings.Contains(p, "/leases"):
			w.leaseWrites++
			if r.OK() {
				w.leaseOK++
			}
		case r.Method == http.MethodPost && strings.HasPrefix(p, "/apis/authorization.k8s.io/"):
			w.reviews++
		case strings.HasPrefix(p, "/apis/ray.io/") || strings.Contains(p, "/pods") || strings.Contains(p, "/services"):
			w.objectWrites++
			w.detail = append(w.detail, fmt.Sprintf("%s %s %d", r.Method, p, r.Code))
		default:
			w.other++
			w.detail = append(w.detail, fmt.Sprintf("%s %s %d", r.Method, p, r.Code))
		}
	}
	return w
}

// tuiProc is `raydar` (the TUI) in its own tmux server: a real terminal of
// a fixed size, read with capture-pane and typed into with send-keys.
type tuiProc struct {
	t        *testing.T
	id       string
	proxy    *APIProxy
	sock     string
	exitFile string
	stderr   string
	logFile  string
	marker   string // an environment variable only this TUI's processes have
}

const (
	tuiWidth  = 220
	tuiHeight = 50
)

func startTUI(t *testing.T, id string, p *APIProxy, kubeconfig, ns string) *tuiProc {
	t.Helper()
	dir := t.TempDir()
	u := &tuiProc{
		t: t, id: id, proxy: p,
		sock:     filepath.Join(dir, "tmux.sock"),
		exitFile: filepath.Join(dir, "exit"),
		stderr:   filepath.Join(dir, "stderr"),
		logFile:  filepath.Join(dir, "raydar.log"),
		marker:   "RAYDAR_FAULTS_TUI=" + id + "-" + utilrand.String(10),
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "run.sh")
	body := fmt.Sprintf("#!/bin/sh\n%q --kubeconfig %q -n %q --no-color --log-file %q 2>%q\necho $? >%q\n",
		raydarBin, kubeconfig, ns, u.logFile, u.stderr, u.exitFile)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"new-session", "-d", "-s", "tui", "-x", strconv.Itoa(tuiWidth), "-y", strconv.Itoa(tuiHeight)}
	for _, kv := range []string{
		u.marker,
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"TERM=xterm-256color",
		"KUBECONFIG=" + kubeconfig,
	} {
		args = append(args, "-e", kv)
	}
	args = append(args, script)
	if out, err := u.tmux(args...); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := u.tmux("capture-pane", "-p", "-t", "tui")
			logb, _ := os.ReadFile(u.logFile)
			errb, _ := os.ReadFile(u.stderr)
			t.Logf("TUI %s: screen:\n%s\nstderr: %s\nlog (last 3000 bytes):\n%s", id, out, errb, tail(logb, 3000))
		}
		_, _ = u.tmux("kill-server")
	})
	return u
}

func (u *tuiProc) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", u.sock}, args...)...)
	cmd.Env = append(withoutKubeconfig(os.Environ()), "TMUX=") // never a surrounding tmux
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// header is the first non-empty line of the screen ("" when unreadable).
func (u *tuiProc) header() string {
	out, err := u.tmux("capture-pane", "-p", "-t", "tui")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// waitRole waits until the header shows "role: <role>".
func (u *tuiProc) waitRole(timeout time.Duration, role string) {
	u.t.Helper()
	eventually(u.t, timeout, u.id+"'s header to show role: "+role, func() (bool, string) {
		h := u.header()
		return strings.Contains(h, "role: "+role), "header: " + h + " " + u.exited()
	})
}

func (u *tuiProc) quit() {
	u.t.Helper()
	for _, k := range [][]string{{":"}, {"-l", "q"}, {"Enter"}} {
		if out, err := u.tmux(append([]string{"send-keys", "-t", "tui"}, k...)...); err != nil {
			u.t.Fatalf("%s: send-keys %v: %v: %s", u.id, k, err, out)
		}
	}
}

// exited is the TUI's exit code, "" while it runs.
func (u *tuiProc) exited() string {
	b, _ := os.ReadFile(u.exitFile)
	return strings.TrimSpace(string(b))
}

func (u *tuiProc) waitExit(timeout time.Duration) {
	u.t.Helper()
	eventually(u.t, timeout, u.id+" to exit after :q", func() (bool, string) { return u.exited() != "", "header: " + u.header() })
	if code := u.exited(); code != "0" {
		b, _ := os.ReadFile(u.stderr)
		u.t.Errorf("%s exited with %s; stderr:\n%s", u.id, code, b)
	}
}

// processes lists the running processes with this TUI's marker in their
// environment (raydar, its shell and anything they started).
func (u *tuiProc) processes() []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		env, _ := os.ReadFile(p + "/environ")
		cmdline, _ := os.ReadFile(p + "/cmdline")
		if len(cmdline) == 0 { // a zombie or a kernel thread
			continue
		}
		if bytes.Contains(env, []byte(u.marker+"\x00")) {
			out = append(out, filepath.Base(p)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}
