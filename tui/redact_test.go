package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// TestEveryPageRedactsTheToken: the token canary at the level of the
// pages (the sandbox-driven one is cmd/raydar's TestTokenCanary): a
// RayCluster, a RayJob, a RayService and a RayCronJob, each with the
// secrets of secretCluster in its cluster spec and kubectl's last-applied
// copy, and the head pod with them in its env; every page of each (list,
// detail, describe; the pod's describe reads the pod whole) shows none of
// them, and each describe page shows the token's field, redacted.
func TestEveryPageRedactsTheToken(t *testing.T) {
	const token = "tok-0123456789"
	rc := secretCluster(t)
	spec := rc.Spec
	withLastApplied := func(o client.Object) client.Object {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		o.SetAnnotations(map[string]string{redact.LastAppliedAnnotation: string(b)})
		return o
	}
	rj := &rayv1.RayJob{ObjectMeta: om("ml", "secret-job", time.Hour, nil)}
	rj.Spec = rayv1.RayJobSpec{Entrypoint: "python run.py --auth-token " + token, RayClusterSpec: spec.DeepCopy(),
		RuntimeEnvYAML: "env_vars:\n  RAY_AUTH_TOKEN: " + token + "\n"}
	rj.Status = rayv1.RayJobStatus{JobId: "secret-job-1", RayClusterName: "secretive", JobStatus: rayv1.JobStatusRunning,
		JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}
	rs := &rayv1.RayService{ObjectMeta: om("ml", "secret-svc", time.Hour, nil)}
	rs.Spec.RayClusterSpec = *spec.DeepCopy()
	rs.Spec.ServeConfigV2 = "applications:\n  - name: app\n    import_path: app:d\n    runtime_env: {env_vars: {RAY_AUTH_TOKEN: " + token + "}}\n"
	cj := &rayv1.RayCronJob{ObjectMeta: om("ml", "secret-cron", time.Hour, nil)}
	cj.Spec = rayv1.RayCronJobSpec{Schedule: "0 2 * * *", JobTemplate: rayv1.RayJobSpec{Entrypoint: "python run.py --auth-token=" + token, RayClusterSpec: spec.DeepCopy()}}
	head := mkPod(rc, "secretive-head-abcde", "head", rayv1.RayNodeHeadGroupLabelValue, time.Hour, true, "10.0.9.10")
	head.Spec.Containers = rc.Spec.HeadGroupSpec.Template.Spec.Containers
	st := watch.NewStore()
	st.Add(rc, withLastApplied(rj), withLastApplied(rs), withLastApplied(cj), head)
	get := func(_ context.Context, o client.Object) (client.Object, error) {
		if o.GetName() == head.Name {
			return head.DeepCopy(), nil
		}
		return o, nil
	}
	tm, _ := start(t, Options{Store: st, Actions: DefaultActions(ActionDeps{}), Session: Session{Get: get}}, 220, 500)

	pages := 0
	look := func(name, want string, keys ...string) {
		t.Helper()
		typeKeys(tm, keys...)
		screen := waitScreen(t, tm, want)
		pages++
		for _, leak := range []string{"hunter2", token} {
			if strings.Contains(screen, leak) {
				t.Errorf("%s: %q is on the screen:\n%s", name, leak, screen)
			}
		}
		if strings.Contains(name, "describe") && !strings.Contains(screen, "value: "+redact.Redacted(len(token))) {
			t.Errorf("%s does not show RAY_AUTH_TOKEN's value redacted:\n%s", name, screen)
		}
	}
	for _, k := range []struct{ alias, name, kind string }{
		{"rc", "secretive", "RayCluster"}, {"rj", "secret-job", "RayJob"}, {"rs", "secret-svc", "RayService"}, {"rcj", "secret-cron", "RayCronJob"},
	} {
		look(k.kind+" list", k.name, ":"+k.alias, "<enter>")
		look(k.kind+" describe", "Describe "+k.kind, "d", "w")
		typeKeys(tm, "<esc>")
		look(k.kind+" page", k.kind+" ml/"+k.name, "<enter>")
		typeKeys(tm, "<esc>")
	}
	look("pods list", head.Name, ":pods", "<enter>")
	look("pod describe", "Describe Pod", "d", "w")
	if pages != 14 {
		t.Errorf("%d pages looked at, want 14", pages)
	}
}
