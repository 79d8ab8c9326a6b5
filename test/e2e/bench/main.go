package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/scheme"
	"github.com/raydar/raydar/test/internal/procstat"
)

type config struct {
	clusters, parallel, samples int
	duration, settle            time.Duration
	view, out, raydar           string
	keep                        bool
	// linkDelay runs raydar behind a pty proxy holding each direction's
	// bytes this long (link.go); 0: no proxy.
	linkDelay time.Duration
	// contexts is how many sandboxes, each with the data set, raydar
	// watches at once (its fleet view, --context bench-1,bench-2,…).
	contexts int
	// rounds is how many times each binary of -raydar is measured, in
	// turn, against the one data set.
	rounds int
	// floor is how many times each floor client (floor.go) syncs the pods
	// before raydar starts; 0: not measured.
	floor int
	// shape is how the objects are made: raydar (BuildPod) or kuberay
	// (stamped from KubeRay's operator's own, kuberayshape.go).
	shape string
	// workers is -workers: "9", or "0-1" (cluster i has 0 + i%2).
	workers string
	// big is -big-cluster: one more cluster with this many workers.
	big int
	// openBig (-view big-cluster) opens the big cluster's page from the
	// RayCluster list (filter, Enter) and measures that page.
	openBig bool
	// floorClients are -floor-clients: the keys of the floor clients
	// measured (floor.go, floorsession.go).
	floorClients string
	// launchOnly (-launch-only) measures each launch to its first full
	// screen and what it asked of the API server, and stops raydar there.
	launchOnly bool
	// screenOnOutput reads the pane at a launch only when raydar has
	// written since the last read, not every 10 ms; set for each round
	// from screenPoll.
	screenOnOutput bool
	// screenPoll is -screen-poll: 10ms (screenOnOutput false), output
	// (true), or alternate (by round: 10ms, output, 10ms, …).
	screenPoll string
}

