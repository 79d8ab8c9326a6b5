package raycluster

// The NetworkPolicies of spec.networkPolicy, behind KubeRay's
// RayClusterNetworkPolicy gate (controller/features), as KubeRay v1.7.0's
// NetworkPolicy controller makes them (ray-operator/controllers/ray/
// networkpolicy_controller.go; line numbers are v1.7.0's):
//
//   - one for the head, "<cluster>-head" (:169-171), and one per worker
//     group of workerGroupSpecs, "<cluster>-workers-<group>" (:173-175,
//     :91-97), in the cluster's namespace;
//   - labelled ray.io/cluster, ray.io/group (headgroup for the head),
//     app.kubernetes.io/name=kuberay, app.kubernetes.io/created-by=
//     kuberay-operator (:221-228), with a controller owner reference to
//     the cluster (:117-120), so they go with it;
//   - podSelector: the head pod (ray.io/cluster, ray.io/node-type=head,
//     :208-213), a group's workers (ray.io/cluster, ray.io/node-type=worker,
//     ray.io/group, :274-280);
//   - mode (default DenyAll, :79-83): DenyAll and DenyAllIngress give
//     policyType Ingress with the ingress rules, DenyAll and DenyAllEgress
//     Egress with the egress rules; the other direction is left open, with
//     no rules (:182-199, :249-265);
//   - ingress: from every pod of the cluster, all ports (:290-304); for the
//     head of a cluster a RayJob made in K8sJobMode (the cluster labelled
//     ray.io/job-submission-mode=K8sJobMode, controlled by a ray.io RayJob)
//     also from that RayJob's submitter pod
//     (ray.io/originated-from-cr-name=<job>, ray.io/originated-from-crd=
//     RayJob) to the dashboard port, TCP (rayStartParams dashboard-port, else
//     8265) (:314-372); then head.ingressRules, or for a group its
//     workerGroups entry's, else worker's (an entry replaces worker's rules,
//     :230-239);
//   - egress: to every pod of the cluster, all ports (:382-398), then the
//     same custom egress rules; no DNS rule is added (the sample adds it);
//   - a policy whose spec or labels differ is updated (a port's missing
//     protocol counts as TCP, as the API server defaults it, :400-419,
//     :137-144); one of that name the cluster does not control is left
//     alone with a Warning NetworkPolicyNameCollision (:129-135);
//   - the cluster's policies that are no longer wanted (networkPolicy
//     removed, a group removed) are deleted: those labelled ray.io/cluster
//     the cluster controls (:421-456).
//
// Where raydar differs: KubeRay's NetworkPolicy controller runs beside its
// RayCluster controller, so pods may start before their policies exist,
// and a cluster refused for another reason still gets them. raydar makes
// them in the cluster's own pass, with its other children, before the head
// pod: a pod asked to be isolated never runs without its policy (a policy
// that cannot be written holds the pods back, with KubeRay's Warning), and
// a refused cluster gets nothing, as everything else it asks for. With the
// gate off raydar neither reads nor touches NetworkPolicies (KubeRay runs
// no NetworkPolicy controller then) and refuses spec.networkPolicy
// (unsupported.go), naming the gate.

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// KubeRay v1.7.0's NetworkPolicy Event reasons (utils/constant.go:538-545).
const (
	EventCreatedNetworkPolicy        = "CreatedNetworkPolicy"
	EventUpdatedNetworkPolicy        = "UpdatedNetworkPolicy"
	EventDeletedNetworkPolicy        = "DeletedNetworkPolicy"
	EventFailedToCreateNetworkPolicy = "FailedToCreateNetworkPolicy"
	EventFailedToUpdateNetworkPolicy = "FailedToUpdateNetworkPolicy"
	EventFailedToDeleteNetworkPolicy = "FailedToDeleteNetworkPolicy"
	EventNetworkPolicyNameCollision  = "NetworkPolicyNameCollision"
)

// networkPoliciesOn: the RayClusterNetworkPolicy gate is on.
func networkPoliciesOn(cfg BuildConfig) bool {
	return cfg.Features.Enabled(features.RayClusterNetworkPolicy)
}

// HeadNetworkPolicyName names the NetworkPolicy of the cluster's head.
func HeadNetworkPolicyName(cluster string) string { return cluster + "-head" }

// WorkerGroupNetworkPolicyName names the NetworkPolicy of the worker group
// group.
func WorkerGroupNetworkPolicyName(cluster, group string) string {
	return cluster + "-workers-" + group
}

