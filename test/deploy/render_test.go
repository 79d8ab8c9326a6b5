package deploy

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	kusttypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const (
	configDir     = "../../config"
	namespace     = "raydar-system"
	operatorName  = "raydar-operator"
	nonrootUser   = int64(65532)
	healthFlag    = "--health-probe-bind-address"
	metricsFlag   = "--metrics-bind-address"
	defaultImage  = "raydar:dev"
	containerName = "operator"
)

// render builds config/default as `kubectl apply -k` does, from a copy of
// config/ in memory; edit, when set, changes the copy's
// config/default/kustomization.yaml first.
func render(t *testing.T, edit func(*kusttypes.Kustomization)) []*unstructured.Unstructured {
	t.Helper()
	mem := filesys.MakeFsInMemory()
	err := filepath.WalkDir(configDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(configDir, p)
		return mem.WriteFile(filepath.Join("/config", rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		const kf = "/config/default/kustomization.yaml"
		b, err := mem.ReadFile(kf)
		if err != nil {
			t.Fatal(err)
		}
		var k kusttypes.Kustomization
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatal(err)
		}
		edit(&k)
		if b, err = yaml.Marshal(&k); err != nil {
			t.Fatal(err)
		}
		if err := mem.WriteFile(kf, b); err != nil {
			t.Fatal(err)
		}
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, "/config/default")
	if err != nil {
		t.Fatalf("kustomize build config/default: %v", err)
	}
	out, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, out)
}

func decodeAll(t *testing.T, b []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, &u)
		}
	}
}

// find returns the rendered object of that kind and name, converted to
// T, failing the test when there is none.
func find[T any](t *testing.T, objs []*unstructured.Unstructured, kind, name string) *T {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			var v T
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &v); err != nil {
				t.Fatal(err)
			}
			return &v
		}
	}
	t.Fatalf("config/default renders no %s %s", kind, name)
	return nil
}

// generatedRBAC is config/rbac/role.yaml, controller-gen's output.
func generatedRBAC(t *testing.T) (*rbacv1.ClusterRole, *rbacv1.Role) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(configDir, "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeAll(t, b)
	return find[rbacv1.ClusterRole](t, objs, "ClusterRole", operatorName), find[rbacv1.Role](t, objs, "Role", operatorName)
}

