package deploy

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/sandbox/seed"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestOperatorFromImage runs the image as the Deployment would, on this
// host: its root filesystem (hack/image's tarball, unpacked) as the root
// of a chroot, user 65532, nothing in it writable by that user but the
// Deployment's emptyDir mount paths (as with readOnlyRootFilesystem), the
// image's entrypoint with the Deployment's args and env, and the
// in-cluster identity of a pod of the Deployment: a token of its
// ServiceAccount from the TokenRequest API, the API server's CA and the
// namespace in /var/run/secrets/kubernetes.io/serviceaccount,
// KUBERNETES_SERVICE_HOST. Two replicas, as the Deployment has: the first
// must answer its probes and become the leader on raydar-system's Lease,
// the second stand by and be ready too; the leader must reconcile a
// RayCluster to ready and resolve a RayCronJob's time zone with no
// zoneinfo in the image; neither logs a request refused by the RBAC, and
// both exit on SIGTERM.
func TestOperatorFromImage(t *testing.T) {
	needSandbox(t)
	if uid := os.Geteuid(); uid != 0 {
		// A user namespace would give chroot, but an unprivileged one maps
		// only this user: the image's files would belong to 65532, which
		// could then write them, and read-only is what the test checks.
		t.Skipf("runs as uid %d: the operator runs chrooted to the image's root filesystem as uid 65532 in files owned by root; "+
			"chroot(2) (CAP_SYS_CHROOT), chown(2) to root and setuid(2) to 65532 (CAP_SETUID) need root. Run as root (CI does) to run it", uid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	dir := t.TempDir()
	tarPath := filepath.Join(dir, "raydar-image.tar")
	build := exec.CommandContext(ctx, "go", "run", "./hack/image", "--image", "raydar:deploy-test", "--out", tarPath,
		"--binary", filepath.Join(dir, "raydar-linux"))
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make image (go run ./hack/image): %v\n%s", err, out)
	}
	tag, _ := name.NewTag("raydar:deploy-test")
	img, err := tarball.ImageFromPath(tarPath, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	objs := applyDefault(t, ctx)
	d := find[appsv1.Deployment](t, objs, "Deployment", operatorName)
	c := d.Spec.Template.Spec.Containers[0]
	root := filepath.Join(dir, "rootfs")
	writable := writableDirs(t, d)
	unpackReadOnly(t, img, root, writable)
	cs := sb.Clientset()

	// The pod's identity, where client-go's in-cluster config looks.
	tok, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, operatorName,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", namespace, operatorName, err)
	}
	saDir := filepath.Join(root, "var/run/secrets/kubernetes.io/serviceaccount")
	if err := os.MkdirAll(saDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, b := range map[string][]byte{"token": []byte(tok.Status.Token), "ca.crt": sb.Config.CAData, "namespace": []byte(namespace)} {
		if err := os.WriteFile(filepath.Join(saDir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	api, err := url.Parse(sb.Config.Host)
	if err != nil {
		t.Fatal(err)
	}

	env := append(append([]string(nil), cf.Config.Env...),
		"KUBERNETES_SERVICE_HOST="+api.Hostname(), "KUBERNETES_SERVICE_PORT="+api.Port())
	for _, e := range c.Env {
		env = append(env, e.Name+"="+envValue(t, e, c))
	}
	leaseHolder := func() string {
		l, err := cs.CoordinationV1().Leases(namespace).Get(ctx, "raydar-operator", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}

	// The Deployment's first replica: it answers its probes and becomes the
	// leader on the Lease of the pod's namespace.
	first := startReplica(t, root, cf.Config.Entrypoint, c.Args, env)
	first.waitProbes(t, ctx, c)
	eventually(t, ctx, 3*time.Minute, "the operator to hold the Lease raydar-system/raydar-operator", func() (bool, string) {
		first.alive(t)
		// The identity is <hostname>_<random>; the operator logs it at start.
		h := leaseHolder()
		return h != "" && strings.Contains(first.logs.String(), h), fmt.Sprintf("holder %q, not in the operator's log:\n%s", h, first.logs.String())
	})
	// The second replica stands by and is ready too (else `kubectl rollout
	// status` would never finish): its probes answer while the first holds
	// the Lease.
	second := startReplica(t, root, cf.Config.Entrypoint, c.Args, env)
	second.waitProbes(t, ctx, c)
	if h := leaseHolder(); h == "" || strings.Contains(second.logs.String(), h) || !strings.Contains(first.logs.String(), h) {
		t.Errorf("with both replicas ready the Lease is held by %q, want the first replica", h)
	}
	alive := func() { first.alive(t); second.alive(t) }
	logs := &first.logs

	cl, err := seed.NewClient(sb.Config)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "deploy-test"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rc := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "deployed", Namespace: ns},
		Spec: rayv1.RayClusterSpec{
			RayVersion: "2.52.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template:       podTemplate("1", "2Gi"),
			},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName: "small", Replicas: new(int32(1)), MinReplicas: new(int32(1)), MaxReplicas: new(int32(2)),
				NumOfHosts: 1, Template: podTemplate("1", "2Gi"),
			}},
		},
	}
	if err := cl.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, 5*time.Minute, "RayCluster deploy-test/deployed to be ready", func() (bool, string) {
		alive()
		var got rayv1.RayCluster
		if err := cl.Get(ctx, client.ObjectKeyFromObject(rc), &got); err != nil {
			return false, err.Error()
		}
		return got.Status.State == rayv1.Ready, fmt.Sprintf("state %q, %d/%d workers ready", got.Status.State,
			got.Status.ReadyWorkerReplicas, got.Status.DesiredWorkerReplicas)
	})

	// Time zones resolve from the binary's embedded database: the chroot
	// has no /usr/share/zoneinfo. An unknown zone is refused on the
	// ScheduleValid condition; a real one turns it True.
	cj := &rayv1.RayCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns},
		Spec: rayv1.RayCronJobSpec{
			Schedule: "0 2 * * *", TimeZone: new("Nowhere/Atlantis"), Suspend: new(true),
			JobTemplate: rayv1.RayJobSpec{Entrypoint: "python -c 'print(1)'", RayClusterSpec: rc.Spec.DeepCopy()},
		},
	}
	if err := cl.Create(ctx, cj); err != nil {
		t.Fatal(err)
	}
	cond := func(want metav1.ConditionStatus) func() (bool, string) {
		return func() (bool, string) {
			alive()
			var got rayv1.RayCronJob
			if err := cl.Get(ctx, client.ObjectKeyFromObject(cj), &got); err != nil {
				return false, err.Error()
			}
			c := meta.FindStatusCondition(got.Status.Conditions, rayv1.RayCronJobScheduleValid)
			if c == nil {
				return false, "no ScheduleValid condition"
			}
			return c.Status == want, fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	eventually(t, ctx, 3*time.Minute, "ScheduleValid False for timeZone Nowhere/Atlantis", cond(metav1.ConditionFalse))
	patch := []byte(`{"spec":{"timeZone":"America/New_York"}}`)
	if err := cl.Patch(ctx, cj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, 3*time.Minute, "ScheduleValid True for timeZone America/New_York (embedded tzdata)", cond(metav1.ConditionTrue))

	for i, r := range []*replica{second, first} {
		if err := r.stop(); err != nil {
			t.Errorf("replica %d on SIGTERM: %v", 2-i, err)
		}
	}
	for _, w := range writable {
		var wrote []string
		_ = filepath.WalkDir(filepath.Join(root, w), func(p string, _ os.DirEntry, err error) error {
			if err == nil {
				rel, _ := filepath.Rel(root, p)
				wrote = append(wrote, "/"+rel)
			}
			return nil
		})
		t.Logf("the operator left in the emptyDir %s: %q", w, wrote)
	}
	out := logs.String() + second.logs.String()
	for _, bad := range []string{"forbidden", "Forbidden", "read-only file system", "permission denied"} {
		if strings.Contains(out, bad) {
			t.Errorf("the operator logged %q (its RBAC or file system is short of something):\n%s", bad, out)
		}
	}
}

// replica is one process of the Deployment's container.
type replica struct {
	health int
	logs   syncBuffer
	cmd    *exec.Cmd
	exited chan error
	done   bool
}

// startReplica runs the container's process as the kubelet would:
// entrypoint + args, the image's and the pod's env, chrooted to the
// image's root filesystem as the image's user. The two ports are this
// host's free ones (other tests may hold 8080 and 8081); every other
// argument is the Deployment's. It is stopped when the test ends.
func startReplica(t *testing.T, root string, entrypoint, podArgs, env []string) *replica {
	t.Helper()
	r := &replica{health: freePort(t), exited: make(chan error, 1)}
	metrics := freePort(t)
	args := append([]string(nil), entrypoint[1:]...)
	for _, a := range podArgs {
		switch {
		case strings.HasPrefix(a, healthFlag+"="):
			a = fmt.Sprintf("%s=127.0.0.1:%d", healthFlag, r.health)
		case strings.HasPrefix(a, metricsFlag+"="):
			a = fmt.Sprintf("%s=127.0.0.1:%d", metricsFlag, metrics)
		}
		args = append(args, a)
	}
	r.cmd = exec.Command(entrypoint[0], args...)
	r.cmd.Dir = "/"
	r.cmd.Env = env
	r.cmd.Stdout, r.cmd.Stderr = &r.logs, &r.logs
	r.cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot:     root,
		Credential: &syscall.Credential{Uid: uint32(nonrootUser), Gid: uint32(nonrootUser)},
		Pdeathsig:  syscall.SIGKILL,
	}
	t.Logf("chroot %s, uid 65532: %s %s", root, r.cmd.Path, strings.Join(args, " "))
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- r.cmd.Wait() }()
	t.Cleanup(func() {
		_ = r.stop()
		if t.Failed() {
			t.Logf("operator (health port %d) output:\n%s", r.health, r.logs.String())
		}
	})
	return r
}

