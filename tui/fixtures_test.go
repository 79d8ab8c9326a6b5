package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// fixedNow is the clock of every test.
var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return fixedNow }

func ago(d time.Duration) metav1.Time { return metav1.NewTime(fixedNow.Add(-d)) }

func om(ns, name string, created time.Duration, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name),
		CreationTimestamp: ago(created), Labels: labels}
}

func cond(t, status, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason}
}

func mkCluster(ns, name string, created time.Duration, groups ...rayv1.WorkerGroupSpec) *rayv1.RayCluster {
	rc := &rayv1.RayCluster{ObjectMeta: om(ns, name, created, map[string]string{"team": "ml"})}
	rc.Spec.RayVersion = "2.41.0"
	rc.Spec.WorkerGroupSpecs = groups
	var desired, min, max int32
	for _, g := range groups {
		desired += *g.Replicas
		min += *g.MinReplicas
		max += *g.MaxReplicas
	}
	rc.Status = rayv1.RayClusterStatus{
		State: rayv1.Ready, DesiredWorkerReplicas: desired, AvailableWorkerReplicas: desired, ReadyWorkerReplicas: desired,
		MinWorkerReplicas: min, MaxWorkerReplicas: max,
		DesiredCPU: resource.MustParse(fmt.Sprint(1 + 2*desired)), DesiredMemory: resource.MustParse(fmt.Sprintf("%dGi", 2+4*desired)),
		Head: rayv1.HeadInfo{PodIP: "10.0.0.10", ServiceName: name + "-head-svc", ServiceIP: "10.96.0.20"},
		Conditions: []metav1.Condition{
			cond(string(rayv1.HeadPodReady), "True", rayv1.HeadPodRunningAndReady),
			cond(string(rayv1.RayClusterProvisioned), "True", rayv1.AllPodRunningAndReadyFirstTime),
		},
	}
	return rc
}

func group(name string, replicas, min, max int32) rayv1.WorkerGroupSpec {
	return rayv1.WorkerGroupSpec{GroupName: name, Replicas: ptr.To(replicas), MinReplicas: ptr.To(min), MaxReplicas: ptr.To(max)}
}

func mkPod(rc *rayv1.RayCluster, name, nodeType, grp string, created time.Duration, ready bool, ip string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: om(rc.Namespace, name, created, map[string]string{
		rayv1.RayClusterLabelKey: rc.Name, rayv1.RayNodeTypeLabelKey: nodeType, rayv1.RayNodeGroupLabelKey: grp,
	})}
	p.Spec.Containers = []corev1.Container{{Name: "ray-" + nodeType}}
	p.Spec.NodeName = "kwok-node-1"
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP = ip
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray-" + nodeType, Ready: ready}}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	if !ready {
		p.Status.Phase = corev1.PodPending
		p.Status.PodIP = ""
		p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	return p
}

func mkEvent(about client.Object, kind, apiVersion, typ, reason, msg string, at time.Duration) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     om(about.GetNamespace(), about.GetName()+"."+reason, at, nil),
		InvolvedObject: corev1.ObjectReference{Kind: kind, APIVersion: apiVersion, Namespace: about.GetNamespace(), Name: about.GetName(), UID: about.GetUID()},
		Type:           typ, Reason: reason, Message: msg, LastTimestamp: ago(at),
	}
}

