package rayjob

// The objects a RayJob creates: its RayCluster (with the SidecarMode
// submitter injected into the head pod), the K8sJobMode submitter Job, the
// RayJob's own head Service, with the metadata KubeRay v1.7.0 writes
// (rayjob_controller.go constructRayClusterForRayJob, getSubmitterTemplate,
// createNewK8sJob; common/job.go BuildHeadServiceForRayJob). Pure
// functions of the RayJob and, for the submitter, its cluster.

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"
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

// buildCluster is the RayCluster a RayJob creates: its
// rayClusterSpec, the child labels, a controller reference to the RayJob,
// and in SidecarMode the submitter container in the head pod (whose restart
// policy becomes Never, and the cluster is annotated so that its head is not
// re-created once provisioned: a new head would run the job again). It
// fails only where KubeRay's constructRayClusterForRayJob fails: a
// submit command it cannot build (submitCommand).
// sidecarRestart is the SidecarSubmitterRestart gate (sidecar_restart.go).
func buildCluster(rj *rayv1.RayJob, name string, sidecarRestart bool) (*rayv1.RayCluster, error) {
	rc := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       rj.Namespace,
			Labels:          clusterLabels(rj),
			Annotations:     clusterAnnotations(rj),
			OwnerReferences: []metav1.OwnerReference{kit.RayJobOwnerRef(rj)},
		},
	}
	if rj.Spec.RayClusterSpec != nil {
		rc.Spec = *rj.Spec.RayClusterSpec.DeepCopy()
	}
	if mb := kit.ChildManagedBy(rj.Spec.ManagedBy, rj.Annotations); mb != nil {
		rc.Spec.ManagedBy = mb
	}
	if rj.Spec.EffectiveSubmissionMode() == rayv1.SidecarMode {
		pod := &rc.Spec.HeadGroupSpec.Template.Spec
		pod.RestartPolicy = corev1.RestartPolicyNever
		if !HasContainer(pod.Containers, rayv1.RayJobSubmitterContainerName) {
			side, err := sidecarSubmitter(rj, rc, sidecarRestart)
			if err != nil {
				return nil, err
			}
			pod.Containers = append(pod.Containers, side)
		}
	}
	return rc, nil
}

// HasContainer reports whether cs has a container named name.
func HasContainer(cs []corev1.Container, name string) bool {
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

// sidecarSubmitter is the SidecarMode submitter container, as KubeRay
// v1.7.0 builds it (rayjob_controller.go getSubmitterContainer and
// configureSubmitterContainer, common/job.go GetDefaultSubmitterContainer):
// the head image, the default submitter resources, bash running
// submitCommand against the dashboard on 127.0.0.1, and the env
// KubeRay appends: PYTHONUNBUFFERED, RAY_DASHBOARD_ADDRESS (the RayJob's
// status.dashboardURL, empty while the cluster is being created) and
// RAY_JOB_SUBMISSION_ID, then the cluster's token-auth env.
func sidecarSubmitter(rj *rayv1.RayJob, rc *rayv1.RayCluster, restart bool) (corev1.Container, error) {
	script, err := submitCommand(rj, rayv1.SidecarMode, rj.Status.DashboardURL, restart)
	if err != nil {
		return corev1.Container{}, err
	}
	c := corev1.Container{
		Name:      rayv1.RayJobSubmitterContainerName,
		Image:     headImage(&rc.Spec),
		Command:   submitterShell(),
		Args:      []string{script},
		Resources: rayv1.DefaultSubmitterResources(),
	}
	c.Env = append(c.Env, submitterEnv(rj, rj.Status.DashboardURL)...)
	addAuth(rc, &c)
	if restart {
		makeRestartable(&c)
	}
	return c, nil
}

// submitterShell is the command of KubeRay's submitter containers
// (utils.GetContainerCommand([]string{"e"}) without ENABLE_LOGIN_SHELL).
func submitterShell() []string { return []string{"/bin/bash", "-ce", "--"} }

// submitterEnv is the env KubeRay's configureSubmitterContainer appends to
// a submitter container, whether or not the container has them already.
func submitterEnv(rj *rayv1.RayJob, dashboardURL string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: envPythonUnbuffered, Value: "1"},
		{Name: envDashboardAddress, Value: dashboardURL},
		{Name: envSubmissionID, Value: rj.Status.JobId},
	}
}

