package tui

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The cache keeps pods trimmed (watch.SlimPod): describe's YAML of a pod is
// the pod read whole through Session.Get, and says so when the read fails.
func TestDescribePodReadsTheWholePod(t *testing.T) {
	get := func(_ context.Context, obj client.Object) (client.Object, error) {
		p := obj.DeepCopyObject().(*corev1.Pod)
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "RAY_WHOLE_POD", Value: "yes"}}
		return p, nil
	}
	opts := Options{Actions: DefaultActions(ActionDeps{})}
	opts.Session.Context, opts.Session.Server, opts.Session.Get = "sandbox", "https://127.0.0.1:6443", get
	tm, _ := start(t, opts, 120, 400)
	typeKeys(tm, ":pods", "<enter>", "d")
	waitScreen(t, tm, "RAY_WHOLE_POD")

	opts.Session.Get = func(context.Context, client.Object) (client.Object, error) { return nil, errors.New("forbidden") }
	tm, _ = start(t, opts, 160, 400)
	typeKeys(tm, ":pods", "<enter>", "d")
	waitScreen(t, tm, "the cache's trimmed copy: reading the whole pod failed: forbidden")
}
