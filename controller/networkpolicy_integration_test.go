package controller

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/raycluster"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// networkPolicySample is the deny-all sample (v170Sample).
const networkPolicySample = "ray-cluster.network-policy-deny-all.yaml"

// sampleNetworkPolicies are the NetworkPolicies KubeRay v1.7.0 makes for
// the deny-all sample, written out by hand from reading v1.7.0's
// controllers/ray/networkpolicy_controller.go (names :169-175, labels
// :221-228, owner reference :117-120, head :177-219, workers :242-286,
// base ingress :290-304, head ingress :314-331, base egress :382-398), as
// the API server stores them (every port of the sample names its protocol,
// so nothing is defaulted).
func sampleNetworkPolicies(rc *rayv1.RayCluster) []networkingv1.NetworkPolicy {
	tr := true
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	p53 := intstr.FromInt32(53)
	cluster := &metav1.LabelSelector{MatchLabels: map[string]string{"ray.io/cluster": "raycluster-deny-all"}}
	dns := networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
		}},
		Ports: []networkingv1.NetworkPolicyPort{{Port: &p53, Protocol: &udp}, {Port: &p53, Protocol: &tcp}},
	}
	policy := func(name, group string, selector map[string]string) networkingv1.NetworkPolicy {
		return networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rc.Namespace,
				Labels: map[string]string{"ray.io/cluster": "raycluster-deny-all", "ray.io/group": group,
					"app.kubernetes.io/name": "kuberay", "app.kubernetes.io/created-by": "kuberay-operator"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "raycluster-deny-all",
					UID: rc.UID, Controller: &tr, BlockOwnerDeletion: &tr}}},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: selector},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
				Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: cluster}}}},
				Egress:      []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: cluster}}}, dns},
			},
		}
	}
	return []networkingv1.NetworkPolicy{
		policy("raycluster-deny-all-head", "headgroup", map[string]string{"ray.io/cluster": "raycluster-deny-all", "ray.io/node-type": "head"}),
		policy("raycluster-deny-all-workers-workergroup", "workergroup",
			map[string]string{"ray.io/cluster": "raycluster-deny-all", "ray.io/node-type": "worker", "ray.io/group": "workergroup"}),
	}
}

// clusterNetworkPolicies lists ns's NetworkPolicies labelled with the
// cluster, by name, with only what the comparison reads.
func clusterNetworkPolicies(t *testing.T, ns string) []networkingv1.NetworkPolicy {
	t.Helper()
	list, err := kc.NetworkingV1().NetworkPolicies(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "ray.io/cluster=raycluster-deny-all"})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]networkingv1.NetworkPolicy, 0, len(list.Items))
	for _, np := range list.Items {
		out = append(out, networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: np.Name, Namespace: np.Namespace,
			Labels: np.Labels, OwnerReferences: np.OwnerReferences}, Spec: np.Spec})
	}
	slices.SortFunc(out, func(a, b networkingv1.NetworkPolicy) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func names(nps []networkingv1.NetworkPolicy) []string {
	var out []string
	for _, np := range nps {
		out = append(out, np.Name)
	}
	return out
}

// TestIntegrationNetworkPolicy applies KubeRay v1.7.0's deny-all sample
// with the RayClusterNetworkPolicy gate on: the NetworkPolicies equal those
// v1.7.0's code makes, exist before the head pod, follow the spec (a group
// added, a group's rules replaced, networkPolicy removed) and go with the
// cluster.
func TestIntegrationNetworkPolicy(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, func(o *Options) { o.FeatureGates = features.MustParse("RayClusterNetworkPolicy=true") })
	createRC(t, v170Sample(t, networkPolicySample, ns))
	got := waitReady(t, ns, "raycluster-deny-all", 1)

	want := sampleNetworkPolicies(got)
	have := clusterNetworkPolicies(t, ns)
	if !reflect.DeepEqual(have, want) {
		t.Fatalf("NetworkPolicies of the v1.7.0 sample:\n got %+v\nwant %+v", have, want)
	}
	heads, _ := clusterPods(t, ns, "raycluster-deny-all")
	for _, np := range have {
		full, err := kc.NetworkingV1().NetworkPolicies(ns).Get(context.Background(), np.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Made in an earlier or the same pass as the head pod, never after.
		if len(heads) != 1 || full.CreationTimestamp.After(heads[0].CreationTimestamp.Time) {
			t.Errorf("NetworkPolicy %s made at %v, after the head pod (%d heads)", np.Name, full.CreationTimestamp, len(heads))
		}
	}
	waitEvent(t, ns, "raycluster-deny-all", raycluster.EventCreatedNetworkPolicy, "raycluster-deny-all-head")

	// A group added and an entry that replaces one group's worker rules.
	https := networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}}}}
	patchRC(t, ns, "raycluster-deny-all", func(rc *rayv1.RayCluster) {
		g := *rc.Spec.WorkerGroupSpecs[0].DeepCopy()
		g.GroupName = "gpu"
		rc.Spec.WorkerGroupSpecs = append(rc.Spec.WorkerGroupSpecs, g)
		rc.Spec.NetworkPolicy.WorkerGroups = []rayv1.WorkerGroupNetworkPolicyRules{{GroupName: "workergroup",
			NetworkPolicyRules: rayv1.NetworkPolicyRules{EgressRules: []networkingv1.NetworkPolicyEgressRule{https}}}}
	})
	eventually(t, 60*time.Second, "the new group's policy and the replaced rules", func() (bool, string) {
		have := clusterNetworkPolicies(t, ns)
		if len(have) != 3 {
			return false, fmt.Sprint(names(have))
		}
		gpu, wg := have[1], have[2] // sorted: -head, -workers-gpu, -workers-workergroup
		ok := gpu.Name == "raycluster-deny-all-workers-gpu" && len(gpu.Spec.Egress) == 2 && gpu.Spec.PodSelector.MatchLabels["ray.io/group"] == "gpu" &&
			wg.Name == "raycluster-deny-all-workers-workergroup" && len(wg.Spec.Egress) == 2 && reflect.DeepEqual(wg.Spec.Egress[1], https)
		return ok, fmt.Sprintf("%+v", have)
	})
	waitEvent(t, ns, "raycluster-deny-all", raycluster.EventUpdatedNetworkPolicy, "raycluster-deny-all-workers-workergroup")

	// An edit of a policy is undone.
	np, err := kc.NetworkingV1().NetworkPolicies(ns).Get(context.Background(), "raycluster-deny-all-head", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	np.Spec.Ingress = nil
	if _, err := kc.NetworkingV1().NetworkPolicies(ns).Update(context.Background(), np, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the head's policy back as the cluster asks", func() (bool, string) {
		cur, err := kc.NetworkingV1().NetworkPolicies(ns).Get(context.Background(), "raycluster-deny-all-head", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(cur.Spec.Ingress) == 1, fmt.Sprintf("%+v", cur.Spec.Ingress)
	})

	// networkPolicy removed: every policy of the cluster goes.
	patchRC(t, ns, "raycluster-deny-all", func(rc *rayv1.RayCluster) { rc.Spec.NetworkPolicy = nil })
	eventually(t, 60*time.Second, "no NetworkPolicies once networkPolicy is removed", func() (bool, string) {
		have := clusterNetworkPolicies(t, ns)
		return len(have) == 0, fmt.Sprint(names(have))
	})
	waitEvent(t, ns, "raycluster-deny-all", raycluster.EventDeletedNetworkPolicy, "raycluster-deny-all-head")

	// Back, then the cluster deleted: the garbage collector takes them.
	patchRC(t, ns, "raycluster-deny-all", func(rc *rayv1.RayCluster) {
		rc.Spec.NetworkPolicy = v170Sample(t, networkPolicySample, ns).Spec.NetworkPolicy
	})
	eventually(t, 60*time.Second, "the policies back", func() (bool, string) {
		have := clusterNetworkPolicies(t, ns)
		return len(have) == 3, fmt.Sprint(names(have))
	})
	if err := cl.Delete(context.Background(), getRC(t, ns, "raycluster-deny-all")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the policies garbage-collected with the cluster", func() (bool, string) {
		have := clusterNetworkPolicies(t, ns)
		return len(have) == 0, fmt.Sprint(names(have))
	})
}

