package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/raydash/addrbook"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// whyEnv is one namespace of the sandbox with what makes Ray objects
// progress there: simulated Ray heads (kube/sandbox/headsim) and a raydar
// operator reconciling the namespace, both reached through a kubeconfig of
// the test's own that records the heads' address book.
type whyEnv struct {
	ns, kubeconfig string
	sim            *headsim.Sim
	stopOperator   func()
	operatorLog    *syncBuffer
	operatorDone   <-chan error
}

func newWhyEnv(t *testing.T, ctx context.Context) *whyEnv {
	t.Helper()
	return newWhyEnvWith(t, ctx, nil)
}

// newWhyEnvWith is newWhyEnv whose simulated heads get more options (set
// applies them), e.g. Ray's simulated autoscaler.
func newWhyEnvWith(t *testing.T, ctx context.Context, set func(*headsim.Options)) *whyEnv {
	t.Helper()
	e := newSimEnv(t, ctx, set)
	// The default Lease (default/raydar-operator), as any raydar elects
	// on: raydar why reads who holds it.
	e.operatorLog, e.operatorDone, e.stopOperator = startCommand(t, "--kubeconfig", e.kubeconfig, "operator", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--watch-namespaces", e.ns)
	return e
}

// newSimEnv is newWhyEnvWith without the operator: the test reconciles the
// namespace its own way (operatorLog, operatorDone and stopOperator are
// nil).
func newSimEnv(t *testing.T, ctx context.Context, set func(*headsim.Options)) *whyEnv {
	t.Helper()
	e := &whyEnv{ns: newNamespace(t, ctx)}
	dir := t.TempDir()
	e.kubeconfig = filepath.Join(dir, "kubeconfig")
	kc, err := os.ReadFile(sb.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	book := filepath.Join(dir, addrbook.FileName)
	opts := headsim.Options{
		Config: sb.Config, Namespace: e.ns, SetPodPhase: sb.SetPodPhase, EndContainer: sb.EndContainer, AddressBook: book,
	}
	if set != nil {
		set(&opts)
	}
	if e.sim, err = headsim.Start(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.sim.Close() })
	if err := addrbook.Advertise(e.kubeconfig, book); err != nil {
		t.Fatal(err)
	}
	return e
}

// why runs raydar why KIND NAME in the env's namespace with extra args.
func (e *whyEnv) why(t *testing.T, kind, name string, args ...string) cliResult {
	t.Helper()
	return raydar(t, "", append([]string{"--kubeconfig", e.kubeconfig, "why", kind, name, "-n", e.ns}, args...)...)
}

// waitCause polls raydar why -o json until a cause with code appears whose
// words (subject, summary, evidence) contain every one of words; it
// returns that cause and the human output of the same moment.
func (e *whyEnv) waitCause(t *testing.T, ctx context.Context, kind, name, code string, words ...string) (whyCauseJSON, string) {
	t.Helper()
	last := ""
	for ctx.Err() == nil {
		r := e.why(t, kind, name, "-o", "json")
		if r.err != nil {
			t.Fatalf("raydar why %s %s: %v\n%s", kind, name, r.err, r.stderr)
		}
		var got whyOutput
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("raydar why -o json is not JSON: %v\n%s", err, r.stdout)
		}
		last = r.stdout
		for _, c := range got.Causes {
			if c.Code == code && c.mentions(words...) {
				human := e.why(t, kind, name)
				if human.err != nil {
					t.Fatalf("raydar why %s %s: %v", kind, name, human.err)
				}
				t.Logf("raydar why %s %s:\n%s", kind, name, human.stdout)
				return c, human.stdout
			}
		}
		select {
		case err := <-e.operatorDone:
			t.Fatalf("the operator exited: %v\n%s", err, e.operatorLog)
		default:
		}
		pollPause(ctx)
	}
	t.Fatalf("raydar why %s %s: no %s cause mentioning %q before the deadline; last output:\n%s\npods:\n%s\nthe operator's log:\n%s", kind, name, code, words, last, e.pods(), e.operatorLog)
	return whyCauseJSON{}, ""
}

// pods describes the namespace's pods for a failure message.
func (e *whyEnv) pods() string {
	var l corev1.PodList
	if err := cl.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range l.Items {
		fmt.Fprintf(&b, "  %s: %s node=%q annotations=%v\n", p.Name, status.Pod(podview.Of(&p)), p.Spec.NodeName, p.Annotations)
	}
	return b.String()
}

