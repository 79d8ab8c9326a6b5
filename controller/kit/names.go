package kit

// This file is the one home of the names and labels of every object the
// RayCluster reconciler creates. They follow KubeRay's scheme so that
// kubectl-ray, dashboards and selectors written for KubeRay keep working.
// Label and annotation keys come from rayapi/v1 (labels.go); this file only
// decides which objects carry which values.

import (
	"strconv"
	"strings"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

const (
	// maxPrefixLength bounds the base of a pod name ("<cluster>" or
	// "<cluster>-<group>") before its "-head-"/"-worker-", as KubeRay's
	// utils.PodName does.
	maxPrefixLength = 50
	// maxServiceNameLength is the DNS-1035 label limit of Service names.
	maxServiceNameLength = 63
	// suffixLength is the length of the random suffix of pod names; the
	// same length and alphabet as the API server's generateName.
	suffixLength = 5

	headServiceSuffix  = "-head-svc"
	headlessSuffix     = "-headless"
	redisCleanupSuffix = "-redis-cleanup"
	// RedisCleanupCtrName is the container of the GCS fault-tolerance Redis
	// clean-up Job.
	RedisCleanupCtrName = "redis-cleanup"
	// InitContainerName is the init container that waits for the GCS to be
	// ready.
	InitContainerName = "wait-gcs-ready"
	// WaitTLSContainerName is the init container that waits for the pod's
	// IP in its certificate (KubeRay v1.7.0 common/pod.go:497).
	WaitTLSContainerName = "wait-for-tls-ip-san"
	// SharedMemVolume is the memory-backed emptyDir volume mounted at
	// SharedMemPath in the Ray container.
	SharedMemVolume = "shared-mem"
	// RayLogsVolume is the emptyDir volume of Ray's logs, mounted at
	// RayLogsPath.
	RayLogsVolume = "ray-logs"
	// RayLogsPath is where Ray writes its logs and session files.
	RayLogsPath = "/tmp/ray"
	// SharedMemPath is the mount path of SharedMemVolume.
	SharedMemPath = "/dev/shm"
)

// RandomSuffix returns a generateName-style suffix. Names are chosen by the
// controller, not by the API server, so that an expectation can be recorded
// before the create request is sent (see the package comment).
func RandomSuffix() string { return utilrand.String(suffixLength) }

// trimName cuts s to n bytes, as KubeRay cuts its name prefixes (it leaves
// the cut end as it is, and so does raydar).
func trimName(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return s
}

// podNamePrefix is KubeRay's utils.PodName in its generateName form
// (v1.7.0 controllers/ray/utils/util.go:203): base cut to 50 bytes, then
// "-<node type>-", all lower-cased. The 50 leave room for "-worker-" and the
// five random characters within a 63-character hostname.
func podNamePrefix(base string, nodeType rayv1.RayNodeType) string {
	return strings.ToLower(trimName(base, maxPrefixLength) + "-" + string(nodeType) + "-")
}

// headPodPrefix is the name prefix of head pods: "<cluster>-head-"
// (raycluster_controller.go:1719 buildHeadPod; raydar never uses KubeRay's
// ENABLE_DETERMINISTIC_HEAD_POD_NAME).
func headPodPrefix(cluster string) string { return podNamePrefix(cluster, rayv1.HeadNode) }

// workerPodPrefix is the name prefix of a group's worker pods,
// "<cluster>-<group>-worker-", single-host and multi-host alike
// (raycluster_controller.go:1767 buildWorkerPod).
func workerPodPrefix(cluster, group string) string {
	return podNamePrefix(cluster+"-"+group, rayv1.WorkerNode)
}

// HeadPodName is a new head pod name.
func HeadPodName(cluster, suffix string) string { return headPodPrefix(cluster) + suffix }

// WorkerPodName is a new worker pod name; every host of a multi-host
// replica gets one of its own, as in KubeRay, which tells replicas apart by
// their labels only (ReplicaLabels).
func WorkerPodName(cluster, group, suffix string) string {
	return workerPodPrefix(cluster, group) + suffix
}

// ReplicaName names a multi-host replica, the value of its pods'
// ray.io/worker-group-replica-name: "<group>-<5 random characters>"
// (KubeRay's utils.GenerateRayWorkerReplicaGroupName, util.go:380).
func ReplicaName(group, suffix string) string { return group + "-" + suffix }

// HeadServiceName is the name of a RayCluster's head Service:
// headService.metadata.name when the override names it, else "<cluster>-head-svc".
func HeadServiceName(rc *rayv1.RayCluster) string {
	if hs := rc.Spec.HeadGroupSpec.HeadService; hs != nil && hs.Name != "" {
		return hs.Name
	}
	return DefaultHeadServiceName(rc.Name)
}

// DefaultHeadServiceName is "<cluster>-head-svc", the cluster's name cut
// so that the whole fits a Service name.
func DefaultHeadServiceName(cluster string) string {
	return trimName(cluster, maxServiceNameLength-len(headServiceSuffix)) + headServiceSuffix
}

// HeadlessWorkerServiceName names the headless Service of multi-host groups.
func HeadlessWorkerServiceName(cluster string) string {
	return trimName(cluster, maxServiceNameLength-len(headlessSuffix)) + headlessSuffix
}

// RedisCleanupJobName names the GCS fault-tolerance Redis clean-up Job.
func RedisCleanupJobName(cluster string) string {
	return trimName(cluster, maxServiceNameLength-len(redisCleanupSuffix)) + redisCleanupSuffix
}

// AutoscalerServiceAccountName is the service account of an autoscaling
// head: the head pod's serviceAccountName when set (the user creates it),
// else the cluster name (raydar creates it).
func AutoscalerServiceAccountName(rc *rayv1.RayCluster) string {
	if sa := rc.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName; sa != "" {
		return sa
	}
	return rc.Name
}

// AutoscalerRoleName names the autoscaler's Role and RoleBinding: the
// cluster name, whatever service account the head uses (KubeRay's names).
func AutoscalerRoleName(rc *rayv1.RayCluster) string { return CheckName(rc.Name) }

// CheckName is KubeRay's utils.CheckName, which it applies to the
// autoscaler's ServiceAccount, Role and RoleBinding names and to the head
// pod's serviceAccountName: names over 50 characters lose their first
// characters, and a leading digit or punctuation becomes "r".
func CheckName(s string) string {
	const maxLength = 50
	if len(s) > maxLength {
		s = s[len(s)-maxLength:]
	}
	if s == "" {
		return s
	}
	if r := rune(s[0]); unicode.IsDigit(r) || unicode.IsPunct(r) {
		s = "r" + s[1:]
	}
	return s
}

// HeadFQDN is the cluster-internal DNS name of the head Service.
func HeadFQDN(rc *rayv1.RayCluster, clusterDomain string) string {
	return HeadServiceName(rc) + "." + rc.Namespace + ".svc." + clusterDomain
}

// PodLabels are the labels of a Ray pod: the template's, then KubeRay's
// fixed labels. ray.io/cluster, ray.io/node-type and ray.io/group cannot be
// overridden by the template; the others can, as in KubeRay.
func PodLabels(cluster string, nodeType rayv1.RayNodeType, group string, template map[string]string) map[string]string {
	l := map[string]string{
		rayv1.RayNodeLabelKey:                   rayv1.RayNodeLabelValue,
		rayv1.RayIDLabelKey:                     cluster + "-" + string(nodeType),
		rayv1.KubernetesApplicationNameLabelKey: rayv1.ApplicationName,
		rayv1.KubernetesCreatedByLabelKey:       rayv1.ComponentName,
	}
	for k, v := range template {
		l[k] = v
	}
	l[rayv1.RayClusterLabelKey] = cluster
	l[rayv1.RayNodeTypeLabelKey] = string(nodeType)
	l[rayv1.RayNodeGroupLabelKey] = group
	return l
}

// headPodLabels are the labels of the head pod.
func headPodLabels(rc *rayv1.RayCluster) map[string]string {
	return PodLabels(rc.Name, rayv1.HeadNode, rayv1.RayNodeHeadGroupLabelValue, rc.Spec.HeadGroupSpec.Template.Labels)
}

// workerPodLabels are the labels of a worker pod of group g.
func workerPodLabels(rc *rayv1.RayCluster, g *rayv1.WorkerGroupSpec) map[string]string {
	return PodLabels(rc.Name, rayv1.WorkerNode, g.GroupName, g.Template.Labels)
}

// ReplicaLabels adds a worker pod's replica labels, as KubeRay v1.7.0 does
// with its RayMultiHostIndexing gate on (the default; common/pod.go
// DefaultWorkerPodTemplate): ray.io/worker-group-replica-index on every
// worker, and for a pod of a multi-host replica (replica != "") its
// ray.io/worker-group-replica-name and ray.io/replica-host-index.
func ReplicaLabels(l map[string]string, replicaIndex int, replica string, host int) {
	l[rayv1.RayWorkerReplicaIndexKey] = strconv.Itoa(replicaIndex)
	if replica != "" {
		l[rayv1.RayWorkerReplicaNameKey] = replica
		l[rayv1.RayHostIndexKey] = strconv.Itoa(host)
	}
}

// ServiceLabels are the labels of the head Service.
func ServiceLabels(cluster string, nodeType rayv1.RayNodeType) map[string]string {
	return map[string]string{
		rayv1.RayClusterLabelKey:                cluster,
		rayv1.RayNodeTypeLabelKey:               string(nodeType),
		rayv1.RayIDLabelKey:                     cluster + "-" + string(nodeType),
		rayv1.KubernetesApplicationNameLabelKey: rayv1.ApplicationName,
		rayv1.KubernetesCreatedByLabelKey:       rayv1.ComponentName,
	}
}

// HeadSelector selects the head pod of a cluster.
func HeadSelector(cluster string) map[string]string {
	return map[string]string{
		rayv1.RayClusterLabelKey:  cluster,
		rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode),
	}
}

