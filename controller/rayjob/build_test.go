package rayjob

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func mustBuildCluster(t *testing.T, j *rayv1.RayJob, name string) *rayv1.RayCluster {
	t.Helper()
	rc, err := buildCluster(j, name, false)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func mustBuildSubmitterJob(t *testing.T, j *rayv1.RayJob, rc *rayv1.RayCluster, url string) *batchv1.Job {
	t.Helper()
	job, err := buildSubmitterJob(j, rc, url)
	if err != nil {
		t.Fatal(err)
	}
	return job
}

func TestBuildRayJobCluster(t *testing.T) {
	j := newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), func(j *rayv1.RayJob) { j.Labels = map[string]string{"team": "a"} })
	rc := mustBuildCluster(t, j, "rj-rc001")
	if rc.Name != "rj-rc001" || rc.Namespace != "ns" || kit.ControllerUID(rc.OwnerReferences) != "rj-uid" {
		t.Fatalf("%+v", rc.ObjectMeta)
	}
	for k, v := range map[string]string{"team": "a", rayv1.RayOriginatedFromCRNameLabelKey: "rj", rayv1.RayOriginatedFromCRDLabelKey: "RayJob",
		rayv1.RayJobSubmissionModeLabelKey: "HTTPMode"} {
		if rc.Labels[k] != v {
			t.Fatalf("label %s=%q, want %q", k, rc.Labels[k], v)
		}
	}
	if _, ok := rc.Labels[rayv1.KubernetesCreatedByLabelKey]; ok || len(rc.Labels) != 4 {
		t.Fatalf("labels %v: KubeRay's are the RayJob's, the two originated-from and the submission mode", rc.Labels)
	}
	if len(rc.Spec.HeadGroupSpec.Template.Spec.Containers) != 1 || rc.Annotations != nil {
		t.Fatal("HTTPMode got a sidecar")
	}
	// The RayJob's annotations reach the cluster (kubectl's last-applied
	// too, as in KubeRay); raydar's stop protocol does not.
	j.Annotations = map[string]string{"team.io/cost-center": "42", corev1.LastAppliedConfigAnnotation: "{}",
		rayv1.StopRequestedAnnotationKey: "alice", rayv1.JobStopRecordAnnotationKey: "{}"}
	rc = mustBuildCluster(t, j, "rj-rc001")
	if want := map[string]string{"team.io/cost-center": "42", corev1.LastAppliedConfigAnnotation: "{}"}; !maps.Equal(rc.Annotations, want) {
		t.Fatalf("annotations %v, want %v", rc.Annotations, want)
	}
	j.Annotations = nil
	// The RayJob's spec is copied, not shared.
	rc.Spec.HeadGroupSpec.RayStartParams["x"] = "y"
	if j.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams["x"] != "" {
		t.Fatal("spec shared")
	}

	j.Spec.SubmissionMode = rayv1.SidecarMode
	j.Spec.RayClusterSpec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}
	rc = mustBuildCluster(t, j, "rj-rc001")
	pod := rc.Spec.HeadGroupSpec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || rc.Annotations[rayv1.DisableProvisionedHeadRestartAnnotationKey] != "true" {
		t.Fatalf("%+v %v", pod.RestartPolicy, rc.Annotations)
	}
	if len(pod.Containers) != 2 || pod.Containers[1].Name != rayv1.RayJobSubmitterContainerName {
		t.Fatalf("containers %+v", pod.Containers)
	}
	side := &pod.Containers[1]
	// KubeRay v1.7.0 getSubmitterContainer: the default submitter
	// container, bash -ce, the sidecar command, and the env appended in
	// order: RAY_DASHBOARD_ADDRESS is status.dashboardURL, empty while the
	// cluster is created.
	if side.Image != pod.Containers[0].Image || !slices.Equal(side.Command, []string{"/bin/bash", "-ce", "--"}) || len(side.Args) != 1 ||
		side.Resources.Requests.Cpu().String() != "500m" || side.Resources.Limits.Memory().String() != "1Gi" {
		t.Fatalf("%+v", side)
	}
	wantEnv := []string{"PYTHONUNBUFFERED=1", "RAY_DASHBOARD_ADDRESS=", "RAY_JOB_SUBMISSION_ID=rj-id001", "RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN=secret:rj-rc001/auth_token"}
	if got := envStrings(side.Env); !slices.Equal(got, wantEnv) {
		t.Fatalf("sidecar env %v, want %v", got, wantEnv)
	}
	wantArgs := `until python -c "import urllib.request; r=urllib.request.urlopen('http://localhost:8265/api/gcs_healthz', timeout=10); exit(0 if b'success' in r.read() else 1)" >/dev/null 2>&1 ; ` +
		`do echo "Waiting for Ray Dashboard GCS to become healthy at http://127.0.0.1:8265 ..." ; sleep 2 ; done ; ` +
		`ray job submit --address http://127.0.0.1:8265 --submission-id rj-id001 -- python job.py ;`
	if side.Args[0] != wantArgs {
		t.Fatalf("sidecar args\n%s\nwant\n%s", side.Args[0], wantArgs)
	}
}