// addAuth gives a submitter container the cluster's token-auth env (and,
// with Kubernetes token auth, the token mount: raycluster.SetContainerTokenAuth)
// when the cluster uses token auth, as KubeRay's configureSubmitterContainer
// does for both the K8sJobMode Job and the SidecarMode container
// (rayjob_controller.go:630-632 in v1.6.2): the cluster is the one the job
// runs on (created or selected), so is the Secret.
func addAuth(rc *rayv1.RayCluster, c *corev1.Container) {
	if rc.Spec.EffectiveAuthMode() == rayv1.AuthModeToken {
		raycluster.SetContainerTokenAuth(rc, c)
	}
}

// buildSubmitterJob is the K8sJobMode submitter as KubeRay v1.7.0 makes
// it (rayjob_controller.go getSubmitterTemplate, configureSubmitterContainer
// and createNewK8sJob; common/job.go GetSubmitterTemplate): a batch Job
// named after the RayJob running spec.submitterPodTemplate or a default pod
// (the head's image, 500m/200Mi requested, 1/1Gi limits, restartPolicy
// Never); its first container runs submitCommand unless it has a
// command of its own, and gets KubeRay's env appended (submitterEnv) and
// the cluster's token-auth env where absent. dashboardURL is
// status.dashboardURL (host:port, no scheme). One addition: a template
// without restartPolicy gets Never (KubeRay passes it on, and the API
// server refuses the Job).
func buildSubmitterJob(rj *rayv1.RayJob, rc *rayv1.RayCluster, dashboardURL string) (*batchv1.Job, error) {
	script, err := submitCommand(rj, rayv1.K8sJobMode, dashboardURL, false)
	if err != nil {
		return nil, err
	}
	var tmpl corev1.PodTemplateSpec
	if rj.Spec.SubmitterPodTemplate != nil {
		tmpl = *rj.Spec.SubmitterPodTemplate.DeepCopy()
	} else {
		tmpl = corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      rayv1.RayJobSubmitterContainerName,
			Image:     headImage(&rc.Spec),
			Resources: rayv1.DefaultSubmitterResources(),
		}}}}
	}
	if tmpl.Spec.RestartPolicy == "" {
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	if len(tmpl.Spec.Containers) > 0 {
		c := &tmpl.Spec.Containers[0]
		if len(c.Command) == 0 {
			c.Command = submitterShell()
			c.Args = []string{script}
		}
		c.Env = append(c.Env, submitterEnv(rj, dashboardURL)...)
		addAuth(rc, c)
	}
	// Kubernetes token auth: the pod's projected ServiceAccount token, which
	// the submitter's Ray CLI sends (rayjob_controller.go:588-590 in v1.6.2).
	if raycluster.K8sTokenAuthEnabled(&rc.Spec) {
		raycluster.AddRayTokenVolume(&tmpl.Spec)
	}
	labels := submitterLabels(rj)
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	maps.Copy(tmpl.Labels, labels)
	backoff := rj.Spec.SubmitterBackoffLimit()
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            kit.RayJobSubmitterName(rj),
			Namespace:       rj.Namespace,
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{kit.RayJobOwnerRef(rj)},
		},
		Spec: batchv1.JobSpec{BackoffLimit: &backoff, Template: tmpl},
	}, nil
}

// KubeRay's wait for the dashboard's GCS (utils/constant.go
// RayDashboardGCSHealthPath, RayDashboardGCSHealthCheckTimeoutSeconds,
// BasePythonHealthCommand).
const (
	submitterGCSHealthPath    = "api/gcs_healthz"
	submitterGCSHealthTimeout = 10
	submitterHealthCommand    = `python -c "import urllib.request; r=urllib.request.urlopen('%s', timeout=%d); exit(0 if b'success' in r.read() else 1)"`
)