func main() {
	if d := os.Getenv(linkProxyEnv); d != "" && len(os.Args) > 2 && os.Args[1] == "--" {
		delay, err := time.ParseDuration(d)
		if err != nil {
			fmt.Fprintln(os.Stderr, "link proxy:", err)
			os.Exit(2)
		}
		os.Exit(runLinkProxy(delay, os.Args[2:]))
	}
	var c config
	big := flag.Bool("big", false, "100,000 pods / 10,000 RayClusters (default 10,000 / 1,000)")
	flag.IntVar(&c.clusters, "clusters", 0, "RayClusters of 1 head + 9 workers (overrides -big)")
	flag.DurationVar(&c.duration, "duration", 60*time.Second, "length of the idle and the patch runs")
	flag.StringVar(&c.view, "view", "pods", "the view raydar opens on (-c); several, comma-separated, are each measured in turn for every binary against the one data set (pods,rayclusters); "+bigCluster+" opens the RayCluster list, then -big-cluster's page (a filter on its name, Enter) and measures that page")
	flag.StringVar(&c.out, "out", "", "also write the figures here (default: <state dir>/figures.md)")
	flag.IntVar(&c.parallel, "parallel", 16, "clients creating the data set")
	flag.IntVar(&c.samples, "samples", 200, "key → screen samples")
	flag.StringVar(&c.raydar, "raydar", "", "measure this raydar binary, waiting for it to appear once the data set is ready (default: go build ./cmd/raydar then); several, comma-separated, are measured in turn against the one data set (before/after back to back); GOGC=100@path runs path with GOGC=100 in its environment (NAME=VALUE+NAME=VALUE@path for more)")
	flag.IntVar(&c.rounds, "rounds", 1, "measure each binary of -raydar this many times, in turn (A B A B …)")
	flag.DurationVar(&c.settle, "settle", 0, "before the idle run, wait until the newest pod is this old (10m: ages change once a minute, not every second)")
	flag.BoolVar(&c.keep, "keep", false, "keep the state directory (logs, audit log, profiles)")
	flag.IntVar(&c.contexts, "contexts", 1, "sandboxes, each with the data set, watched at once through the fleet view (raydar --context bench-1,…,bench-N)")
	flag.DurationVar(&c.linkDelay, "link-delay", 0, "run raydar behind a pty proxy that delays each direction by this much (50ms: a 100 ms RTT link, SSH to a bastion)")
	flag.IntVar(&c.floor, "floor", 0, "before raydar, sync the pods this many times with each floor client of -floor-clients (by default: a client-go informer, controller-runtime caches with the TUI's pod selector and SlimPod, the same through the wire trim SlimPodWire, one LIST, the RayClusters, the RayClusters and pods): the floor that \"cache synced after start\" is read against")
	flag.StringVar(&c.shape, "shape", "raydar", "how the objects are made: raydar (controller/raycluster.BuildPod) or kuberay (stamped from what KubeRay v1.6.2's operator made, testdata/kuberay-v1.6.2.json)")
	flag.StringVar(&c.workers, "workers", "9", "workers per RayCluster: N, or A-B (cluster i has A + i%(B-A+1): 0-1 gives every other cluster one)")
	flag.IntVar(&c.big, "big-cluster", 0, "one more RayCluster, "+bigCluster+" in bench-00, with this many workers")
	flag.StringVar(&c.floorClients, "floor-clients", defaultFloorClients, "the floor clients -floor measures, by key; issue 47's steps from the RayClusters + pods floor to raydar's session: s:clusters+pods, s:+nodes, s:+ray, s:+events, s:all, s:source, s:source-gogc25, clusters+pods-gogc25 (floorsession.go)")
	flag.BoolVar(&c.launchOnly, "launch-only", false, "measure each launch to its first full screen, with the requests it made (the audit log) and the API server's /metrics around it, then stop raydar: no idle, keys, sort, patches")
	flag.StringVar(&c.screenPoll, "screen-poll", "output", "at a launch, read the pane (tmux capture-pane, a process each time) every 10ms, or only when raydar has written since the last read (output; and every 200 ms), or alternate by round (10ms, output, 10ms, …): the harness's own CPU beside the launch")
	capture := flag.String("capture-kuberay", "", "run this KubeRay operator binary on a sandbox, have it make KubeRay's sample cluster and write the RayCluster and its pods to -out (testdata/kuberay-v1.6.2.json), the template -shape kuberay stamps")
	baseline := flag.Bool("baseline", false, "measure the harness itself: key → screen of cat(1) echoing in the same tmux pane")
	flag.Parse()
	if *baseline {
		if err := measureBaseline(c.samples); err != nil {
			fmt.Fprintln(os.Stderr, "bench-e2e:", err)
			os.Exit(1)
		}
		return
	}
	if *capture != "" {
		ctrllog.SetLogger(logr.Discard())
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := captureKubeRay(ctx, *capture, c.out); err != nil {
			fmt.Fprintln(os.Stderr, "bench-e2e:", err)
			os.Exit(1)
		}
		return
	}
	if c.clusters == 0 {
		c.clusters = 1000
		if *big {
			c.clusters = 10000
		}
	}
	ctrllog.SetLogger(logr.Discard()) // the sandbox's envtest logs through controller-runtime
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "bench-e2e:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench-e2e: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(ctx context.Context, c config) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		return errors.New("tmux is needed (apt-get install -y tmux)")
	}
	// Flags are checked before minutes of planes and data sets.
	switch c.screenPoll {
	case "10ms", "output", "alternate":
	default:
		return fmt.Errorf("-screen-poll %q: 10ms, output or alternate", c.screenPoll)
	}
	floorClients, err := pickFloorClients(c.floorClients)
	if err != nil {
		return err
	}
	// Under RAYDAR_TEST_EXCLUSIVE (make test's machine lock) the planes
	// wait their turn beside the other benchmarks; without it, nothing.
	if err := sandbox.Exclusive(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "raydar-bench-e2e-")
	if err != nil {
		return err
	}
	if c.keep {
		logf("state in %s", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if c.out == "" {
		c.out = filepath.Join(dir, "figures.md")
	}

	d, err := c.dataSet()
	if err != nil {
		return err
	}
	// One sandbox per context (-contexts), each with the whole data set:
	// the fleet view of N contexts holds N × the pods.
	var (
		planes      []*sandbox.Sandbox
		kubeconfigs []string
		cs          kubernetes.Interface
	)
	defer func() {
		for _, sb := range planes {
			_ = sb.Stop()
		}
	}()
	for k := range max(c.contexts, 1) {
		name := ""
		if c.contexts > 1 {
			name = fmt.Sprintf("bench-%d", k+1)
		}
		logf("sandbox %s with the audit log", name)
		sb, err := sandbox.Start(ctx, sandbox.Options{
			Audit: true, CRDs: [][]byte{crds.YAML()},
			StateDir:     filepath.Join(dir, "sandbox"+name),
			ContextName:  name,
			StartTimeout: 10 * time.Minute,
			Logf:         logf,
		})
		if err != nil {
			return err
		}
		planes = append(planes, sb)
		kubeconfigs = append(kubeconfigs, sb.KubeconfigPath)
		one, err := fill(ctx, c, d, sb)
		if err != nil {
			return err
		}
		if cs == nil {
			cs = one // the patches go to the first context
		}
	}
	created := time.Now()
	kubeconfig := kubeconfigs[0]
	if c.contexts > 1 {
		kubeconfig = filepath.Join(dir, "kubeconfig")
		if err := kube.MergeKubeconfigs(kubeconfig, kubeconfigs); err != nil {
			return err
		}
	}

	binaries, err := c.binaries(ctx, dir)
	if err != nil {
		return err
	}
	// Each binary in turn, -rounds times, against the one data set: the
	// figures of a before and an after meet the same plane and load.
	var reports strings.Builder
	if c.floor > 0 {
		floor, err := measureFloor(ctx, planes[0].Config, floorClients, c.floor, apiServerPIDs(planes[:1]), planes[0].StateDir)
		if err != nil {
			return err
		}
		report := floorReport(floor)
		fmt.Print(report + "\n")
		reports.WriteString(report + "\n")
	}
	views := strings.Split(c.view, ",")
	run := -1
	for round := range max(c.rounds, 1) {
		for _, bin := range binaries {
			for _, view := range views {
				run++
				cv := c
				cv.view = strings.TrimSpace(view)
				cv.screenOnOutput = c.screenPoll == "output" || c.screenPoll == "alternate" && round%2 == 1
				if cv.view == bigCluster {
					cv.view, cv.openBig = "rayclusters", true
				}
				m := &measurement{c: cv, d: d, cs: cs, dir: filepath.Join(dir, fmt.Sprintf("run%d", run+1)), seq: run,
					binary: bin, load: map[string]string{}, created: created, apiPIDs: apiServerPIDs(planes)}
				report, err := m.measure(ctx, planes, kubeconfig)
				if err != nil {
					return err
				}
				fmt.Print(report)
				reports.WriteString(report + "\n")
			}
		}
	}
	return os.WriteFile(c.out, []byte(reports.String()), 0o644)
}

// dataSet is the data set the flags ask for.
func (c config) dataSet() (dataSet, error) {
	d := dataSet{clusters: c.clusters, namespaces: 10, podsPerNode: 100, big: c.big}
	lo, hi, ranged := strings.Cut(c.workers, "-")
	var err error
	if d.workers, err = strconv.Atoi(lo); err != nil || d.workers < 0 {
		return d, fmt.Errorf("-workers %q: not N or A-B", c.workers)
	}
	if ranged {
		if d.workersMax, err = strconv.Atoi(hi); err != nil || d.workersMax < d.workers {
			return d, fmt.Errorf("-workers %q: not N or A-B with A <= B", c.workers)
		}
	}
	switch c.shape {
	case "raydar":
	case "kuberay":
		if d.kuberay, err = loadKubeRayShape(); err != nil {
			return d, err
		}
	default:
		return d, fmt.Errorf("-shape %q: raydar or kuberay", c.shape)
	}
	if slices.Contains(strings.Split(c.view, ","), bigCluster) && c.big == 0 {
		return d, errors.New("-view " + bigCluster + " needs -big-cluster N")
	}
	d.init()
	return d, nil
}

// measure runs m.binary once on m.c.view against the data set of planes
// and returns its report.
func (m *measurement) measure(ctx context.Context, planes []*sandbox.Sandbox, kubeconfig string) (string, error) {
	if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return "", err
	}
	m0, merr := scrapeMetrics(ctx, planes[0].Config)
	if err := m.start(m.binary, kubeconfig); err != nil {
		return "", err
	}
	var err error
	if m.c.launchOnly {
		err = m.firstRender(ctx)
	} else {
		err = m.run(ctx)
	}
	m.term.close()
	if err != nil {
		return "", err
	}
	if m1, merr1 := scrapeMetrics(ctx, planes[0].Config); merr == nil && merr1 == nil {
		m.wire = "The API server's /metrics around the run: " + metricsDiff(m0, m1) + "\n"
	}
	if b, err := os.ReadFile(m.log); err == nil {
		var synced []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `"kind synced"`) {
				synced = append(synced, l)
			}
		}
		m.wire = "raydar's \"kind synced\" lines:\n\n    " + strings.Join(synced, "\n    ") + "\n\n" + m.wire
	}
	if tl, err := requestTimeline(planes[0].StateDir, "raydar/", m.started, m.rendered); err == nil {
		m.wire = "raydar's requests from the launch to the first full screen (from the launch):\n\n" + tl + "\n" + m.wire
	} else {
		return "", err
	}
	for _, sb := range planes {
		if err := m.countLists(sb); err != nil {
			return "", err
		}
	}
	return m.report(), nil
}

