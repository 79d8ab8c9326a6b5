package faults

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/testobj"
)

// rayLong bounds a RayJob's progress on a loaded machine.
const rayLong = 3 * time.Minute

// faultyBook sends the dashboards of clusters whose name starts with a
// registered prefix through that prefix's FaultyHTTP.
type faultyBook struct {
	sim *headsim.Sim
	mu  sync.Mutex
	via map[string]*FaultyHTTP // cluster name prefix → proxy
}

func (b *faultyBook) DashboardURL(ns, name string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for prefix, f := range b.via {
		if strings.HasPrefix(name, prefix) {
			if _, ok := b.sim.DashboardURL(ns, name); !ok {
				return "", false
			}
			return f.URL(), true
		}
	}
	return b.sim.DashboardURL(ns, name)
}

// TestRaySideFaults: simulated Ray heads (headsim) answer for the RayJobs'
// clusters. A head pod is deleted while its job runs; a dashboard refuses
// connections while a stop is requested and while a RayJob is deleted; a
// dashboard answers 500s, then slowly, while a job is submitted and
// followed.
func TestRaySideFaults(t *testing.T) {
	s := newScenario(t)
	ctx := context.Background()
	sim, err := headsim.Start(ctx, headsim.Options{Config: sb.Config, Namespace: s.ns, SetPodPhase: sb.SetPodPhase, EndContainer: sb.EndContainer})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	book := &faultyBook{sim: sim, via: map[string]*FaultyHTTP{}}
	// flaky's dashboard: 500s for the first requests, then slow ones.
	var (
		flakyMu      sync.Mutex
		flakyCluster string
	)
	flaky, err := StartFaultyHTTP(func() (string, bool) {
		flakyMu.Lock()
		defer flakyMu.Unlock()
		if flakyCluster == "" {
			return "", false
		}
		return sim.DashboardURL(s.ns, flakyCluster)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer flaky.Close()
	book.via["flaky-"] = flaky
	res, err := raydash.New(raydash.Options{AddressBook: book, HeadServiceName: kit.HeadServiceName})
	if err != nil {
		t.Fatal(err)
	}
	op := startInProc(t, s.audit.Wrap(sb.Config), s.ns, res)

	getJob, wait, running, newJob := s.getJob, s.waitJob, jobRunning, s.newJob
	for _, n := range []string{"headkill", "stopme", "delme"} {
		newJob(n, "sleep 600")
	}
	flaky.Fail500(6)
	flaky.Slow(6, 1500*time.Millisecond)
	newJob("flaky", "sleep 2")
	j := wait("flaky", "to have a cluster", func(j *rayv1.RayJob) bool { return j.Status.RayClusterName != "" })
	flakyMu.Lock()
	flakyCluster = j.Status.RayClusterName
	flakyMu.Unlock()

	// The head pod deleted while the job runs.
	hk := wait("headkill", "RUNNING", running)
	head, _ := clusterHead(t, s.ns, hk.Status.RayClusterName)
	remove(t, head)
	s.fault("head pod %s deleted while job %s runs", head.Name, hk.Status.JobId)
	// A restarted head without GCS fault tolerance has forgotten the job:
	// the RayJob must not stay Running on a job nobody runs.
	msg, ended := poll(90*time.Second, func() (bool, string) {
		j, err := getJob("headkill")
		if err != nil {
			return false, err.Error()
		}
		hk = j
		return j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete || j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed,
			fmt.Sprintf("deployment=%q job=%q reason=%q message=%q", j.Status.JobDeploymentStatus, j.Status.JobStatus, j.Status.Reason, j.Status.Message)
	})
	s.check("a job whose head pod was deleted ends in a defined state (Complete or Failed)", ended,
		fmt.Sprintf("after 90s: %s; dashboard calls %v", msg, sim.AllCalls(s.ns, hk.Status.RayClusterName)))
	t.Logf("headkill: deployment=%s job=%s reason=%s message=%q", hk.Status.JobDeploymentStatus, hk.Status.JobStatus, hk.Status.Reason, hk.Status.Message)
	subs := sim.Calls(s.ns, hk.Status.RayClusterName, "POST", "/api/jobs/")
	s.check("a job whose head was deleted is not submitted twice", subs == 1, fmt.Sprintf("%d submissions", subs))

	// The dashboard down during a stop.
	sj := wait("stopme", "RUNNING", running)
	if err := sim.SetRefuse(s.ns, sj.Status.RayClusterName, true); err != nil {
		t.Fatal(err)
	}
	patchJob(t, s.ns, "stopme", func(j *rayv1.RayJob) {
		j.Annotations = map[string]string{rayv1.StopRequestedAnnotationKey: "faults@2030-01-01T00:00:00Z"}
	})
	time.Sleep(cutFor) // the outage's duration, not synchronisation
	if err := sim.SetRefuse(s.ns, sj.Status.RayClusterName, false); err != nil {
		t.Fatal(err)
	}
	s.fault("dashboard of %s refused connections for %s while a stop was requested", sj.Status.RayClusterName, cutFor)
	s.wantStop(sim, sj.Status.RayClusterName, sj.Status.JobId)
	wait("stopme", "STOPPED", func(j *rayv1.RayJob) bool { return j.Status.JobStatus == rayv1.JobStatusStopped })

	// The dashboard down during a RayJob deletion (shorter than the
	// stop-confirm bound, so the stop must still be sent).
	dj := wait("delme", "RUNNING", running)
	if err := sim.SetRefuse(s.ns, dj.Status.RayClusterName, true); err != nil {
		t.Fatal(err)
	}
	remove(t, dj)
	time.Sleep(cutFor) // the outage's duration, not synchronisation
	if err := sim.SetRefuse(s.ns, dj.Status.RayClusterName, false); err != nil {
		t.Fatal(err)
	}
	s.fault("dashboard of %s refused connections for %s while its RayJob was deleted", dj.Status.RayClusterName, cutFor)
	s.wantStop(sim, dj.Status.RayClusterName, dj.Status.JobId)
	eventually(t, rayLong, "delme gone", func() (bool, string) {
		_, err := getJob("delme")
		return err != nil && strings.Contains(err.Error(), "not found"), errString(err)
	})

	// 500s and slow answers: the job still succeeds, submitted once.
	fj := wait("flaky", "SUCCEEDED", func(j *rayv1.RayJob) bool { return j.Status.JobStatus == rayv1.JobStatusSucceeded })
	f5, sl := flaky.Injected()
	s.fault("dashboard of %s answered %d 500s and %d slow answers while its job was submitted and followed", fj.Status.RayClusterName, f5, sl)
	tally.figure("%s: the flaky dashboard answered %d requests with 500 and %d slowly", t.Name(), f5, sl)
	s.selfCheck("500s and slow answers were injected", f5 == 6 && sl > 0, fmt.Sprintf("%d 500s, %d slow", f5, sl))
	subs = sim.Calls(s.ns, fj.Status.RayClusterName, "POST", "/api/jobs/")
	s.check("a job behind a failing, slow dashboard is submitted once", subs == 1, fmt.Sprintf("%d submissions", subs))

	s.finish(func() {
		op.stop()
		_ = flaky.Close()
		_ = sim.Close()
	})
}

// getJob reads a RayJob of the scenario's namespace.
func (s *scenario) getJob(name string) (*rayv1.RayJob, error) {
	j := &rayv1.RayJob{}
	err := cl.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: name}, j)
	return j, err
}

