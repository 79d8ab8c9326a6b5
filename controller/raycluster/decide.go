package raycluster

// decide: a pure function from what was observed to a plan. No I/O, no
// clock, no randomness except through observed.NewSuffix and observed.Now,
// so every rule here is table-tested without an API server.

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/raydar/raydar/controller/kit"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/batchscheduler/kuberneteswas"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// observed is everything the reconciler read before deciding.
type observed struct {
	Cluster *rayv1.RayCluster
	// Pods are the pods controlled by Cluster (owner UID), with this
	// process's unseen writes laid over them: pods it created are present,
	// pods it deleted carry a deletionTimestamp.
	Pods []*corev1.Pod
	// HeadService is nil when absent.
	HeadService *corev1.Service
	// HeadlessServiceReady: the headless worker Service exists (read live:
	// it carries KubeRay's labels, not ray.io/cluster, so it is not cached).
	HeadlessServiceReady bool
	// RBACReady: the autoscaler's ServiceAccount, Role and RoleBinding exist.
	RBACReady bool
	// AuthSecretReady: the generated auth Secret exists (auth.go).
	AuthSecretReady bool
	// ServeServiceReady: the ray.io/enable-serve-service Service exists
	// (serve_service.go).
	ServeServiceReady bool
	// Ingress is the dashboard Ingress, read only with enableIngress
	// (ingress.go); nil when absent.
	Ingress *networkingv1.Ingress
	// NetworkPolicies are the cluster's (labelled ray.io/cluster), read
	// only with the RayClusterNetworkPolicy gate on (networkpolicy.go).
	NetworkPolicies []*networkingv1.NetworkPolicy
	// MTLS are the cluster's cert-manager objects and their Secrets, read
	// live only with mTLS on (mtls.go).
	MTLS *mtlsObserved
	// GCSStoragePVC is the claim of a rocksdb cluster's GCS store, read
	// only with the GCSFaultToleranceEmbeddedStorage gate on
	// (gcs_embedded.go); nil when absent.
	GCSStoragePVC *corev1.PersistentVolumeClaim
	// Group is the cluster's gang object (a Volcano PodGroup), read only
	// with a batch scheduler that makes one for it (gang.go); nil when
	// absent.
	Group client.Object
	// WAS are the cluster's Kubernetes WAS Workload and PodGroup (nil:
	// absent), read only with the KubernetesWAS gate (gang.go).
	WAS [2]*unstructured.Unstructured
	// CleanupJob is the Redis clean-up Job; read only while a deleted
	// cluster waits on the GCS FT finalizer.
	CleanupJob *batchv1.Job
	Now        time.Time
	Config     BuildConfig
	// NewSuffix returns a fresh random name suffix.
	NewSuffix func() string
}

// podDeletion is a pod to delete and why, in words for the Event.
type podDeletion struct {
	Pod    *corev1.Pod
	Reason string
}