// WorkerSelector selects the worker pods of a cluster.
func WorkerSelector(cluster string) map[string]string {
	return map[string]string{
		rayv1.RayClusterLabelKey:  cluster,
		rayv1.RayNodeTypeLabelKey: string(rayv1.WorkerNode),
	}
}

// ClusterPodsSelector selects every Ray pod of a cluster (head and workers).
func ClusterPodsSelector(cluster string) labels.Selector {
	req1, _ := labels.NewRequirement(rayv1.RayClusterLabelKey, selection.Equals, []string{cluster})
	req2, _ := labels.NewRequirement(rayv1.RayNodeTypeLabelKey, selection.In,
		[]string{string(rayv1.HeadNode), string(rayv1.WorkerNode)})
	return labels.NewSelector().Add(*req1, *req2)
}

// RayPodsCacheSelector restricts the shared cache to Ray pods: every pod
// carrying ray.io/node-type (head, worker, redis-cleanup and the pods of
// RayJob submitters), as KubeRay's own cache does.
func RayPodsCacheSelector() labels.Selector {
	req, _ := labels.NewRequirement(rayv1.RayNodeTypeLabelKey, selection.Exists, nil)
	return labels.NewSelector().Add(*req)
}

// RayServicesCacheSelector restricts the shared cache to Services of Ray
// clusters (every Service this package creates carries ray.io/cluster).
func RayServicesCacheSelector() labels.Selector {
	req, _ := labels.NewRequirement(rayv1.RayClusterLabelKey, selection.Exists, nil)
	return labels.NewSelector().Add(*req)
}

