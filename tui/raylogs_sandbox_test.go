package tui

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestSandboxRayLogs reads Ray's log files end to end: raydar's RayJob
// reconciler submits jobs to the simulated heads (kube/sandbox/headsim),
// whose log API serves each job's real output as job-driver-<id>.log, read
// through kube/raydash.RayLogs. The browser (L on the job's cluster) lists
// the head's files and follows the running job's driver log as it grows;
// E on a failed job's page opens its driver log; with the dashboard
// refusing connections the browser says so and l opens the pod's
// container logs instead.
func TestSandboxRayLogs(t *testing.T) {
	s := sandboxFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cl, src := sandboxFeed(t, ctx, s)
	ns := sandboxNamespace(t, ctx, cl)
	sim, err := headsim.Start(context.Background(), headsim.Options{Config: s.Config, Namespace: ns, SetPodPhase: s.SetPodPhase})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	startOperator(t, s, ns, func(o *controller.Options) {
		o.AddressBook = sim
		o.RayJob.MaxPollInterval = 2 * time.Second
	})
	res, err := raydash.New(raydash.Options{AddressBook: sim})
	if err != nil {
		t.Fatal(err)
	}
	logs := &raydash.RayLogs{Resolver: res, Cluster: func(ns, name string) (*rayv1.RayCluster, error) {
		rc := &rayv1.RayCluster{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return rc, nil
	}}

	newJob := func(name, entrypoint string) *rayv1.RayJob {
		spec := testClusterSpec(0)
		j := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: rayv1.RayJobSpec{Entrypoint: entrypoint, SubmissionMode: rayv1.HTTPMode, RayClusterSpec: &spec}}
		if err := cl.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	newJob("grow", `i=0; while [ $i -lt 900 ]; do i=$((i+1)); echo "tick $i"; sleep 0.3; done`)
	newJob("boom", `echo "boom-output: shard 7 is corrupt"; exit 3`)

	deps := ActionDeps{Context: "sandbox", Actions: sandboxActions(t, cl),
		PodLogs: PodLogsFunc(func(_ context.Context, ns, pod string, _ LogOptions) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader("container output of " + pod + "\n")), nil
		})}
	tm, _ := start(t, Options{Now: time.Now, Store: watch.NewStore(), StartView: JobsView,
		Session: Session{Feed: src, Synced: src.Synced, Namespace: ns, RayLogs: logs},
		Actions: DefaultActions(deps)}, 120, 30)

	// The running job's cluster, its head's files, its growing driver log.
	typeKeys(tm, "/", "grow", "<enter>")
	waitScreen(t, tm, "RUNNING")
	typeKeys(tm, "<enter>")
	waitScreen(t, tm, "RayJob "+ns+"/grow")
	typeKeys(tm, "<enter>") // its RayCluster
	waitScreen(t, tm, "RayCluster "+ns+"/grow-")
	typeKeys(tm, "L")
	screen := waitScreen(t, tm, "job drivers")
	mustContain(t, screen, "raylet.out", "gcs_server.out", "runtime env", "(pod grow-")
	typeKeys(tm, "<enter>") // the first file: the job's driver log
	screen = waitScreen(t, tm, "tick ")
	mustContain(t, screen, "job-driver-", "following")
	ticks := regexp.MustCompile(`tick (\d+)`)
	last := func(sc string) int {
		n := 0
		for _, m := range ticks.FindAllStringSubmatch(sc, -1) {
			if v, _ := strconv.Atoi(m[1]); v > n {
				n = v
			}
		}
		return n
	}
	seen := last(screen)
	eventually(t, ctx, fmt.Sprintf("tick %d on screen (the file grows)", seen+3), func() (bool, string) {
		sc := screenNow(tm)
		return last(sc) >= seen+3, sc
	})

	// The failed job: E opens its driver log.
	typeKeys(tm, ":rj", "<enter>", "<esc>", "/", "boom", "<enter>")
	waitScreen(t, tm, "FAILED")
	typeKeys(tm, "<enter>")
	waitScreen(t, tm, "RayJob "+ns+"/boom")
	typeKeys(tm, "E")
	screen = waitScreen(t, tm, "<ray log job-driver-boom-")
	mustContain(t, screen, "driver log of job boom-", "(FAILED)")
	driverLine := regexp.MustCompile(`(?m)^boom-output: shard 7 is corrupt`)
	eventually(t, ctx, "the driver's output on the page", func() (bool, string) {
		sc := screenNow(tm)
		return driverLine.MatchString(sc), sc
	})

	// The dashboard down: said in words, the pod's logs offered and shown.
	j := &rayv1.RayJob{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "grow"}, j); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetRefuse(ns, j.Status.RayClusterName, true); err != nil {
		t.Fatal(err)
	}
	typeKeys(tm, ":rj", "<enter>", "<esc>", "/", "grow", "<enter>", "<enter>", "<enter>", "L")
	screen = waitScreen(t, tm, "The Ray dashboard of "+ns+"/"+j.Status.RayClusterName+" cannot be reached")
	mustContain(t, screen, "Press l for the container logs of pod "+j.Status.RayClusterName)
	typeKeys(tm, "l")
	waitScreen(t, tm, "container output of "+j.Status.RayClusterName)
	finalScreen(t, tm)
}