// apiServerPIDs is the kube-apiserver process of each plane.
func apiServerPIDs(planes []*sandbox.Sandbox) []int {
	var pids []int
	for _, sb := range planes {
		if pid, ok := sb.APIServerPID(); ok {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cpuOf is the CPU time the processes pids have used (those it can read).
func cpuOf(pids []int) time.Duration {
	var sum time.Duration
	for _, pid := range pids {
		if d, err := procstat.CPU(pid); err == nil {
			sum += d
		}
	}
	return sum
}

// fill creates the data set in sb and waits until every pod is Running,
// returning the clientset that wrote it.
func fill(ctx context.Context, c config, d dataSet, sb *sandbox.Sandbox) (kubernetes.Interface, error) {
	cfg := rest.CopyConfig(sb.Config)
	cfg.QPS, cfg.Burst, cfg.UserAgent = 5000, 10000, "bench-e2e"
	// Pods in protobuf: the API server decodes and encodes KubeRay-shaped
	// pods (env, probes, the start script) for each of the data set's two
	// writes per pod; JSON costs it several times the CPU.
	cs, err := kubernetes.NewForConfig(protobuf(cfg))
	if err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, err
	}
	nodes, err := d.createNodes(ctx, cs)
	if err != nil {
		return nil, err
	}
	logf("%d nodes Ready", len(nodes))
	if err := d.create(ctx, cs, cl, nodes, c.parallel, logf); err != nil {
		return nil, err
	}
	return cs, d.waitRunning(ctx, cs, logf)
}

// binaries are the raydars to measure: -raydar's (waiting for each to
// appear), else one built now, once the data set is ready (the 100k one
// takes a while).
func (c config) binaries(ctx context.Context, dir string) ([]string, error) {
	if c.raydar != "" {
		bins := strings.Split(c.raydar, ",")
		for _, spec := range bins {
			_, b := binarySpec(spec)
			for {
				if st, err := os.Stat(b); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
					break
				}
				logf("waiting for %s", b)
				sleepCtx(ctx, 10*time.Second)
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
			}
		}
		return bins, nil
	}
	raydar := filepath.Join(dir, "raydar")
	logf("building %s", raydar)
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", raydar, "./cmd/raydar").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build ./cmd/raydar (run from the module root): %v\n%s", err, out)
	}
	return []string{raydar}, nil
}

