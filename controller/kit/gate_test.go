package kit_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestSkipReason(t *testing.T) {
	rc := fixture.Cluster("c")
	none := kit.OtherOperator{}
	kuberay := kit.OtherOperator{Detected: true, Pods: []string{"ray-system/kuberay-operator-abc"}}
	tests := []struct {
		managedBy *string
		other     kit.OtherOperator
		skip      bool
		optIn     bool
	}{
		// The annotation opt-in (KubeRay's CRDs allow no raydar.io value):
		// with managedBy multikueue KubeRay leaves the object alone, so
		// raydar takes it; with managedBy unset a running KubeRay would
		// act on it too, so raydar refuses.
		{fixture.Ptr(rayv1.MultiKueueController), kuberay, false, true},
		{fixture.Ptr(rayv1.MultiKueueController), none, false, true},
		{nil, kuberay, true, true},
		{fixture.Ptr(rayv1.KubeRayController), kuberay, true, true},
		{nil, none, false, true},
		{nil, none, false, false},
		{fixture.Ptr(rayv1.KubeRayController), none, false, false},
		{fixture.Ptr(rayv1.ManagedByRaydar), none, false, false},
		{fixture.Ptr(rayv1.MultiKueueController), none, true, false},
		{nil, kuberay, true, false},
		{fixture.Ptr(rayv1.KubeRayController), kuberay, true, false},
		{fixture.Ptr(rayv1.ManagedByRaydar), kuberay, false, false},
		{nil, kit.OtherOperator{Detected: true, Ignored: true, Pods: kuberay.Pods}, false, false},
	}
	for _, tc := range tests {
		rc.Spec.ManagedBy = tc.managedBy
		rc.Annotations = nil
		if tc.optIn {
			rc.Annotations = map[string]string{rayv1.ManagedByRaydarAnnotationKey: "true"}
		}
		why := kit.SkipReason(rc, tc.other)
		if (why != "") != tc.skip {
			t.Errorf("managedBy=%v optIn=%v other=%+v: skip reason %q, want skip=%v", tc.managedBy, tc.optIn, tc.other, why, tc.skip)
		}
		if tc.optIn && tc.skip && tc.other.Detected && !strings.Contains(why, rayv1.MultiKueueController) {
			t.Errorf("the refusal of an annotated object says how to opt in: %q", why)
		}
	}
	if msg := kuberay.Message(); !strings.Contains(msg, "ray-system/kuberay-operator-abc") || !strings.Contains(msg, rayv1.ManagedByRaydar) {
		t.Errorf("message %q", msg)
	}
}

// A pod of KubeRay's Helm chart that runs raydar's binary
// (operatorCommand=/raydar-operator) is raydar itself, not another
// operator; one running KubeRay's /manager is.
func TestRunsRaydar(t *testing.T) {
	pod := func(cmd ...string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kuberay-operator", Command: cmd}}}}
	}
	for _, tc := range []struct {
		p    *corev1.Pod
		want bool
	}{
		{pod("/raydar-operator"), true},
		{pod("/usr/local/bin/raydar-operator"), true},
		{pod("/manager"), false},
		{pod(), false},
	} {
		if got := kit.RunsRaydar(tc.p); got != tc.want {
			t.Errorf("RunsRaydar(command %q) = %v, want %v", tc.p.Spec.Containers[0].Command, got, tc.want)
		}
	}
}