// plan is what the reconciler will do, in order: finalizer, Services and
// autoscaler RBAC, pods, the clean-up Job, finalizer removal, status.
type plan struct {
	AddFinalizer    bool
	RemoveFinalizer bool

	CreateServices []*corev1.Service
	CreateRBAC     []client.Object
	// CreateAuthSecret is the auth Secret to create, without its token
	// (act adds it); before any pod.
	CreateAuthSecret *corev1.Secret
	// CreateIngress and UpdateIngress: the dashboard Ingress (ingress.go).
	CreateIngress *networkingv1.Ingress
	UpdateIngress *networkingv1.Ingress
	// The NetworkPolicies of spec.networkPolicy (networkpolicy.go): to
	// create, update and delete; the names of wanted ones another owner
	// holds (the pods are held back).
	CreateNetworkPolicies   []*networkingv1.NetworkPolicy
	UpdateNetworkPolicies   []*networkingv1.NetworkPolicy
	DeleteNetworkPolicies   []*networkingv1.NetworkPolicy
	NetworkPolicyCollisions []string
	// MTLS: the cert-manager objects of spec.tlsOptions (mtls.go); pods
	// are created only when it is Ready.
	MTLS       *mtlsPlan
	CreatePods []*corev1.Pod
	DeletePods []podDeletion
	// The gang object of the configured batch scheduler (gang.go): to
	// create, to update, or why it cannot be built (the pods are held
	// back).
	CreateGroup client.Object
	UpdateGroup client.Object
	GroupErr    error
	// WAS are the writes to the Kubernetes WAS Workload and PodGroup
	// (gang.go); pods are held while they say so.
	WAS kuberneteswas.Steps

	// The claim of the embedded GCS store (gcs_embedded.go): to create,
	// to update (its owner), or why it cannot be used (the pods are held
	// back).
	CreateGCSStoragePVC  *corev1.PersistentVolumeClaim
	UpdateGCSStoragePVC  *corev1.PersistentVolumeClaim
	GCSStoragePVCBlocked string

	// DeleteAll deletes every pod of the cluster in one request
	// (deletecollection by label); DeletePods then lists them for the
	// expectations and the Event.
	DeleteAll bool
	// StampPods are annotations to merge into existing pods (the Recreate
	// hash on a head pod another operator made).
	StampPods []podStamp
	CreateJob *batchv1.Job

	// Events are facts the decision itself establishes (invalid spec,
	// suspended, recreate); the outcomes of writes become Events in act.
	Events []kit.Event
	// BatchScheduler is the Warning that the cluster's batch-scheduler
	// labels are ignored (batchscheduler.go), nil when it has none; it is
	// said once while it lasts.
	BatchScheduler *kit.Event
	// Invalid holds the spec's validation errors; nothing is created.
	Invalid field.ErrorList
	// SkipStatus: the cluster is being deleted; its status is not written.
	SkipStatus bool
	// Status is the status the cluster has if the plan succeeds.
	Status rayv1.RayClusterStatus
	// RequeueAfter asks for another pass even without a watch event.
	RequeueAfter time.Duration
}

// podStamp is an annotation merge into an existing pod.
type podStamp struct {
	Pod         *corev1.Pod
	Annotations map[string]string
}

// Reasons of Events that are not ReplicaFailure reasons (those are in rayapi/v1).
const (
	ReasonInvalidSpec          = rayv1.EventInvalidRayClusterSpec
	ReasonValidationFailed     = string(rayv1.ValidationFailed)
	ReasonSuspending           = "Suspending"
	ReasonSuspended            = "Suspended"
	ReasonResumed              = "Resumed"
	ReasonRecreate             = "RecreatingPods"
	reasonRedisCleanup         = "RedisCleanup"
	reasonRedisCleanupFailed   = "RedisCleanupFailed"
	ReasonRedisCleanupTimedOut = "RedisCleanupTimedOut"
)

// resumeRequeue is how soon the pass after a resume is recorded runs.
const resumeRequeue = 100 * time.Millisecond

// isActive: not terminating.
func isActive(p *corev1.Pod) bool { return p.DeletionTimestamp == nil }

// replaceReason says why a pod must be deleted and re-created, "" if not:
// it reached a terminal phase (the kubelet never restarts such a pod), or its
// Ray container exited and restartPolicy Never keeps it down.
func replaceReason(p *corev1.Pod) string {
	switch p.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		r := "pod " + p.Name + " is " + string(p.Status.Phase)
		if p.Status.Reason != "" {
			r += " (" + p.Status.Reason + ")"
		}
		return r
	case corev1.PodRunning:
		if p.Spec.RestartPolicy != corev1.RestartPolicyNever || len(p.Spec.Containers) == 0 {
			return ""
		}
		name := p.Spec.Containers[rayv1.RayContainerIndex].Name
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == name && cs.State.Terminated != nil {
				return fmt.Sprintf("the Ray container of pod %s exited with code %d and restartPolicy is Never",
					p.Name, cs.State.Terminated.ExitCode)
			}
		}
	}
	return ""
}

