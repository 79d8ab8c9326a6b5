package privilege

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/scheme"
)

// One sandbox (RBAC, audit log, scheduler, controller-manager, kwok with
// large nodes) with config/rbac applied serves the package.
var (
	sb *sandbox.Sandbox
	kc kubernetes.Interface
	cl client.Client
	// raydarBin is the raydar binary built for the CLI tests.
	raydarBin string
)

// The operator's identity, from config/rbac.
const (
	operatorNamespace = "raydar-system"
	operatorSA        = "raydar-operator"
	operatorUser      = "system:serviceaccount:" + operatorNamespace + ":" + operatorSA
)

// rbacDir is config/rbac, relative to this package.
const rbacDir = "../../config/rbac"

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrllog.SetLogger(logr.Discard())
	ctx := context.Background()
	opts := sandbox.Full()
	opts.Nodes = []sandbox.NodePool{{Count: 6, NamePrefix: "kwok-node", CPU: "64", Memory: "256Gi"}}
	opts.CRDs = [][]byte{crds.YAML()}
	opts.Audit = true
	opts.StartTimeout = 5 * time.Minute
	if os.Getenv("RAYDAR_TEST_LOG") != "" {
		opts.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "sandbox: "+f+"\n", a...) }
	}
	s, err := sandbox.Start(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "privilege tests: starting the sandbox:", err)
		return 1
	}
	sb, kc = s, s.Clientset()
	defer func() {
		if err := s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
		}
	}()
	if cl, err = client.New(s.Config, client.Options{Scheme: scheme.New()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := untaintNodes(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "privilege tests:", err)
		return 1
	}
	if err := applyRBAC(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "privilege tests: applying config/rbac:", err)
		return 1
	}
	bin, err := buildRaydar()
	if err != nil {
		fmt.Fprintln(os.Stderr, "privilege tests: building raydar:", err)
		return 1
	}
	defer os.RemoveAll(filepath.Dir(bin))
	raydarBin = bin
	code := m.Run()
	if evs, err := sb.AuditEvents(); err == nil {
		fmt.Fprintf(os.Stderr, "privilege: audit log: %s\n", sandbox.Summarize(evs))
		refused := map[string]int{}
		for _, e := range evs {
			if e.Code() == 403 {
				refused[e.User.Username+" "+e.Verb+" "+e.Resource()]++
			}
		}
		keys := make([]string, 0, len(refused))
		for k := range refused {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(os.Stderr, "privilege: 403 x%d: %s\n", refused[k], k)
		}
	}
	return code
}

// untaintNodes removes the not-ready taints TaintNodesByCondition puts on
// new nodes (the sandbox runs no node-lifecycle controller to lift them).
func untaintNodes(ctx context.Context) error {
	for _, name := range sb.Nodes() {
		patch := []byte(`{"spec":{"taints":null}}`)
		if _, err := kc.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// applyRBAC creates raydar-system and every object of config/rbac, as
// `kubectl apply -k config/default` would (the namespace from
// config/default's kustomization).
func applyRBAC(ctx context.Context) error {
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	objs, err := rbacObjects()
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.GetNamespace() == "" && namespaced(o.GetKind()) {
			o.SetNamespace(operatorNamespace)
		}
		if err := cl.Create(ctx, o); err != nil {
			return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

func namespaced(kind string) bool {
	switch kind {
	case "ClusterRole", "ClusterRoleBinding", "Namespace":
		return false
	}
	return true
}

// rbacObjects decodes config/rbac's files, in kustomization order.
func rbacObjects() ([]*unstructured.Unstructured, error) {
	var k struct{ Resources []string }
	b, err := os.ReadFile(filepath.Join(rbacDir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, f := range k.Resources {
		b, err := os.ReadFile(filepath.Join(rbacDir, f))
		if err != nil {
			return nil, err
		}
		d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for {
			var m map[string]any
			if err := d.Decode(&m); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(m) == 0 {
				continue
			}
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out, nil
}

// operatorRules are the rules config/rbac grants the operator: the
// ClusterRole's everywhere, the Role's in raydar-system.
func operatorRules(t *testing.T) (cluster []rbacv1.PolicyRule, inSystem []rbacv1.PolicyRule) {
	t.Helper()
	objs, err := rbacObjects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetName() != operatorSA {
			continue
		}
		b, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ Rules []rbacv1.PolicyRule }
		if err := yaml.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		switch o.GetKind() {
		case "ClusterRole":
			cluster = append(cluster, r.Rules...)
		case "Role":
			inSystem = append(inSystem, r.Rules...)
		}
	}
	if len(cluster) == 0 || len(inSystem) == 0 {
		t.Fatalf("config/rbac: no ClusterRole or Role named %s", operatorSA)
	}
	return cluster, inSystem
}

// buildRaydar builds cmd/raydar into a temporary directory.
func buildRaydar() (string, error) {
	dir, err := os.MkdirTemp("", "raydar-privilege-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "raydar")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/raydar/raydar/cmd/raydar")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("%w\n%s", err, out)
	}
	return bin, nil
}

func needSandbox(t *testing.T) context.Context {
	t.Helper()
	if sb == nil {
		t.Skip("integration test: needs the sandbox control plane (skipped with -short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newNamespace creates a namespace for one test and waits for its default
// ServiceAccount (pods are rejected without it).
func newNamespace(t *testing.T, ctx context.Context, prefix string) string {
	t.Helper()
	name := prefix + "-" + strings.ToLower(utilrand.String(5))
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kc.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	eventually(t, time.Minute, "the default ServiceAccount of "+name, func() (bool, string) {
		_, err := kc.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	return name
}

// eventually polls cond every 100 ms until it holds or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// serviceAccountWith creates the ServiceAccount ns/name, binds it to the
// ClusterRole (in ns only when namespaced), and returns a token for it.
func serviceAccountWith(t *testing.T, ctx context.Context, ns, name, clusterRole string, namespaced bool) string {
	t.Helper()
	if _, err := kc.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subj := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole}
	if namespaced {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: ref, Subjects: subj}
		if _, err := kc.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	} else {
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name}, RoleRef: ref, Subjects: subj}
		if _, err := kc.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = kc.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
		})
	}
	token, err := sb.ServiceAccountToken(ctx, ns, name, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// testLogger logs through t when RAYDAR_TEST_LOG is set, else nowhere.
func testLogger(t *testing.T) logr.Logger {
	if os.Getenv("RAYDAR_TEST_LOG") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { t.Log(prefix, args) }, funcr.Options{Verbosity: 1})
}

// auditOf waits until the audit log holds a request of user that done
// accepts (the log is written after the response), and returns the user's
// requests.
func auditOf(t *testing.T, user string, done func(sandbox.AuditEvent) bool) []sandbox.AuditEvent {
	t.Helper()
	var mine []sandbox.AuditEvent
	eventually(t, time.Minute, "the audit log to show "+user+"'s last request", func() (bool, string) {
		evs, err := sb.AuditEvents()
		if err != nil {
			return false, err.Error()
		}
		mine = mine[:0]
		found := false
		for _, e := range evs {
			if e.User.Username == user {
				mine = append(mine, e)
				found = found || done(e)
			}
		}
		return found, fmt.Sprintf("%d requests of %s", len(mine), user)
	})
	return mine
}