// envStrings renders env as NAME=value (NAME=secret:<name>/<key> for a
// Secret reference), in order.
func envStrings(env []corev1.EnvVar) []string {
	var out []string
	for _, e := range env {
		v := e.Value
		if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
			v = "secret:" + r.SecretKeyRef.Name + "/" + r.SecretKeyRef.Key
		}
		out = append(out, e.Name+"="+v)
	}
	return out
}

// TestRayJobSubmitCommand: the submitter's bash command, byte for byte
// KubeRay v1.7.0's (common/job.go BuildJobSubmitCommand joined by spaces in
// configureSubmitterContainer).
func TestRayJobSubmitCommand(t *testing.T) {
	const addr = "rj-rc001-head-svc.ns.svc.cluster.local:8265"
	wait := func(health, address string) string {
		return `until python -c "import urllib.request; r=urllib.request.urlopen('` + health + `', timeout=10); exit(0 if b'success' in r.read() else 1)" >/dev/null 2>&1 ; ` +
			`do echo "Waiting for Ray Dashboard GCS to become healthy at ` + address + ` ..." ; sleep 2 ; done ; `
	}
	k8sWait := wait("http://"+addr+"/api/gcs_healthz", "http://"+addr)
	for _, tc := range []struct {
		name string
		mode rayv1.JobSubmissionMode
		url  string
		mod  func(*rayv1.RayJob)
		want string
		err  string
	}{{
		name: "K8sJobMode, bare",
		mode: rayv1.K8sJobMode, url: addr,
		want: k8sWait + "if ! ray job status --address http://" + addr + " rj-id001 >/dev/null 2>&1 ; then " +
			"ray job submit --address http://" + addr + " --no-wait --submission-id rj-id001 -- python job.py ; " +
			"fi ; ray job logs --address http://" + addr + " --follow rj-id001",
	}, {
		name: "K8sJobMode, every option, Go-quoted JSON, sorted keys, %f numbers, trimmed entrypoint",
		mode: rayv1.K8sJobMode, url: "http://" + addr,
		mod: func(j *rayv1.RayJob) {
			j.Spec.RuntimeEnvYAML = "pip:\n  - requests==2.26.0\nenv_vars:\n  A: \"it's\"\n  N: 3\n"
			j.Spec.Metadata = map[string]string{"owner": "me", "b": "2"}
			j.Spec.EntrypointNumCpus = 0.5
			j.Spec.EntrypointNumGpus = 1
			j.Spec.EntrypointResources = `{"TPU": 1}`
			j.Spec.Entrypoint = "  python train.py --epochs 3\n"
		},
		want: k8sWait + "if ! ray job status --address http://" + addr + " rj-id001 >/dev/null 2>&1 ; then " +
			"ray job submit --address http://" + addr + " --no-wait " +
			// sigs.k8s.io/yaml v1.6.0 (KubeRay's too) reads the key N as
			// YAML 1.1's false.
			`--runtime-env-json "{\"env_vars\":{\"A\":\"it's\",\"false\":3},\"pip\":[\"requests==2.26.0\"]}" ` +
			`--metadata-json "{\"b\":\"2\",\"owner\":\"me\"}" --submission-id rj-id001 ` +
			`--entrypoint-num-cpus 0.500000 --entrypoint-num-gpus 1.000000 --entrypoint-resources "{\"TPU\": 1}" ` +
			"-- python train.py --epochs 3 ; fi ; ray job logs --address http://" + addr + " --follow rj-id001",
	}, {
		name: "SidecarMode on the head's dashboard port, no status check",
		mode: rayv1.SidecarMode,
		mod: func(j *rayv1.RayJob) {
			c := &j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0]
			c.Ports = append(c.Ports, corev1.ContainerPort{Name: "dashboard", ContainerPort: 9999})
			j.Spec.Metadata = map[string]string{"k": "v"}
		},
		want: wait("http://localhost:9999/api/gcs_healthz", "http://127.0.0.1:9999") +
			`ray job submit --address http://127.0.0.1:9999 --metadata-json "{\"k\":\"v\"}" --submission-id rj-id001 -- python job.py ;`,
	}, {
		name: "metadata needs Ray 2.6.0",
		mode: rayv1.K8sJobMode, url: addr,
		mod: func(j *rayv1.RayJob) {
			j.Spec.RayClusterSpec.RayVersion = "2.5.1"
			j.Spec.Metadata = map[string]string{"k": "v"}
		},
		err: "the Ray version must be at least 2.6.0 to use the metadata field",
	}, {
		name: "runtimeEnvYAML that is not YAML",
		mode: rayv1.K8sJobMode, url: addr,
		mod: func(j *rayv1.RayJob) { j.Spec.RuntimeEnvYAML = "a: [" },
		err: "yaml",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), mode(tc.mode))
			if tc.mod != nil {
				tc.mod(j)
			}
			got, err := submitCommand(j, tc.mode, tc.url, false)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got (%v)\n%s\nwant\n%s", err, got, tc.want)
			}
		})
	}
}