func hasFinalizer(rc *rayv1.RayCluster, f string) bool {
	return slices.Contains(rc.Finalizers, f)
}

// redisCleanupTimeout is how long a deleted cluster waits for the Redis
// clean-up before the finalizer is removed anyway.
func redisCleanupTimeout(rc *rayv1.RayCluster) time.Duration {
	if v := rc.Annotations[rayv1.GCSFaultToleranceDeletionTimeoutAnnotationKey]; v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return time.Duration(rayv1.DefaultGCSFTDeletionTimeoutSeconds) * time.Second
}

// suspendInProgress: spec.suspend is set, or a suspension already started
// and must finish (it is atomic: Suspending → all pods gone → Suspended).
func suspendInProgress(rc *rayv1.RayCluster) bool {
	return rc.Spec.IsSuspended() || rayv1.IsConditionTrue(rc.Status.Conditions, string(rayv1.RayClusterSuspending))
}

// decide is the whole reconcile decision for one RayCluster.
func decide(o *observed) *plan {
	rc := o.Cluster
	p := &plan{}
	if rc.DeletionTimestamp != nil {
		decideDeletion(o, p)
		return p
	}
	errs := append(rayv1.ValidateRayCluster(rc), UnsupportedRayClusterWith(rc, o.Config)...)
	if o.MTLS != nil && !o.MTLS.CertManager {
		errs = append(errs, certManagerMissing())
	}
	if len(errs) > 0 {
		p.Invalid = errs
		p.Status = computeStatus(o.Cluster, o.Pods, o.HeadService, p, nil, o.Now)
		if _, ev := kit.Refusal(rc.Status.Conditions, string(rayv1.RayClusterReplicaFailure), ReasonValidationFailed, errs,
			ReasonInvalidSpec, "nothing is created or deleted"); ev != nil {
			p.Events = append(p.Events, *ev)
		}
		return p
	}
	if needsRedisCleanup(rc) && !hasFinalizer(rc, rayv1.GCSFaultToleranceRedisCleanupFinalizer) {
		p.AddFinalizer = true
	}
	p.BatchScheduler = batchSchedulerWarning(rc, o.Config.Scheduler)

	if o.HeadService == nil {
		p.CreateServices = append(p.CreateServices, BuildHeadService(rc, o.Config))
	}
	if needsHeadlessWorkerService(rc) && !o.HeadlessServiceReady {
		p.CreateServices = append(p.CreateServices, buildHeadlessWorkerService(rc))
	}
	if autoscalingEnabled(rc) && !o.RBACReady {
		p.CreateRBAC = buildAutoscalerRBAC(rc)
	}
	decideAuthSecret(o, p)
	decideServeService(o, p)
	decideIngress(o, p)
	decideNetworkPolicies(o, p)
	p.MTLS = decideMTLS(o)
	decideGCSStoragePVC(o, p)

	decidePods(o, p)
	decoratePods(o, p)
	holdPodsForMTLS(o, p)
	holdPodsForGang(p)

	after := podsAfter(o.Pods, p, o.Now)
	p.Status = computeStatus(rc, after, o.HeadService, p, nil, o.Now)
	decideStatusEvents(rc, p)
	return p
}