// whyOutput is raydar why -o json, decoded as a script would.
type whyOutput struct {
	Kind      string         `json:"kind"`
	Namespace string         `json:"namespace"`
	Name      string         `json:"name"`
	Causes    []whyCauseJSON `json:"causes"`
	Security  struct {
		Verdict       string   `json:"verdict"`
		Auth          string   `json:"auth"`
		MTLS          string   `json:"mtls"`
		NetworkPolicy string   `json:"networkPolicy"`
		Exposure      string   `json:"exposure"`
		Open          []string `json:"open"`
	} `json:"security"`
}

type whyCauseJSON struct {
	Code     string   `json:"code"`
	Subject  string   `json:"subject"`
	Summary  string   `json:"summary"`
	Evidence []string `json:"evidence"`
	Fix      string   `json:"fix"`
}

func (c whyCauseJSON) mentions(words ...string) bool {
	all := strings.Join(append([]string{c.Subject, c.Summary}, c.Evidence...), "\n")
	for _, w := range words {
		if !strings.Contains(all, w) {
			return false
		}
	}
	return true
}

// wantHumanLine checks that the human output has a cause line starting
// with code and containing words.
func wantHumanLine(t *testing.T, out, code string, words ...string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, code+" ") {
			continue
		}
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(l, w)
		}
		if ok {
			return
		}
	}
	t.Errorf("raydar why prints no line starting with %s and containing %q:\n%s", code, words, out)
}

// whyCluster is a small RayCluster: a head and one worker group of one.
func whyCluster(ns, name string) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rayv1.RayClusterSpec{
			RayVersion:    "2.52.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{Template: template("ray-head")},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
				{GroupName: "cpu", MinReplicas: ptr.To[int32](0), Replicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](2), Template: template("ray-worker")},
			},
		},
	}
}

// gpus makes a pod template ask for n nvidia.com/gpu.
func gpus(tpl *corev1.PodTemplateSpec, n int64) {
	q := *resource.NewQuantity(n, resource.DecimalSI)
	c := &tpl.Spec.Containers[0]
	c.Resources.Requests = corev1.ResourceList{"nvidia.com/gpu": q}
	c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": q}
}