// waitJob waits (rayLong) until the RayJob meets cond and returns it.
func (s *scenario) waitJob(name, what string, cond func(*rayv1.RayJob) bool) *rayv1.RayJob {
	s.t.Helper()
	var j *rayv1.RayJob
	eventually(s.t, rayLong, name+" "+what, func() (bool, string) {
		var err error
		if j, err = s.getJob(name); err != nil {
			return false, err.Error()
		}
		return cond(j), fmt.Sprintf("deployment=%q job=%q reason=%q message=%q", j.Status.JobDeploymentStatus, j.Status.JobStatus, j.Status.Reason, j.Status.Message)
	})
	return j
}

// jobRunning: the Ray job is RUNNING.
func jobRunning(j *rayv1.RayJob) bool { return j.Status.JobStatus == rayv1.JobStatusRunning }

// newJob creates an HTTPMode RayJob on a cluster of its own (a head, no
// workers), changed by mods.
func (s *scenario) newJob(name, entrypoint string, mods ...func(*rayv1.RayJob)) {
	s.t.Helper()
	spec := testobj.Cluster(s.ns, "unused", 0).Spec
	j := &rayv1.RayJob{
		ObjectMeta: objectMeta(s.ns, name),
		Spec:       rayv1.RayJobSpec{Entrypoint: entrypoint, SubmissionMode: rayv1.HTTPMode, RayClusterSpec: &spec},
	}
	for _, f := range mods {
		f(j)
	}
	create(s.t, j)
}
