package raycluster

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Kubernetes token auth (authOptions.enableK8sTokenAuth), checked against
// what KubeRay v1.6.2's common/pod.go:253-336 makes of the same spec.

// k8sAuthCluster is a token-mode cluster with enableK8sTokenAuth, an
// autoscaler whose options carry env and a mount, and a user volume "data"
// the Ray containers mount.
func k8sAuthCluster() *rayv1.RayCluster {
	rc := withAuth(fixture.Cluster("c", fixture.Group("g", 1)), &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, EnableK8sTokenAuth: fixture.Ptr(true)})
	rc.Spec.RayVersion = "2.55.0"
	rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
	rc.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{
		Env:          []corev1.EnvVar{{Name: "USER_AUTOSCALER", Value: "1"}},
		VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/a"}},
	}
	for _, t := range []*corev1.PodTemplateSpec{&rc.Spec.HeadGroupSpec.Template, &rc.Spec.WorkerGroupSpecs[0].Template} {
		t.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		t.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		t.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "USER_FIRST", Value: "1"}}
	}
	return rc
}

// wantTokenVolume is KubeRay's AddRayTokenVolume.
var wantTokenVolume = corev1.Volume{Name: "ray-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
	Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}},
}}}

var wantTokenMount = corev1.VolumeMount{Name: "ray-token", MountPath: "/var/run/secrets/ray.io/serviceaccount", ReadOnly: true}

func volumeNames(vs []corev1.Volume) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

func mountsOf(c *corev1.Container) []string {
	var out []string
	for _, m := range c.VolumeMounts {
		s := m.Name + ":" + m.MountPath
		if m.ReadOnly {
			s += ":ro"
		}
		out = append(out, s)
	}
	return out
}

// authRun is the names of c's env from RAY_AUTH_MODE on, as far as the run
// of auth names goes.
func authRun(c *corev1.Container) []string {
	names := authEnvNames(c.Env)
	i := slices.Index(names, "RAY_AUTH_MODE")
	if i < 0 {
		return nil
	}
	j := i
	for j < len(names) && strings.HasPrefix(names[j], "RAY_AUTH_") || j < len(names) && names[j] == "RAY_ENABLE_K8S_TOKEN_AUTH" {
		j++
	}
	return names[i:j]
}