// binarySpec splits an entry of -raydar, [NAME=VALUE+…@]path, into the
// environment the binary runs with (GOGC=100@bin/raydar: the same binary
// with another collector setting) and its path.
func binarySpec(spec string) (env []string, path string) {
	i := strings.LastIndex(spec, "@")
	if i < 0 {
		return nil, spec
	}
	return strings.Split(spec[:i], "+"), spec[i+1:]
}

// measurement is one run of raydar in tmux and its figures.
type measurement struct {
	c     config
	d     dataSet
	cs    kubernetes.Interface
	dir   string
	term  *tmuxTerm
	pprof string
	log   string
	// seq numbers the measurements against one data set (0, 1, …): the
	// restart counts it writes start at a run's own base, so that a
	// later run's patches change the pods again.
	seq    int
	binary string

	created, started, synced, rendered time.Time
	idleCPU, patchCPU                  time.Duration
	idleBytes, patchBytes              int64
	patches, patchErrs                 int
	keyLat, sortLat, filtLat           []time.Duration
	keyBytes                           []int // bytes written per j/k
	repaint                            int
	updates                            []int
	hwm, rssSynced                     int64
	// pageOpen is -open-big's Enter → full cluster page.
	pageOpen time.Duration
	// anonSynced, fileSynced: RssAnon and RssFile after sync (the heap;
	// the binary's pages mapped in).
	anonSynced, fileSynced  int64
	listsBefore, listsAfter int
	listsAfterURIs          []string
	load                    map[string]string
	// apiPIDs are the kube-apiservers' processes (one per context);
	// apiCPU0 their CPU time at the launch, launchCPU and launchAPICPU
	// raydar's and theirs from the launch to the full screen.
	apiPIDs                 []int
	apiCPU0                 time.Duration
	launchCPU, launchAPICPU time.Duration
	// wire is what the launch asked of the API server (wire.go).
	wire string
	// selfCPU0, busy0: this process's CPU (with its reaped children: the
	// tmux clients) and the machine's busy time at the launch;
	// launchSelfCPU, launchBusy the same to the full screen, and
	// launchTmuxCPU the tmux server's CPU since it started (cpu.go).
	selfCPU0, busy0                          time.Duration
	launchSelfCPU, launchBusy, launchTmuxCPU time.Duration
	// launchHWM is the peak RSS at the first full screen (kB).
	launchHWM int64
}

