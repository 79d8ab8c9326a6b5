package privilege

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/sandbox"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/testobj"
)

// viewWorld is one object of every kind in a new namespace, a worker pod
// of the cluster and a running RayJob (made by the admin, no operator),
// and a person who may only view them: a ServiceAccount bound in the
// namespace to the view ClusterRole, to which config/rbac aggregates the
// ray.io kinds.
type viewWorld struct {
	ns, user, kubeconfig string
	objs                 []client.Object
}

func newViewWorld(t *testing.T, ctx context.Context, prefix, sa, clusterRole string) *viewWorld {
	t.Helper()
	waitAggregated(t, ctx, clusterRole)
	w := &viewWorld{ns: newNamespace(t, ctx, prefix)}
	w.user = "system:serviceaccount:" + w.ns + ":" + sa
	rc := testobj.Cluster(w.ns, "rc", 2)
	job := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "job"},
		Spec: rayv1.RayJobSpec{Entrypoint: "echo hi", ShutdownAfterJobFinishes: true, RayClusterSpec: &testobj.Cluster(w.ns, "x", 0).Spec}}
	svc := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "svc"},
		Spec: rayv1.RayServiceSpec{RayClusterSpec: testobj.Cluster(w.ns, "x", 1).Spec}}
	cron := &rayv1.RayCronJob{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "cron"},
		Spec: rayv1.RayCronJobSpec{Schedule: "0 3 * * *", JobTemplate: job.Spec}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "rc-small-worker-abcde", Labels: map[string]string{
		rayv1.RayClusterLabelKey: "rc", rayv1.RayNodeTypeLabelKey: string(rayv1.WorkerNode), rayv1.RayNodeGroupLabelKey: "small"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.52.0"}}}}
	for _, o := range []client.Object{rc, job, svc, cron, pod} {
		createObj(t, ctx, o)
	}
	job.Status = rayv1.RayJobStatus{JobId: "job-1", RayClusterName: "job-raycluster-x", JobStatus: rayv1.JobStatusRunning,
		JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}
	if err := cl.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
	w.objs = []client.Object{rc, job, svc, cron, pod}
	token := serviceAccountWith(t, ctx, w.ns, sa, clusterRole, true)
	w.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := sb.WriteTokenKubeconfig(w.kubeconfig, token, w.ns); err != nil {
		t.Fatal(err)
	}
	return w
}

// waitAggregated waits until kube-controller-manager has aggregated
// config/rbac's ray.io rules into the ClusterRole.
func waitAggregated(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	eventually(t, time.Minute, "ray.io rules in ClusterRole "+name, func() (bool, string) {
		cr := &rbacv1.ClusterRole{}
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, cr); err != nil {
			return false, err.Error()
		}
		for _, r := range cr.Rules {
			if slices.Contains(r.APIGroups, rayv1.GroupName) && slices.Contains(r.Resources, "rayclusters") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d rules, none for rayclusters", len(cr.Rules))
	})
}

// versions are the resourceVersions of the world's objects, read live.
func (w *viewWorld) versions(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range w.objs {
		fresh := o.DeepCopyObject().(client.Object)
		if err := cl.Get(ctx, client.ObjectKeyFromObject(o), fresh); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%T %s", o, o.GetName())] = fresh.GetResourceVersion()
	}
	return out
}

type cliRun struct {
	stdout, stderr string
	err            error
}