// BuildNetworkPolicies are the NetworkPolicies rc's spec.networkPolicy asks
// for, the head's first, then one per worker group in workerGroupSpecs'
// order; none without spec.networkPolicy.
func BuildNetworkPolicies(rc *rayv1.RayCluster) []*networkingv1.NetworkPolicy {
	np := rc.Spec.NetworkPolicy
	if np == nil {
		return nil
	}
	mode := rayv1.NetworkPolicyDenyAll
	if np.Mode != nil {
		mode = *np.Mode
	}
	out := []*networkingv1.NetworkPolicy{buildPolicy(rc, mode, HeadNetworkPolicyName(rc.Name), rayv1.RayNodeHeadGroupLabelValue,
		map[string]string{rayv1.RayClusterLabelKey: rc.Name, rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode)},
		headIngressRules(rc), np.Head)}
	for _, g := range rc.Spec.WorkerGroupSpecs {
		out = append(out, buildPolicy(rc, mode, WorkerGroupNetworkPolicyName(rc.Name, g.GroupName), g.GroupName,
			map[string]string{rayv1.RayClusterLabelKey: rc.Name, rayv1.RayNodeTypeLabelKey: string(rayv1.WorkerNode), rayv1.RayNodeGroupLabelKey: g.GroupName},
			clusterIngressRules(rc), workerGroupRules(np, g.GroupName)))
	}
	return out
}

// buildPolicy is one NetworkPolicy: base ingress rules and custom rules in
// the directions mode denies.
func buildPolicy(rc *rayv1.RayCluster, mode rayv1.NetworkPolicyMode, name, group string, selector map[string]string,
	ingress []networkingv1.NetworkPolicyIngressRule, custom *rayv1.NetworkPolicyRules) *networkingv1.NetworkPolicy {
	var spec networkingv1.NetworkPolicySpec
	spec.PodSelector = metav1.LabelSelector{MatchLabels: selector}
	if mode == rayv1.NetworkPolicyDenyAll || mode == rayv1.NetworkPolicyDenyAllIngress {
		spec.PolicyTypes = append(spec.PolicyTypes, networkingv1.PolicyTypeIngress)
		spec.Ingress = ingress
		if custom != nil {
			for _, r := range custom.IngressRules {
				spec.Ingress = append(spec.Ingress, *r.DeepCopy())
			}
		}
	}
	if mode == rayv1.NetworkPolicyDenyAll || mode == rayv1.NetworkPolicyDenyAllEgress {
		spec.PolicyTypes = append(spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		spec.Egress = []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{clusterPeer(rc)}}}
		if custom != nil {
			for _, r := range custom.EgressRules {
				spec.Egress = append(spec.Egress, *r.DeepCopy())
			}
		}
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: rc.Namespace,
			Labels: map[string]string{
				rayv1.RayClusterLabelKey:                rc.Name,
				rayv1.RayNodeGroupLabelKey:              group,
				rayv1.KubernetesApplicationNameLabelKey: rayv1.ApplicationName,
				rayv1.KubernetesCreatedByLabelKey:       rayv1.ComponentName,
			},
			OwnerReferences: []metav1.OwnerReference{kit.OwnerRef(rc)},
		},
		Spec: spec,
	}
}

// clusterPeer is every pod of the cluster.
func clusterPeer(rc *rayv1.RayCluster) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{rayv1.RayClusterLabelKey: rc.Name}}}
}

// clusterIngressRules: from every pod of the cluster, all ports.
func clusterIngressRules(rc *rayv1.RayCluster) []networkingv1.NetworkPolicyIngressRule {
	return []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{clusterPeer(rc)}}}
}

// headIngressRules: the cluster's pods, and for a K8sJobMode RayJob's
// cluster its submitter pod to the dashboard port.
func headIngressRules(rc *rayv1.RayCluster) []networkingv1.NetworkPolicyIngressRule {
	rules := clusterIngressRules(rc)
	if job := submitterJob(rc); job != "" {
		tcp := corev1.ProtocolTCP
		port := intstr.FromInt32(headDashboardPort(rc))
		rules = append(rules, networkingv1.NetworkPolicyIngressRule{
			From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				rayv1.RayOriginatedFromCRNameLabelKey: job,
				rayv1.RayOriginatedFromCRDLabelKey:    rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob),
			}}}},
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
		})
	}
	return rules
}

// submitterJob is the RayJob whose K8sJobMode submitter pod reaches the
// head's dashboard: the cluster's controller, a ray.io RayJob, when the
// cluster is labelled with K8sJobMode; "" otherwise.
func submitterJob(rc *rayv1.RayCluster) string {
	if rc.Labels[rayv1.RayJobSubmissionModeLabelKey] != string(rayv1.K8sJobMode) {
		return ""
	}
	for _, ref := range rc.OwnerReferences {
		if ref.Kind == rayv1.KindRayJob && ref.Controller != nil && *ref.Controller && strings.HasPrefix(ref.APIVersion, "ray.io/") {
			return ref.Name
		}
	}
	return ""
}

