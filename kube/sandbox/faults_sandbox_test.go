//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// waitPod waits until cond holds for the pod and returns it.
func waitPod(t *testing.T, cs kubernetes.Interface, ns, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, "pod "+name+" "+what, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		return cond(p), nil
	})
	return pod
}

func waiting(p *corev1.Pod) *corev1.ContainerStateWaiting {
	if len(p.Status.ContainerStatuses) != 1 {
		return nil
	}
	return p.Status.ContainerStatuses[0].State.Waiting
}

// TestKubeletFaults: the fault annotations and the config checker make kwok
// play what a kubelet reports for a crash loop, an image that cannot be
// pulled and a missing ConfigMap (which, once created, lets the pod run).
func TestKubeletFaults(t *testing.T) {
	sb := sandboxFor(t)
	cs := sb.Clientset()
	ns := testNamespace(t, cs)
	ctx := context.Background()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kwok's log:\n%s", tailFile(sb.LogPath(Kwok), 30))
		}
	})
	create := func(p *corev1.Pod) {
		t.Helper()
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		value  string
		exit   int32
		reason string
	}{{"3", 3, "Error"}, {"OOMKilled", 137, "OOMKilled"}} {
		name := fmt.Sprintf("crash-%d", tc.exit)
		p := testPod(name, nil)
		p.Annotations = map[string]string{CrashAnnotation: tc.value}
		create(p)
		got := waitPod(t, cs, ns, name, "crash-looping", func(p *corev1.Pod) bool {
			w := waiting(p)
			return w != nil && w.Reason == "CrashLoopBackOff"
		})
		st := got.Status.ContainerStatuses[0]
		if got.Status.Phase != corev1.PodRunning || st.Ready || st.RestartCount != 5 || got.Status.PodIP == "" {
			t.Errorf("%s: phase %s ready %v restarts %d IP %q", name, got.Status.Phase, st.Ready, st.RestartCount, got.Status.PodIP)
		}
		if lt := st.LastTerminationState.Terminated; lt == nil || lt.ExitCode != tc.exit || lt.Reason != tc.reason {
			t.Errorf("%s: last state %+v; want exit %d %s", name, st.LastTerminationState, tc.exit, tc.reason)
		}
	}

	p := testPod("bad-image", nil)
	p.Annotations = map[string]string{ImagePullAnnotation: "ErrImagePull"}
	create(p)
	got := waitPod(t, cs, ns, "bad-image", "ErrImagePull", func(p *corev1.Pod) bool {
		w := waiting(p)
		return w != nil && w.Reason == "ErrImagePull"
	})
	if want := `failed to pull and unpack image "example.invalid/app:1"`; got.Status.Phase != corev1.PodPending || !strings.Contains(waiting(got).Message, want) {
		t.Errorf("bad-image: phase %s message %q; want Pending and %q", got.Status.Phase, waiting(got).Message, want)
	}

	p = testPod("needs-config", nil)
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "ray-config"}, Key: "mode"}}}}
	create(p)
	got = waitPod(t, cs, ns, "needs-config", "CreateContainerConfigError", func(p *corev1.Pod) bool {
		w := waiting(p)
		return w != nil && w.Reason == ConfigErrorReason
	})
	if want := `configmap "ray-config" not found`; waiting(got).Message != want || got.Status.Phase != corev1.PodPending {
		t.Errorf("needs-config: phase %s message %q; want Pending and %q", got.Status.Phase, waiting(got).Message, want)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ray-config"},
		Data: map[string]string{"mode": "fast"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got = waitPod(t, cs, ns, "needs-config", "Running once its ConfigMap exists", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning
	})
	if st := got.Status.ContainerStatuses; len(st) != 1 || st[0].State.Waiting != nil || st[0].State.Running == nil || !st[0].Ready {
		t.Errorf("needs-config once its ConfigMap exists: %+v", st)
	}
	// The waiting spell's ContainersNotReady must not outlive it: a kubelet
	// writes Ready True with no reason or message, and a head pod that kept
	// that reason read HeadPodReady True/ContainersNotReady on one operator's
	// side only (the conformance suite's external-Redis samples, whose head
	// may be created before its ConfigMap).
	for _, c := range got.Status.Conditions {
		if (c.Type == corev1.PodReady || c.Type == corev1.ContainersReady) && (c.Status != corev1.ConditionTrue || c.Reason != "" || c.Message != "") {
			t.Errorf("needs-config once its ConfigMap exists: condition %s %s, reason %q, message %q; want True with neither", c.Type, c.Status, c.Reason, c.Message)
		}
	}

	p = testPod("needs-volume", nil)
	p.Spec.Volumes = []corev1.Volume{{Name: "files", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "ray-tls"}}}}
	create(p)
	waitPod(t, cs, ns, "needs-volume", "ContainerCreating", func(p *corev1.Pod) bool {
		w := waiting(p)
		return w != nil && w.Reason == MountErrorReason
	})
	eventually(t, "a FailedMount Event", func(ctx context.Context) (bool, error) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=needs-volume,reason=FailedMount"})
		if err != nil {
			return false, err
		}
		return len(evs.Items) == 1 && evs.Items[0].Message == `MountVolume.SetUp failed for volume "files" : secret "ray-tls" not found`, nil
	})
}