// TestRender checks config/default as kustomize renders it: every object
// the operator needs, in raydar-system, and the Deployment as
// checkDeployment wants it.
func TestRender(t *testing.T) {
	objs := render(t, nil)
	var got []string
	for _, u := range objs {
		got = append(got, u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName())
	}
	want := []string{
		"Namespace /raydar-system",
		"ServiceAccount raydar-system/raydar-operator",
		"Role raydar-system/raydar-operator",
		"ClusterRole /raydar-operator",
		// ray.io in view/edit/admin (aggregated, bound by nobody here)
		"ClusterRole /raydar-aggregate-to-view",
		"ClusterRole /raydar-aggregate-to-edit",
		"RoleBinding raydar-system/raydar-operator",
		"ClusterRoleBinding /raydar-operator",
		"Deployment raydar-system/raydar-operator",
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects of config/default (-want +got):\n%s", diff)
	}
	ns := find[corev1.Namespace](t, objs, "Namespace", namespace)
	if lvl := ns.Labels["pod-security.kubernetes.io/enforce"]; lvl != "restricted" {
		t.Errorf("namespace %s enforces pod security %q, want restricted", namespace, lvl)
	}
	checkDeployment(t, find[appsv1.Deployment](t, objs, "Deployment", operatorName), defaultImage)

	cr, role := generatedRBAC(t)
	checkRBAC(t,
		find[rbacv1.ClusterRole](t, objs, "ClusterRole", operatorName),
		find[rbacv1.Role](t, objs, "Role", operatorName),
		find[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding", operatorName),
		find[rbacv1.RoleBinding](t, objs, "RoleBinding", operatorName),
		cr, role)
	for _, u := range objs {
		if k := u.GetKind(); (k == "ClusterRoleBinding" || k == "RoleBinding") && u.GetName() != operatorName {
			t.Errorf("config/default binds more than the operator's roles: %s %s", k, u.GetName())
		}
	}
	if find[corev1.ServiceAccount](t, objs, "ServiceAccount", operatorName).Namespace != namespace {
		t.Errorf("the ServiceAccount is not in %s", namespace)
	}
}

// TestSetImage is the README's step: `kustomize edit set image
// raydar=REGISTRY/raydar:TAG` in config/default rewrites its images: entry
// (as here), and the Deployment then runs that image.
func TestSetImage(t *testing.T) {
	objs := render(t, func(k *kusttypes.Kustomization) {
		i := slices.IndexFunc(k.Images, func(im kusttypes.Image) bool { return im.Name == "raydar" })
		if i < 0 {
			t.Fatalf("config/default/kustomization.yaml has no images: entry named raydar for kustomize edit set image to rewrite: %+v", k.Images)
		}
		k.Images[i] = kusttypes.Image{Name: "raydar", NewName: "registry.example.com/team/raydar", NewTag: "v1.2.3"}
	})
	d := find[appsv1.Deployment](t, objs, "Deployment", operatorName)
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "registry.example.com/team/raydar:v1.2.3" {
		t.Errorf("image after kustomize edit set image = %q, want registry.example.com/team/raydar:v1.2.3", got)
	}
}

// checkDeployment wants the operator's Deployment least-privileged
// (restricted pod security), sized, probed on the port its health flag
// binds, and running image.
func checkDeployment(t *testing.T, d *appsv1.Deployment, image string) {
	t.Helper()
	ps := d.Spec.Template.Spec
	if ps.ServiceAccountName != operatorName {
		t.Errorf("serviceAccountName = %q, want %s", ps.ServiceAccountName, operatorName)
	}
	if ps.AutomountServiceAccountToken != nil && !*ps.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken is false: the operator needs its token")
	}
	psc := ps.SecurityContext
	switch {
	case psc == nil:
		t.Fatal("no pod securityContext")
	case psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot:
		t.Error("pod securityContext.runAsNonRoot is not true")
	case psc.RunAsUser == nil || *psc.RunAsUser != nonrootUser:
		t.Errorf("pod securityContext.runAsUser = %v, want %d (the image's user)", psc.RunAsUser, nonrootUser)
	case psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("pod securityContext.seccompProfile = %v, want RuntimeDefault", psc.SeccompProfile)
	}
	if len(ps.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(ps.Containers))
	}
	c := ps.Containers[0]
	if c.Name != containerName || c.Image != image {
		t.Errorf("container %s image %q, want %s image %q", c.Name, c.Image, containerName, image)
	}
	if len(c.Command) != 0 && !slices.Equal(c.Command, []string{"/raydar-operator"}) {
		t.Errorf("command %q is not the image's entrypoint [/raydar-operator]", c.Command)
	}
	if slices.Contains(c.Args, "operator") {
		t.Errorf("args %q name a sub-command; the image's entrypoint [/raydar-operator] is the operator", c.Args)
	}
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("no container securityContext")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation is not false")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("readOnlyRootFilesystem is not true")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("capabilities = %+v, want drop [ALL] and nothing added", sc.Capabilities)
	case sc.Privileged != nil && *sc.Privileged:
		t.Error("privileged")
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
			t.Errorf("no %s request", r)
		}
	}
	// docs/benchmarks.md: about 75 MiB peak RSS with 300 RayClusters.
	if q := c.Resources.Requests[corev1.ResourceMemory]; q.Value() < 80<<20 {
		t.Errorf("memory request %s is below the 80 MiB the operator holds with 300 RayClusters", q.String())
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || q.Cmp(c.Resources.Requests[corev1.ResourceMemory]) < 0 {
		t.Errorf("memory limit %v missing or below the request", c.Resources.Limits)
	}

	health := flagPort(t, c.Args, healthFlag)
	metrics := flagPort(t, c.Args, metricsFlag)
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["metrics"] != metrics {
		t.Errorf("port metrics = %d, want %d (%s)", ports["metrics"], metrics, metricsFlag)
	}
	for what, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("no HTTP %s probe", what)
			continue
		}
		port := p.HTTPGet.Port.IntVal
		if p.HTTPGet.Port.StrVal != "" {
			port = ports[p.HTTPGet.Port.StrVal]
		}
		if port != health {
			t.Errorf("%s probe on port %v (%d), want the health port %d (%s)", what, p.HTTPGet.Port.String(), port, health, healthFlag)
		}
		if want := map[string]string{"liveness": "/healthz", "readiness": "/readyz"}[what]; p.HTTPGet.Path != want {
			t.Errorf("%s probe path %q, want %s", what, p.HTTPGet.Path, want)
		}
	}
	// Writable: emptyDirs only (TestOperatorFromImage runs the image with
	// only the emptyDirs writable, none today: the binary writes no file),
	// nothing of the host.
	for _, v := range ps.Volumes {
		if v.EmptyDir == nil {
			t.Errorf("volume %s is not an emptyDir: %+v", v.Name, v.VolumeSource)
		} else if v.EmptyDir.SizeLimit == nil {
			t.Errorf("emptyDir %s has no sizeLimit", v.Name)
		}
	}
}