// headDashboardPort is rayStartParams' dashboard-port when it is an
// integer, else 8265 (KubeRay reads the parameter, not the container's
// ports).
func headDashboardPort(rc *rayv1.RayCluster) int32 {
	if s, ok := rc.Spec.HeadGroupSpec.RayStartParams["dashboard-port"]; ok {
		if n, err := strconv.ParseInt(s, 10, 32); err == nil {
			return int32(n)
		}
	}
	return rayv1.DefaultDashboardPort
}

// workerGroupRules are a group's custom rules: its workerGroups entry,
// else worker's.
func workerGroupRules(np *rayv1.NetworkPolicyConfig, group string) *rayv1.NetworkPolicyRules {
	for i := range np.WorkerGroups {
		if np.WorkerGroups[i].GroupName == group {
			return &np.WorkerGroups[i].NetworkPolicyRules
		}
	}
	return np.Worker
}

// withTCPDefaults is spec with every port's missing protocol TCP, as the
// API server stores it.
func withTCPDefaults(spec networkingv1.NetworkPolicySpec) networkingv1.NetworkPolicySpec {
	s := *spec.DeepCopy()
	for i := range s.Ingress {
		defaultTCP(s.Ingress[i].Ports)
	}
	for i := range s.Egress {
		defaultTCP(s.Egress[i].Ports)
	}
	return s
}

// defaultTCP sets each port's missing protocol to TCP, in place.
func defaultTCP(ports []networkingv1.NetworkPolicyPort) {
	for j := range ports {
		if ports[j].Protocol == nil {
			tcp := corev1.ProtocolTCP
			ports[j].Protocol = &tcp
		}
	}
}

// networkPolicyUpdate is existing with desired's spec and labels, nil when
// they are equal (a missing protocol counting as TCP).
func networkPolicyUpdate(existing, desired *networkingv1.NetworkPolicy) *networkingv1.NetworkPolicy {
	want := withTCPDefaults(desired.Spec)
	if reflect.DeepEqual(existing.Spec, want) && maps.Equal(existing.Labels, desired.Labels) {
		return nil
	}
	upd := existing.DeepCopy()
	upd.Spec = want
	upd.Labels = maps.Clone(desired.Labels)
	return upd
}

// decideNetworkPolicies plans the cluster's NetworkPolicies when the gate
// is on: create the missing, update those that differ, delete those the
// cluster controls and no longer asks for; one of a wanted name the cluster
// does not control is left alone with a Warning, and holds the pods back
// (their isolation cannot be had).
func decideNetworkPolicies(o *observed, p *plan) {
	if !networkPoliciesOn(o.Config) {
		return
	}
	rc := o.Cluster
	have := map[string]*networkingv1.NetworkPolicy{}
	for _, np := range o.NetworkPolicies {
		if np.DeletionTimestamp == nil {
			have[np.Name] = np
		}
	}
	wanted := map[string]bool{}
	for _, want := range BuildNetworkPolicies(rc) {
		wanted[want.Name] = true
		switch ex := have[want.Name]; {
		case ex == nil:
			p.CreateNetworkPolicies = append(p.CreateNetworkPolicies, want)
		case kit.ControllerUID(ex.OwnerReferences) != string(rc.UID):
			p.NetworkPolicyCollisions = append(p.NetworkPolicyCollisions, ex.Name)
		default:
			if upd := networkPolicyUpdate(ex, want); upd != nil {
				p.UpdateNetworkPolicies = append(p.UpdateNetworkPolicies, upd)
			}
		}
	}
	for name, np := range have {
		if !wanted[name] && kit.ControllerUID(np.OwnerReferences) == string(rc.UID) {
			p.DeleteNetworkPolicies = append(p.DeleteNetworkPolicies, np)
		}
	}
	slices.SortFunc(p.DeleteNetworkPolicies, func(a, b *networkingv1.NetworkPolicy) int { return strings.Compare(a.Name, b.Name) })
}

