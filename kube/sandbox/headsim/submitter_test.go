package headsim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The submitters' command lines, word for word.

// svcAddr is the dashboard address the K8sJobMode lines below use: the
// head Service of cluster rc (clusterObjects).
const svcAddr = "rc-head-svc.ns.svc.cluster.local:8265"

// health is utils/constant.go BasePythonHealthCommand as KubeRay v1.7.0
// (and raydar) format it with a URL; v1.6.2 formats a localhost port.
func health(url string) string {
	return `python -c "import urllib.request; r=urllib.request.urlopen('` + url + `', timeout=10); exit(0 if b'success' in r.read() else 1)"`
}

// waitLoop is the start of every v1.7.0 submitter line and of v1.6.2's
// SidecarMode line (common/job.go BuildJobSubmitCommand's waitLoop).
func waitLoop(healthURL, address string) string {
	return "until " + health(healthURL) + " >/dev/null 2>&1 ; do echo " +
		strconv.Quote("Waiting for Ray Dashboard GCS to become healthy at "+address+" ...") + " ; sleep 2 ; done ; "
}

// kubeRayOptions are the options of KubeRay's job_test.go rayJobTemplate
// (v1.6.2 and v1.7.0 alike), as BuildJobSubmitCommand emits them.
const kubeRayOptions = `--runtime-env-json "{\"test\":\"test\"}" --metadata-json "{\"testKey\":\"testValue\"}" --submission-id testJobId ` +
	`--entrypoint-num-cpus 1.000000 --entrypoint-num-gpus 0.500000 --entrypoint-resources "{\"Custom_1\": 1, \"Custom_2\": 5.5}" ` +
	`-- echo no quote 'single quote' "double quote" ;`

// k8sJobLine is KubeRay's K8sJobMode line: v1.6.2's (no wait loop) or
// v1.7.0's, at address.
func k8sJobLine(v17 bool, address string) string {
	line := ""
	if v17 {
		line = waitLoop(address+"/api/gcs_healthz", address)
	}
	return line + "if ! ray job status --address " + address + " testJobId >/dev/null 2>&1 ; then ray job submit --address " + address +
		" --no-wait " + kubeRayOptions + " fi ; ray job logs --address " + address + " --follow testJobId"
}

// kubeRaySubmission is what every KubeRay line above submits.
var kubeRaySubmission = dashboard.JobInfo{
	SubmissionID: "testJobId",
	Entrypoint:   `echo no quote 'single quote' 'double quote'`, // the shell's words, shlex.join'ed
	RuntimeEnv:   map[string]any{"test": "test"},
	Metadata:     map[string]string{"testKey": "testValue"},
	EntrypointReservation: dashboard.EntrypointReservation{EntrypointNumCPUs: 1, EntrypointNumGPUs: 0.5,
		EntrypointResources: map[string]float64{"Custom_1": 1, "Custom_2": 5.5}},
}

// clusterObjects: cluster rc with its head Service (dashboard port 8265),
// a Ready head pod, and a RayJob whose spec says something else than the
// submitters' command lines do (the stand-in must not read it).
func clusterObjects(headExtra ...corev1.Container) ([]runtime.Object, []client.Object) {
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rc"}, Spec: rayv1.RayClusterSpec{
		// What the KubeRay fixture's job reserves (1 CPU, 0.5 GPU, its
		// custom resources) fits on the head.
		HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{"num-cpus": "2", "num-gpus": "1",
			"resources": `'{"Custom_1": 1, "Custom_2": 5.5, "TPU": 1}'`}, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "ray-head", Ports: []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 8265}}}}}}}}}
	rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rj"},
		Spec: rayv1.RayJobSpec{Entrypoint: "echo from the spec", RuntimeEnvYAML: "env_vars: {FROM: spec}"}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rc-head-svc"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{rayv1.RayClusterLabelKey: "rc", rayv1.RayNodeTypeLabelKey: "head"},
			Ports: []corev1.ServicePort{{Name: "dashboard", Port: 8265, TargetPort: intstr.FromInt32(8265)}}}}
	head := headPod("rc-head", "rc", "h1", true)
	head.Spec.Containers = append(head.Spec.Containers, headExtra...)
	return []runtime.Object{svc, head}, []client.Object{rc, rj}
}