// TestWhy provokes each cause raydar why names on the sandbox (no GPU
// node, a missing ConfigMap, a crash loop and an image pull failure played
// by kwok, a suspended
// cluster, a RayJob whose cluster never gets ready, a Serve application
// that fails to deploy, a dashboard that refuses) and reads it in raydar
// why's JSON and human output.
func TestWhy(t *testing.T) {
	e := newWhyEnv(t, needSandbox(t))

	t.Run("not found", func(t *testing.T) {
		r := e.why(t, "cluster", "nope")
		wantErrorContaining(t, r, `raycluster "nope" not found in namespace `+e.ns)
	})

	t.Run("healthy", func(t *testing.T) {
		ctx := whyStep(t)
		create(t, ctx, whyCluster(e.ns, "fine"))
		eventuallyCluster(t, ctx, e.ns, "fine", func(rc *rayv1.RayCluster) bool { return rc.Status.State == rayv1.Ready })
		r := e.why(t, "rc", "fine")
		// Healthy, and open: no auth, no NetworkPolicy (the security line
		// is printed whether or not anything is wrong).
		want := "RayCluster " + e.ns + "/fine: nothing is wrong that raydar can see\n" +
			"security: open (no auth, any pod can connect)\n" +
			"          auth none · mTLS off · network policy none · exposure in-cluster (ClusterIP)\n" +
			"          no authentication and no NetworkPolicy limiting who connects: any pod in the Kubernetes cluster can submit jobs and run code\n"
		if r.err != nil || r.stdout != want {
			t.Errorf("raydar why of a ready cluster: %v\n%s", r.err, r.stdout)
		}
		r = e.why(t, "raycluster", "fine", "-o", "json")
		var got whyOutput
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Kind != "RayCluster" || got.Name != "fine" ||
			got.Namespace != e.ns || got.Causes == nil || len(got.Causes) != 0 ||
			got.Security.Verdict != "open (no auth, any pod can connect)" || got.Security.Auth != "none" || len(got.Security.Open) != 1 {
			t.Errorf("raydar why -o json of a ready cluster: %v\n%s", err, r.stdout)
		}
	})

	t.Run("GPU group without a GPU node", func(t *testing.T) {
		ctx := whyStep(t)
		rc := whyCluster(e.ns, "gpu")
		rc.Spec.WorkerGroupSpecs[0].GroupName = "gpu"
		gpus(&rc.Spec.WorkerGroupSpecs[0].Template, 2)
		create(t, ctx, rc)
		_, human := e.waitCause(t, ctx, "cluster", "gpu", "Unschedulable", "nvidia.com/gpu 2", "the most any node offers is 0")
		wantHumanLine(t, human, "Unschedulable", "group gpu", "nvidia.com/gpu")
	})

	t.Run("missing ConfigMap", func(t *testing.T) {
		ctx := whyStep(t)
		rc := whyCluster(e.ns, "needs-config")
		rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "ray-config"}, Key: "mode"}}}}
		create(t, ctx, rc)
		// The kubelet's message, as the sandbox's config checker writes it.
		_, human := e.waitCause(t, ctx, "cluster", "needs-config", "MissingConfig", `configmap "ray-config" not found`)
		wantHumanLine(t, human, "MissingConfig", "ConfigMap", "ray-config")
	})

	t.Run("crash loop", func(t *testing.T) {
		ctx := whyStep(t)
		rc := whyCluster(e.ns, "crashes")
		rc.Spec.WorkerGroupSpecs[0].Template.Annotations = map[string]string{sandbox.CrashAnnotation: "3"}
		create(t, ctx, rc)
		_, human := e.waitCause(t, ctx, "cluster", "crashes", "CrashLoop", "exit code 3", "group cpu")
		wantHumanLine(t, human, "CrashLoop", "crash-looping", "3")
	})

	t.Run("image pull failure", func(t *testing.T) {
		ctx := whyStep(t)
		rc := whyCluster(e.ns, "bad-image")
		rc.Spec.WorkerGroupSpecs[0].Template.Annotations = map[string]string{sandbox.ImagePullAnnotation: "ErrImagePull"}
		create(t, ctx, rc)
		_, human := e.waitCause(t, ctx, "cluster", "bad-image", "ImagePull", "rayproject/ray:2.52.0")
		wantHumanLine(t, human, "ImagePull", "group cpu")
	})

	t.Run("suspended", func(t *testing.T) {
		ctx := whyStep(t)
		rc := whyCluster(e.ns, "paused")
		rc.Spec.Suspend = ptr.To(true)
		create(t, ctx, rc)
		_, human := e.waitCause(t, ctx, "cluster", "paused", "Suspended", "spec.suspend")
		wantHumanLine(t, human, "Suspended", "suspended")
	})

	t.Run("RayJob on a cluster that never gets ready", func(t *testing.T) {
		ctx := whyStep(t)
		spec := whyCluster(e.ns, "x").Spec
		gpus(&spec.HeadGroupSpec.Template, 1)
		rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "stuck"},
			Spec: rayv1.RayJobSpec{Entrypoint: "python job.py", RayClusterSpec: &spec}}
		create(t, ctx, rj)
		// The cluster's own cause, stated as the cluster's (rayapi/why
		// says ClusterNotReady only when the cluster has none).
		c, human := e.waitCause(t, ctx, "job", "stuck", "Unschedulable", "nvidia.com/gpu", "head")
		if !strings.HasPrefix(c.Subject, "RayCluster "+e.ns+"/stuck-") {
			t.Errorf("the RayJob's cause is not stated as its cluster's: subject %q", c.Subject)
		}
		wantHumanLine(t, human, "Unschedulable", "RayCluster "+e.ns+"/stuck-", "nvidia.com/gpu")
		if slices.ContainsFunc(decodeCauses(t, e.why(t, "rayjob", "stuck", "-o", "json")), func(c whyCauseJSON) bool { return c.Code == "ClusterNotReady" }) {
			t.Errorf("ClusterNotReady beside the cluster's own cause:\n%s", human)
		}
	})

	t.Run("RayJob on a cluster that is not there", func(t *testing.T) {
		ctx := whyStep(t)
		rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "orphan"},
			Spec: rayv1.RayJobSpec{Entrypoint: "python job.py", ClusterSelector: map[string]string{rayv1.RayClusterLabelKey: "nowhere"}}}
		create(t, ctx, rj)
		_, human := e.waitCause(t, ctx, "job", "orphan", "ClusterNotReady", "nowhere")
		wantHumanLine(t, human, "ClusterNotReady", "nowhere")
	})

	t.Run("Serve application fails to deploy", func(t *testing.T) {
		ctx := whyStep(t)
		svc := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "serve"},
			Spec: rayv1.RayServiceSpec{RayClusterSpec: whyCluster(e.ns, "x").Spec, ServeConfigV2: `applications:
  - name: broken
    route_prefix: /broken
    import_path: fail.app:deployment
`}}
		create(t, ctx, svc)
		_, human := e.waitCause(t, ctx, "service", "serve", "AppDeployFailed", "app broken", "DEPLOY_FAILED", "No module named 'fail.app'")
		wantHumanLine(t, human, "AppDeployFailed", "broken", "DEPLOY_FAILED")
	})

	t.Run("Serve replicas ask for GPUs no pod offers", func(t *testing.T) {
		ctx := whyStep(t)
		svc := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "gpu-serve"},
			Spec: rayv1.RayServiceSpec{RayClusterSpec: whyCluster(e.ns, "x").Spec, ServeConfigV2: `applications:
  - name: llm
    import_path: llm.app:model
    deployments:
      - name: Model
        ray_actor_options:
          num_gpus: 2
`}}
		create(t, ctx, svc)
		c, human := e.waitCause(t, ctx, "service", "gpu-serve", "ServeDemand",
			"replica of deployment llm/Model asks {CPU: 1, GPU: 2}; no pod of RayCluster", "offers 2 GPU (the most is 0)",
			"applications[0].deployments[0].ray_actor_options: {num_gpus: 2} (num_cpus 1: Serve's default)")
		if c.Subject != "RayService "+e.ns+"/gpu-serve, deployment llm/Model" {
			t.Errorf("ServeDemand's subject %q", c.Subject)
		}
		wantHumanLine(t, human, "ServeDemand", "llm/Model", "2 GPU")
	})

	t.Run("dashboard down", func(t *testing.T) {
		ctx := whyStep(t)
		rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "long"},
			Spec: rayv1.RayJobSpec{Entrypoint: "sleep 600", SubmissionMode: rayv1.HTTPMode, RayClusterSpec: &whyCluster(e.ns, "x").Spec}}
		create(t, ctx, rj)
		var cluster string
		for ctx.Err() == nil {
			got := &rayv1.RayJob{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(rj), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.JobStatus == rayv1.JobStatusRunning {
				cluster = got.Status.RayClusterName
				break
			}
			pollPause(ctx)
		}
		if cluster == "" {
			t.Fatal("the RayJob did not get RUNNING")
		}
		if err := e.sim.SetRefuse(e.ns, cluster, true); err != nil {
			t.Fatal(err)
		}
		_, human := e.waitCause(t, ctx, "job", "long", "DashboardUnreachable", cluster, "connection refused")
		wantHumanLine(t, human, "DashboardUnreachable", "dashboard unreachable")
	})

	// Last: the operator goes (releasing its Lease), and a new cluster
	// reads as reconciled by nobody, saying whose Lease is empty.
	t.Run("nobody reconciles", func(t *testing.T) {
		ctx := whyStep(t)
		e.stopOperator()
		create(t, ctx, whyCluster(e.ns, "orphaned"))
		_, human := e.waitCause(t, ctx, "cluster", "orphaned", "NotReconciled", "no leader", "default/raydar-operator")
		wantHumanLine(t, human, "NotReconciled", "not reconciled")
	})
}

// whyStepTimeout bounds each step of TestWhy: the machines the tests run on
// are small and busy.
var whyStepTimeout = 3 * time.Minute

func whyStep(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), whyStepTimeout)
	t.Cleanup(cancel)
	return ctx
}

func decodeCauses(t *testing.T, r cliResult) []whyCauseJSON {
	t.Helper()
	var got whyOutput
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("raydar why -o json: %v %v\n%s", r.err, err, r.stdout)
	}
	return got.Causes
}

// eventuallyCluster polls the RayCluster until cond holds.
func eventuallyCluster(t *testing.T, ctx context.Context, ns, name string, cond func(*rayv1.RayCluster) bool) {
	t.Helper()
	for ctx.Err() == nil {
		rc := &rayv1.RayCluster{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rc); err == nil && cond(rc) {
			return
		}
		pollPause(ctx)
	}
	t.Fatalf("RayCluster %s/%s: condition not met before the deadline", ns, name)
}
