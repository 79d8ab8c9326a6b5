package sandbox

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestKubeletConfigCheck(t *testing.T) {
	have := func(objs map[string][]string) configLookup {
		return func(name string) (map[string]bool, bool) {
			keys, ok := objs[name]
			if !ok {
				return nil, false
			}
			m := map[string]bool{}
			for _, k := range keys {
				m[k] = true
			}
			return m, true
		}
	}
	cms := have(map[string][]string{"app": {"mode"}})
	secrets := have(map[string][]string{"token": {"auth_token"}})
	envCM := func(name, key string, optional bool) corev1.EnvVar {
		return corev1.EnvVar{Name: "X", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}}
	}
	envSecret := func(name, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: "Y", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}}
	}
	for _, tc := range []struct {
		name            string
		spec            corev1.PodSpec
		reason, message string
		refs            bool
	}{
		{"no references", corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}}}, "", "", false},
		{"every reference exists", corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
			Env: []corev1.EnvVar{envCM("app", "mode", false), envSecret("token", "auth_token")}}}}, ConfigOK, "", true},
		{"env from a missing ConfigMap", corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
			Env: []corev1.EnvVar{envCM("ray-config", "mode", false)}}}}, ConfigErrorReason, `configmap "ray-config" not found`, true},
		{"a missing key", corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
			Env: []corev1.EnvVar{envCM("app", "size", false)}}}}, ConfigErrorReason, "couldn't find key size in ConfigMap ns/app", true},
		{"an optional missing ConfigMap", corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
			Env: []corev1.EnvVar{envCM("gone", "k", true)}}}}, ConfigOK, "", true},
		{"a missing Secret key in an init container", corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i",
			Env: []corev1.EnvVar{envSecret("token", "other")}}}, Containers: []corev1.Container{{Name: "c"}}},
			ConfigErrorReason, "couldn't find key other in Secret ns/token", true},
		{"envFrom a missing Secret", corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
			EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}}}}}},
			ConfigErrorReason, `secret "creds" not found`, true},
		{"a volume of a missing ConfigMap, before env", corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "ray-files"}}}}},
			Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{envCM("ray-config", "mode", false)}}}},
			MountErrorReason, `MountVolume.SetUp failed for volume "conf" : configmap "ray-files" not found`, true},
		{"a projected Secret", corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "tls"}}}}}}}},
			Containers: []corev1.Container{{Name: "c"}}},
			MountErrorReason, `MountVolume.SetUp failed for volume "p" : secret "tls" not found`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Spec: tc.spec}
			reason, message, refs := kubeletConfigCheck(pod, cms, secrets)
			if reason != tc.reason || message != tc.message || refs != tc.refs {
				t.Errorf("got (%q, %q, %v); want (%q, %q, %v)", reason, message, refs, tc.reason, tc.message, tc.refs)
			}
		})
	}
}