// raydar runs the built binary with the world's kubeconfig.
func (w *viewWorld) raydar(t *testing.T, ctx context.Context, args ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, raydarBin, append([]string{"--kubeconfig", w.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "HOME="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return cliRun{out.String(), errb.String(), err}
}

// TestViewUserReadsEverythingAndChangesNothing: with only view, `raydar
// get` lists every kind and a cluster's pods; each mutating command fails
// naming the user, verb, resource and namespace it lacks; the TUI shows
// every list and detail and refuses its actions in the same words; and no
// object changes (resourceVersions equal; no write of the user succeeded
// in the audit log).
func TestViewUserReadsEverythingAndChangesNothing(t *testing.T) {
	ctx := needSandbox(t)
	w := newViewWorld(t, ctx, "view", "viewer", "view")
	for _, g := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "clusters"}, "rc"},
		{[]string{"get", "clusters", "rc", "-o", "yaml"}, "name: rc"},
		{[]string{"get", "jobs"}, "job"},
		{[]string{"get", "services"}, "svc"},
		{[]string{"get", "cronjobs"}, "cron"},
		{[]string{"get", "workers", "rc"}, "rc-small-worker-abcde"},
	} {
		r := w.raydar(t, ctx, g.args...)
		if r.err != nil || !strings.Contains(r.stdout, g.want) {
			t.Errorf("raydar %s: err %v\nstdout:\n%s\nstderr:\n%s", strings.Join(g.args, " "), r.err, r.stdout, r.stderr)
		}
	}

	before := w.versions(t, ctx)
	for _, m := range []struct {
		args           []string
		verb, resource string
	}{
		{[]string{"scale", "rc", "small", "--replicas", "3", "--yes"}, "patch", "rayclusters"},
		{[]string{"delete-workers", "rc", "rc-small-worker-abcde", "--yes"}, "patch", "rayclusters"},
		{[]string{"stop", "job", "--yes"}, "patch", "rayjobs"},
		{[]string{"suspend", "rc", "rc", "--yes"}, "patch", "rayclusters"},
		{[]string{"suspend", "rayjob", "job", "--yes"}, "patch", "rayjobs"},
		{[]string{"suspend", "rs", "svc", "--yes"}, "patch", "rayservices"},
		{[]string{"suspend", "cronjob", "cron", "--yes"}, "patch", "raycronjobs"},
		{[]string{"trigger", "cron", "--yes"}, "create", "rayjobs"},
	} {
		r := w.raydar(t, ctx, m.args...)
		want := fmt.Sprintf("forbidden: user %s cannot %s %s in namespace %s", w.user, m.verb, m.resource, w.ns)
		if r.err == nil || !strings.Contains(r.stderr, want) {
			t.Errorf("raydar %s: err %v; want stderr with %q\nstdout:\n%s\nstderr:\n%s", strings.Join(m.args, " "), r.err, want, r.stdout, r.stderr)
		}
		if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
			t.Errorf("raydar %s crashed:\n%s", strings.Join(m.args, " "), r.stderr)
		}
	}
	// The TUI, every view and action key, confirming each: every list and
	// detail shows; each action is refused in words.
	cfg, err := clientConfigFromFile(w.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	_, screens := runScript(t, ctx, cfg, w.ns, w.user, false)
	all := strings.Join(screens, "\n")
	for _, want := range []string{
		"RayClusters(" + w.ns + ")[1]", "RayJobs(" + w.ns + ")[1]", "RayServices(" + w.ns + ")[1]", "RayCronJobs(" + w.ns + ")[1]",
		"RayCluster " + w.ns + "/rc", "Describe RayCluster", "Describe RayJob",
		fmt.Sprintf("forbidden: user %s cannot patch rayclusters in namespace %s", w.user, w.ns),
		fmt.Sprintf("forbidden: user %s cannot patch rayjobs in namespace %s", w.user, w.ns),
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the view-only TUI session never showed %q; its last screen:\n%s", want, screens[len(screens)-1])
		}
	}
	if after := w.versions(t, ctx); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("objects changed under a view-only user:\nbefore %v\nafter  %v", before, after)
	}
	evs := only(auditUntilMarker(t, ctx), w.user)
	var writes []string
	forbidden := 0
	for _, e := range evs {
		if e.Mutating() && e.Code() < 400 && !everyUserMay(e) {
			writes = append(writes, e.String())
		}
		if e.Code() == 403 {
			forbidden++
		}
	}
	t.Logf("audit log: %d requests of %s, %d forbidden, %d successful writes; %s", len(evs), w.user, forbidden, len(writes), sandbox.Summarize(evs))
	if len(writes) > 0 {
		t.Errorf("successful writes of a view-only user:\n%s", strings.Join(writes, "\n"))
	}
	if forbidden < 10 {
		t.Errorf("%d forbidden requests of %s in the audit log, want one per refused command (8) and TUI action (2 or more)", forbidden, w.user)
	}
}
