package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/kube/sandbox/seed"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Terminal size of the demo's tmux session: wide enough that no column the
// test reads is cut.
const (
	termWidth  = 220
	termHeight = 60
)

// TestDemo is issue 8's "Done when": `raydar demo` in a terminal shows every
// seeded kind in its expected state; a scale and a stop made with the TUI's
// keys reach the API; quitting leaves no process behind. And issue 45's: a
// shell opened from a cluster page runs `ray status` in the simulated head
// and exits back to the page.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: builds raydar and runs the whole demo (skipped with -short)")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test drives the demo through tmux: install it (apt-get install -y tmux)")
	}
	ctrllog.SetLogger(logr.Discard()) // the API client's; the demo logs to its own file
	bin, tools, dir := buildRaydar(t)
	sandboxtest.Lock(t) // before the demo's environment is made: the demo inherits the lock

	d := startDemo(t, bin, tools, dir)
	defer d.dumpOnFailure()

	// ---- every seeded kind, as a person sees it ----
	d.waitScreen(5*time.Minute, "the seeded RayClusters in their states", func(s string) (bool, string) {
		return rowsHave(s, map[string][]string{
			seed.ClusterElastic: {"ready"},
			seed.ClusterGPU:     {"0/2", "provisioning"},
			seed.ClusterPaused:  {"suspended"},
			seed.ClusterShared:  {"2/2", "ready"},
		})
	})
	d.view("rj", "RayJobs")
	d.waitScreen(3*time.Minute, "the seeded RayJobs in their states", func(s string) (bool, string) {
		return rowsHave(s, map[string][]string{
			seed.JobLogs:      {"RUNNING", "Running"},
			seed.JobSucceeded: {"SUCCEEDED", "Complete"},
			seed.JobFailed:    {"FAILED", "Failed"},
			seed.JobWaiting:   {"Initializ", seed.ClusterGPU},
			seed.JobSelector:  {"RUNNING", seed.ClusterShared},
		})
	})
	d.view("rs", "RayServices")
	d.waitScreen(3*time.Minute, "the RayService Ready", func(s string) (bool, string) {
		return rowsHave(s, map[string][]string{seed.ServiceName: {"Ready"}})
	})
	// Why the GPU cluster is stuck: its detail shows Pending workers and the
	// scheduler's reason.
	d.view("rc", "RayClusters")
	d.openRow(seed.ClusterGPU)
	d.waitScreen(time.Minute, "Pending GPU workers and the scheduler's reason", func(s string) (bool, string) {
		ok := strings.Contains(s, "Pending") && strings.Contains(s, "FailedScheduling") &&
			strings.Contains(s, "Insufficient "+string(seed.GPUResource))
		return ok, "no Pending pods with a FailedScheduling Event naming " + string(seed.GPUResource)
	})
	d.back("RayClusters")

	// ---- Ray's own gauges (issue 44): each worker's CPU and GPU use, a
	// sparkline, and the idle GPU found in :gpus within a minute ----
	d.openRow(seed.ClusterGPUInfer)
	worker := seed.ClusterGPUInfer + "-" + seed.InferGroup + "-worker-"
	d.waitScreen(2*time.Minute, "the GPU worker's CPU and per-GPU use, and the Use line", func(s string) (bool, string) {
		row := lineWith(s, worker, "Running") // its table row, not the Why block's idle-GPU evidence
		ok := cpuCell.MatchString(row) && busyIdleGPUs.MatchString(row) && useLine.MatchString(s)
		return ok, fmt.Sprintf("worker row %q: want a CPU %% and one busy GPU and one at 0%%; and a Use: line with CPU and GPU", row)
	})
	d.back("RayClusters")
	d.command("gpus")
	d.waitScreen(time.Minute, "the idle GPU first in :gpus", func(s string) (bool, string) {
		row := lineWith(s, worker)
		ok := strings.Contains(row, " 0% ") && strings.HasSuffix(strings.TrimSpace(row), "idle") &&
			strings.Contains(s, "idle: below 5% for 30s;") // the demo's threshold, said as set
		return ok, fmt.Sprintf("first GPU row %q: want the GPU at 0%% marked idle, under the demo's threshold (below 5%% for 30s)", row)
	})
	d.back("RayClusters")

	c := d.client()
	ctx := context.Background()

	// ---- scale ClusterShared's group to 4 with keys ----
	// (not ClusterElastic: the demo's driver scales that one on its own)
	const scaleTo = 4
	d.openRow(seed.ClusterShared)
	d.moveTo("group "+seed.SharedGroup, 10)
	d.keys("s")
	d.waitScreen(30*time.Second, "the scale dialog", func(s string) (bool, string) {
		return strings.Contains(s, "Scale worker group "+seed.SharedGroup+" of RayCluster "+seed.DefaultNamespace+"/"+seed.ClusterShared), "no dialog"
	})
	d.typeText(strconv.Itoa(scaleTo))
	d.keys("Enter", "Right") // from the field to the buttons, then to Confirm
	d.confirm()
	eventually(t, 2*time.Minute, fmt.Sprintf("RayCluster %s scaled to %d ready workers", seed.ClusterShared, scaleTo), func() (bool, string) {
		rc := &rayv1.RayCluster{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: seed.DefaultNamespace, Name: seed.ClusterShared}, rc); err != nil {
			return false, err.Error()
		}
		r := rc.Spec.WorkerGroupSpecs[0].Replicas
		return r != nil && *r == scaleTo && rc.Status.ReadyWorkerReplicas == scaleTo,
			fmt.Sprintf("replicas %v, ready %d", ptrString(r), rc.Status.ReadyWorkerReplicas)
	})
	d.back("RayClusters")

	// ---- stop JobLogs with keys ----
	d.view("rj", "RayJobs")
	d.selectRow(seed.JobLogs)
	d.keys("x")
	d.waitScreen(30*time.Second, "the stop confirmation", func(s string) (bool, string) {
		return strings.Contains(s, "Stop RayJob "+seed.DefaultNamespace+"/"+seed.JobLogs), "no dialog"
	})
	d.keys("Right")
	d.confirm()
	eventually(t, 2*time.Minute, "RayJob "+seed.JobLogs+" STOPPED", func() (bool, string) {
		j := &rayv1.RayJob{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: seed.DefaultNamespace, Name: seed.JobLogs}, j); err != nil {
			return false, err.Error()
		}
		return j.Status.JobStatus == rayv1.JobStatusStopped,
			fmt.Sprintf("job %q, deployment %q, annotations %v", j.Status.JobStatus, j.Status.JobDeploymentStatus, j.Annotations)
	})
	d.waitScreen(time.Minute, "the stopped job on screen", func(s string) (bool, string) {
		return rowsHave(s, map[string][]string{seed.JobLogs: {"STOPPED"}})
	})
	for _, a := range []actions.Action{actions.ActionScale, actions.ActionStopJob} {
		if want := fmt.Sprintf(`"action":%q`, a); !strings.Contains(d.auditLog(), want) {
			t.Errorf("the audit log has no %s line:\n%s", want, d.auditLog())
		}
	}

	// ---- a shell in ClusterShared's head, from its page (issue 45) ----
	// The TUI gives the terminal to the shell (kwok runs it on this
	// machine, kube/sandbox/execsim), whose `ray status` asks the
	// cluster's simulated head; exit lands back on the page.
	d.view("rc", "RayClusters")
	d.openRow(seed.ClusterShared)
	d.keys("a")
	d.waitScreen(time.Minute, "the shell's banner", func(s string) (bool, string) {
		return strings.Contains(s, "raydar: a shell in the head of "+seed.DefaultNamespace+"/"+seed.ClusterShared), "no banner"
	})
	d.typeText("ray status; echo cluster=$RAY_CLUSTER_NAME")
	d.keys("Enter")
	d.waitScreen(time.Minute, "ray status in the head", func(s string) (bool, string) {
		ok := strings.Contains(s, "Autoscaler status") && strings.Contains(s, "Total Usage:") &&
			strings.Contains(s, " CPU") && strings.Contains(s, "cluster="+seed.ClusterShared)
		return ok, "no ray status answer"
	})
	d.typeText("exit")
	d.keys("Enter")
	d.waitScreen(time.Minute, "the cluster page again", func(s string) (bool, string) {
		return strings.Contains(s, "/"+seed.ClusterShared+" ") && strings.Contains(s, "ended") && !strings.Contains(s, "Autoscaler status"),
			"not back on the page with the shell's end said"
	})
	if want := `"action":"exec"`; !strings.Contains(d.auditLog(), want) {
		t.Errorf("the audit log has no %s line:\n%s", want, d.auditLog())
	}
	d.moveTo("group "+seed.SharedGroup, 10) // the page takes keys again
	d.back("RayClusters")

	// ---- quit: everything stops ----
	d.seesProcesses()
	d.command("q")
	d.waitExit(2 * time.Minute)
	d.noneLeft()
}