// apiCPU is the CPU time the kube-apiservers have used so far.
func (m *measurement) apiCPU() time.Duration { return cpuOf(m.apiPIDs) }

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// freshCopy copies the binary at path into dir and returns the copy's
// path. How many of a binary's pages a process maps (its file-backed RSS,
// part of peak RSS) depends on how the file's pages came into the page
// cache, not only on what the process runs: `raydar version` peaked at
// 41 MB from a fresh build or copy and at 49-66 MB from the same bytes
// read back whole after an eviction (the kernel maps the larger folios
// around each fault). Each launch runs a copy written just before it, as
// `make build` leaves a binary, so that binaries compare on equal terms.
func freshCopy(path, dir string) (string, error) {
	in, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	dst := filepath.Join(dir, "raydar")
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}

func (m *measurement) start(raydar, kubeconfig string) error {
	var err error
	if m.pprof, err = freePort(); err != nil {
		return err
	}
	m.log = filepath.Join(m.dir, "raydar.log")
	extraEnv, raydar := binarySpec(raydar)
	if raydar, err = freshCopy(raydar, m.dir); err != nil {
		return err
	}
	env := append([]string{
		"KUBECONFIG=" + kubeconfig, "HOME=" + filepath.Join(m.dir, "home"),
		"XDG_STATE_HOME=" + filepath.Join(m.dir, "state"), "XDG_CONFIG_HOME=" + filepath.Join(m.dir, "config"),
	}, extraEnv...)
	argv := []string{raydar, "-A", "-c", m.c.view, "--no-reconcile", "--log-file", m.log, "--pprof", m.pprof}
	if m.c.contexts > 1 {
		var names []string
		for k := range m.c.contexts {
			names = append(names, fmt.Sprintf("bench-%d", k+1))
		}
		argv = append(argv, "--context", strings.Join(names, ","))
	}
	pidFile := ""
	if m.c.linkDelay > 0 {
		var linkEnv []string
		if argv, linkEnv, pidFile, err = linkArgv(m.dir, m.c.linkDelay, argv); err != nil {
			return err
		}
		env = append(env, linkEnv...)
	}
	// A launch is measured against a warm API server on a settled
	// machine: the data set's writes (and the audit log's) are flushed
	// first, so that pending writeback is not part of the figure (the
	// first launch after a fill once took 5.8 s before raydar's first log
	// line, against 0.1 s otherwise).
	syscall.Sync()
	m.load["start"] = loadAvg()
	m.apiCPU0 = m.apiCPU()
	m.selfCPU0, m.busy0 = selfCPU(), machineBusy()
	m.term, err = startTmux(m.dir, 120, 40, env, argv)
	m.started = time.Now()
	if err == nil && pidFile != "" {
		// The pane runs the proxy; the figures are raydar's.
		m.term.pid, err = waitPID(pidFile, 30*time.Second)
	}
	logf("raydar started (pid %d) in tmux 120×40: %s", m.pidOrZero(), strings.Join(argv[1:], " "))
	return err
}