func TestK8sTokenAuthPods(t *testing.T) {
	rc := k8sAuthCluster()
	head := BuildPod(rc, PodBuild{Name: "c-head-x", Head: true}, "h", DefaultBuildConfig())
	worker := BuildPod(rc, PodBuild{Name: "c-g-worker-x", Group: &rc.Spec.WorkerGroupSpecs[0]}, "h", DefaultBuildConfig())
	ray := &head.Spec.Containers[rayv1.RayContainerIndex]
	auto := fixture.FindContainer(head.Spec.Containers, rayv1.AutoscalerContainerName)
	wray := &worker.Spec.Containers[rayv1.RayContainerIndex]
	wait := fixture.FindContainer(worker.Spec.InitContainers, kit.InitContainerName)
	token := wantTokenMount.Name + ":" + wantTokenMount.MountPath + ":ro"

	for _, tc := range []struct {
		what       string
		c          *corev1.Container
		wantMounts []string
		// wantEnvTail: the env names from RAY_AUTH_MODE to the end.
		wantEnvTail []string
	}{
		// The Ray containers: the token mount after the user's, before the
		// /dev/shm (and /tmp/ray) mounts BuildPod adds later.
		{"head Ray container", ray, []string{"data:/data", token, "shared-mem:/dev/shm", "ray-logs:/tmp/ray"}, nil},
		{"worker Ray container", wray, []string{"data:/data", token, "shared-mem:/dev/shm"}, nil},
		// The autoscaler: set before autoscalerOptions is merged
		// (common/pod.go:207-213), so before the user's env and mounts; its
		// /tmp/ray mount comes with BuildPod, last.
		{"autoscaler", auto, []string{token, "data:/a", "ray-logs:/tmp/ray"},
			[]string{"RAY_AUTH_MODE", "RAY_ENABLE_K8S_TOKEN_AUTH", "USER_AUTOSCALER"}},
		// wait-gcs-ready: the Ray container's env and mounts as the user
		// wrote them, then the auth env and mount (configureTokenAuth), then
		// BuildPod's FQ_RAY_IP and RAY_IP.
		{"wait-gcs-ready", wait, []string{"data:/data", token},
			[]string{"RAY_AUTH_MODE", "RAY_ENABLE_K8S_TOKEN_AUTH", "FQ_RAY_IP", "RAY_IP"}},
	} {
		if tc.c == nil {
			t.Fatalf("%s: no such container", tc.what)
		}
		if got := mountsOf(tc.c); !slices.Equal(got, tc.wantMounts) {
			t.Errorf("%s: mounts %v, want %v", tc.what, got, tc.wantMounts)
		}
		if got := authRun(tc.c); !slices.Equal(got, []string{"RAY_AUTH_MODE", "RAY_ENABLE_K8S_TOKEN_AUTH"}) {
			t.Errorf("%s: auth env %v, want RAY_AUTH_MODE then RAY_ENABLE_K8S_TOKEN_AUTH (env %v)", tc.what, got, authEnvNames(tc.c.Env))
		}
		if m, k := fixture.EnvOf(tc.c, "RAY_AUTH_MODE"), fixture.EnvOf(tc.c, "RAY_ENABLE_K8S_TOKEN_AUTH"); m.Value != "token" || k.Value != "true" {
			t.Errorf("%s: RAY_AUTH_MODE=%q RAY_ENABLE_K8S_TOKEN_AUTH=%q", tc.what, m.Value, k.Value)
		}
		if fixture.EnvOf(tc.c, "RAY_AUTH_TOKEN") != nil {
			t.Errorf("%s: RAY_AUTH_TOKEN with Kubernetes token auth: there is no Secret", tc.what)
		}
		if tc.wantEnvTail != nil {
			names := authEnvNames(tc.c.Env)
			if got := names[slices.Index(names, "RAY_AUTH_MODE"):]; !slices.Equal(got, tc.wantEnvTail) {
				t.Errorf("%s: env from RAY_AUTH_MODE on %v, want %v", tc.what, got, tc.wantEnvTail)
			}
		}
	}
	// The Ray container's auth env comes where configureTokenAuth adds it:
	// after the user's env and the autoscaler's RAY_enable_autoscaler_v2,
	// before the env BuildPod generates (RAY_CLUSTER_NAME...).
	if names := authEnvNames(ray.Env); slices.Index(names, "RAY_AUTH_MODE") < slices.Index(names, "USER_FIRST") ||
		slices.Index(names, "RAY_AUTH_MODE") > slices.Index(names, "RAY_CLUSTER_NAME") {
		t.Errorf("head Ray container env order %v", names)
	}

	// The volume: after the user's, before shared-mem and ray-logs.
	if got, want := volumeNames(head.Spec.Volumes), []string{"data", "ray-token", "shared-mem", "ray-logs"}; !slices.Equal(got, want) {
		t.Errorf("head volumes %v, want %v", got, want)
	}
	if got, want := volumeNames(worker.Spec.Volumes), []string{"data", "ray-token", "shared-mem"}; !slices.Equal(got, want) {
		t.Errorf("worker volumes %v, want %v", got, want)
	}
	for _, p := range []*corev1.Pod{head, worker} {
		i := slices.IndexFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "ray-token" })
		if i < 0 || !reflect.DeepEqual(p.Spec.Volumes[i], wantTokenVolume) {
			t.Errorf("%s: ray-token volume %+v, want %+v", p.Name, p.Spec.Volumes, wantTokenVolume)
		}
		// The pods run as the template's ServiceAccount (the autoscaler's on
		// the head): raydar creates no other, as KubeRay.
		if strings.Contains(strings.Join(ray.Args, " "), "auth") || strings.Contains(strings.Join(wray.Args, " "), "auth") {
			t.Errorf("ray start mentions auth: Ray reads the env")
		}
	}
	if head.Spec.ServiceAccountName != kit.CheckName(kit.AutoscalerServiceAccountName(rc)) {
		t.Errorf("head ServiceAccount %q", head.Spec.ServiceAccountName)
	}
}