// The gauge cells the demo's GPU worker shows: its CPU, one GPU busy and
// one at 0 % ("93%,0%"), and the cluster page's Use line.
var (
	cpuCell      = regexp.MustCompile(`\s\d{1,3}%\s`)
	busyIdleGPUs = regexp.MustCompile(`\s[1-9]\d%,0%\s`)
	useLine      = regexp.MustCompile(`Use: CPU \d+% .*GPU \d+%`)
)

// lineWith is the first line of screen containing every one of words (""
// for none).
func lineWith(screen string, words ...string) string {
	for _, l := range strings.Split(screen, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(l, w)
		}
		if all {
			return l
		}
	}
	return ""
}

// demo is `raydar demo` running in its own tmux server.
type demo struct {
	t        *testing.T
	sock     string // tmux server socket
	stateDir string // --state-dir
	home     string // HOME, XDG_CONFIG_HOME and XDG_STATE_HOME live here
	stderr   string // the demo's stderr (its progress lines)
	exitFile string // the demo's exit code, once it has exited
	marker   string // an environment variable only the demo's processes have
	last     string // the last screen read
}

func startDemo(t *testing.T, bin, tools, dir string) *demo {
	t.Helper()
	d := &demo{
		t:        t,
		sock:     filepath.Join(dir, "tmux.sock"),
		stateDir: filepath.Join(dir, "state"),
		home:     filepath.Join(dir, "home"),
		stderr:   filepath.Join(dir, "demo.stderr"),
		exitFile: filepath.Join(dir, "demo.exit"),
		marker:   "RAYDAR_E2E_MARKER=" + utilrand.String(12),
	}
	if err := os.MkdirAll(d.home, 0o755); err != nil {
		t.Fatal(err)
	}
	// The command line of the session's shell names neither the state
	// directory nor the marker, so that only the demo's own processes
	// match them at the end.
	script := filepath.Join(dir, "run.sh")
	body := fmt.Sprintf("#!/bin/sh\n%q demo --no-color --state-dir %q --log-file %q 2>%q\necho $? >%q\n",
		bin, d.stateDir, filepath.Join(dir, "raydar.log"), d.stderr, d.exitFile)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"new-session", "-d", "-s", "demo", "-x", strconv.Itoa(termWidth), "-y", strconv.Itoa(termHeight)}
	for _, kv := range []string{
		d.marker,
		sandbox.ToolsDirEnv + "=" + tools,
		"HOME=" + d.home,
		"XDG_CONFIG_HOME=" + filepath.Join(d.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(d.home, ".local", "state"),
		"TERM=xterm-256color",
	} {
		args = append(args, "-e", kv)
	}
	args = append(args, script)
	if out, err := d.tmux(args...); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { _, _ = d.tmux("kill-server") })
	return d
}