// TestIntegrationNetworkPolicyGateOff: with the gate off (the default) the
// same sample is refused, naming the gate, and nothing is made.
func TestIntegrationNetworkPolicyGateOff(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	refusedWithGateOff(t, ns, networkPolicySample, "spec.networkPolicy", features.RayClusterNetworkPolicy, func() (bool, string) {
		nps, err := kc.NetworkingV1().NetworkPolicies(ns).List(context.Background(), metav1.ListOptions{})
		return err == nil && len(nps.Items) == 0, fmt.Sprintf("policies=%v err=%v", nps, err)
	})
}

// A K8sJobMode RayJob whose cluster asks for isolation, with the gate on:
// the RayJob is accepted, its cluster's head policy lets the RayJob's
// submitter pod (and only it, from outside the cluster) reach the dashboard,
// the selector matches the submitter Job's pods, and the job completes.
func TestIntegrationRayJobNetworkPolicy(t *testing.T) {
	h := newRJHarness(t, func(o *Options) { o.FeatureGates = features.MustParse("RayClusterNetworkPolicy=true") })
	h.rayJob("iso", `echo isolated`, func(j *rayv1.RayJob) {
		j.Spec.SubmissionMode = rayv1.K8sJobMode
		j.Spec.RayClusterSpec.NetworkPolicy = &rayv1.NetworkPolicyConfig{}
	})
	j := h.wait("iso", "Complete", deploymentIs(rayv1.JobDeploymentStatusComplete))
	if j.Status.JobStatus != rayv1.JobStatusSucceeded {
		t.Fatal(describeRJ(j))
	}
	head, err := kc.NetworkingV1().NetworkPolicies(h.ns).Get(context.Background(), j.Status.RayClusterName+"-head", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the head's NetworkPolicy of the RayJob's cluster: %v", err)
	}
	tcp, port := corev1.ProtocolTCP, intstr.FromInt32(8265)
	wantSubmitter := networkingv1.NetworkPolicyIngressRule{
		From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
			"ray.io/originated-from-cr-name": "iso", "ray.io/originated-from-crd": "RayJob"}}}},
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
	}
	if len(head.Spec.Ingress) != 2 || !reflect.DeepEqual(head.Spec.Ingress[1], wantSubmitter) {
		t.Fatalf("head ingress %+v; want the cluster's pods, then the submitter to 8265/TCP", head.Spec.Ingress)
	}
	sub, err := kc.BatchV1().Jobs(h.ns).Get(context.Background(), "iso", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range wantSubmitter.From[0].PodSelector.MatchLabels {
		if sub.Spec.Template.Labels[k] != v {
			t.Errorf("the submitter's pods carry %s=%q, the policy selects %q", k, sub.Spec.Template.Labels[k], v)
		}
	}
}