// submitterJob is a K8sJobMode submitter Job and its Running pod, running
// bash -ce -- line as KubeRay's and raydar's submitters do.
func submitterJob(name, line string) (*batchv1.Job, *corev1.Pod) {
	c := corev1.Container{Name: "ray-job-submitter", Command: []string{"/bin/bash", "-ce", "--"}, Args: []string{line},
		Env: []corev1.EnvVar{{Name: "PYTHONUNBUFFERED", Value: "1"}, {Name: "RAY_DASHBOARD_ADDRESS", Value: svcAddr}}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid"), Labels: map[string]string{
		rayv1.RayOriginatedFromCRDLabelKey: "RayJob", rayv1.RayOriginatedFromCRNameLabelKey: "rj"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-pod", UID: types.UID(name + "-pod-uid"),
		Labels: map[string]string{jobControllerUIDLabel: string(job.UID)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{c}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	return job, pod
}

// addSubmitter creates a submitter Job and its pod once the head answers
// (as the operators create it once the cluster is Ready).
func (e *env) addSubmitter(t *testing.T, job *batchv1.Job, pod *corev1.Pod) {
	t.Helper()
	e.dashboard(t)
	ctx := context.Background()
	if _, err := e.cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// endedAs waits for the stand-in to end the pod and returns the phase.
func (e *env) endedAs(t *testing.T, pod string) corev1.PodPhase {
	t.Helper()
	var phase corev1.PodPhase
	eventually(t, "pod "+pod+" to end", func() bool {
		for _, c := range e.phaseCalls() {
			if c.name == pod {
				phase = c.phase
				return true
			}
		}
		return false
	})
	return phase
}

func (e *env) dashboard(t *testing.T) *dashboard.Client {
	t.Helper()
	var url string
	eventually(t, "the head", func() bool { u, ok := e.sim.DashboardURL(ns, "rc"); url = u; return ok })
	dc, err := dashboard.New(url)
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// sameSubmission compares what the head got with what the line says.
func sameSubmission(got *dashboard.JobInfo, want dashboard.JobInfo) error {
	g := fmt.Sprintf("%s|%s|%v|%v|%+v", got.SubmissionID, got.Entrypoint, got.RuntimeEnv, got.Metadata, got.EntrypointReservation)
	w := fmt.Sprintf("%s|%s|%v|%v|%+v", want.SubmissionID, want.Entrypoint, want.RuntimeEnv, want.Metadata, want.EntrypointReservation)
	if g != w {
		return fmt.Errorf("head got\n%s\nwant\n%s", g, w)
	}
	return nil
}

// TestK8sJobModeLinesReachTheHead runs KubeRay's K8sJobMode lines (v1.6.2's
// and v1.7.0's, from their common/job_test.go, with the Service's address
// where the fixture has 127.0.0.1) and raydar's (controller/rayjob
// build_test.go TestRayJobSubmitCommand) in a submitter pod: the head gets
// exactly what the line says, not what the RayJob's spec says, and the pod
// succeeds once the job does.
func TestK8sJobModeLinesReachTheHead(t *testing.T) {
	raydarAddr := "http://" + svcAddr
	for _, tc := range []struct {
		name string
		line string
		want dashboard.JobInfo
		// fails: the head refuses the submission (Ray's words in the log)
		fails string
	}{
		{"KubeRay v1.6.2", k8sJobLine(false, "http://"+svcAddr), kubeRaySubmission, ""},
		{"KubeRay v1.7.0", k8sJobLine(true, "http://"+svcAddr), kubeRaySubmission, ""},
		{"raydar, bare", waitLoop(raydarAddr+"/api/gcs_healthz", raydarAddr) + "if ! ray job status --address " + raydarAddr + " rj-id001 >/dev/null 2>&1 ; then " +
			"ray job submit --address " + raydarAddr + " --no-wait --submission-id rj-id001 -- python job.py ; " +
			"fi ; ray job logs --address " + raydarAddr + " --follow rj-id001",
			dashboard.JobInfo{SubmissionID: "rj-id001", Entrypoint: "python job.py", RuntimeEnv: map[string]any{}, Metadata: map[string]string{}}, ""},
		{"raydar, every option", waitLoop(raydarAddr+"/api/gcs_healthz", raydarAddr) + "if ! ray job status --address " + raydarAddr + " rj-id001 >/dev/null 2>&1 ; then " +
			"ray job submit --address " + raydarAddr + " --no-wait " +
			`--runtime-env-json "{\"env_vars\":{\"A\":\"it's\",\"false\":3},\"pip\":[\"requests==2.26.0\"]}" ` +
			`--metadata-json "{\"b\":\"2\",\"owner\":\"me\"}" --submission-id rj-id001 ` +
			`--entrypoint-num-cpus 0.500000 --entrypoint-num-gpus 1.000000 --entrypoint-resources "{\"TPU\": 1}" ` +
			"-- python train.py --epochs 3 ; fi ; ray job logs --address " + raydarAddr + " --follow rj-id001",
			dashboard.JobInfo{}, // env_vars {"false": 3}: not Dict[str, str], which Ray refuses
			"RuntimeError: Request failed with status code 400: Traceback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k8s, ray := clusterObjects()
			job, pod := submitterJob("sub", tc.line)
			e := start(t, k8s, ray...)
			e.addSubmitter(t, job, pod)
			dc := e.dashboard(t)
			if tc.fails != "" {
				if phase := e.endedAs(t, pod.Name); phase != corev1.PodFailed {
					t.Fatalf("pod %s", phase)
				}
				if log := e.sim.SubmitterLog(ns, pod.Name); !strings.Contains(log, tc.fails) || !strings.Contains(log, "env_vars") {
					t.Fatalf("log:\n%s", log)
				}
				return
			}
			var info *dashboard.JobInfo
			eventually(t, "the submission", func() bool {
				var err error
				info, err = dc.GetJobInfo(context.Background(), tc.want.SubmissionID)
				return err == nil
			})
			if err := sameSubmission(info, tc.want); err != nil {
				t.Fatal(err)
			}
			if phase := e.endedAs(t, pod.Name); phase != corev1.PodSucceeded {
				t.Fatalf("pod %s; its log:\n%s", phase, e.sim.SubmitterLog(ns, pod.Name))
			}
			if n := e.sim.Calls(ns, "rc", "POST", "/api/jobs/"); n != 1 {
				t.Fatalf("%d submissions, want 1", n)
			}
			log := e.sim.SubmitterLog(ns, pod.Name)
			if info, _ := dc.GetJobInfo(context.Background(), tc.want.SubmissionID); info.Status != dashboard.JobSucceeded ||
				!strings.Contains(log, fmt.Sprintf("Job '%s' submitted successfully", tc.want.SubmissionID)) ||
				!strings.Contains(log, fmt.Sprintf("Job '%s' succeeded", tc.want.SubmissionID)) {
				t.Fatalf("job %s; submitter log:\n%s", info.Status, log)
			}
		})
	}
}

// TestKubeRayFixtureAddressIsUnreachableFromASubmitterPod: KubeRay v1.6.2's
// line verbatim has http://127.0.0.1:8265, the submitter pod itself in
// K8sJobMode: `ray job submit` cannot connect, and the pod fails with Ray's
// words.
func TestKubeRayFixtureAddressIsUnreachableFromASubmitterPod(t *testing.T) {
	k8s, ray := clusterObjects()
	job, pod := submitterJob("sub", k8sJobLine(false, "http://127.0.0.1:8265"))
	e := start(t, k8s, ray...)
	e.addSubmitter(t, job, pod)
	if phase := e.endedAs(t, pod.Name); phase != corev1.PodFailed {
		t.Fatalf("pod %s", phase)
	}
	if log := e.sim.SubmitterLog(ns, pod.Name); !strings.Contains(log, "ConnectionError: Failed to connect to Ray at address: http://127.0.0.1:8265.") {
		t.Fatalf("log:\n%s", log)
	}
	if n := e.sim.Calls(ns, "rc", "POST", "/api/jobs/"); n != 0 {
		t.Fatalf("%d submissions", n)
	}
}

// TestWrongFlagFailsTheSubmitter: a flag Ray's CLI does not have fails the
// pod with click's words, and nothing is submitted.
func TestWrongFlagFailsTheSubmitter(t *testing.T) {
	k8s, ray := clusterObjects()
	line := strings.Replace(k8sJobLine(true, "http://"+svcAddr), "--entrypoint-num-cpus", "--entrypoint-num-cpu", 1)
	job, pod := submitterJob("sub", line)
	e := start(t, k8s, ray...)
	e.addSubmitter(t, job, pod)
	if phase := e.endedAs(t, pod.Name); phase != corev1.PodFailed {
		t.Fatalf("pod %s", phase)
	}
	log := e.sim.SubmitterLog(ns, pod.Name)
	if !strings.Contains(log, "Usage: ray job submit [OPTIONS] ENTRYPOINT...\nTry 'ray job submit --help' for help.\n\n"+
		"Error: No such option '--entrypoint-num-cpu'. (Did you mean one of: '--entrypoint-memory', '--entrypoint-num-cpus', '--entrypoint-num-gpus'?)\n") {
		t.Fatalf("log:\n%s", log)
	}
	if n := e.sim.Calls(ns, "rc", "POST", "/api/jobs/"); n != 0 {
		t.Fatalf("%d submissions", n)
	}
}

// TestKnownIDIsNotResubmitted: `ray job status` finds the ID (a retried
// submitter pod), so the line only follows the job's logs.
func TestKnownIDIsNotResubmitted(t *testing.T) {
	ctx := context.Background()
	k8s, ray := clusterObjects()
	e := start(t, k8s, ray...)
	dc := e.dashboard(t)
	if _, err := dc.SubmitJob(ctx, dashboard.SubmitJobRequest{Entrypoint: "echo first", SubmissionID: "testJobId"}); err != nil {
		t.Fatal(err)
	}
	job, pod := submitterJob("sub", k8sJobLine(true, "http://"+svcAddr))
	e.addSubmitter(t, job, pod)
	if phase := e.endedAs(t, pod.Name); phase != corev1.PodSucceeded {
		t.Fatalf("pod %s; log:\n%s", phase, e.sim.SubmitterLog(ns, pod.Name))
	}
	if n := e.sim.Calls(ns, "rc", "POST", "/api/jobs/"); n != 1 {
		t.Fatalf("%d submissions, want the first only", n)
	}
	if log := e.sim.SubmitterLog(ns, pod.Name); !strings.Contains(log, "first\n") || strings.Contains(log, "submitted successfully") {
		t.Fatalf("log:\n%s", log)
	}
}

// TestSubmitterFailures: what Ray's CLI refuses after parsing, and what
// the stand-in cannot do, fail the pod with the words saying why.
func TestSubmitterFailures(t *testing.T) {
	addr := "http://" + svcAddr
	for _, tc := range []struct {
		name, line, want string
	}{
		{"no entrypoint", "ray job submit --address " + addr + " --no-wait --submission-id x --  ;",
			"Error: Missing argument 'ENTRYPOINT...'."},
		{"runtime env and its JSON", "ray job submit --address " + addr + " --runtime-env env.yaml --runtime-env-json '{}' -- echo",
			"ValueError: Only one of --runtime_env and --runtime-env-json can be provided."},
		{"runtime env not JSON", "ray job submit --address " + addr + ` --runtime-env-json "{pip: []}" -- echo`,
			"json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"},
		{"metadata not a JSON object", "ray job submit --address " + addr + ` --metadata-json '"k"' -- echo`,
			"`metadata-json` is not a valid JSON string."},
		{"metadata value not a string", "ray job submit --address " + addr + ` --metadata-json '{"n": 1}' -- echo`,
			"TypeError: metadata values must be strings, got <class 'int'>"},
		{"no address", "ray job submit -- echo", "ConnectionError: Could not find any running Ray instance."},
		{"a Service that does not exist", "ray job submit --address http://nope:8265 -- echo",
			"ConnectionError: Failed to connect to Ray at address: http://nope:8265."},
		{"the wrong port", "ray job submit --address http://rc-head-svc:10001 -- echo",
			"ConnectionError: Failed to connect to Ray at address: http://rc-head-svc:10001."},
		{"another program", "pip install ray && ray job submit --address " + addr + " -- echo",
			`raydar sandbox: the stand-in submitter cannot run "pip"`},
		{"a runtime env file", "ray job submit --address " + addr + " --runtime-env env.yaml -- echo",
			"raydar sandbox: the stand-in submitter cannot read --runtime-env env.yaml on the pod's disk"},
		{"a shell syntax error", "if ray job submit --address " + addr + " -- echo ; fi", "/bin/bash: -c: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k8s, ray := clusterObjects()
			job, pod := submitterJob("sub", tc.line)
			e := start(t, k8s, ray...)
			e.addSubmitter(t, job, pod)
			if phase := e.endedAs(t, pod.Name); phase != corev1.PodFailed {
				t.Fatalf("pod %s; log:\n%s", phase, e.sim.SubmitterLog(ns, pod.Name))
			}
			if log := e.sim.SubmitterLog(ns, pod.Name); !strings.Contains(log, tc.want) {
				t.Fatalf("log:\n%s\nwant it to say %q", log, tc.want)
			}
			if n := e.sim.Calls(ns, "rc", "POST", "/api/jobs/"); n != 0 {
				t.Fatalf("%d submissions", n)
			}
		})
	}
}

// TestSubmitterShellAndEnv: the words reach Ray's CLI as bash leaves them:
// the container's env (with $(VAR) expanded by the kubelet) is the shell's,
// so $RAY_DASHBOARD_ADDRESS and $RAY_JOB_SUBMISSION_ID work, and a $VAR in
// the entrypoint is the submitter's, not the job's (the shell expands it
// before Ray sees it).
func TestSubmitterShellAndEnv(t *testing.T) {
	k8s, ray := clusterObjects()
	job, pod := submitterJob("sub", `ray job submit --address=http://$RAY_DASHBOARD_ADDRESS --submission-id=$RAY_JOB_SUBMISSION_ID `+
		`--runtime-env-json='{"env_vars": {"GREETING": "hi"}}' -- echo "$GREETING from $(echo the shell)"`)
	c := &pod.Spec.Containers[0]
	c.Env = append(c.Env, corev1.EnvVar{Name: "ID_PREFIX", Value: "env"}, corev1.EnvVar{Name: "RAY_JOB_SUBMISSION_ID", Value: "$(ID_PREFIX)-1"})
	e := start(t, k8s, ray...)
	e.addSubmitter(t, job, pod)
	if phase := e.endedAs(t, pod.Name); phase != corev1.PodSucceeded {
		t.Fatalf("pod %s; log:\n%s", phase, e.sim.SubmitterLog(ns, pod.Name))
	}
	info, err := e.dashboard(t).GetJobInfo(context.Background(), "env-1")
	if err != nil || info.Entrypoint != "echo ' from the shell'" || info.Status != dashboard.JobSucceeded {
		t.Fatalf("%+v %v", info, err)
	}
	if log := e.sim.SubmitterLog(ns, pod.Name); !strings.Contains(log, " from the shell\n") {
		t.Fatalf("log:\n%s", log)
	}
}

// TestSidecarLinesReachTheHead runs KubeRay's SidecarMode lines (v1.6.2's,
// v1.7.0's, and v1.7.0's with the SidecarSubmitterRestart gate) in the head
// pod: they reach the head on 127.0.0.1 and wait for the job's end.
func TestSidecarLinesReachTheHead(t *testing.T) {
	const local = "http://127.0.0.1:8265"
	v162Health := `python -c "import urllib.request; r=urllib.request.urlopen('http://localhost:8265/api/gcs_healthz', timeout=10); exit(0 if b'success' in r.read() else 1)"`
	v162 := "until " + v162Health + ` >/dev/null 2>&1 ; do echo "Waiting for Ray Dashboard GCS to become healthy at http://127.0.0.1:8265 ..." ; sleep 2 ; done ; ` +
		"ray job submit --address " + local + " " + kubeRayOptions
	v170 := waitLoop("http://localhost:8265/api/gcs_healthz", local) + "ray job submit --address " + local + " " + kubeRayOptions
	restart := waitLoop("http://localhost:8265/api/gcs_healthz", local) +
		"if ! ray job status --address " + local + " testJobId >/dev/null 2>&1 ; then ray job submit --address " + local + " --no-wait " +
		kubeRayOptions + " fi ; ray job logs --address " + local + " --follow testJobId"
	for name, line := range map[string]string{"KubeRay v1.6.2": v162, "KubeRay v1.7.0": v170, "KubeRay v1.7.0 SidecarSubmitterRestart": restart} {
		t.Run(name, func(t *testing.T) {
			k8s, ray := clusterObjects(corev1.Container{Name: rayv1.RayJobSubmitterContainerName,
				Command: []string{"/bin/bash", "-ce", "--"}, Args: []string{line}})
			e := start(t, k8s, ray...)
			dc := e.dashboard(t)
			eventually(t, "the job to succeed and the sidecar to have followed it", func() bool {
				info, err := dc.GetJobInfo(context.Background(), "testJobId")
				return err == nil && info.Status == dashboard.JobSucceeded &&
					strings.Contains(e.sim.SubmitterLog(ns, "rc-head"), "Job 'testJobId' succeeded")
			})
			info, _ := dc.GetJobInfo(context.Background(), "testJobId")
			if err := sameSubmission(info, kubeRaySubmission); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestHeadLostWhileFollowing: `ray job logs --follow` loses its head (the
// head pod stops being Ready): the line exits 1, the pod fails with Ray's
// words, and the Job controller's retry (a new pod) would submit again.
func TestHeadLostWhileFollowing(t *testing.T) {
	ctx := context.Background()
	k8s, ray := clusterObjects()
	e := start(t, k8s, ray...)
	job, pod := submitterJob("sub", strings.Replace(k8sJobLine(true, "http://"+svcAddr), "-- echo no quote", "-- sleep 600 ; echo no quote", 1))
	e.addSubmitter(t, job, pod)
	dc := e.dashboard(t)
	eventually(t, "the job to run", func() bool {
		info, err := dc.GetJobInfo(ctx, "testJobId")
		return err == nil && info.Status == dashboard.JobRunning
	})
	head, err := e.cs.CoreV1().Pods(ns).Get(ctx, "rc-head", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setReady(head, false)
	if _, err := e.cs.CoreV1().Pods(ns).UpdateStatus(ctx, head, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if phase := e.endedAs(t, pod.Name); phase != corev1.PodFailed {
		t.Fatalf("pod %s", phase)
	}
	if log := e.sim.SubmitterLog(ns, pod.Name); !strings.Contains(log, "ConnectionError: Failed to connect to Ray at address: http://"+svcAddr+".") {
		t.Fatalf("log:\n%s", log)
	}
}
