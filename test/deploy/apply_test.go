package deploy

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// fieldManager is kubectl's, as `kubectl apply -k --server-side` uses.
const fieldManager = "kubectl"

// applyDefault applies config/default to the sandbox server-side, in
// kustomize's order (the Namespace first), as
// `kubectl apply --server-side -k config/default` does.
func applyDefault(t *testing.T, ctx context.Context) []*unstructured.Unstructured {
	t.Helper()
	objs := render(t, nil)
	groups, err := restmapper.GetAPIGroupResources(sb.Clientset().Discovery())
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	dyn, err := dynamic.NewForConfig(sb.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if u.GetNamespace() != "" {
			ri = dyn.Resource(m.Resource).Namespace(u.GetNamespace())
		}
		if _, err := ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
			t.Fatalf("server-side apply of %s %s/%s refused: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	return objs
}

// TestApplyServerSide applies config/default to the sandbox and reads
// back what the API server stored (defaults and all): the Deployment as
// checkDeployment wants it, the ServiceAccount, the RBAC equal to
// controller-gen's and bound to it. The API server's PodSecurity admission
// then admits the Deployment's pod template in raydar-system, which
// enforces the restricted level (a dry run: kwok would mark any pod
// Running, whatever its image).
func TestApplyServerSide(t *testing.T) {
	needSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	applyDefault(t, ctx)
	// Applying again changes nothing (no field fights, no conflicts).
	applyDefault(t, ctx)

	cs := sb.Clientset()
	d, err := cs.AppsV1().Deployments(namespace).Get(ctx, operatorName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkDeployment(t, d, defaultImage)
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Get(ctx, operatorName, metav1.GetOptions{}); err != nil {
		t.Errorf("the operator's ServiceAccount: %v", err)
	}
	cr, err := cs.RbacV1().ClusterRoles().Get(ctx, operatorName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role, err := cs.RbacV1().Roles(namespace).Get(ctx, operatorName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, operatorName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := cs.RbacV1().RoleBindings(namespace).Get(ctx, operatorName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantCR, wantRole := generatedRBAC(t)
	checkRBAC(t, cr, role, crb, rb, wantCR, wantRole)

	pod := podOf(d)
	if _, err := cs.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("the API server refuses the Deployment's pod in %s (pod security restricted): %v", namespace, err)
	}
	// The check can fail: the same pod with privilege escalation allowed
	// is refused.
	bad := pod.DeepCopy()
	bad.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = new(true)
	if _, err := cs.CoreV1().Pods(namespace).Create(ctx, bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
		t.Errorf("a pod allowing privilege escalation was admitted to %s: pod security is not enforced there", namespace)
	}
}

// podOf is a pod of the Deployment's template.
func podOf(d *appsv1.Deployment) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: d.Name + "-", Namespace: d.Namespace, Labels: d.Spec.Template.Labels},
		Spec:       *d.Spec.Template.Spec.DeepCopy(),
	}
}
