package controller

// The objects a RayJob creates: its RayCluster (with the SidecarMode
// submitter injected into the head pod) and the K8sJobMode submitter Job.
// Pure functions of the RayJob and, for the submitter, its cluster.

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/kube/raydash"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Environment of the submitter containers (KubeRay's names, which users'
// own submitter templates may refer to).
const (
	envDashboardAddress = "RAY_DASHBOARD_ADDRESS"
	envSubmissionID     = "RAY_JOB_SUBMISSION_ID"
	envPythonUnbuffered = "PYTHONUNBUFFERED"
)

// buildRayJobCluster is the RayCluster a RayJob creates: its
// rayClusterSpec, the child labels, a controller reference to the RayJob,
// and in SidecarMode the submitter container in the head pod (whose restart
// policy becomes Never, and the cluster is annotated so that its head is not
// re-created once provisioned: a new head would run the job again).
func buildRayJobCluster(rj *rayv1.RayJob, name string) *rayv1.RayCluster {
	rc := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       rj.Namespace,
			Labels:          rayJobClusterLabels(rj),
			Annotations:     rayJobClusterAnnotations(rj),
			OwnerReferences: []metav1.OwnerReference{rayJobOwnerRef(rj)},
		},
	}
	if rj.Spec.RayClusterSpec != nil {
		rc.Spec = *rj.Spec.RayClusterSpec.DeepCopy()
	}
	if mb := childManagedBy(rj.Spec.ManagedBy, rj.Annotations); mb != nil {
		rc.Spec.ManagedBy = mb
	}
	if rj.Spec.EffectiveSubmissionMode() == rayv1.SidecarMode {
		pod := &rc.Spec.HeadGroupSpec.Template.Spec
		pod.RestartPolicy = corev1.RestartPolicyNever
		if !hasContainer(pod.Containers, rayv1.RayJobSubmitterContainerName) {
			pod.Containers = append(pod.Containers, sidecarSubmitter(rj, rc))
		}
	}
	return rc
}

func hasContainer(cs []corev1.Container, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

// headImage is the image of the head's Ray container.
func headImage(spec *rayv1.RayClusterSpec) string {
	if cs := spec.HeadGroupSpec.Template.Spec.Containers; len(cs) > rayv1.RayContainerIndex {
		return cs[rayv1.RayContainerIndex].Image
	}
	return ""
}

// sidecarSubmitter is the SidecarMode submitter container: the head image,
// talking to the dashboard on 127.0.0.1.
func sidecarSubmitter(rj *rayv1.RayJob, rc *rayv1.RayCluster) corev1.Container {
	addr := "127.0.0.1:" + strconv.Itoa(int(dashboardContainerPort(&rc.Spec)))
	c := corev1.Container{
		Name:    rayv1.RayJobSubmitterContainerName,
		Image:   headImage(&rc.Spec),
		Command: []string{"/bin/bash", "-ce", "--"},
		Args:    []string{submitterScript(rj)},
		Env: []corev1.EnvVar{
			{Name: envPythonUnbuffered, Value: "1"},
			{Name: envDashboardAddress, Value: addr},
			{Name: envSubmissionID, Value: rj.Status.JobId},
		},
		Resources: submitterResources(),
	}
	c.Env = append(c.Env, authEnv(rc)...)
	return c
}

// dashboardContainerPort is the head container's "dashboard" port, 8265
// when not declared.
func dashboardContainerPort(spec *rayv1.RayClusterSpec) int32 {
	if cs := spec.HeadGroupSpec.Template.Spec.Containers; len(cs) > rayv1.RayContainerIndex {
		for _, p := range cs[rayv1.RayContainerIndex].Ports {
			if p.Name == rayv1.DashboardPortName && p.ContainerPort > 0 {
				return p.ContainerPort
			}
		}
	}
	return rayv1.DefaultDashboardPort
}

func submitterResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(rayv1.DefaultSubmitterCPURequest),
			corev1.ResourceMemory: resource.MustParse(rayv1.DefaultSubmitterMemoryRequest),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(rayv1.DefaultSubmitterCPULimit),
			corev1.ResourceMemory: resource.MustParse(rayv1.DefaultSubmitterMemoryLimit),
		},
	}
}

// authEnv gives the submitter the cluster's Ray auth env (auth.go) when
// the cluster uses token auth, as KubeRay's configureSubmitterContainer does
// for both the K8sJobMode Job and the SidecarMode container: the cluster is
// the one the job runs on (created or selected), so is the Secret.
func authEnv(rc *rayv1.RayCluster) []corev1.EnvVar {
	name := raydash.AuthSecretName(rc)
	if name == "" {
		return nil
	}
	var c corev1.Container
	setTokenAuthEnv(&c, name)
	return c.Env
}

