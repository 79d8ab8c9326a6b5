package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/raydash/addrbook"
	"github.com/raydar/raydar/kube/sandbox/gangsim"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/kube/sandbox/seed"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/grafana"
	"github.com/raydar/raydar/test/internal/testobj"
)

// applyObjects applies objs to the sandbox server-side, as `helm install`
// creates them (the namespace ns first, which `helm install
// --create-namespace` makes), and deletes them when the test ends, waiting
// until the Deployment's pods are gone (kwok runs them: a pod labelled as
// a KubeRay operator's would be seen by the next test's operator).
// ServiceMonitors are left out: the sandbox has no Prometheus operator CRDs.
func applyObjects(t *testing.T, ctx context.Context, ns string, objs []*unstructured.Unstructured) {
	t.Helper()
	cs := sb.Clientset()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(cs.Discovery())
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	dyn, err := dynamic.NewForConfig(sb.Config)
	if err != nil {
		t.Fatal(err)
	}
	var applied []dynamic.ResourceInterface
	var names []string
	t.Cleanup(func() {
		bg := context.Background()
		for i := len(applied) - 1; i >= 0; i-- {
			if err := applied[i].Delete(bg, names[i], metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %s: %v", names[i], err)
			}
		}
		_ = wait.PollUntilContextTimeout(bg, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return err == nil && len(pods.Items) == 0, nil
		})
	})
	for _, u := range objs {
		if u.GetKind() == "ServiceMonitor" {
			t.Logf("not applied (no monitoring.coreos.com CRDs in the sandbox): ServiceMonitor %s/%s", u.GetNamespace(), u.GetName())
			continue
		}
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == "namespace" {
			if u.GetNamespace() == "" {
				u.SetNamespace(ns)
			}
			ri = dyn.Resource(m.Resource).Namespace(u.GetNamespace())
		}
		if _, err := ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "helm", Force: true}); err != nil {
			t.Fatalf("server-side apply of %s %s/%s refused: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		applied = append(applied, ri)
		names = append(names, u.GetName())
	}
}

// chartRun says what runChart checks beyond every chart's common ground.
type chartRun struct {
	// ns is the namespace of the Ray objects (a watched one).
	ns string
	// unwatched, when set, is a namespace the operator must leave alone.
	unwatched string
	// batchScheduler is the gang scheduler the sandbox simulates for the
	// Ray pods ("" none).
	batchScheduler string
	// checkHead checks the RayCluster's head pod (the config file's pod
	// defaults).
	checkHead func(t *testing.T, head *corev1.Pod)
	// kuberayMetrics wants the kuberay_* metrics on /metrics.
	kuberayMetrics bool
}

