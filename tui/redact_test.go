package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/kube/redact"
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// secretCluster is a RayCluster with a literal Redis password and Ray auth
// token everywhere KubeRay's samples put them, and kubectl's last-applied
// copy of all of it.
func secretCluster(t *testing.T) *rayv1.RayCluster {
	t.Helper()
	rc := mkCluster("ml", "secretive", time.Hour, group("cpu", 1, 0, 2))
	rc.Spec.HeadGroupSpec.RayStartParams = map[string]string{"redis-password": "hunter2-redis", "num-cpus": "0"}
	rc.Spec.HeadGroupSpec.Template.Spec.Containers = []corev1.Container{{
		Name: "ray-head", Image: "rayproject/ray:2.52.0",
		Args: []string{"ray start --head --redis-password=hunter2-redis --block"},
		Env: []corev1.EnvVar{
			{Name: "REDIS_PASSWORD", Value: "hunter2-redis"},
			{Name: "RAY_AUTH_TOKEN", Value: "tok-0123456789"},
			{Name: "RAY_GRAFANA_HOST", Value: "http://grafana:3000"},
		},
	}}
	b, err := json.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	rc.Annotations = map[string]string{redact.LastAppliedAnnotation: string(b)}
	return rc
}

func TestDescribeRedactsPasswordsAndTokens(t *testing.T) {
	st := watch.NewStore()
	st.Add(secretCluster(t))
	// Tall and wide enough for the whole page, wrapped ("w"), so that no
	// line is cut off before a secret could show.
	tm, _ := start(t, Options{Store: st, Actions: DefaultActions(ActionDeps{})}, 200, 400)
	waitScreen(t, tm, "secretive")
	typeKeys(tm, "d")
	waitScreen(t, tm, "Describe RayCluster")
	typeKeys(tm, "w")
	screen := waitScreen(t, tm, "RAY_GRAFANA_HOST")
	for _, leak := range []string{"hunter2", "tok-0123456789"} {
		if strings.Contains(screen, leak) {
			t.Errorf("%q is on the screen:\n%s", leak, screen)
		}
	}
	for _, want := range []string{
		"redis-password: <redacted 13 bytes>",    // rayStartParams in the YAML
		"value: <redacted 14 bytes>",             // RAY_AUTH_TOKEN
		"--redis-password=<redacted 13 bytes>",   // args
		`"redis-password":"<redacted 13 bytes>"`, // the last-applied copy
		"value: http://grafana:3000",             // not a secret
		redact.LastAppliedAnnotation + "={",      // the Annotations field, redacted too
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("want %q on the screen:\n%s", want, screen)
		}
	}
}