// submitCommand is the bash script of KubeRay v1.7.0's submitters
// (common/job.go BuildJobSubmitCommand), its words joined by single spaces
// ("checked" is K8sJobMode, and SidecarMode with sidecarRestart, the
// SidecarSubmitterRestart gate):
//
//	until <python GCS health check> >/dev/null 2>&1 ; do echo "Waiting for Ray Dashboard GCS to become healthy at <address> ..." ; sleep 2 ; done ;
//	[checked: if ! ray job status --address <address> <id> >/dev/null 2>&1 ; then]
//	ray job submit --address <address> [checked: --no-wait] [--runtime-env-json "<json>"] [--metadata-json "<json>"]
//	  [--submission-id <id>] [--entrypoint-num-cpus %f] [--entrypoint-num-gpus %f] [--entrypoint-resources "<json>"] -- <entrypoint> ;
//	[checked: fi ; ray job logs --address <address> --follow <id>]
//
// The address is http://<dashboardURL> in K8sJobMode, whose health check
// goes through it too, and http://127.0.0.1:<dashboard port> in SidecarMode,
// whose health check asks localhost. JSON values are Go-quoted
// (strconv.Quote), the runtime env as sigs.k8s.io/yaml converts it; the
// entrypoint is passed as written, trimmed. Errors are KubeRay's: a
// runtimeEnvYAML that is not YAML, metadata with a rayVersion below 2.6.0.
func submitCommand(rj *rayv1.RayJob, mode rayv1.JobSubmissionMode, dashboardURL string, sidecarRestart bool) (string, error) {
	s := &rj.Spec
	var address, healthURL string
	switch mode {
	case rayv1.SidecarMode:
		if s.RayClusterSpec == nil {
			return "", fmt.Errorf("SidecarMode needs spec.rayClusterSpec")
		}
		port := kit.DashboardContainerPort(s.RayClusterSpec)
		address = "http://127.0.0.1:" + strconv.Itoa(int(port))
		healthURL = fmt.Sprintf("http://localhost:%d/%s", port, submitterGCSHealthPath)
	case rayv1.K8sJobMode:
		address = dashboardURL
		if !strings.HasPrefix(address, "http://") {
			address = "http://" + address
		}
		healthURL = address + "/" + submitterGCSHealthPath
	default:
		return "", fmt.Errorf("unsupported submission mode for job submit command: %s", mode)
	}
	id := rj.Status.JobId
	cmd := []string{"until", fmt.Sprintf(submitterHealthCommand, healthURL, submitterGCSHealthTimeout), ">/dev/null", "2>&1", ";",
		"do", "echo", strconv.Quote("Waiting for Ray Dashboard GCS to become healthy at " + address + " ..."), ";", "sleep", "2", ";", "done", ";"}
	// A submitter that may run again checks the job first (common/job.go:154-158).
	statusCheck := mode == rayv1.K8sJobMode || (mode == rayv1.SidecarMode && sidecarRestart)
	if statusCheck {
		cmd = append(cmd, "if", "!", "ray", "job", "status", "--address", address, id, ">/dev/null", "2>&1", ";", "then")
	}
	cmd = append(cmd, "ray", "job", "submit", "--address", address)
	if statusCheck {
		cmd = append(cmd, "--no-wait")
	}
	if s.RuntimeEnvYAML != "" {
		js, err := yaml.YAMLToJSON([]byte(s.RuntimeEnvYAML))
		if err != nil {
			return "", err
		}
		cmd = append(cmd, "--runtime-env-json", strconv.Quote(string(js)))
	}
	if len(s.Metadata) > 0 {
		if s.RayClusterSpec != nil && s.RayClusterSpec.RayVersion != "" {
			ok, err := rayVersionAtLeast(s.RayClusterSpec.RayVersion, 2, 6)
			if err != nil {
				return "", fmt.Errorf("failed to parse Ray version: %v: %w", s.RayClusterSpec.RayVersion, err)
			}
			if !ok {
				return "", fmt.Errorf("the Ray version must be at least 2.6.0 to use the metadata field")
			}
		}
		js, err := json.Marshal(s.Metadata)
		if err != nil {
			return "", err
		}
		cmd = append(cmd, "--metadata-json", strconv.Quote(string(js)))
	}
	if id != "" {
		cmd = append(cmd, "--submission-id", id)
	}
	if s.EntrypointNumCpus > 0 {
		cmd = append(cmd, "--entrypoint-num-cpus", fmt.Sprintf("%f", s.EntrypointNumCpus))
	}
	if s.EntrypointNumGpus > 0 {
		cmd = append(cmd, "--entrypoint-num-gpus", fmt.Sprintf("%f", s.EntrypointNumGpus))
	}
	if s.EntrypointResources != "" {
		cmd = append(cmd, "--entrypoint-resources", strconv.Quote(s.EntrypointResources))
	}
	cmd = append(cmd, "--", strings.TrimSpace(s.Entrypoint), ";")
	if statusCheck {
		cmd = append(cmd, "fi", ";", "ray", "job", "logs", "--address", address, "--follow", id)
	}
	return strings.Join(cmd, " "), nil
}

// dashboardURLOf is status.dashboardURL: the head Service's DNS name and
// dashboard port, without a scheme (as KubeRay writes it).
func dashboardURLOf(rc *rayv1.RayCluster, clusterDomain string) string {
	return raydash.ServiceDNSAddress(kit.HeadServiceName(rc), rc.Namespace, clusterDomain, raydash.DashboardPort(rc))
}

