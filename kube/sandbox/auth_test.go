//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestRBACTokensAndAudit: a ServiceAccount's token from the TokenRequest API
// is refused what RBAC does not grant and allowed what it does; the audit
// log names both requests with their codes, and never holds a Secret's
// value.
func TestRBACTokensAndAudit(t *testing.T) {
	sb := sandboxFor(t)
	ctx := context.Background()
	kc := sb.Clientset()
	const ns = "default"
	name := fmt.Sprintf("auth-test-%d", time.Now().UnixNano()%100000)
	if _, err := kc.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const secretValue = "do-not-log-me-8d1f"
	if _, err := kc.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name},
		StringData: map[string]string{"password": secretValue}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token, err := sb.ServiceAccountToken(ctx, ns, name, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	as, err := kubernetes.NewForConfig(sb.TokenConfig(token))
	if err != nil {
		t.Fatal(err)
	}
	_, err = as.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("get secret without a binding: err = %v, want Forbidden", err)
	}

	// Grant get on Secrets; the same token now reads it.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}
	if _, err := kc.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}}
	if _, err := kc.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + ns + ":" + name
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := as.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if string(s.Data["password"]) != secretValue {
				t.Fatalf("secret read back as %q", s.Data["password"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("get secret with a binding: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A kubeconfig with the token works the same (kubectl, raydar).
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := sb.WriteTokenKubeconfig(path, token, ns); err != nil {
		t.Fatal(err)
	}
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := raw.Contexts[raw.CurrentContext].AuthInfo; got != user {
		t.Errorf("the kubeconfig's user is %q, want the token's subject %q", got, user)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	kas, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kas.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list pods through the token kubeconfig: err = %v, want Forbidden", err)
	}

	// The audit log: the forbidden get, the allowed get, the forbidden list.
	var got []string
	deadline = time.Now().Add(30 * time.Second)
	for {
		evs, err := sb.AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, e := range evs {
			if e.User.Username == user {
				got = append(got, e.String())
			}
		}
		if len(got) >= 3 && strings.Contains(got[len(got)-1], "list pods") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit log of %s:\n%s", user, strings.Join(got, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	secretGet := user + " get secrets " + ns + "/" + name
	if got[0] != secretGet+" -> 403" || got[len(got)-2] != secretGet+" -> 200" || got[len(got)-1] != user+" list pods in "+ns+" -> 403" {
		t.Errorf("audit log of %s:\n%s", user, strings.Join(got, "\n"))
	}
	b, err := os.ReadFile(sb.AuditLogPath())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secretValue) {
		t.Errorf("the Secret's value is in the audit log %s", sb.AuditLogPath())
	}
}