// runChart installs the rendered objects in the sandbox (RBAC,
// ServiceAccount, ConfigMap, Deployment and a pod of its template, which
// kwok runs whatever the image) and runs raydar-operator as the Deployment's container would run
// it, on this host: the container's command line with the program
// replaced by ./cmd/raydar-operator, its env, the mounted ConfigMap's
// files and the emptyDirs in a temporary directory standing for their
// mount paths, the identity of its ServiceAccount (a TokenRequest token,
// in a kubeconfig that also records the simulated Ray heads' address
// book), and the pod's namespace in /var/run/secrets (a mount namespace
// of its own, hence root). The listen addresses are this host's free ports, not the pod's
// (other tests may hold 8080): the one change to the command line (or to
// the config file, whose metricsAddr and probeAddr then say them). The
// operator must answer the Deployment's probes, hold a Lease in the
// release namespace, bring a
// RayCluster, a RayJob and a RayService to ready, never be refused by
// the chart's RBAC, and exit 0 on SIGTERM.
func runChart(t *testing.T, objs []*unstructured.Unstructured, r chartRun) {
	t.Helper()
	if uid := os.Geteuid(); uid != 0 {
		t.Skipf("runs as uid %d: the operator runs with the pod's /var/run/secrets/kubernetes.io/serviceaccount (its namespace), "+
			"bound in a mount namespace of its own, which needs root (CAP_SYS_ADMIN). Run as root (CI does) to run it", uid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	d := only1[appsv1.Deployment](t, objs, "Deployment")
	p := podSpecOf(t, objs)
	c := p.container
	applyObjects(t, ctx, d.Namespace, objs)
	cs := sb.Clientset()
	// The Deployment's pod, as its ReplicaSet would make it (the sandbox
	// runs no Deployment controller; kwok runs the pod, whatever its
	// image): what the operator sees of itself in the cluster, its labels
	// those of the chart.
	pod, err := cs.CoreV1().Pods(d.Namespace).Create(ctx, podOf(d), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a pod of the Deployment's template: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Pods(d.Namespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	})
	for _, ns := range []string{r.ns, r.unwatched} {
		if ns == "" {
			continue
		}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}

	dir := t.TempDir()
	// The ServiceAccount's identity, and the simulated heads.
	token, err := sb.ServiceAccountToken(ctx, d.Namespace, d.Spec.Template.Spec.ServiceAccountName, time.Hour)
	if err != nil {
		t.Fatalf("a token of the Deployment's ServiceAccount %s/%s: %v", d.Namespace, d.Spec.Template.Spec.ServiceAccountName, err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := sb.WriteTokenKubeconfig(kubeconfig, token, d.Namespace); err != nil {
		t.Fatal(err)
	}
	book := filepath.Join(dir, addrbook.FileName)
	sim, err := headsim.Start(ctx, headsim.Options{Config: sb.Config, Namespace: r.ns, SetPodPhase: sb.SetPodPhase, EndContainer: sb.EndContainer, AddressBook: book})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	if err := addrbook.Advertise(kubeconfig, book); err != nil {
		t.Fatal(err)
	}
	if r.batchScheduler != "" {
		gs, err := gangsim.Start(ctx, gangsim.Options{Config: sb.Config, Scheduler: r.batchScheduler})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(gs.Close)
	}

	// The container's files: mount paths under dir.
	root := filepath.Join(dir, "pod")
	rebase := func(s string) string {
		for _, m := range c.VolumeMounts {
			s = strings.ReplaceAll(s, m.MountPath, filepath.Join(root, m.MountPath))
		}
		return s
	}
	for _, m := range c.VolumeMounts {
		if err := os.MkdirAll(filepath.Join(root, m.MountPath), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	def := operatorListenDefaults(t)
	metricsPort, healthPort := freePort(t), freePort(t)
	// podPort maps the pod's port of each endpoint to this host's.
	podPort := map[int32]int{def.metrics: metricsPort, def.health: healthPort}
	cfgPath := configArg(c.Args)
	for path, content := range p.files {
		if path == cfgPath {
			content = listenOn(content, "metricsAddr", def.metrics, metricsPort, podPort)
			content = listenOn(content, "probeAddr", def.health, healthPort, podPort)
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(rebase(content)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var args []string
	moved := map[string]bool{}
	for _, a := range c.Args {
		for flag, port := range map[string]int{metricsFlag: metricsPort, healthFlag: healthPort} {
			if v, ok := strings.CutPrefix(a, flag+"="); ok {
				delete(podPort, map[string]int32{metricsFlag: def.metrics, healthFlag: def.health}[flag])
				var n int32
				_, pod, _ := strings.Cut(v, ":")
				fmt.Sscan(pod, &n)
				podPort[n] = port
				a = fmt.Sprintf("%s=127.0.0.1:%d", flag, port)
				moved[flag] = true
			}
		}
		args = append(args, rebase(a))
	}
	if cfgPath == "" {
		for flag, port := range map[string]int{metricsFlag: metricsPort, healthFlag: healthPort} {
			if !moved[flag] {
				args = append(args, fmt.Sprintf("%s=127.0.0.1:%d", flag, port))
			}
		}
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(dir, "home"), "KUBECONFIG=" + kubeconfig}
	for _, e := range c.Env {
		env = append(env, e.Name+"="+envValue(t, e, c))
	}

	// The pod's namespace where every pod has it (and where the operator
	// looks to elect in its own namespace): a directory of the test's bound
	// on /run (/var/run) in a mount namespace of the operator's own.
	podRun := filepath.Join(dir, "run")
	saDir := filepath.Join(podRun, "secrets/kubernetes.io/serviceaccount")
	if err := os.MkdirAll(saDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, b := range map[string][]byte{"token": []byte(token), "ca.crt": sb.Config.CAData, "namespace": []byte(d.Namespace)} {
		if err := os.WriteFile(filepath.Join(saDir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var logs syncBuffer
	cmd := exec.Command("/bin/sh", append([]string{"-c", `mount --bind "$0" /run && exec "$@"`, podRun, operatorBinary(t)}, args...)...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdout, cmd.Stderr = &logs, &logs
	// Go makes the new mount namespace's mounts private: the bind mount
	// stays the operator's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	t.Logf("raydar-operator %s (the Deployment's %s %s)", strings.Join(args, " "), c.Command, c.Args)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			return err
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-exited
			return errors.New("no exit within a minute of SIGTERM")
		}
	}
	t.Cleanup(func() {
		_ = stop()
		if t.Failed() {
			t.Logf("raydar-operator's output:\n%s", logs.String())
		}
	})
	alive := func() {
		t.Helper()
		select {
		case err := <-exited:
			stopped = true
			t.Fatalf("raydar-operator exited: %v\n%s", err, logs.String())
		default:
		}
	}

	// The Deployment's probes, on the ports they name.
	named := map[string]int32{}
	for _, cp := range c.Ports {
		named[cp.Name] = cp.ContainerPort
	}
	for what, pr := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		port := pr.HTTPGet.Port.IntVal
		if s := pr.HTTPGet.Port.StrVal; s != "" {
			port = named[s]
		}
		host, ok := podPort[port]
		if !ok {
			t.Fatalf("the %s probe's port %s (%d) is none raydar-operator listens on (%v)", what, pr.HTTPGet.Port.String(), port, podPort)
		}
		u := fmt.Sprintf("http://127.0.0.1:%d%s", host, pr.HTTPGet.Path)
		eventually(t, ctx, 3*time.Minute, what+" probe GET "+u+" 200", func() (bool, string) {
			alive()
			code, body := httpGet(u)
			return code == http.StatusOK, fmt.Sprintf("%d %.200s", code, body)
		})
	}

	// The leader: a Lease in the pod's namespace (as a pod of the
	// Deployment elects) held by this process (its identity is in its log).
	var lease string
	eventually(t, ctx, 3*time.Minute, "raydar-operator to hold a Lease in "+d.Namespace, func() (bool, string) {
		alive()
		ls, err := cs.CoordinationV1().Leases(d.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, l := range ls.Items {
			if h := l.Spec.HolderIdentity; h != nil && *h != "" && strings.Contains(logs.String(), *h) {
				lease = l.Namespace + "/" + l.Name
				return true, ""
			}
			if l.Spec.HolderIdentity != nil {
				seen = append(seen, l.Namespace+"/"+l.Name+" held by "+*l.Spec.HolderIdentity)
			}
		}
		return false, fmt.Sprintf("leases: %v", seen)
	})
	t.Logf("raydar-operator leads on the Lease %s", lease)

	cl, err := seed.NewClient(sb.Config)
	if err != nil {
		t.Fatal(err)
	}
	rc := testobj.Cluster(r.ns, "chart", 1)
	job := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "chart-job"},
		Spec: rayv1.RayJobSpec{Entrypoint: "echo installed by a chart", SubmissionMode: rayv1.HTTPMode,
			ShutdownAfterJobFinishes: true, RayClusterSpec: &testobj.Cluster(r.ns, "unused", 0).Spec}}
	svc := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "chart-svc"},
		Spec: rayv1.RayServiceSpec{ServeConfigV2: "applications:\n  - name: fruit\n    import_path: fruit.deployment_graph\n    route_prefix: /fruit\n",
			RayClusterSpec: testobj.Cluster(r.ns, "unused", 1).Spec}}
	objsToMake := []client.Object{rc, job, svc}
	var outside *rayv1.RayCluster
	if r.unwatched != "" {
		outside = testobj.Cluster(r.unwatched, "unwatched", 1)
		objsToMake = append(objsToMake, outside)
	}
	for _, o := range objsToMake {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteAndWait(t, cl, o) })
	}
	eventually(t, ctx, 5*time.Minute, "RayCluster "+r.ns+"/chart ready", func() (bool, string) {
		alive()
		var got rayv1.RayCluster
		if err := cl.Get(ctx, client.ObjectKeyFromObject(rc), &got); err != nil {
			return false, err.Error()
		}
		return got.Status.State == rayv1.Ready, fmt.Sprintf("state %q, %d/%d workers ready, conditions %v, events %v", got.Status.State,
			got.Status.ReadyWorkerReplicas, got.Status.DesiredWorkerReplicas, got.Status.Conditions, eventsOf(ctx, r.ns, rc.Name))
	})
	eventually(t, ctx, 5*time.Minute, "RayJob "+r.ns+"/chart-job SUCCEEDED and Complete", func() (bool, string) {
		alive()
		var got rayv1.RayJob
		if err := cl.Get(ctx, client.ObjectKeyFromObject(job), &got); err != nil {
			return false, err.Error()
		}
		st := got.Status
		return st.JobStatus == rayv1.JobStatusSucceeded && st.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete,
			fmt.Sprintf("job %q deployment %q reason %q message %q", st.JobStatus, st.JobDeploymentStatus, st.Reason, st.Message)
	})
	eventually(t, ctx, 5*time.Minute, "RayService "+r.ns+"/chart-svc Ready", func() (bool, string) {
		alive()
		var got rayv1.RayService
		if err := cl.Get(ctx, client.ObjectKeyFromObject(svc), &got); err != nil {
			return false, err.Error()
		}
		return rayv1.IsConditionTrue(got.Status.Conditions, string(rayv1.RayServiceReady)), fmt.Sprintf("conditions %v", got.Status.Conditions)
	})
	if r.checkHead != nil {
		pods, err := cs.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: rayv1.RayClusterLabelKey + "=chart," + rayv1.RayNodeTypeLabelKey + "=head"})
		if err != nil || len(pods.Items) != 1 {
			t.Fatalf("the head pod of %s/chart: %v (%d pods)", r.ns, err, len(pods.Items))
		}
		r.checkHead(t, &pods.Items[0])
	}
	if outside != nil {
		var got rayv1.RayCluster
		if err := cl.Get(ctx, client.ObjectKeyFromObject(outside), &got); err != nil {
			t.Fatal(err)
		}
		pods, _ := cs.CoreV1().Pods(r.unwatched).List(ctx, metav1.ListOptions{})
		if got.Status.State != "" || len(pods.Items) > 0 {
			t.Errorf("the RayCluster in %s, a namespace not watched, was reconciled: state %q, %d pods", r.unwatched, got.Status.State, len(pods.Items))
		}
	}
	code, body := httpGet(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	if code != http.StatusOK {
		t.Errorf("GET /metrics on the metrics port: %d %.300s", code, body)
	} else if r.kuberayMetrics {
		checkDashboardMetrics(t, body)
	}
	// Deleted while the operator runs (it releases the finalizers): the
	// objects go, and so do their kuberay_* series.
	for _, o := range objsToMake {
		deleteAndWait(t, cl, o)
	}
	if r.kuberayMetrics {
		// The RayService's clusters go after it (the garbage collector).
		eventually(t, ctx, 2*time.Minute, "no kuberay_* series of "+r.ns+" once its objects are deleted", func() (bool, string) {
			_, body := httpGet(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
			for _, line := range strings.Split(body, "\n") {
				if strings.HasPrefix(line, "kuberay_") && strings.Contains(line, `namespace="`+r.ns+`"`) {
					return false, "still " + line
				}
			}
			return true, ""
		})
	}

	if err := stop(); err != nil {
		t.Errorf("raydar-operator on SIGTERM: %v", err)
	}
	for _, bad := range []string{"forbidden", "Forbidden"} {
		if strings.Contains(logs.String(), bad) {
			t.Errorf("raydar-operator logged %q: the chart's RBAC is short of something:\n%s", bad, logs.String())
			break
		}
	}
}

// listenOn sets the config file's key (metricsAddr, probeAddr) to
// 127.0.0.1:port, replacing its value or adding it, and moves podPort's
// entry from dflt to the port the file said.
func listenOn(content, key string, dflt int32, port int, podPort map[int32]int) string {
	line := regexp.MustCompile(`(?m)^` + key + `:\s*"?[^"\n]*:(\d+)"?\s*$`)
	set := fmt.Sprintf("%s: 127.0.0.1:%d", key, port)
	if m := line.FindStringSubmatch(content); m != nil {
		var n int32
		fmt.Sscan(m[1], &n)
		delete(podPort, dflt)
		podPort[n] = port
		return line.ReplaceAllLiteralString(content, set)
	}
	return strings.TrimRight(content, "\n") + "\n" + set + "\n"
}

// eventsOf are the reasons and messages of the Events about the object
// name in ns (why an operator left it alone, say).
func eventsOf(ctx context.Context, ns, name string) []string {
	evs, err := sb.Clientset().EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + name})
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range evs.Items {
		out = append(out, e.Reason+": "+e.Note)
	}
	return out
}

func httpGet(u string) (int, string) {
	resp, err := http.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestKubeRayChartRunsRaydar installs KubeRay v1.7.0's chart, unchanged,
// with raydar's image: with its defaults (only the image and the binary's
// path set), then with every option on (testdata/kuberay-all-values.yaml:
// a config file with pod defaults and sidecars, a batch scheduler, watched
// namespaces, feature gates, metrics, leader election, operator env), and
// runs raydar-operator as each Deployment's container (runChart).
func TestKubeRayChartRunsRaydar(t *testing.T) {
	needSandbox(t)
	t.Run("defaults", func(t *testing.T) {
		objs := helmTemplate(t, kuberayChart, "kuberay", "kuberay-system", kuberayImage...)
		runChart(t, objs, chartRun{ns: "kuberay-defaults", kuberayMetrics: true})
	})
	t.Run("every option", func(t *testing.T) {
		objs := helmTemplate(t, kuberayChart, "kuberay", "kuberay-system", append(slices.Clone(kuberayImage), "-f", kuberayAllValues)...)
		runChart(t, objs, chartRun{
			ns: "kuberay-watched", unwatched: "kuberay-unwatched", batchScheduler: "yunikorn", kuberayMetrics: true,
			checkHead: checkPodDefaults,
		})
	})
}

// deleteAndWait deletes o and waits until it is gone, the operator
// releasing its finalizer: the next subtest may create an object of the
// same name. One still there after a minute (the operator stopped: the
// cleanup after a failed run) has its finalizers cleared, said in the log.
func deleteAndWait(t *testing.T, cl client.Client, o client.Object) {
	ctx := context.Background()
	if err := cl.Delete(ctx, o); apierrors.IsNotFound(err) {
		return
	}
	key := client.ObjectKeyFromObject(o)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) { // a poll interval
		if err := cl.Get(ctx, key, o); apierrors.IsNotFound(err) {
			return
		}
	}
	t.Logf("%T %s still there a minute after its delete (finalizers %v): clearing its finalizers", o, key, o.GetFinalizers())
	o.SetFinalizers(nil)
	_ = cl.Update(ctx, o)
}

// checkDashboardMetrics: a running raydar-operator with KubeRay's
// metrics.enabled serves every metric KubeRay v1.7.0's Grafana dashboard
// queries (test/internal/grafana parses it), but kube-state-metrics'
// kube_pod_*: its kuberay_* gauges, controller-runtime's reconcile and
// workqueue series.
func checkDashboardMetrics(t *testing.T, scrape string) {
	t.Helper()
	b, err := os.ReadFile("../internal/grafana/testdata/KubeRay-Operator.json")
	if err != nil {
		t.Fatal(err)
	}
	q, err := grafana.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range q.Names() {
		if strings.HasPrefix(name, "kube_") {
			continue // kube-state-metrics'
		}
		if !strings.Contains(scrape, "# TYPE "+name+" ") {
			t.Errorf("KubeRay's Grafana dashboard queries %s; raydar-operator's /metrics has none", name)
		}
	}
}