// stop sends SIGTERM, as the kubelet does, and waits up to a minute.
func (r *replica) stop() error {
	if r.done {
		return nil
	}
	r.done = true
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.exited:
		return err
	case <-time.After(time.Minute):
		_ = r.cmd.Process.Kill()
		<-r.exited
		return fmt.Errorf("no exit within a minute of SIGTERM")
	}
}

// alive fails the test when the process has exited.
func (r *replica) alive(t *testing.T) {
	t.Helper()
	if r.done {
		return
	}
	select {
	case err := <-r.exited:
		r.done = true
		t.Fatalf("the operator exited: %v\n%s", err, r.logs.String())
	default:
	}
}

// waitProbes waits until the container's liveness and readiness probes
// (their paths, on the health port) answer 200.
func (r *replica) waitProbes(t *testing.T, ctx context.Context, c corev1.Container) {
	t.Helper()
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		u := fmt.Sprintf("http://127.0.0.1:%d%s", r.health, p.HTTPGet.Path)
		eventually(t, ctx, 3*time.Minute, "GET "+u+" 200", func() (bool, string) {
			r.alive(t)
			resp, err := http.Get(u)
			if err != nil {
				return false, err.Error()
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, fmt.Sprintf("%d %s", resp.StatusCode, b)
		})
	}
}