// ControllerRef is the controller owner reference a child of the ray.io/v1
// object kind/name/uid carries (blocking its owner's deletion, as KubeRay
// sets it).
func ControllerRef(kind, name string, uid types.UID) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{
		APIVersion:         rayv1.GroupVersion.String(),
		Kind:               kind,
		Name:               name,
		UID:                uid,
		Controller:         &t,
		BlockOwnerDeletion: &t,
	}
}

// OwnerRef is the controller owner reference every child of a RayCluster
// carries.
func OwnerRef(rc *rayv1.RayCluster) metav1.OwnerReference {
	return ControllerRef(rayv1.KindRayCluster, rc.Name, rc.UID)
}

// ControllerUID returns the UID of obj's controller owner, or "".
func ControllerUID(refs []metav1.OwnerReference) string {
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			return string(r.UID)
		}
	}
	return ""
}

// PodGroup is the group of a pod: the ray.io/group label.
func PodGroup(p *corev1.Pod) string { return p.Labels[rayv1.RayNodeGroupLabelKey] }

// IsHeadPod reports whether p is a head pod.
func IsHeadPod(p *corev1.Pod) bool {
	return p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode)
}

// IsWorkerPod reports whether p is a worker pod.
func IsWorkerPod(p *corev1.Pod) bool {
	return p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.WorkerNode)
}

