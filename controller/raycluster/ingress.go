package raycluster

// The dashboard Ingress of headGroupSpec.enableIngress, as KubeRay v1.7.0
// makes it (common/ingress.go BuildIngressForHeadService,
// raycluster_controller.go reconcileIngressKubernetes / ingressNeedsUpdate):
//
//   - named "<cluster>-head-ingress" (utils.CheckName: its last 50
//     characters), labelled ray.io/cluster, ray.io/identifier=<cluster>-head,
//     app.kubernetes.io/name=kuberay, app.kubernetes.io/created-by=
//     kuberay-operator, annotated with every annotation of the RayCluster but
//     kubernetes.io/ingress.class, whose value becomes spec.ingressClassName;
//   - one rule: ingressOptions.host, ingressOptions.path ("/") of
//     ingressOptions.pathType (Prefix) to the head Service's dashboard port;
//     ingressOptions.tls copied;
//   - a controller reference; an Ingress of that name the cluster does not
//     control is left alone, with a Warning Event;
//   - labels, annotations and spec are brought back when they drift (an
//     ingressClassName the API server defaulted is kept when the cluster
//     asks for none). KubeRay v1.5.0 only creates it.
//
// OpenShift Routes (KubeRay's choice on OpenShift) are not made.

import (
	"context"
	"fmt"
	"maps"
	"reflect"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// ingressClassAnnotation is the deprecated class annotation KubeRay turns
// into spec.ingressClassName.
const ingressClassAnnotation = "kubernetes.io/ingress.class"

// wantsIngress: headGroupSpec.enableIngress is true.
func wantsIngress(rc *rayv1.RayCluster) bool {
	e := rc.Spec.HeadGroupSpec.EnableIngress
	return e != nil && *e
}

// headIngressName names the dashboard Ingress.
func headIngressName(cluster string) string { return kit.CheckName(cluster + "-head-ingress") }

// buildHeadIngress is the dashboard Ingress of rc.
func buildHeadIngress(rc *rayv1.RayCluster) *networkingv1.Ingress {
	ann := map[string]string{}
	for k, v := range rc.Annotations {
		if k != ingressClassAnnotation {
			ann[k] = v
		}
	}
	opts := rc.Spec.HeadGroupSpec.IngressOptions
	pathType := networkingv1.PathType(opts.PathTypeOrDefault())
	rule := networkingv1.IngressRule{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
		Paths: []networkingv1.HTTPIngressPath{{
			Path:     opts.PathOrDefault(),
			PathType: &pathType,
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: kit.HeadServiceName(rc),
				Port: networkingv1.ServiceBackendPort{Number: kit.DashboardContainerPort(&rc.Spec)},
			}},
		}},
	}}}
	if opts != nil && opts.Host != nil {
		rule.Host = *opts.Host
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Name:      headIngressName(rc.Name),
			Namespace: rc.Namespace,
			Labels: map[string]string{
				rayv1.RayClusterLabelKey:                rc.Name,
				rayv1.RayIDLabelKey:                     rc.Name + "-" + string(rayv1.HeadNode),
				rayv1.KubernetesApplicationNameLabelKey: rayv1.ApplicationName,
				rayv1.KubernetesCreatedByLabelKey:       rayv1.ComponentName,
			},
			Annotations:     ann,
			OwnerReferences: []metav1.OwnerReference{kit.OwnerRef(rc)},
		},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{rule}},
	}
	if opts != nil && len(opts.TLS) > 0 {
		ing.Spec.TLS = make([]networkingv1.IngressTLS, len(opts.TLS))
		for i := range opts.TLS {
			opts.TLS[i].DeepCopyInto(&ing.Spec.TLS[i])
		}
	}
	if class, ok := rc.Annotations[ingressClassAnnotation]; ok {
		ing.Spec.IngressClassName = &class
	}
	return ing
}

// ingressUpdate is existing brought to desired's labels, annotations and
// spec, nil when nothing differs. An ingressClassName the cluster does not
// ask for is kept (the API server's DefaultIngressClass may have set it).
func ingressUpdate(existing, desired *networkingv1.Ingress) *networkingv1.Ingress {
	want := desired.Spec.DeepCopy()
	if want.IngressClassName == nil {
		want.IngressClassName = existing.Spec.IngressClassName
	}
	if maps.Equal(existing.Labels, desired.Labels) && maps.Equal(existing.Annotations, desired.Annotations) &&
		reflect.DeepEqual(existing.Spec, *want) {
		return nil
	}
	upd := existing.DeepCopy()
	upd.Labels = maps.Clone(desired.Labels)
	upd.Annotations = maps.Clone(desired.Annotations)
	upd.Spec = *want
	return upd
}

// decideIngress plans the Ingress: create it when missing, update it when
// it drifted, leave alone (with a Warning) one the cluster does not control.
func decideIngress(o *observed, p *plan) {
	rc := o.Cluster
	if !wantsIngress(rc) {
		return
	}
	desired := buildHeadIngress(rc)
	switch ex := o.Ingress; {
	case ex == nil:
		p.CreateIngress = desired
	case kit.ControllerUID(ex.OwnerReferences) != string(rc.UID):
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: rayv1.EventFailedToCreateIngress, Action: "Create",
			Message: fmt.Sprintf("Ingress %s/%s already exists and is not owned by this RayCluster; not modifying it", ex.Namespace, ex.Name)})
	default:
		p.UpdateIngress = ingressUpdate(ex, desired)
	}
}

// getIngress reads the cluster's Ingress live (Ingresses are not cached;
// only clusters with enableIngress pay the read).
func (r *Reconciler) getIngress(ctx context.Context, rc *rayv1.RayCluster) (*networkingv1.Ingress, error) {
	if !wantsIngress(rc) || rc.DeletionTimestamp != nil {
		return nil, nil
	}
	ing := &networkingv1.Ingress{}
	err := r.api.Get(ctx, types.NamespacedName{Namespace: rc.Namespace, Name: headIngressName(rc.Name)}, ing)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading Ingress %s: %w", headIngressName(rc.Name), err)
	}
	return ing, nil
}

// applyIngress creates or updates the planned Ingress, with KubeRay's
// Events. A failure is retried; it does not hold back the pods (the
// dashboard's Ingress is not needed for the cluster to run).
func (r *Reconciler) applyIngress(ctx context.Context, rc *rayv1.RayCluster, p *plan, out *outcome) {
	if ing := p.CreateIngress; ing != nil {
		err := r.client.Create(ctx, ing)
		switch {
		case err == nil:
			r.events.Emit(rc, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventCreatedIngress, Action: "Create", Message: "Created ingress " + ing.Namespace + "/" + ing.Name})
		case apierrors.IsAlreadyExists(err):
		default:
			out.fail(rayv1.EventFailedToCreateIngress, fmt.Sprintf("Failed creating ingress %s/%s, %v", ing.Namespace, ing.Name, err))
		}
	}
	if ing := p.UpdateIngress; ing != nil {
		if err := r.client.Update(ctx, ing); err != nil {
			out.fail(rayv1.EventFailedToUpdateIngress, fmt.Sprintf("Failed updating ingress %s/%s, %v", ing.Namespace, ing.Name, err))
			return
		}
		r.events.Emit(rc, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventUpdatedIngress, Action: "Update", Message: "Updated ingress " + ing.Namespace + "/" + ing.Name})
	}
}