// fixture is a small, fixed world: clusters in two namespaces, a job, a
// service in the middle of an upgrade, their pods and events.
func fixture() *watch.Store {
	st := watch.NewStore()
	gpu := group("gpu", 2, 1, 4)
	rc1 := mkCluster("ml", "train-a", 3*time.Hour, group("cpu", 3, 1, 5), gpu)
	rc1.Status.DesiredGPU = resource.MustParse("2")
	rc1.Status.AvailableWorkerReplicas = 4
	rc2 := mkCluster("ml", "notebook", 26*time.Hour, group("small", 1, 0, 2))
	rc3 := mkCluster("serve", "fruit-raycluster-abcde", 40*time.Minute, group("serve", 2, 1, 3))
	rc4 := mkCluster("serve", "fruit-raycluster-fghij", 2*time.Minute, group("serve", 2, 1, 3))
	rc4.Status.State = ""
	rc4.Status.AvailableWorkerReplicas = 1
	rc4.Status.Conditions = []metav1.Condition{cond(string(rayv1.RayClusterProvisioned), "False", rayv1.RayClusterPodsProvisioning)}
	st.Add(rc1, rc2, rc3, rc4)

	st.Add(
		mkPod(rc1, "train-a-head-x7k2p", "head", rayv1.RayNodeHeadGroupLabelValue, 3*time.Hour, true, "10.0.0.10"),
		mkPod(rc1, "train-a-cpu-worker-4hq9d", "worker", "cpu", 3*time.Hour, true, "10.0.0.11"),
		mkPod(rc1, "train-a-cpu-worker-8mz2n", "worker", "cpu", 3*time.Hour, true, "10.0.0.12"),
		mkPod(rc1, "train-a-cpu-worker-c2v7t", "worker", "cpu", 90*time.Second, false, ""),
		mkPod(rc1, "train-a-gpu-worker-q5w8e", "worker", "gpu", 2*time.Hour, true, "10.0.0.14"),
		mkPod(rc1, "train-a-gpu-worker-z1x3c", "worker", "gpu", 2*time.Hour, true, "10.0.0.15"),
		mkPod(rc2, "notebook-head-2b4c6", "head", rayv1.RayNodeHeadGroupLabelValue, 26*time.Hour, true, "10.0.1.10"),
		mkPod(rc2, "notebook-small-worker-k9j8h", "worker", "small", 26*time.Hour, true, "10.0.1.11"),
		mkPod(rc3, "fruit-raycluster-abcde-head-m3n4b", "head", rayv1.RayNodeHeadGroupLabelValue, 40*time.Minute, true, "10.0.2.10"),
		mkPod(rc4, "fruit-raycluster-fghij-head-p0o9i", "head", rayv1.RayNodeHeadGroupLabelValue, 2*time.Minute, true, "10.0.3.10"),
	)
	head := st.PodsOf(watch.ClusterRef{Namespace: "ml", Name: "train-a"})[1]
	st.Add(
		mkEvent(rc1, rayv1.KindRayCluster, "ray.io/v1", "Normal", "CreatedWorkerPod", "Created worker Pod ml/train-a-cpu-worker-c2v7t", 90*time.Second),
		mkEvent(rc1, rayv1.KindRayCluster, "ray.io/v1", "Normal", "CreatedHeadPod", "Created head Pod ml/train-a-head-x7k2p", 3*time.Hour),
		mkEvent(head, "Pod", "v1", "Warning", "FailedScheduling", "0/20 nodes are available: insufficient cpu", 80*time.Second),
	)

	j1 := &rayv1.RayJob{ObjectMeta: om("ml", "nightly-eval", 50*time.Minute, nil)}
	j1.Spec.Entrypoint = "python eval.py --epochs 3"
	j1.Spec.SubmissionMode = rayv1.K8sJobMode
	j1.Status = rayv1.RayJobStatus{JobId: "nightly-eval-8f3k2", RayClusterName: "train-a", JobStatus: rayv1.JobStatusRunning,
		JobDeploymentStatus: rayv1.JobDeploymentStatusRunning, StartTime: ptr.To(ago(45 * time.Minute))}
	j2 := &rayv1.RayJob{ObjectMeta: om("ml", "backfill", 5*time.Hour, nil)}
	j2.Status = rayv1.RayJobStatus{JobId: "backfill-1", RayClusterName: "backfill-raycluster-q8w7e", JobStatus: rayv1.JobStatusFailed,
		JobDeploymentStatus: rayv1.JobDeploymentStatusFailed, Reason: rayv1.AppFailed, Message: "Job entrypoint command failed with exit code 1",
		StartTime: ptr.To(ago(5 * time.Hour)), EndTime: ptr.To(ago(4 * time.Hour))}
	st.Add(j1, j2)

	svc := &rayv1.RayService{ObjectMeta: om("serve", "fruit", 2*time.Hour, nil)}
	svc.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.NewCluster)}
	apps := func(status string) map[string]rayv1.AppStatus {
		return map[string]rayv1.AppStatus{"fruit_app": {Status: status, Deployments: map[string]rayv1.ServeDeploymentStatus{
			"FruitMarket": {Status: rayv1.DeploymentStatusHealthy}, "MangoStand": {Status: rayv1.DeploymentStatusHealthy},
		}}, "math_app": {Status: rayv1.ApplicationStatusRunning, Deployments: map[string]rayv1.ServeDeploymentStatus{
			"Adder": {Status: rayv1.DeploymentStatusHealthy},
		}}}
	}
	pending := apps(rayv1.ApplicationStatusDeploying)
	pending["fruit_app"].Deployments["MangoStand"] = rayv1.ServeDeploymentStatus{Status: rayv1.DeploymentStatusUpdating, Message: "Deploying 1 replica"}
	svc.Status = rayv1.RayServiceStatuses{
		ServiceStatus: rayv1.Running, NumServeEndpoints: 2,
		Conditions: []metav1.Condition{
			cond(string(rayv1.RayServiceReady), "True", string(rayv1.NonZeroServeEndpoints)),
			cond(string(rayv1.UpgradeInProgress), "True", string(rayv1.BothActivePendingClustersExist)),
		},
		ActiveServiceStatus:  rayv1.RayServiceStatus{RayClusterName: "fruit-raycluster-abcde", Applications: apps(rayv1.ApplicationStatusRunning)},
		PendingServiceStatus: rayv1.RayServiceStatus{RayClusterName: "fruit-raycluster-fghij", Applications: pending},
	}
	svc2 := &rayv1.RayService{ObjectMeta: om("serve", "llm", 10*time.Minute, nil)}
	svc2.Status.Conditions = []metav1.Condition{cond(string(rayv1.RayServiceReady), "False", string(rayv1.RayServiceInitializing))}
	st.Add(svc, svc2)
	return st
}