// buildSubmitterJob is the K8sJobMode submitter: a batch Job named after
// the RayJob running, in spec.submitterPodTemplate or a default pod (the
// head's image, 500m/200Mi requested, 1/1Gi limits), the script of
// submitterScript unless the template's first container has a command.
// dashboardAddr is the dashboard's host:port (status.dashboardURL).
func buildSubmitterJob(rj *rayv1.RayJob, rc *rayv1.RayCluster, dashboardAddr string) *batchv1.Job {
	var tmpl corev1.PodTemplateSpec
	if rj.Spec.SubmitterPodTemplate != nil {
		tmpl = *rj.Spec.SubmitterPodTemplate.DeepCopy()
	} else {
		tmpl = corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      rayv1.RayJobSubmitterContainerName,
			Image:     headImage(&rc.Spec),
			Resources: submitterResources(),
		}}}}
	}
	if tmpl.Spec.RestartPolicy == "" {
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	if len(tmpl.Spec.Containers) > 0 {
		c := &tmpl.Spec.Containers[0]
		if len(c.Command) == 0 {
			c.Command = []string{"/bin/bash", "-ce", "--"}
			c.Args = []string{submitterScript(rj)}
		}
		c.Env = setEnvIfAbsent(c.Env, corev1.EnvVar{Name: envPythonUnbuffered, Value: "1"})
		c.Env = setEnvIfAbsent(c.Env, corev1.EnvVar{Name: envDashboardAddress, Value: dashboardAddr})
		c.Env = setEnvIfAbsent(c.Env, corev1.EnvVar{Name: envSubmissionID, Value: rj.Status.JobId})
		for _, e := range authEnv(rc) {
			c.Env = setEnvIfAbsent(c.Env, e)
		}
	}
	labels := rayJobSubmitterLabels(rj)
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	maps.Copy(tmpl.Labels, labels)
	backoff := rj.Spec.SubmitterBackoffLimit()
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            RayJobSubmitterName(rj),
			Namespace:       rj.Namespace,
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{rayJobOwnerRef(rj)},
		},
		Spec: batchv1.JobSpec{BackoffLimit: &backoff, Template: tmpl},
	}
}

func setEnvIfAbsent(env []corev1.EnvVar, e corev1.EnvVar) []corev1.EnvVar {
	for _, x := range env {
		if x.Name == e.Name {
			return env
		}
	}
	return append(env, e)
}

// submitterScript is the submitter's bash script: wait until the
// dashboard's GCS health check answers; submit the job (no-wait) unless
// Ray already knows its submission ID, so a restarted submitter pod never
// submits twice; then follow its logs until it ends.
func submitterScript(rj *rayv1.RayJob) string {
	s := &rj.Spec
	submit := []string{"ray", "job", "submit", `--address="http://${RAY_DASHBOARD_ADDRESS}"`, "--no-wait",
		`--submission-id="${RAY_JOB_SUBMISSION_ID}"`}
	if s.RuntimeEnvYAML != "" {
		if env, err := raydash.RuntimeEnv(s.RuntimeEnvYAML); err == nil {
			if js, err := json.Marshal(env); err == nil {
				submit = append(submit, "--runtime-env-json="+shellQuote(string(js)))
			}
		}
	}
	if len(s.Metadata) > 0 {
		if js, err := json.Marshal(s.Metadata); err == nil {
			submit = append(submit, "--metadata-json="+shellQuote(string(js)))
		}
	}
	if s.EntrypointNumCpus > 0 {
		submit = append(submit, "--entrypoint-num-cpus="+strconv.FormatFloat(float64(s.EntrypointNumCpus), 'g', -1, 32))
	}
	if s.EntrypointNumGpus > 0 {
		submit = append(submit, "--entrypoint-num-gpus="+strconv.FormatFloat(float64(s.EntrypointNumGpus), 'g', -1, 32))
	}
	if s.EntrypointResources != "" {
		submit = append(submit, "--entrypoint-resources="+shellQuote(s.EntrypointResources))
	}
	submit = append(submit, "--", s.Entrypoint)

	var b strings.Builder
	b.WriteString(`until python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' ` +
		`"http://${RAY_DASHBOARD_ADDRESS}/api/gcs_healthz" >/dev/null 2>&1; do ` +
		`echo "waiting for the Ray dashboard at ${RAY_DASHBOARD_ADDRESS}"; sleep 2; done` + "\n")
	b.WriteString(`if ! ray job status --address="http://${RAY_DASHBOARD_ADDRESS}" "${RAY_JOB_SUBMISSION_ID}" >/dev/null 2>&1; then` + "\n  ")
	b.WriteString(strings.Join(submit, " "))
	b.WriteString("\nfi\n")
	b.WriteString(`ray job logs --address="http://${RAY_DASHBOARD_ADDRESS}" --follow "${RAY_JOB_SUBMISSION_ID}"` + "\n")
	return b.String()
}

// shellQuote quotes s for bash with single quotes.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// rayJobDashboardURL is status.dashboardURL: the head Service's DNS name and
// dashboard port, without a scheme (as KubeRay writes it).
func rayJobDashboardURL(rc *rayv1.RayCluster, clusterDomain string) string {
	return raydash.ServiceDNSAddress(HeadServiceName(rc), rc.Namespace, clusterDomain, raydash.DashboardPort(rc))
}

// describeSubmitter says in words what a submitter Job's state is.
func describeSubmitter(j *batchv1.Job) string {
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobFailed || c.Type == batchv1.JobComplete) {
			msg := string(c.Type)
			if c.Reason != "" {
				msg += " (" + c.Reason + ")"
			}
			if c.Message != "" {
				msg += ": " + c.Message
			}
			return msg
		}
	}
	return fmt.Sprintf("%d active, %d failed pods", j.Status.Active, j.Status.Failed)
}