func (m *measurement) pidOrZero() int {
	if m.term == nil {
		return 0
	}
	return m.term.pid
}

func (m *measurement) run(ctx context.Context) error {
	startProfile := make(chan struct{})
	go func() { // the initial list and the first frames
		defer close(startProfile)
		m.profile("cpu-start.pb.gz", "profile?seconds=15")
	}()
	defer func() { <-startProfile }()
	if err := m.firstRender(ctx); err != nil {
		return err
	}
	m.term.rec.quiet(2*time.Second, 30*time.Second)
	if m.c.openBig {
		if err := m.openBig(ctx); err != nil {
			return err
		}
		m.term.rec.quiet(2*time.Second, 30*time.Second)
	}
	if mem, err := procstat.StatusKBs(m.term.pid, "VmRSS", "RssAnon", "RssFile"); err == nil {
		m.rssSynced, m.anonSynced, m.fileSynced = mem[0], mem[1], mem[2]
	}
	m.profile("heap-synced.pb.gz", "heap?gc=1")
	if wait := time.Until(m.created.Add(m.c.settle)); wait > 0 {
		logf("settling %s: ages under 10 minutes change every second", wait.Round(time.Second))
		sleepCtx(ctx, wait)
	}
	m.idle(ctx)
	m.keys(ctx)
	if m.c.view == "pods" {
		if err := m.steady(ctx); err != nil {
			return err
		}
	}
	// The re-sorts and filters under a CPU profile (cpu-sortfilter):
	// what they cost beyond the table's own work (tui/table's benchmarks).
	sortProfile := make(chan struct{})
	go func() {
		defer close(sortProfile)
		m.profile("cpu-sortfilter.pb.gz", fmt.Sprintf("profile?seconds=%d", sortFilterProfileSeconds))
	}()
	m.sortFilter(ctx)
	<-sortProfile
	m.patchLoad(ctx)
	m.hwm, _ = procstat.StatusKB(m.term.pid, "VmHWM")
	m.profile("heap-end.pb.gz", "heap?gc=1")
	return ctx.Err()
}

var syncedLine = regexp.MustCompile(`^(\S+) .*"cache synced"`)