func (d *demo) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", d.sock}, args...)...)
	cmd.Env = append(os.Environ(), "TMUX=") // never talk to a surrounding tmux
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// screen is what the terminal shows now.
func (d *demo) screen() string {
	out, err := d.tmux("capture-pane", "-p", "-t", "demo")
	if err != nil {
		d.t.Fatalf("capture-pane: %v: %s (the demo has exited? %s)", err, out, d.exited())
	}
	d.last = out
	return out
}

// keys sends named keys (Enter, Escape, Right, or single characters).
func (d *demo) keys(keys ...string) {
	d.t.Helper()
	if out, err := d.tmux(append([]string{"send-keys", "-t", "demo"}, keys...)...); err != nil {
		d.t.Fatalf("send-keys %v: %v: %s", keys, err, out)
	}
}

// typeText sends text literally.
func (d *demo) typeText(text string) {
	d.t.Helper()
	if out, err := d.tmux("send-keys", "-t", "demo", "-l", text); err != nil {
		d.t.Fatalf("send-keys -l %q: %v: %s", text, err, out)
	}
}

// command runs a `:` command (rc, rj, rs, q).
func (d *demo) command(cmd string) {
	d.t.Helper()
	d.keys(":")
	d.typeText(cmd)
	d.keys("Enter")
}

// view switches to a list with a `:` command and waits for its title
// ("RayJobs(raydar-demo)…").
func (d *demo) view(cmd, list string) {
	d.t.Helper()
	d.command(cmd)
	d.waitScreen(30*time.Second, "the "+list+" list", func(s string) (bool, string) {
		return strings.Contains(titleLine(s), " "+list+"("), "title: " + titleLine(s)
	})
}