// envValue resolves the Deployment's env var as the kubelet would, for
// the kinds config/manager uses.
func envValue(t *testing.T, e corev1.EnvVar, c corev1.Container) string {
	t.Helper()
	switch {
	case e.ValueFrom == nil:
		return e.Value
	case e.ValueFrom.ResourceFieldRef != nil && e.ValueFrom.ResourceFieldRef.Resource == "limits.memory":
		q := c.Resources.Limits[corev1.ResourceMemory]
		return fmt.Sprint(q.Value())
	}
	t.Fatalf("env %s: a source this test does not resolve: %+v", e.Name, e.ValueFrom)
	return ""
}

func podTemplate(cpu, mem string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "ray", Image: "rayproject/ray:2.52.0",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
			corev1.ResourceCPU: mustQuantity(cpu), corev1.ResourceMemory: mustQuantity(mem)}},
	}}}}
}

// unpackReadOnly writes the image's file system under root, owned by
// root and not writable by anyone else, as with readOnlyRootFilesystem,
// but for the Deployment's emptyDir mount paths, made empty and writable
// (mode 1777) as the kubelet makes them.
func unpackReadOnly(t *testing.T, img v1.Image, root string, emptyDirs []string) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, os.FileMode(h.Mode&0o555)); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("image entry %s of type %c", h.Name, h.Typeflag)
		}
	}
	// What the image makes writable (/tmp, the home directory) is not,
	// here; only root can write, and the operator is not root.
	for _, d := range []string{".", "tmp", "home/nonroot"} {
		if err := os.Chmod(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range emptyDirs {
		p := filepath.Join(root, d)
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o1777); err != nil {
			t.Fatal(err)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// eventually polls cond until it holds or timeout passes; the last
// detail goes into the failure.
func eventually(t *testing.T, ctx context.Context, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var detail string
	for {
		var ok bool
		if ok, detail = cond(); ok {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("no %s within %s: %s", what, timeout, detail)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer the process writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