// firstRender waits for a screen showing every row (the title's count,
// no "syncing", the last body row drawn) and finds the output that
// completed it, and the "cache synced" line of raydar's log.
func (m *measurement) firstRender(ctx context.Context) error {
	n := max(m.c.contexts, 1)
	want := fmt.Sprintf("[%d]", n*m.d.pods())
	if m.c.view != "pods" && m.c.view != "po" && m.c.view != "pod" {
		want = fmt.Sprintf("[%d]", n*m.d.allClusters())
	}
	deadline := time.Now().Add(10 * time.Minute)
	var readAt time.Time
	read := int64(-1)
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if m.c.screenOnOutput && m.term.rec.bytes() == read && time.Since(readAt) < 200*time.Millisecond {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		read, readAt = m.term.rec.bytes(), time.Now()
		s := m.term.screen()
		end := time.Now()
		lines := strings.Split(s, "\n")
		if strings.Contains(s, want) && !strings.Contains(s, "syncing") && len(lines) >= 38 && strings.TrimSpace(lines[37]) != "" {
			_, _, last := m.term.rec.since(m.started, end)
			m.rendered = last
			m.launchCPU, _ = procstat.CPU(m.term.pid)
			m.launchAPICPU = m.apiCPU() - m.apiCPU0
			m.launchSelfCPU, m.launchBusy = selfCPU()-m.selfCPU0, machineBusy()-m.busy0
			m.launchHWM, _ = procstat.StatusKB(m.term.pid, "VmHWM")
			if pid, err := m.term.tmux("display-message", "-p", "#{pid}"); err == nil {
				if p, err := strconv.Atoi(strings.TrimSpace(pid)); err == nil {
					m.launchTmuxCPU, _ = procstat.CPU(p)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no full screen after 10 minutes; the screen:\n%s", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(m.log)
		for _, l := range strings.Split(string(b), "\n") {
			if sm := syncedLine.FindStringSubmatch(l); sm != nil {
				t, err := time.Parse("2006-01-02T15:04:05.000Z07:00", sm[1])
				if err != nil {
					return err
				}
				m.synced = t
				logf("synced %s after start, full screen %s after sync", m.synced.Sub(m.started).Round(time.Millisecond), m.rendered.Sub(m.synced).Round(time.Millisecond))
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New(`no "cache synced" line in raydar's log`)
}

// openBig opens the big cluster's page from the RayCluster list: a
// filter on its name, Enter, Enter; the figure is the last Enter → the
// output that completed a page showing the group row with every worker
// ready and the pod rows beneath it.
func (m *measurement) openBig(ctx context.Context) error {
	for _, k := range []string{"/", bigCluster, "Enter"} {
		if err := m.term.send(k); err != nil {
			return err
		}
	}
	m.term.rec.quiet(500*time.Millisecond, 30*time.Second)
	t := time.Now()
	if err := m.term.send("Enter"); err != nil {
		return err
	}
	want := fmt.Sprintf("%d/%d", m.d.big, m.d.big)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s := m.term.screen()
		end := time.Now()
		// The page ends with its Events and History blocks: full once the
		// group row reads every worker ready and its pod rows are drawn.
		if strings.Contains(s, want) && strings.Count(s, bigCluster+"-") >= 10 {
			_, _, last := m.term.rec.since(t, end)
			m.pageOpen = last.Sub(t)
			logf("cluster page of %s full after %s", bigCluster, m.pageOpen.Round(time.Millisecond))
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no full cluster page 2 minutes after Enter; the screen:\n%s", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (m *measurement) profile(name, kind string) {
	var resp *http.Response
	var err error
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) { // raydar may not listen yet
		if resp, err = http.Get("http://" + m.pprof + "/debug/pprof/" + kind); err == nil || time.Since(start) > 10*time.Second {
			break
		}
	}
	if err != nil {
		logf("profile %s: %v", kind, err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(filepath.Join(m.dir, name))
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = io.Copy(f, resp.Body)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func (m *measurement) idle(ctx context.Context) {
	logf("idle for %s", m.c.duration)
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.profile("cpu-idle.pb.gz", fmt.Sprintf("profile?seconds=%d", min(int(m.c.duration/time.Second), 30)))
	}()
	defer func() { <-done }()
	c0, _ := procstat.CPU(m.term.pid)
	b0 := m.term.rec.bytes()
	sleepCtx(ctx, m.c.duration)
	c1, _ := procstat.CPU(m.term.pid)
	m.idleCPU, m.idleBytes = c1-c0, m.term.rec.bytes()-b0
	m.load["idle"] = loadAvg()
}

// quietGap is how long the terminal must have been silent before a key is
// sent: 30 ms, plus a round trip behind the link proxy, whose delay line may
// still hold output the recorder has not seen.
func (m *measurement) quietGap() time.Duration { return 30*time.Millisecond + 2*m.c.linkDelay }

// keyLatency sends one key and waits for the first byte written after it.
func (m *measurement) keyLatency(k string) (time.Duration, bool) {
	m.term.rec.quiet(m.quietGap(), 2*time.Second)
	t := time.Now()
	if err := m.term.send(k); err != nil {
		return 0, false
	}
	at, ok := m.term.rec.waitOutput(t, 5*time.Second)
	return at.Sub(t), ok
}

func (m *measurement) keys(ctx context.Context) {
	logf("%d keys (j/k)", m.c.samples)
	for i := range m.c.samples {
		if ctx.Err() != nil {
			return
		}
		k := "j"
		if i%2 == 1 {
			k = "k"
		}
		t := time.Now()
		if d, ok := m.keyLatency(k); ok {
			m.keyLat = append(m.keyLat, d)
			// What the cursor move cost the link: every byte written for
			// it, once the screen is quiet again.
			m.term.rec.quiet(m.quietGap(), 2*time.Second)
			n, _, _ := m.term.rec.since(t, time.Time{})
			m.keyBytes = append(m.keyBytes, n)
		}
	}
	m.load["keys"] = loadAvg()
}

// sortFilterProfileSeconds covers sortFilter's keys at 100,000 pods (about
// 5 s); the profile's end is waited for, idle, before the patches start.
const sortFilterProfileSeconds = 8

func (m *measurement) sortFilter(ctx context.Context) {
	logf("sort and filter")
	for i := range 10 {
		if ctx.Err() != nil {
			return
		}
		k := "S"
		if i%2 == 1 {
			k = "N"
		}
		if d, ok := m.keyLatency(k); ok {
			m.sortLat = append(m.sortLat, d)
		}
	}
	for range 3 {
		m.keyLatency("/")
		for _, ch := range "worker-3" {
			if d, ok := m.keyLatency(string(ch)); ok {
				m.filtLat = append(m.filtLat, d)
			}
		}
		m.keyLatency("Escape")
		m.term.rec.quiet(300*time.Millisecond, 5*time.Second)
	}
	m.load["sort/filter"] = loadAvg()
}

// measureBaseline is the harness's own share of key → screen: the same
// tmux pane, control client and FIFO, with cat(1) echoing each key.
func measureBaseline(samples int) error {
	dir, err := os.MkdirTemp("", "raydar-bench-e2e-baseline-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	argv := []string{"cat"}
	if a := os.Getenv("BENCH_E2E_BASELINE"); a != "" {
		argv = strings.Fields(a)
	}
	t, err := startTmux(dir, 120, 40, nil, argv)
	if err != nil {
		return err
	}
	defer t.close()
	m := &measurement{term: t}
	var lat []time.Duration
	for range samples {
		if d, ok := m.keyLatency("j"); ok {
			lat = append(lat, d)
		}
	}
	fmt.Printf("harness baseline (cat echo in tmux): key → screen p50 %s, p90 %s, p99 %s (%d samples, load %s)\n",
		ms(pct(lat, .5)), ms(pct(lat, .9)), ms(pct(lat, .99)), len(lat), loadAvg())
	return nil
}