// listNetworkPolicies reads the cluster's NetworkPolicies (labelled
// ray.io/cluster) from the cache, with this process's unseen writes laid
// over them; only with the gate on, and not for a deleted cluster (the
// garbage collector removes them).
func (r *Reconciler) listNetworkPolicies(ctx context.Context, rc *rayv1.RayCluster) ([]*networkingv1.NetworkPolicy, error) {
	if !networkPoliciesOn(r.cfg) || rc.DeletionTimestamp != nil {
		return nil, nil
	}
	list := &networkingv1.NetworkPolicyList{}
	if err := r.client.List(ctx, list, client.InNamespace(rc.Namespace), client.MatchingLabels{rayv1.RayClusterLabelKey: rc.Name}); err != nil {
		return nil, fmt.Errorf("listing NetworkPolicies: %w", err)
	}
	out := make([]*networkingv1.NetworkPolicy, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return kit.Overlay(r.exp, rc.UID, out), nil
}

// collisionMessage is KubeRay's Warning for a policy of a wanted name the
// cluster does not control.
func collisionMessage(namespace, name string) string {
	return fmt.Sprintf("NetworkPolicy %s/%s already exists and is not owned by this RayCluster, network isolation will not be applied. "+
		"Rename the existing NetworkPolicy or use a different RayCluster name to avoid the collision", namespace, name)
}

// applyNetworkPolicies writes the planned NetworkPolicies, with KubeRay's
// Events; it reports whether the pods may be written: every wanted policy
// exists as wanted (a failed delete of one no longer wanted holds nothing
// back).
func (r *Reconciler) applyNetworkPolicies(ctx context.Context, rc *rayv1.RayCluster, p *plan, out *outcome) bool {
	ok := true
	for _, name := range p.NetworkPolicyCollisions {
		ok = false
		out.fail(EventNetworkPolicyNameCollision, collisionMessage(rc.Namespace, name))
	}
	update := func(np *networkingv1.NetworkPolicy) {
		prev := np.ResourceVersion
		if err := r.client.Update(ctx, np); err != nil {
			ok = false
			out.fail(EventFailedToUpdateNetworkPolicy, fmt.Sprintf("Failed to update NetworkPolicy %s/%s: %v", np.Namespace, np.Name, err))
			return
		}
		r.exp.Updated(rc.UID, prev, np)
		r.events.Emit(rc, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: EventUpdatedNetworkPolicy, Action: "Update",
			Message: fmt.Sprintf("Updated NetworkPolicy %s/%s", np.Namespace, np.Name)})
	}
	for _, np := range p.CreateNetworkPolicies {
		err := kit.Create(ctx, r.client, r.exp, rc.UID, np)
		switch {
		case err == nil:
			r.events.Emit(rc, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: EventCreatedNetworkPolicy, Action: "Create",
				Message: fmt.Sprintf("Created NetworkPolicy %s/%s", np.Namespace, np.Name)})
		case apierrors.IsAlreadyExists(err):
			// Made since the cache was read (or not ours): as KubeRay,
			// read it and compare (networkpolicy_controller.go:122-154).
			ex := &networkingv1.NetworkPolicy{}
			if err := r.api.Get(ctx, client.ObjectKeyFromObject(np), ex); err != nil {
				ok = false
				out.fail(EventFailedToCreateNetworkPolicy, fmt.Sprintf("Failed to create NetworkPolicy %s/%s: %v", np.Namespace, np.Name, err))
				continue
			}
			if kit.ControllerUID(ex.OwnerReferences) != string(rc.UID) {
				ok = false
				out.fail(EventNetworkPolicyNameCollision, collisionMessage(np.Namespace, np.Name))
				continue
			}
			if upd := networkPolicyUpdate(ex, np); upd != nil {
				update(upd)
			}
		default:
			if kit.Ambiguous(err) {
				out.ambiguous = true
			}
			ok = false
			out.fail(EventFailedToCreateNetworkPolicy, fmt.Sprintf("Failed to create NetworkPolicy %s/%s: %v", np.Namespace, np.Name, err))
		}
	}
	for _, np := range p.UpdateNetworkPolicies {
		update(np)
	}
	for _, np := range p.DeleteNetworkPolicies {
		r.exp.ExpectDelete(rc.UID, np)
		err := r.client.Delete(ctx, np, client.Preconditions{UID: &np.UID})
		switch {
		case err == nil:
			r.events.Emit(rc, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: EventDeletedNetworkPolicy, Action: "Delete",
				Message: fmt.Sprintf("Deleted NetworkPolicy %s/%s", np.Namespace, np.Name)})
		case apierrors.IsNotFound(err):
			// Gone already.
		case apierrors.IsConflict(err):
			// A successor of that name (another UID): not this one.
			r.exp.DeleteFailed(rc.UID, np)
		default:
			if !kit.Ambiguous(err) {
				r.exp.DeleteFailed(rc.UID, np)
			}
			out.fail(EventFailedToDeleteNetworkPolicy, fmt.Sprintf("Failed to delete NetworkPolicy %s/%s: %v", np.Namespace, np.Name, err))
		}
	}
	return ok
}