// waitScreen reads the screen every 250 ms until cond holds.
func (d *demo) waitScreen(timeout time.Duration, what string, cond func(screen string) (bool, string)) {
	d.t.Helper()
	eventually(d.t, timeout, what+" on screen", func() (bool, string) {
		ok, msg := cond(d.screen())
		return ok, msg + "\n--- screen ---\n" + d.last
	})
}

// selectRow filters the current list down to name and waits for its row
// under the cursor.
func (d *demo) selectRow(name string) {
	d.t.Helper()
	d.clearFilter()
	d.keys("/")
	d.typeText(name)
	d.keys("Enter")
	d.waitScreen(30*time.Second, "the cursor on "+name, func(s string) (bool, string) {
		_, ok := cursorRow(s, name)
		return ok, "no selected row " + name
	})
}

// titleLine is the line of the view's title: the first after the header
// that is drawn with dashes.
func titleLine(screen string) string {
	for _, line := range strings.Split(screen, "\n") {
		if strings.HasPrefix(line, "---") {
			return line
		}
	}
	return ""
}

// clearFilter clears the current list's filter (shown in its title as
// "</text>"), if it has one. A terminal cannot tell Escape followed at once
// by another key from an Alt chord, so the next key is sent only once the
// Escape has shown its effect.
func (d *demo) clearFilter() {
	d.t.Helper()
	if !strings.Contains(titleLine(d.screen()), " </") {
		return
	}
	d.keys("Escape")
	d.waitScreen(30*time.Second, "the filter cleared", func(s string) (bool, string) {
		return !strings.Contains(titleLine(s), " </"), "the title still shows a filter"
	})
}

// back leaves a detail view with Escape and waits for the list whose title
// starts with list ("RayClusters", "RayJobs").
func (d *demo) back(list string) {
	d.t.Helper()
	d.keys("Escape")
	d.waitScreen(30*time.Second, "the "+list+" list", func(s string) (bool, string) {
		return strings.Contains(titleLine(s), " "+list+"("), "title: " + titleLine(s)
	})
}

// openRow selects name in the current list and opens its detail.
func (d *demo) openRow(name string) {
	d.t.Helper()
	d.selectRow(name)
	d.keys("Enter")
	d.waitScreen(30*time.Second, "the detail of "+name, func(s string) (bool, string) {
		return strings.Contains(s, "/"+name+" "), "no detail title"
	})
}

// moveTo moves the cursor down until it is on the row starting with label.
func (d *demo) moveTo(label string, maxSteps int) {
	d.t.Helper()
	for range maxSteps {
		if _, ok := cursorRow(d.screen(), label); ok {
			return
		}
		before := d.last
		d.keys("j")
		eventually(d.t, 10*time.Second, "the cursor to move", func() (bool, string) { return d.screen() != before, d.last })
	}
	d.t.Fatalf("no row %q reached with the cursor:\n%s", label, d.last)
}

// confirm waits for the dialog's Confirm button to be focused and presses it.
func (d *demo) confirm() {
	d.t.Helper()
	d.waitScreen(30*time.Second, "Confirm focused", func(s string) (bool, string) {
		return strings.Contains(s, "[Confirm]"), "Confirm is not focused"
	})
	d.keys("Enter")
}

// cursorRow returns the line under the cursor ("> " in --no-color) if its
// first field is name.
func cursorRow(screen, name string) (string, bool) {
	for _, line := range strings.Split(screen, "\n") {
		rest, ok := strings.CutPrefix(line, "> ")
		if ok && (strings.HasPrefix(strings.TrimSpace(rest), name+" ") || strings.TrimSpace(rest) == name) {
			return line, true
		}
	}
	return "", false
}

// rowsHave reports whether, for every name, a row whose first field is name
// contains every one of the words.
func rowsHave(screen string, want map[string][]string) (bool, string) {
	var missing []string
	for name, words := range want {
		row := ""
		for _, line := range strings.Split(screen, "\n") {
			f := strings.Fields(strings.TrimPrefix(line, "> "))
			if len(f) > 0 && f[0] == name {
				row = line
				break
			}
		}
		if row == "" {
			missing = append(missing, name+": no row")
			continue
		}
		for _, w := range words {
			if !strings.Contains(row, w) {
				missing = append(missing, fmt.Sprintf("%s: no %q", name, w))
			}
		}
	}
	return len(missing) == 0, strings.Join(missing, "; ")
}