// What the user's template already defines is left alone, as KubeRay's
// EnvVarExists / VolumeMountExists / VolumeExists checks do.
func TestK8sTokenAuthUserOverrides(t *testing.T) {
	rc := k8sAuthCluster()
	own := corev1.Volume{Name: "ray-token", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	h := &rc.Spec.HeadGroupSpec.Template.Spec
	h.Volumes = append(h.Volumes, own)
	h.Containers[0].Env = append(h.Containers[0].Env, corev1.EnvVar{Name: "RAY_ENABLE_K8S_TOKEN_AUTH", Value: "false"})
	h.Containers[0].VolumeMounts = append(h.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "ray-token", MountPath: "/mine"})
	head := BuildPod(rc, PodBuild{Name: "c-head-x", Head: true}, "h", DefaultBuildConfig())
	ray := &head.Spec.Containers[rayv1.RayContainerIndex]
	if got := fixture.EnvOf(ray, "RAY_ENABLE_K8S_TOKEN_AUTH"); got.Value != "false" || strings.Count(strings.Join(authEnvNames(ray.Env), ","), "RAY_ENABLE_K8S_TOKEN_AUTH") != 1 {
		t.Errorf("user's RAY_ENABLE_K8S_TOKEN_AUTH replaced or doubled: %v", ray.Env)
	}
	if got, want := mountsOf(ray), []string{"data:/data", "ray-token:/mine", "shared-mem:/dev/shm", "ray-logs:/tmp/ray"}; !slices.Equal(got, want) {
		t.Errorf("mounts %v, want %v", got, want)
	}
	if got, want := volumeNames(head.Spec.Volumes), []string{"data", "ray-token", "shared-mem", "ray-logs"}; !slices.Equal(got, want) ||
		!reflect.DeepEqual(head.Spec.Volumes[1], own) {
		t.Errorf("volumes %v, want the user's ray-token kept", head.Spec.Volumes)
	}
}

// enableK8sTokenAuth without mode token puts nothing into the pods (KubeRay:
// every step is under utils.IsAuthEnabled); validation refuses that spec
// before it gets here.
func TestK8sTokenAuthNeedsModeToken(t *testing.T) {
	rc := k8sAuthCluster()
	rc.Spec.AuthOptions.Mode = rayv1.AuthModeDisabled
	head := BuildPod(rc, PodBuild{Name: "c-head-x", Head: true}, "h", DefaultBuildConfig())
	if slices.Contains(volumeNames(head.Spec.Volumes), "ray-token") || fixture.EnvOf(&head.Spec.Containers[0], "RAY_ENABLE_K8S_TOKEN_AUTH") != nil {
		t.Fatalf("token auth bits without mode token: %v", head.Spec.Volumes)
	}
}

// No Secret, and no other object: Kubernetes issues the tokens
// (raycluster_controller.go:387-391).
func TestK8sTokenAuthCreatesNoSecret(t *testing.T) {
	rc := k8sAuthCluster()
	p := decide(obsOf(rc, headSvc(rc)))
	if p.CreateAuthSecret != nil {
		t.Fatalf("planned auth Secret %s with Kubernetes token auth", p.CreateAuthSecret.Name)
	}
	if len(p.CreatePods) == 0 {
		t.Fatal("no pods planned")
	}
	if errs := UnsupportedRayCluster(rc); len(errs) != 0 {
		t.Fatalf("refused: %v", errs)
	}
}