func TestBuildSubmitterJob(t *testing.T) {
	j := newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), mode(rayv1.K8sJobMode), func(j *rayv1.RayJob) {
		j.Spec.RuntimeEnvYAML = "env_vars:\n  A: \"it's\"\n"
		j.Spec.Metadata = map[string]string{"owner": "me"}
		j.Spec.EntrypointNumCpus = 0.5
		j.Spec.EntrypointResources = `{"TPU": 1}`
		j.Spec.Entrypoint = "python train.py --epochs 3"
	})
	rc := newCluster(true)
	job := mustBuildSubmitterJob(t, j, rc, "rj-rc001-head-svc.ns.svc.cluster.local:8265")
	if job.Name != "rj" || kit.ControllerUID(job.OwnerReferences) != "rj-uid" || *job.Spec.BackoffLimit != 2 {
		t.Fatalf("%+v", job)
	}
	// KubeRay's labels exactly, on the Job and its pods: none of the
	// RayJob's own labels, no submission mode.
	wantLabels := map[string]string{rayv1.RayOriginatedFromCRNameLabelKey: "rj", rayv1.RayOriginatedFromCRDLabelKey: "RayJob",
		rayv1.KubernetesCreatedByLabelKey: rayv1.ComponentName}
	if !maps.Equal(job.Labels, wantLabels) || !maps.Equal(job.Spec.Template.Labels, wantLabels) {
		t.Fatalf("labels %v, pod labels %v; want %v", job.Labels, job.Spec.Template.Labels, wantLabels)
	}
	pod := job.Spec.Template.Spec
	c := &pod.Containers[0]
	if pod.RestartPolicy != corev1.RestartPolicyNever || c.Name != rayv1.RayJobSubmitterContainerName || c.Image != "rayproject/ray:2.52.0" {
		t.Fatalf("%+v", pod)
	}
	if c.Resources.Requests.Cpu().String() != "500m" || c.Resources.Limits.Memory().String() != "1Gi" {
		t.Fatalf("%+v", c.Resources)
	}
	wantEnv := []string{"PYTHONUNBUFFERED=1", "RAY_DASHBOARD_ADDRESS=rj-rc001-head-svc.ns.svc.cluster.local:8265", "RAY_JOB_SUBMISSION_ID=rj-id001"}
	if got := envStrings(c.Env); !slices.Equal(got, wantEnv) {
		t.Fatalf("env %v, want %v", got, wantEnv)
	}
	want, err := submitCommand(j, rayv1.K8sJobMode, "rj-rc001-head-svc.ns.svc.cluster.local:8265", false)
	if err != nil || !slices.Equal(c.Command, []string{"/bin/bash", "-ce", "--"}) || !slices.Equal(c.Args, []string{want}) {
		t.Fatalf("command %q args %q, want the K8sJobMode command (%v)", c.Command, c.Args, err)
	}

	// A user's template: its command stays, KubeRay's env is appended
	// after the user's (the user's same-named variable is kept first, as
	// KubeRay does), backoff from submitterConfig.
	j.Spec.SubmitterConfig = &rayv1.SubmitterConfig{BackoffLimit: fixture.Ptr(int32(0))}
	j.Spec.SubmitterPodTemplate = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure,
		Containers: []corev1.Container{{Name: "mine", Image: "me/submitter", Command: []string{"my-submit"},
			Env: []corev1.EnvVar{{Name: envSubmissionID, Value: "override"}}}}}}
	job = mustBuildSubmitterJob(t, j, rc, "addr:8265")
	c = &job.Spec.Template.Spec.Containers[0]
	if *job.Spec.BackoffLimit != 0 || c.Command[0] != "my-submit" || len(c.Args) != 0 || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Fatalf("%+v", job.Spec)
	}
	wantEnv = []string{"RAY_JOB_SUBMISSION_ID=override", "PYTHONUNBUFFERED=1", "RAY_DASHBOARD_ADDRESS=addr:8265", "RAY_JOB_SUBMISSION_ID=rj-id001"}
	if got := envStrings(c.Env); !slices.Equal(got, wantEnv) {
		t.Fatalf("env %v, want %v", got, wantEnv)
	}
	if j.Spec.SubmitterPodTemplate.Spec.Containers[0].Env[0].Value != "override" || len(j.Spec.SubmitterPodTemplate.Spec.Containers[0].Env) != 1 {
		t.Fatal("the RayJob's template was modified")
	}
}