// PodReplica is the multi-host replica name of p, "" for single-host pods.
func PodReplica(p *corev1.Pod) string { return p.Labels[rayv1.RayWorkerReplicaNameKey] }

// PodReplicaIndex is the replica index of worker pod p, -1 if absent (a pod
// made before raydar, or KubeRay, labelled single-host workers).
func PodReplicaIndex(p *corev1.Pod) int {
	i, err := strconv.Atoi(p.Labels[rayv1.RayWorkerReplicaIndexKey])
	if err != nil {
		return -1
	}
	return i
}

// RayService children. A RayService owns RayClusters named
// "<rayservice>-<5 random characters>" and two Services that follow its
// active cluster: "<rayservice>-head-svc" and "<rayservice>-serve-svc"
// (or spec.serveService.metadata.name).

const serveServiceSuffix = "-serve-svc"

// RayClusterServeServiceName names the serve Service of a RayCluster
// annotated ray.io/enable-serve-service: "<cluster>-serve-svc" (cluster
// names are at most 53 characters, so it fits).
func RayClusterServeServiceName(cluster string) string { return cluster + serveServiceSuffix }

// RayServiceClusterName is the name of a new RayCluster of a RayService.
func RayServiceClusterName(rayService, suffix string) string {
	return rayService + "-" + suffix
}

// RayServiceHeadServiceName is the name of a RayService's head Service.
func RayServiceHeadServiceName(rs *rayv1.RayService) string {
	return DefaultHeadServiceName(rs.Name)
}

// RayServiceServeServiceName is the name of a RayService's serve Service:
// spec.serveService.metadata.name when set, else "<rayservice>-serve-svc".
func RayServiceServeServiceName(rs *rayv1.RayService) string {
	if s := rs.Spec.ServeService; s != nil && s.Name != "" {
		return s.Name
	}
	return trimName(rs.Name, maxServiceNameLength-len(serveServiceSuffix)) + serveServiceSuffix
}

// RayJob children. A RayJob owns a RayCluster named "<rayjob>-<5 random
// characters>" (unless its clusterSelector names an existing one) and, in
// K8sJobMode, a submitter batch Job named "<rayjob>". Both carry the
// originated-from labels and the submission mode. A generated submission ID
// is "<rayjob>-<5 random characters>" too.

// RayJobClusterName is the name of a new RayCluster of a RayJob.
func RayJobClusterName(rayJob, suffix string) string { return rayJob + "-" + suffix }

// RayJobGeneratedID is a generated Ray submission ID for a RayJob.
func RayJobGeneratedID(rayJob, suffix string) string { return rayJob + "-" + suffix }

// RayJobSubmitterName is the name of a RayJob's K8sJobMode submitter Job.
func RayJobSubmitterName(rj *rayv1.RayJob) string { return rj.Name }

// rayJobChildLabels are the labels of the RayCluster and the submitter Job a
// RayJob creates: the RayJob's own labels, then the originated-from labels
// and the submission mode, which cannot be overridden.
func rayJobChildLabels(rj *rayv1.RayJob) map[string]string {
	l := make(map[string]string, len(rj.Labels)+4)
	for k, v := range rj.Labels {
		l[k] = v
	}
	l[rayv1.RayOriginatedFromCRNameLabelKey] = rj.Name
	l[rayv1.RayOriginatedFromCRDLabelKey] = rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob)
	l[rayv1.RayJobSubmissionModeLabelKey] = string(rj.Spec.EffectiveSubmissionMode())
	l[rayv1.KubernetesCreatedByLabelKey] = rayv1.ComponentName
	return l
}

// RayJobOwnerRef is the controller owner reference of a RayJob's children.
func RayJobOwnerRef(rj *rayv1.RayJob) metav1.OwnerReference {
	return ControllerRef(rayv1.KindRayJob, rj.Name, rj.UID)
}
