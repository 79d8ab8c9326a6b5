package controller

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func envOf(c *corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func TestBuildRayJobCluster(t *testing.T) {
	j := rjJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), func(j *rayv1.RayJob) { j.Labels = map[string]string{"team": "a"} })
	rc := buildRayJobCluster(j, "rj-rc001")
	if rc.Name != "rj-rc001" || rc.Namespace != "ns" || controllerUID(rc.OwnerReferences) != "rj-uid" {
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
	rc = buildRayJobCluster(j, "rj-rc001")
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
	rc = buildRayJobCluster(j, "rj-rc001")
	pod := rc.Spec.HeadGroupSpec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || rc.Annotations[rayv1.DisableProvisionedHeadRestartAnnotationKey] != "true" {
		t.Fatalf("%+v %v", pod.RestartPolicy, rc.Annotations)
	}
	if len(pod.Containers) != 2 || pod.Containers[1].Name != rayv1.RayJobSubmitterContainerName {
		t.Fatalf("containers %+v", pod.Containers)
	}
	side := &pod.Containers[1]
	if side.Image != pod.Containers[0].Image || envOf(side, envDashboardAddress).Value != "127.0.0.1:8265" ||
		envOf(side, envSubmissionID).Value != "rj-id001" {
		t.Fatalf("%+v", side)
	}
	if tok := envOf(side, envRayAuthToken); tok == nil || tok.ValueFrom.SecretKeyRef.Name != "rj-rc001" || tok.ValueFrom.SecretKeyRef.Key != "auth_token" {
		t.Fatalf("token env %+v", tok)
	}
	if !strings.Contains(side.Args[0], "ray job submit") {
		t.Fatal(side.Args)
	}
}

func TestBuildSubmitterJob(t *testing.T) {
	j := rjJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), mode(rayv1.K8sJobMode), func(j *rayv1.RayJob) {
		j.Spec.RuntimeEnvYAML = "env_vars:\n  A: \"it's\"\n"
		j.Spec.Metadata = map[string]string{"owner": "me"}
		j.Spec.EntrypointNumCpus = 0.5
		j.Spec.EntrypointResources = `{"TPU": 1}`
		j.Spec.Entrypoint = "python train.py --epochs 3"
	})
	rc := rjCluster(true)
	job := buildSubmitterJob(j, rc, "rj-rc001-head-svc.ns.svc.cluster.local:8265")
	if job.Name != "rj" || controllerUID(job.OwnerReferences) != "rj-uid" || *job.Spec.BackoffLimit != 2 {
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
	if envOf(c, envDashboardAddress).Value != "rj-rc001-head-svc.ns.svc.cluster.local:8265" || envOf(c, envSubmissionID).Value != "rj-id001" ||
		envOf(c, envRayAuthToken) != nil {
		t.Fatalf("%+v", c.Env)
	}
	script := c.Args[0]
	for _, want := range []string{
		"/api/gcs_healthz",
		`if ! ray job status --address="http://${RAY_DASHBOARD_ADDRESS}" "${RAY_JOB_SUBMISSION_ID}"`,
		`ray job submit --address="http://${RAY_DASHBOARD_ADDRESS}" --no-wait --submission-id="${RAY_JOB_SUBMISSION_ID}"`,
		`--runtime-env-json='{"env_vars":{"A":"it'\''s"}}'`,
		`--metadata-json='{"owner":"me"}'`,
		"--entrypoint-num-cpus=0.5",
		`--entrypoint-resources='{"TPU": 1}'`,
		"-- python train.py --epochs 3\nfi\n",
		`ray job logs --address="http://${RAY_DASHBOARD_ADDRESS}" --follow "${RAY_JOB_SUBMISSION_ID}"`,
	} {
		if !strings.Contains(script, want) {
			t.Fatalf("script lacks %q:\n%s", want, script)
		}
	}

	// A user's template: its command and env win, backoff from submitterConfig.
	j.Spec.SubmitterConfig = &rayv1.SubmitterConfig{BackoffLimit: ptr(int32(0))}
	j.Spec.SubmitterPodTemplate = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure,
		Containers: []corev1.Container{{Name: "mine", Image: "me/submitter", Command: []string{"my-submit"},
			Env: []corev1.EnvVar{{Name: envSubmissionID, Value: "override"}}}}}}
	job = buildSubmitterJob(j, rc, "addr:8265")
	c = &job.Spec.Template.Spec.Containers[0]
	if *job.Spec.BackoffLimit != 0 || c.Command[0] != "my-submit" || len(c.Args) != 0 || envOf(c, envSubmissionID).Value != "override" ||
		envOf(c, envDashboardAddress).Value != "addr:8265" || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Fatalf("%+v", job.Spec)
	}
	if j.Spec.SubmitterPodTemplate.Spec.Containers[0].Env[0].Value != "override" || len(j.Spec.SubmitterPodTemplate.Spec.Containers[0].Env) != 1 {
		t.Fatal("the RayJob's template was modified")
	}
}