// writableDirs are the mount paths of the container's emptyDir volumes.
func writableDirs(t *testing.T, d *appsv1.Deployment) []string {
	t.Helper()
	empty := map[string]bool{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		empty[v.Name] = v.EmptyDir != nil
	}
	var dirs []string
	for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
		if empty[m.Name] && !m.ReadOnly {
			dirs = append(dirs, m.MountPath)
		}
	}
	return dirs
}

// flagPort is the port of a --flag=:PORT argument.
func flagPort(t *testing.T, args []string, flag string) int32 {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			_, port, ok := strings.Cut(v, ":")
			var n int32
			for _, ch := range port {
				if ch < '0' || ch > '9' {
					ok = false
				}
				n = n*10 + ch - '0'
			}
			if !ok || n == 0 {
				t.Fatalf("%s=%q: want :PORT", flag, v)
			}
			return n
		}
	}
	t.Fatalf("the Deployment's args %q have no %s", args, flag)
	return 0
}

// checkRBAC wants the roles equal to controller-gen's output and both
// bindings granting them to the operator's ServiceAccount, and nothing
// else.
func checkRBAC(t *testing.T, cr *rbacv1.ClusterRole, role *rbacv1.Role, crb *rbacv1.ClusterRoleBinding, rb *rbacv1.RoleBinding,
	wantCR *rbacv1.ClusterRole, wantRole *rbacv1.Role) {
	t.Helper()
	if diff := cmp.Diff(wantCR.Rules, cr.Rules); diff != "" {
		t.Errorf("ClusterRole rules differ from config/rbac/role.yaml (controller-gen) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantRole.Rules, role.Rules); diff != "" {
		t.Errorf("Role rules differ from config/rbac/role.yaml (controller-gen) (-want +got):\n%s", diff)
	}
	if role.Namespace != namespace {
		t.Errorf("the Role is in %q, want %s (leases of the leader election)", role.Namespace, namespace)
	}
	sa := []rbacv1.Subject{{Kind: "ServiceAccount", Name: operatorName, Namespace: namespace}}
	if diff := cmp.Diff(sa, crb.Subjects); diff != "" {
		t.Errorf("ClusterRoleBinding subjects (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sa, rb.Subjects); diff != "" {
		t.Errorf("RoleBinding subjects (-want +got):\n%s", diff)
	}
	if want := (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: cr.Name}); crb.RoleRef != want {
		t.Errorf("ClusterRoleBinding roleRef %+v, want %+v", crb.RoleRef, want)
	}
	if want := (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name}); rb.RoleRef != want {
		t.Errorf("RoleBinding roleRef %+v, want %+v", rb.RoleRef, want)
	}
	if rb.Namespace != namespace {
		t.Errorf("the RoleBinding is in %q, want %s", rb.Namespace, namespace)
	}
}