// start runs the TUI in teatest at a fixed size with the colour profile and
// TERM pinned.
func start(t *testing.T, opts Options, w, h int) (*teatest.TestModel, *App) {
	t.Helper()
	if opts.Now == nil {
		opts.Now = clock
	}
	if opts.Store == nil {
		opts.Store = fixture()
	}
	if opts.Session.Context == "" {
		opts.Session.Context, opts.Session.Server = "sandbox", "https://127.0.0.1:6443"
		if opts.Session.Role == nil {
			opts.Session.Role = func() string { return "leader" }
		}
	}
	app, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, app,
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(
			tea.WithColorProfile(colorprofile.Ascii),
			tea.WithEnvironment([]string{"TERM=xterm-256color"}),
			tea.WithFilter(probeFilter),
		),
	)
	t.Cleanup(func() { _ = tm.Quit() })
	return tm, app
}

// keys types a sequence: single characters, or names in angle brackets
// such as <enter>, <esc>, <tab>, <space>, <down>, <ctrl+space>.
func typeKeys(tm *teatest.TestModel, seq ...string) {
	for _, s := range seq {
		if strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">") && len(s) > 2 {
			tm.Send(namedKey(s[1 : len(s)-1]))
			continue
		}
		tm.Type(s)
	}
}

func namedKey(n string) tea.KeyPressMsg {
	switch n {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "ctrl+space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Mod: tea.ModCtrl}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+r":
		return tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	case "ctrl+u":
		return tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	}
	panic("unknown key " + n)
}

// finalScreen quits the program after everything sent so far and returns
// the last view without escape codes.
func finalScreen(t *testing.T, tm *teatest.TestModel) (string, *App) {
	t.Helper()
	_ = tm.Quit()
	m := tm.FinalModel(t, teatest.WithFinalTimeout(teatestTimeout)).(*App)
	return ansi.Strip(m.View().Content), m
}

// requireSize fails unless the screen is exactly h lines of at most w
// cells.
func requireSize(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != h {
		t.Fatalf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > w {
			t.Fatalf("line %d is %d wide: %q", i, n, l)
		}
	}
}

func requireGolden(t *testing.T, screen string) {
	t.Helper()
	golden.RequireEqual(t, []byte(screen+"\n"))
}

// probeMsg asks the running program for its current screen. probeFilter
// answers it inside the program's event loop (so reading the model is
// race-free) and swallows it; the model never sees it.
type probeMsg struct{ reply chan string }

func probeFilter(m tea.Model, msg tea.Msg) tea.Msg {
	if p, ok := msg.(probeMsg); ok {
		p.reply <- ansi.Strip(m.(*App).View().Content)
		return nil
	}
	return msg
}

// screenNow returns the screen as of every message sent before the call.
func screenNow(tm *teatest.TestModel) string {
	reply := make(chan string, 1)
	tm.Send(probeMsg{reply})
	return <-reply
}

// waitScreen waits until the screen contains s, checking after every
// message the program handles… by probing it; it fails after
// teatestTimeout. (The byte stream cannot be searched: the renderer only
// writes the cells that changed.)
func waitScreen(t *testing.T, tm *teatest.TestModel, s string) string {
	t.Helper()
	deadline := time.Now().Add(teatestTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		screen := screenNow(tm)
		if strings.Contains(screen, s) {
			return screen
		}
		if time.Now().After(deadline) {
			t.Fatalf("screen never showed %q; last screen:\n%s", s, screen)
		}
		<-tick.C
	}
}