// decidePods fills the pod creations and deletions of the plan.
func decidePods(o *observed, p *plan) {
	rc := o.Cluster
	var active []*corev1.Pod
	for _, pod := range o.Pods {
		if isActive(pod) {
			active = append(active, pod)
		}
	}
	sortPods(active)

	// Suspend: every pod goes, nothing is created.
	if suspendInProgress(rc) {
		if len(active) > 0 {
			deleteAll(p, active, "the cluster is suspended")
		}
		return
	}
	// Suspended: nothing is created until a pass has recorded the resume
	// (spec.suspend false) in the status, as in KubeRay v1.7.0
	// (reconcilePods returns while RayClusterSuspended is true). Removing
	// spec.suspend instead of setting it false leaves the cluster
	// suspended there too.
	if suspendStatus(rc.Status.Conditions) == rayv1.RayClusterSuspended {
		if rc.Spec.Suspend != nil && !*rc.Spec.Suspend {
			// This pass records the resume; a status write brings no
			// watch event, so come back for the pods.
			p.RequeueAfter = resumeRequeue
		}
		return
	}

	// Recreate upgrade: pod templates changed, so every pod goes; the next
	// pass creates them afresh from the new templates. Only pods raydar
	// made carry a hash raydar can compare (ray.io/kuberay-version
	// "raydar"): those of a KubeRay operator that ran the cluster before
	// hold KubeRay's hash, computed differently, and never trigger a
	// Recreate by themselves. As KubeRay does when its own version changes,
	// raydar stamps its hash of the current spec onto such a head pod, so a
	// spec change after the takeover still recreates every pod.
	hash := specHash(rc)
	if rc.Spec.UpgradeType() == rayv1.RayClusterRecreate {
		for _, pod := range active {
			if pod.Annotations[rayv1.KubeRayVersion] != kit.KuberayVersionValue {
				if kit.IsHeadPod(pod) {
					p.StampPods = append(p.StampPods, podStamp{Pod: pod, Annotations: map[string]string{
						rayv1.UpgradeStrategyRecreateHashKey: hash, rayv1.KubeRayVersion: kit.KuberayVersionValue}})
				}
				continue
			}
			if h, ok := pod.Annotations[rayv1.UpgradeStrategyRecreateHashKey]; ok && h != hash {
				p.StampPods = nil
				deleteAll(p, active, "upgradeStrategy Recreate: the pod templates changed")
				p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonRecreate, Action: "Upgrade",
					Message: fmt.Sprintf("Pod templates changed (hash %s, pod %s has %s): deleting all %d pods to recreate them",
						hash, pod.Name, h, len(active))})
				return
			}
		}
	}

	// The gang before the pods, once suspend and Recreate are settled
	// (KubeRay v1.6.2 raycluster_controller.go:693-703).
	decideGang(o, p)

	// Failed pods are deleted and replaced in the same pass.
	var live []*corev1.Pod
	for _, pod := range active {
		if r := replaceReason(pod); r != "" {
			p.DeletePods = append(p.DeletePods, podDeletion{Pod: pod, Reason: r + "; it will be replaced"})
			continue
		}
		live = append(live, pod)
	}

	// Head.
	var heads []*corev1.Pod
	byGroup := map[string][]*corev1.Pod{}
	for _, pod := range live {
		switch {
		case kit.IsHeadPod(pod):
			heads = append(heads, pod)
		case kit.IsWorkerPod(pod):
			byGroup[kit.PodGroup(pod)] = append(byGroup[kit.PodGroup(pod)], pod)
		}
	}
	switch {
	case len(heads) == 0:
		provisioned := rayv1.IsConditionTrue(rc.Status.Conditions, string(rayv1.RayClusterProvisioned))
		// Exactly "true", as KubeRay's shouldSkipHeadPodRestart (:1458).
		if provisioned && rc.Annotations[rayv1.DisableProvisionedHeadRestartAnnotationKey] == "true" {
			// No new head, and KubeRay's pass ends here, before its worker
			// loop (raycluster_controller.go:1014-1032): the workers are
			// left as they are, failed ones too.
			p.DeletePods = slices.DeleteFunc(p.DeletePods, func(d podDeletion) bool { return !kit.IsHeadPod(d.Pod) })
			return
		}
		p.CreatePods = append(p.CreatePods, BuildPod(rc, PodBuild{Name: kit.HeadPodName(rc.Name, o.NewSuffix()), Head: true}, hash, o.Config))
	case len(heads) > 1:
		// Keep the best head (ready, then oldest); the others go.
		best := slices.Clone(heads)
		sort.SliceStable(best, func(i, j int) bool {
			ri, rj := kit.IsRunningAndReady(best[i]), kit.IsRunningAndReady(best[j])
			if ri != rj {
				return ri
			}
			return olderThan(best[i], best[j])
		})
		for _, h := range best[1:] {
			p.DeletePods = append(p.DeletePods, podDeletion{Pod: h, Reason: "more than one head pod; keeping " + best[0].Name})
		}
	}

	// Workers of groups no longer in the spec.
	groups := map[string]bool{}
	for i := range rc.Spec.WorkerGroupSpecs {
		groups[rc.Spec.WorkerGroupSpecs[i].GroupName] = true
	}
	for _, name := range kit.SortedKeys(byGroup) {
		if groups[name] {
			continue
		}
		for _, pod := range byGroup[name] {
			p.DeletePods = append(p.DeletePods, podDeletion{Pod: pod, Reason: "worker group " + name + " is no longer in the spec"})
		}
	}

	for i := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[i]
		if g.Hosts() > 1 {
			decideMultiHostGroup(o, p, g, byGroup[g.GroupName], hash)
		} else {
			decideGroup(o, p, g, byGroup[g.GroupName], hash)
		}
	}
}