// client talks to the demo's API server through the kubeconfig the demo
// announced on stderr.
func (d *demo) client() client.Client {
	d.t.Helper()
	data, _ := os.ReadFile(d.stderr)
	m := regexp.MustCompile(`kubeconfig (\S+)`).FindSubmatch(data)
	if m == nil {
		d.t.Fatalf("the demo did not print its kubeconfig; stderr:\n%s", data)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", string(m[1]))
	if err != nil {
		d.t.Fatal(err)
	}
	c, err := seed.NewClient(cfg)
	if err != nil {
		d.t.Fatal(err)
	}
	return c
}

func (d *demo) auditLog() string {
	data, _ := os.ReadFile(filepath.Join(d.home, ".local", "state", "raydar", "audit.log"))
	return string(data)
}

// exited returns the demo's exit code, "" while it runs.
func (d *demo) exited() string {
	data, _ := os.ReadFile(d.exitFile)
	return strings.TrimSpace(string(data))
}

func (d *demo) waitExit(timeout time.Duration) {
	d.t.Helper()
	eventually(d.t, timeout, "the demo to exit", func() (bool, string) { return d.exited() != "", "still running" })
	if code := d.exited(); code != "0" {
		data, _ := os.ReadFile(d.stderr)
		d.t.Fatalf("the demo exited with %s; stderr:\n%s", code, data)
	}
}

// processes lists the running processes the demo started ("pid: cmdline"):
// those whose environment has the marker (every descendant inherits it:
// the control plane, the simulated heads' job shells) or whose command line
// names the state directory.
func (d *demo) processes() []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if p == fmt.Sprintf("/proc/%d", os.Getpid()) {
			continue
		}
		env, _ := os.ReadFile(p + "/environ")
		cmdline, _ := os.ReadFile(p + "/cmdline")
		if len(cmdline) == 0 { // a zombie or a kernel thread
			continue
		}
		if bytes.Contains(env, []byte(d.marker+"\x00")) || bytes.Contains(cmdline, []byte(d.stateDir)) {
			out = append(out, filepath.Base(p)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}

// seesProcesses fails unless processes finds the control plane and a job
// shell of a simulated head while the demo runs: without that, noneLeft
// would prove nothing.
func (d *demo) seesProcesses() {
	d.t.Helper()
	all := strings.Join(d.processes(), "\n")
	for _, want := range []string{"etcd", "kube-apiserver", "kwok", "scored 512 rows"} {
		if !strings.Contains(all, want) {
			d.t.Fatalf("no process of the demo's matches %q; found:\n%s", want, all)
		}
	}
}

// noneLeft fails if any process the demo started is still running.
func (d *demo) noneLeft() {
	d.t.Helper()
	eventually(d.t, 30*time.Second, "no process of the demo left", func() (bool, string) {
		left := d.processes()
		return len(left) == 0, strings.Join(left, "\n")
	})
}

// dumpOnFailure logs the last screen, the demo's stderr and the tail of
// its log when the test failed.
func (d *demo) dumpOnFailure() {
	if !d.t.Failed() {
		return
	}
	if s, err := d.tmux("capture-pane", "-p", "-t", "demo"); err == nil {
		d.last = s
	}
	d.t.Logf("last screen:\n%s", d.last)
	data, _ := os.ReadFile(d.stderr)
	d.t.Logf("demo stderr:\n%s", data)
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(d.stderr), "raydar.log"))
	if len(log) > 8000 {
		log = log[len(log)-8000:]
	}
	d.t.Logf("tail of raydar.log:\n%s", log)
}

// eventually checks cond every 250 ms until it holds, or fails the test
// after timeout with cond's last message.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, msg)
		}
		<-tick.C
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go env GOMOD: %v %s", err, out)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func ptrString(p *int32) string {
	if p == nil {
		return "nil"
	}
	return strconv.Itoa(int(*p))
}

// buildRaydar finds the control-plane binaries and builds raydar into a
// fresh temporary directory, which it returns too (the test's HOME).
func buildRaydar(t *testing.T) (bin, tools, dir string) {
	t.Helper()
	tools, err := sandbox.FindToolsDir()
	if err != nil {
		t.Fatalf("control-plane binaries: %v (run `make tools`)", err)
	}
	dir = t.TempDir()
	bin = filepath.Join(dir, "raydar")
	build := exec.Command("go", "build", "-o", bin, "./cmd/raydar")
	build.Dir = moduleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin, tools, dir
}