// DescribeSubmitter says in words what a submitter Job's state is.
func DescribeSubmitter(j *batchv1.Job) string {
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

// rayVersionAtLeast reports whether the Ray version v is at least
// major.minor.0.
func rayVersionAtLeast(v string, major, minor uint) (bool, error) {
	got, err := version.ParseGeneric(v)
	if err != nil {
		return false, err
	}
	return got.AtLeast(version.MajorMinor(major, minor)), nil
}

// clusterLabels are the labels of the RayCluster a RayJob creates:
// every label of the RayJob, then the originated-from labels and the
// submission mode, which cannot be overridden.
func clusterLabels(rj *rayv1.RayJob) map[string]string {
	l := make(map[string]string, len(rj.Labels)+3)
	maps.Copy(l, rj.Labels)
	l[rayv1.RayOriginatedFromCRNameLabelKey] = rj.Name
	l[rayv1.RayOriginatedFromCRDLabelKey] = rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob)
	l[rayv1.RayJobSubmissionModeLabelKey] = string(rj.Spec.EffectiveSubmissionMode())
	return l
}

// protocolAnnotation reports whether an annotation key is part of
// raydar's RayJob protocol (a stop request and its record): it concerns
// the RayJob alone and is not handed on to the cluster.
func protocolAnnotation(k string) bool {
	return k == rayv1.StopRequestedAnnotationKey || k == rayv1.JobStopRecordAnnotationKey
}

// clusterAnnotations are the annotations of the RayCluster a RayJob
// creates: every annotation of the RayJob (kubectl's last-applied
// configuration included, as KubeRay copies it) except raydar's stop
// protocol, and in SidecarMode the one that keeps a provisioned head from
// being re-created (a new head would run the job again). nil when empty.
func clusterAnnotations(rj *rayv1.RayJob) map[string]string {
	var a map[string]string
	set := func(k, v string) {
		if a == nil {
			a = make(map[string]string, len(rj.Annotations)+1)
		}
		a[k] = v
	}
	for k, v := range rj.Annotations {
		if !protocolAnnotation(k) {
			set(k, v)
		}
	}
	if rj.Spec.EffectiveSubmissionMode() == rayv1.SidecarMode {
		set(rayv1.DisableProvisionedHeadRestartAnnotationKey, "true")
	}
	return a
}

// submitterLabels are the labels of the K8sJobMode submitter Job and
// the ones its pod template gets (overriding the template's own): the
// originated-from labels and created-by, nothing of the RayJob's labels.
func submitterLabels(rj *rayv1.RayJob) map[string]string {
	return map[string]string{
		rayv1.RayOriginatedFromCRNameLabelKey: rj.Name,
		rayv1.RayOriginatedFromCRDLabelKey:    rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob),
		rayv1.KubernetesCreatedByLabelKey:     rayv1.ComponentName,
	}
}

// HeadServiceName is the name of a RayJob's own head Service,
// "<rayjob>-head-svc", which follows the head of the RayJob's cluster.
func HeadServiceName(rj *rayv1.RayJob) string {
	return rj.Name + "-" + string(rayv1.HeadNode) + "-svc"
}

// buildHeadService is the RayJob's head Service: the cluster's head
// Service (spec, selector, ports, the custom headService's annotations)
// under the name "<rayjob>-head-svc", with the RayJob's labels only and a
// controller reference to the RayJob. KubeRay builds it from the cluster
// without spec.headServiceAnnotations, so those are left out.
func buildHeadService(rj *rayv1.RayJob, rc *rayv1.RayCluster, cfg raycluster.BuildConfig) *corev1.Service {
	svc := raycluster.BuildHeadService(rc, cfg)
	svc.Name = HeadServiceName(rj)
	svc.Namespace = rj.Namespace
	svc.Labels = map[string]string{
		rayv1.RayOriginatedFromCRNameLabelKey: rj.Name,
		rayv1.RayOriginatedFromCRDLabelKey:    rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob),
		rayv1.RayNodeTypeLabelKey:             string(rayv1.HeadNode),
		rayv1.RayIDLabelKey:                   kit.KubeRayCheckLabel(rj.Name + "-" + strings.ToLower(string(rayv1.HeadNode))),
	}
	svc.Annotations = nil
	if hs := rc.Spec.HeadGroupSpec.HeadService; hs != nil && len(hs.Annotations) > 0 {
		svc.Annotations = maps.Clone(hs.Annotations)
	}
	svc.OwnerReferences = []metav1.OwnerReference{kit.RayJobOwnerRef(rj)}
	return svc
}