// decideStatusEvents adds the Events of state changes the plan brings.
func decideStatusEvents(rc *rayv1.RayCluster, p *plan) {
	old, cur := rc.Status.Conditions, p.Status.Conditions
	became := func(t rayv1.RayClusterConditionType) bool {
		return !rayv1.IsConditionTrue(old, string(t)) && rayv1.IsConditionTrue(cur, string(t))
	}
	if became(rayv1.RayClusterSuspending) {
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonSuspending, Action: "Suspend",
			Message: "spec.suspend is true: deleting all pods"})
	}
	if became(rayv1.RayClusterSuspended) {
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonSuspended, Action: "Suspend",
			Message: "All pods are gone; the cluster is suspended"})
	}
	if rayv1.IsConditionTrue(old, string(rayv1.RayClusterSuspended)) && !rayv1.IsConditionTrue(cur, string(rayv1.RayClusterSuspended)) {
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonResumed, Action: "Resume",
			Message: "spec.suspend is false: recreating the pods"})
	}
}

// podsAfter is the pod list as it will be once the plan succeeds: created
// pods added, deleted pods terminating.
func podsAfter(pods []*corev1.Pod, p *plan, now time.Time) []*corev1.Pod {
	gone := map[string]bool{}
	for _, d := range p.DeletePods {
		gone[d.Pod.Name] = true
	}
	out := make([]*corev1.Pod, 0, len(pods)+len(p.CreatePods))
	for _, pod := range pods {
		if gone[pod.Name] && pod.DeletionTimestamp == nil {
			cp := pod.DeepCopy()
			t := metav1.NewTime(now)
			cp.DeletionTimestamp = &t
			pod = cp
		}
		out = append(out, pod)
	}
	return append(out, p.CreatePods...)
}

// sortPods orders pods by name, so decisions do not depend on cache order.
func sortPods(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
}

func olderThan(a, b *corev1.Pod) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// sortForScaleDown puts the pods cheapest to lose first: unscheduled, then
// not running, then not ready, then the newest.
func sortForScaleDown(pods []*corev1.Pod) {
	rank := func(p *corev1.Pod) int {
		switch {
		case p.Spec.NodeName == "":
			return 0
		case p.Status.Phase != corev1.PodRunning:
			return 1
		case !kit.IsRunningAndReady(p):
			return 2
		}
		return 3
	}
	sort.SliceStable(pods, func(i, j int) bool {
		if ri, rj := rank(pods[i]), rank(pods[j]); ri != rj {
			return ri < rj
		}
		return olderThan(pods[j], pods[i])
	})
}