// teatestTimeout bounds waiting for a program to finish or show something;
// generous because the machine is shared.
const teatestTimeout = 20 * time.Second

func teatestFinal() teatest.FinalOpt { return teatest.WithFinalTimeout(teatestTimeout) }

// cronFixture is fixture() with RayCronJobs and the RayJobs they created:
// a nightly one in Berlin (three runs, the middle one failed), one that
// fires every minute (one run going), a suspended weekly one and one
// whose time zone is invalid. fixture() itself stays as it is, so the
// other views' goldens do not move.
func cronFixture() *watch.Store {
	st := fixture()
	cron := func(ns, name, schedule, tz string, created time.Duration) *rayv1.RayCronJob {
		c := &rayv1.RayCronJob{ObjectMeta: om(ns, name, created, nil)}
		c.Spec.Schedule = schedule
		if tz != "" {
			c.Spec.TimeZone = ptr.To(tz)
		}
		c.Spec.JobTemplate = rayv1.RayJobSpec{Entrypoint: "python " + name + ".py", RayClusterSpec: ptr.To(testClusterSpec(1)),
			ShutdownAfterJobFinishes: true}
		c.Status.Conditions = []metav1.Condition{cond(rayv1.RayCronJobScheduleValid, "True", rayv1.RayCronJobReasonValid)}
		return c
	}
	// tick is the RayJob of cj's tick at, as the reconciler creates it.
	tick := func(cj *rayv1.RayCronJob, at time.Time, status rayv1.JobStatus, dep rayv1.JobDeploymentStatus, ran time.Duration) *rayv1.RayJob {
		j := rayv1.CronJobTickJob(cj, at)
		j.UID = types.UID(j.Namespace + "-" + j.Name)
		j.CreationTimestamp = metav1.NewTime(at)
		j.Status = rayv1.RayJobStatus{JobStatus: status, JobDeploymentStatus: dep, RayClusterName: j.Name + "-raycluster",
			JobId: j.Name + "-id", StartTime: ptr.To(metav1.NewTime(at.Add(time.Minute)))}
		if status.IsTerminal() {
			j.Status.EndTime = ptr.To(metav1.NewTime(at.Add(time.Minute + ran)))
		}
		return j
	}
	// 02:00 in Berlin (CET) is 01:00 UTC: the last run was 11h ago.
	nightly := cron("ml", "nightly-train", "0 2 * * *", "Europe/Berlin", 30*24*time.Hour)
	today := time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	nightly.Status.LastScheduleTime = ptr.To(metav1.NewTime(today))
	ok1 := tick(nightly, today, rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, 40*time.Minute)
	failed := tick(nightly, today.Add(-24*time.Hour), rayv1.JobStatusFailed, rayv1.JobDeploymentStatusFailed, 3*time.Minute)
	failed.Status.Reason = rayv1.AppFailed
	failed.Status.Message = "Job entrypoint command failed with exit code 1: CUDA out of memory"
	ok3 := tick(nightly, today.Add(-48*time.Hour), rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, 38*time.Minute)

	minutely := cron("ml", "every-minute", "* * * * *", "UTC", 2*time.Hour)
	// The tick of 12:00 (now) has just created its RayJob; 11:59's ran.
	minutely.Status.LastScheduleTime = ptr.To(metav1.NewTime(fixedNow))
	starting := tick(minutely, fixedNow, rayv1.JobStatusNew, rayv1.JobDeploymentStatusInitializing, 0)
	starting.Status.StartTime, starting.Status.JobId = nil, ""
	ran := tick(minutely, fixedNow.Add(-time.Minute), rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, -20*time.Second)

	weekly := cron("serve", "weekly-report", "@weekly", "", 10*24*time.Hour)
	weekly.Spec.Suspend = ptr.To(true)

	bad := cron("serve", "bad-zone", "30 9 * * 1-5", "Mars/Olympus", 5*time.Minute)
	bad.Status.Conditions = []metav1.Condition{{Type: rayv1.RayCronJobScheduleValid, Status: metav1.ConditionFalse,
		Reason: rayv1.RayCronJobReasonInvalidTimeZone, Message: `spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone`}}

	st.Add(nightly, minutely, weekly, bad, ok1, failed, ok3, starting, ran)
	return st
}