// A K8sJobMode submitter against a selected cluster with Kubernetes token
// auth (KubeRay refuses enableK8sTokenAuth in a RayJob's own rayClusterSpec,
// not in the cluster it selects): KubeRay v1.6.2 rayjob_controller.go:588-590
// and :630-632 give the submitter container RAY_AUTH_MODE,
// RAY_ENABLE_K8S_TOKEN_AUTH and the token mount, and the pod the projected
// ServiceAccount token volume; no RAY_AUTH_TOKEN, as there is no Secret.
func TestBuildSubmitterJobK8sTokenAuth(t *testing.T) {
	j := newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), mode(rayv1.K8sJobMode))
	rc := newCluster(true)
	rc.Spec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, EnableK8sTokenAuth: fixture.Ptr(true)}
	job := mustBuildSubmitterJob(t, j, rc, "addr:8265")
	pod := job.Spec.Template.Spec
	c := &pod.Containers[0]
	wantEnv := []string{"PYTHONUNBUFFERED=1", "RAY_DASHBOARD_ADDRESS=addr:8265", "RAY_JOB_SUBMISSION_ID=rj-id001", "RAY_AUTH_MODE=token", "RAY_ENABLE_K8S_TOKEN_AUTH=true"}
	if got := envStrings(c.Env); !slices.Equal(got, wantEnv) {
		t.Fatalf("env %v, want %v", got, wantEnv)
	}
	wantMount := corev1.VolumeMount{Name: "ray-token", MountPath: "/var/run/secrets/ray.io/serviceaccount", ReadOnly: true}
	if len(c.VolumeMounts) != 1 || !reflect.DeepEqual(c.VolumeMounts[0], wantMount) {
		t.Fatalf("mounts %+v, want %+v", c.VolumeMounts, wantMount)
	}
	if len(pod.Volumes) != 1 || pod.Volumes[0].Name != "ray-token" || pod.Volumes[0].Projected == nil ||
		len(pod.Volumes[0].Projected.Sources) != 1 || pod.Volumes[0].Projected.Sources[0].ServiceAccountToken == nil ||
		pod.Volumes[0].Projected.Sources[0].ServiceAccountToken.Path != "token" {
		t.Fatalf("volumes %+v, want the projected ServiceAccount token ray-token", pod.Volumes)
	}

	// A user's template with its own command: the volume all the same
	// (KubeRay adds it to the template whatever the container runs).
	j.Spec.SubmitterPodTemplate = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "mine", Image: "me/submitter", Command: []string{"my-submit"}}}}}
	job = mustBuildSubmitterJob(t, j, rc, "addr:8265")
	if v := job.Spec.Template.Spec.Volumes; len(v) != 1 || v[0].Name != "ray-token" {
		t.Fatalf("volumes %+v", v)
	}
	if len(j.Spec.SubmitterPodTemplate.Spec.Volumes) != 0 {
		t.Fatal("the RayJob's template was modified")
	}
}
