package raycluster

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/internal/fixture"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

var gateOn = features.MustParse("RayClusterNetworkPolicy=true")

// npCluster is cluster c with worker groups small and big and
// spec.networkPolicy in mode (nil: the field's default).
func npCluster(mode *rayv1.NetworkPolicyMode) *rayv1.RayCluster {
	rc := fixture.Cluster("c", fixture.Group("small", 1), fixture.Group("big", 1))
	rc.Spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{Mode: mode}
	return rc
}

func mode(m rayv1.NetworkPolicyMode) *rayv1.NetworkPolicyMode { return &m }

// The peers and rules KubeRay v1.7.0 writes, spelled out.
var (
	tcp        = corev1.ProtocolTCP
	udp        = corev1.ProtocolUDP
	clusterSel = &metav1.LabelSelector{MatchLabels: map[string]string{"ray.io/cluster": "c"}}
	fromPods   = networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{{PodSelector: clusterSel}}}
	toPods     = networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{PodSelector: clusterSel}}}
	dns        = networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
		}},
		Ports: []networkingv1.NetworkPolicyPort{{Port: fixture.Ptr(intstr.FromInt32(53)), Protocol: &udp}, {Port: fixture.Ptr(intstr.FromInt32(53))}},
	}
	prometheus = networkingv1.NetworkPolicyIngressRule{
		From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "prometheus"}}}},
		Ports: []networkingv1.NetworkPolicyPort{{Port: fixture.Ptr(intstr.FromInt32(8080)), Protocol: &tcp}},
	}
	https = networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}}}}
)

// wantPolicy is a policy as KubeRay v1.7.0 builds it
// (networkpolicy_controller.go:177-286).
func wantPolicy(name, group string, selector map[string]string, types []networkingv1.PolicyType,
	in []networkingv1.NetworkPolicyIngressRule, eg []networkingv1.NetworkPolicyEgressRule) *networkingv1.NetworkPolicy {
	tr := true
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
			Labels: map[string]string{"ray.io/cluster": "c", "ray.io/group": group,
				"app.kubernetes.io/name": "kuberay", "app.kubernetes.io/created-by": "kuberay-operator"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "c", UID: "c-uid",
				Controller: &tr, BlockOwnerDeletion: &tr}}},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: selector},
			PolicyTypes: types, Ingress: in, Egress: eg},
	}
}

var (
	headSel  = map[string]string{"ray.io/cluster": "c", "ray.io/node-type": "head"}
	smallSel = map[string]string{"ray.io/cluster": "c", "ray.io/node-type": "worker", "ray.io/group": "small"}
	bigSel   = map[string]string{"ray.io/cluster": "c", "ray.io/node-type": "worker", "ray.io/group": "big"}
	both     = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	inOnly   = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	egOnly   = []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
	ins      = func(r ...networkingv1.NetworkPolicyIngressRule) []networkingv1.NetworkPolicyIngressRule { return r }
	egs      = func(r ...networkingv1.NetworkPolicyEgressRule) []networkingv1.NetworkPolicyEgressRule { return r }
)

func TestBuildNetworkPolicies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(rc *rayv1.RayCluster)
		want   []*networkingv1.NetworkPolicy
	}{
		{"no networkPolicy: none", func(rc *rayv1.RayCluster) { rc.Spec.NetworkPolicy = nil }, nil},
		{"mode unset is DenyAll: both ways, the cluster's pods only", func(rc *rayv1.RayCluster) {}, []*networkingv1.NetworkPolicy{
			wantPolicy("c-head", "headgroup", headSel, both, ins(fromPods), egs(toPods)),
			wantPolicy("c-workers-small", "small", smallSel, both, ins(fromPods), egs(toPods)),
			wantPolicy("c-workers-big", "big", bigSel, both, ins(fromPods), egs(toPods)),
		}},
		{"DenyAllIngress: no egress side", func(rc *rayv1.RayCluster) { rc.Spec.NetworkPolicy.Mode = mode(rayv1.NetworkPolicyDenyAllIngress) }, []*networkingv1.NetworkPolicy{
			wantPolicy("c-head", "headgroup", headSel, inOnly, ins(fromPods), nil),
			wantPolicy("c-workers-small", "small", smallSel, inOnly, ins(fromPods), nil),
			wantPolicy("c-workers-big", "big", bigSel, inOnly, ins(fromPods), nil),
		}},
		{"DenyAllEgress: no ingress side", func(rc *rayv1.RayCluster) { rc.Spec.NetworkPolicy.Mode = mode(rayv1.NetworkPolicyDenyAllEgress) }, []*networkingv1.NetworkPolicy{
			wantPolicy("c-head", "headgroup", headSel, egOnly, nil, egs(toPods)),
			wantPolicy("c-workers-small", "small", smallSel, egOnly, nil, egs(toPods)),
			wantPolicy("c-workers-big", "big", bigSel, egOnly, nil, egs(toPods)),
		}},
		{"custom rules: head's to the head, worker's to groups without an entry, an entry replaces worker's", func(rc *rayv1.RayCluster) {
			np := rc.Spec.NetworkPolicy
			np.Head = &rayv1.NetworkPolicyRules{IngressRules: ins(prometheus), EgressRules: egs(dns)}
			np.Worker = &rayv1.NetworkPolicyRules{EgressRules: egs(dns)}
			np.WorkerGroups = []rayv1.WorkerGroupNetworkPolicyRules{{GroupName: "big", NetworkPolicyRules: rayv1.NetworkPolicyRules{EgressRules: egs(https)}}}
		}, []*networkingv1.NetworkPolicy{
			wantPolicy("c-head", "headgroup", headSel, both, ins(fromPods, prometheus), egs(toPods, dns)),
			wantPolicy("c-workers-small", "small", smallSel, both, ins(fromPods), egs(toPods, dns)),
			wantPolicy("c-workers-big", "big", bigSel, both, ins(fromPods), egs(toPods, https)),
		}},
		{"a K8sJobMode RayJob's cluster: its submitter reaches the dashboard port of rayStartParams", func(rc *rayv1.RayCluster) {
			rc.Spec.WorkerGroupSpecs = rc.Spec.WorkerGroupSpecs[:1]
			rc.Labels = map[string]string{rayv1.RayJobSubmissionModeLabelKey: string(rayv1.K8sJobMode)}
			tr := true
			rc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayJob", Name: "job", UID: "j", Controller: &tr}}
			rc.Spec.HeadGroupSpec.RayStartParams = map[string]string{"dashboard-port": "9265"}
		}, []*networkingv1.NetworkPolicy{
			wantPolicy("c-head", "headgroup", headSel, both, ins(fromPods, networkingv1.NetworkPolicyIngressRule{
				From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
					"ray.io/originated-from-cr-name": "job", "ray.io/originated-from-crd": "RayJob"}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: fixture.Ptr(intstr.FromInt32(9265))}},
			}), egs(toPods)),
			wantPolicy("c-workers-small", "small", smallSel, both, ins(fromPods), egs(toPods)),
		}},
		{"a SidecarMode RayJob's cluster, or one the RayJob does not control: no submitter rule", func(rc *rayv1.RayCluster) {
			rc.Spec.WorkerGroupSpecs = nil
			rc.Labels = map[string]string{rayv1.RayJobSubmissionModeLabelKey: string(rayv1.SidecarMode)}
			tr := true
			rc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayJob", Name: "job", UID: "j", Controller: &tr}}
		}, []*networkingv1.NetworkPolicy{wantPolicy("c-head", "headgroup", headSel, both, ins(fromPods), egs(toPods))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := npCluster(nil)
			tc.mutate(rc)
			got := BuildNetworkPolicies(rc)
			if len(got) != len(tc.want) {
				t.Fatalf("%d policies, want %d: %+v", len(got), len(tc.want), got)
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], tc.want[i]) {
					t.Errorf("policy %d:\n got %+v\nwant %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
	// A K8sJobMode label without a controlling RayJob, or a non-integer
	// port, falls back as KubeRay does.
	rc := npCluster(nil)
	rc.Labels = map[string]string{rayv1.RayJobSubmissionModeLabelKey: string(rayv1.K8sJobMode)}
	rc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayJob", Name: "job"}}
	if n := len(BuildNetworkPolicies(rc)[0].Spec.Ingress); n != 1 {
		t.Errorf("a RayJob owner that is not the controller: %d ingress rules, want 1", n)
	}
	rc.Spec.HeadGroupSpec.RayStartParams = map[string]string{"dashboard-port": "x"}
	if p := headDashboardPort(rc); p != 8265 {
		t.Errorf("dashboard-port x: %d, want 8265", p)
	}
}

// TestDecideNetworkPolicies is the pure decision: what is created, updated,
// deleted or left alone, under the gate.
func TestDecideNetworkPolicies(t *testing.T) {
	base := npCluster(nil)
	built := BuildNetworkPolicies(base)
	stored := func(i int) *networkingv1.NetworkPolicy {
		np := built[i].DeepCopy()
		np.UID = types.UID(np.Name + "-uid")
		np.ResourceVersion = "5"
		return np
	}
	drifted := stored(1)
	drifted.Spec.Egress = nil
	relabelled := stored(2)
	relabelled.Labels["extra"] = "x"
	foreign := stored(0)
	foreign.OwnerReferences = nil
	removedGroup := wantPolicy("c-workers-gone", "gone", nil, both, nil, nil)
	removedGroup.UID = "gone-uid"
	notOurs := removedGroup.DeepCopy()
	notOurs.Name, notOurs.OwnerReferences = "c-extra", nil
	withProtocol := func() *networkingv1.NetworkPolicy {
		// The API server stores a missing protocol as TCP: no update.
		rc := npCluster(nil)
		rc.Spec.NetworkPolicy.Worker = &rayv1.NetworkPolicyRules{EgressRules: egs(dns)}
		np := BuildNetworkPolicies(rc)[1]
		np.Spec = withTCPDefaults(np.Spec)
		return np
	}()
	for _, tc := range []struct {
		name                           string
		gate                           bool
		mutate                         func(*rayv1.RayCluster)
		existing                       []*networkingv1.NetworkPolicy
		create, update, delete, refuse []string
		collide                        []string
	}{
		{name: "gate off: refused by name, nothing read or written", mutate: func(*rayv1.RayCluster) {}, refuse: []string{"spec.networkPolicy"}},
		{name: "gate off, without networkPolicy: nothing", mutate: func(rc *rayv1.RayCluster) { rc.Spec.NetworkPolicy = nil }},
		{name: "gate on, none yet: all three created", gate: true, mutate: func(*rayv1.RayCluster) {},
			create: []string{"c-head", "c-workers-small", "c-workers-big"}},
		{name: "as wanted: nothing", gate: true, mutate: func(*rayv1.RayCluster) {}, existing: []*networkingv1.NetworkPolicy{stored(0), stored(1), stored(2)}},
		{name: "spec or labels drifted: updated", gate: true, mutate: func(*rayv1.RayCluster) {},
			existing: []*networkingv1.NetworkPolicy{stored(0), drifted, relabelled}, update: []string{"c-workers-small", "c-workers-big"}},
		{name: "the protocol the API server defaulted: no update", gate: true,
			mutate: func(rc *rayv1.RayCluster) {
				rc.Spec.NetworkPolicy.Worker = &rayv1.NetworkPolicyRules{EgressRules: egs(dns)}
			},
			existing: []*networkingv1.NetworkPolicy{stored(0), withProtocol}, create: []string{"c-workers-big"}},
		{name: "mode changed: every policy updated", gate: true, mutate: func(rc *rayv1.RayCluster) { rc.Spec.NetworkPolicy.Mode = mode(rayv1.NetworkPolicyDenyAllIngress) },
			existing: []*networkingv1.NetworkPolicy{stored(0), stored(1), stored(2)}, update: []string{"c-head", "c-workers-small", "c-workers-big"}},
		{name: "a group removed: its policy deleted; another owner's left alone", gate: true, mutate: func(*rayv1.RayCluster) {},
			existing: []*networkingv1.NetworkPolicy{stored(0), stored(1), stored(2), removedGroup, notOurs}, delete: []string{"c-workers-gone"}},
		{name: "networkPolicy removed: the cluster's policies deleted", gate: true, mutate: func(rc *rayv1.RayCluster) { rc.Spec.NetworkPolicy = nil },
			existing: []*networkingv1.NetworkPolicy{stored(2), stored(0), notOurs}, delete: []string{"c-head", "c-workers-big"}},
		{name: "a wanted name another owner holds: left alone, a collision", gate: true, mutate: func(*rayv1.RayCluster) {},
			existing: []*networkingv1.NetworkPolicy{foreign, stored(1), stored(2)}, collide: []string{"c-head"}},
		{name: "refused for its networkPolicy: nothing written", gate: true, mutate: func(rc *rayv1.RayCluster) {
			rc.Spec.NetworkPolicy.WorkerGroups = []rayv1.WorkerGroupNetworkPolicyRules{{GroupName: "tpu"}}
		}, refuse: []string{"spec.networkPolicy.workerGroups[0].groupName"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := base.DeepCopy()
			tc.mutate(rc)
			o := obsOf(rc, headSvc(rc))
			if tc.gate {
				o.Config.Features = gateOn
			}
			o.NetworkPolicies = tc.existing
			p := decide(o)
			names := func(ps []*networkingv1.NetworkPolicy) string {
				var out []string
				for _, np := range ps {
					out = append(out, np.Name)
				}
				return strings.Join(out, ",")
			}
			if got, want := names(p.CreateNetworkPolicies), strings.Join(tc.create, ","); got != want {
				t.Errorf("create %q, want %q", got, want)
			}
			if got, want := names(p.UpdateNetworkPolicies), strings.Join(tc.update, ","); got != want {
				t.Errorf("update %q, want %q", got, want)
			}
			if got, want := names(p.DeleteNetworkPolicies), strings.Join(tc.delete, ","); got != want {
				t.Errorf("delete %q, want %q", got, want)
			}
			if got, want := strings.Join(p.NetworkPolicyCollisions, ","), strings.Join(tc.collide, ","); got != want {
				t.Errorf("collisions %q, want %q", got, want)
			}
			var refused []string
			for _, e := range p.Invalid {
				refused = append(refused, e.Field)
			}
			if got, want := strings.Join(refused, ","), strings.Join(tc.refuse, ","); got != want {
				t.Errorf("refused %q, want %q (%v)", got, want, p.Invalid)
			}
			if len(tc.refuse) == 0 && len(p.CreatePods) == 0 {
				t.Errorf("no pods planned")
			}
			for _, u := range p.UpdateNetworkPolicies {
				for _, w := range BuildNetworkPolicies(rc) {
					if w.Name == u.Name && (!reflect.DeepEqual(u.Spec, withTCPDefaults(w.Spec)) || !reflect.DeepEqual(u.Labels, w.Labels) || u.ResourceVersion != "5") {
						t.Errorf("update of %s: %+v, want the built spec and labels on the stored version", u.Name, u)
					}
				}
			}
		})
	}
}

// The refusal with the gate off names the gate and the flag that turns it on.
func TestNetworkPolicyRefusalNamesTheGate(t *testing.T) {
	errs := UnsupportedRayCluster(npCluster(nil))
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "spec.networkPolicy: Forbidden: requires the RayClusterNetworkPolicy feature gate") ||
		!strings.Contains(errs[0].Error(), "--feature-gates RayClusterNetworkPolicy=true") {
		t.Fatalf("refusal %v", errs)
	}
	if errs := UnsupportedRayClusterWith(npCluster(nil), BuildConfig{Features: gateOn}); len(errs) != 0 {
		t.Fatalf("gate on: refused %v", errs)
	}
}

// TestReconcileNetworkPolicies runs passes against a fake API server: the
// policies are made before the head pod, with KubeRay's Events, and a name
// another owner holds keeps the pods from starting.
func TestReconcileNetworkPolicies(t *testing.T) {
	t.Run("created before the head pod", func(t *testing.T) {
		rc := freshCluster("c", 1)
		rc.Spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{}
		var order []string
		r, c, rec := fakeReconcilerWith(t, gateOn, interceptor.Funcs{Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			switch obj.(type) {
			case *networkingv1.NetworkPolicy, *corev1.Pod:
				order = append(order, obj.GetName())
			}
			return cl.Create(ctx, obj, opts...)
		}}, rc)
		req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
		for range 2 {
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
		}
		if len(order) < 3 || order[0] != "c-head" || order[1] != "c-workers-small" || !strings.HasPrefix(order[2], "c-head-") {
			t.Fatalf("create order %v; want the policies, then the head pod", order)
		}
		list := &networkingv1.NetworkPolicyList{}
		if err := c.List(context.Background(), list); err != nil || len(list.Items) != 2 {
			t.Fatalf("%d policies, %v", len(list.Items), err)
		}
		evs := drainEvents(rec.Events)
		if strings.Count(evs, "Normal CreatedNetworkPolicy Created NetworkPolicy ns/c-") != 2 {
			t.Fatalf("events:\n%s", evs)
		}
	})
	t.Run("a name another owner holds: no pods, a Warning", func(t *testing.T) {
		rc := freshCluster("c", 1)
		rc.Spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{}
		theirs := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "c-head", Namespace: "ns"}}
		r, c, rec := fakeReconcilerWith(t, gateOn, interceptor.Funcs{}, rc, theirs)
		req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
		if _, err := r.Reconcile(context.Background(), req); err == nil {
			t.Fatal("no error: the collision must be retried")
		}
		pods := &corev1.PodList{}
		if err := c.List(context.Background(), pods); err != nil || len(pods.Items) != 0 {
			t.Fatalf("%d pods, %v; want none while the head's policy cannot be had", len(pods.Items), err)
		}
		if evs := drainEvents(rec.Events); !strings.Contains(evs, "Warning NetworkPolicyNameCollision NetworkPolicy ns/c-head already exists and is not owned by this RayCluster, network isolation will not be applied.") {
			t.Fatalf("events:\n%s", evs)
		}
	})
}
