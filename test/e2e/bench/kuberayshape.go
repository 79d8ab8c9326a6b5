package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// kuberayShape stamps the objects KubeRay v1.6.2's own operator made
// (testdata/kuberay-v1.6.2.json, written by -capture-kuberay from the
// real binary bin/k8s/kuberay-operator on a sandbox, KubeRay's sample
// ray-cluster.complete.yaml as the RayCluster): its labels
// (ray.io/cluster, ray.io/node-type, ray.io/group, ray.io/identifier,
// ray.io/is-ray-node, app.kubernetes.io/created-by=kuberay-operator, …),
// annotations (ray.io/kuberay-version, the upgrade hash), env (RAY_ADDRESS,
// KUBERAY_GEN_RAY_START_CMD, …), the `ray start` command line, the exec
// wget probes, the /dev/shm and ray-logs volumes, ports and resources,
// byte for byte but for the names: every occurrence of the captured
// cluster's name and namespace is replaced by the stamped one's.
type kuberayShape struct {
	cluster      rayv1.RayCluster
	head, worker []byte // the captured pods' JSON
}

func loadKubeRayShape() (*kuberayShape, error) {
	var c kuberayCapture
	if err := json.Unmarshal(kuberayCaptured, &c); err != nil {
		return nil, fmt.Errorf("testdata/kuberay-v1.6.2.json: %w", err)
	}
	if c.Head.Name == "" || c.Worker.Name == "" {
		return nil, fmt.Errorf("testdata/kuberay-v1.6.2.json holds no captured pods: run -capture-kuberay")
	}
	s := &kuberayShape{cluster: c.Cluster}
	var err error
	if s.head, err = json.Marshal(c.Head); err != nil {
		return nil, err
	}
	s.worker, err = json.Marshal(c.Worker)
	return s, err
}

// RayCluster is the captured RayCluster named ns/name with workers
// replicas in its one worker group (minReplicas 0 or 1, maxReplicas at
// least 10, as the sample's).
func (s *kuberayShape) RayCluster(ns, name string, workers int) *rayv1.RayCluster {
	rc := s.cluster.DeepCopy()
	rc.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: ns, Labels: rc.Labels, Annotations: rc.Annotations}
	rc.Status = rayv1.RayClusterStatus{}
	g := &rc.Spec.WorkerGroupSpecs[0]
	g.Replicas = ptr(int32(workers))
	g.MinReplicas = ptr(int32(min(workers, 1)))
	g.MaxReplicas = ptr(int32(max(workers, 10)))
	return rc
}

// ReadyStatus is the status KubeRay writes once every pod of rc is
// Running and Ready: the captured one (endpoints, head names, desired
// resources) with state ready, the replica counts and the conditions
// KubeRay sets then (raycluster_types.go: HeadPodRunningAndReady,
// AllPodRunningAndReadyFirstTime).
func (s *kuberayShape) ReadyStatus(rc *rayv1.RayCluster, headPod, headIP string) rayv1.RayClusterStatus {
	st := *s.cluster.Status.DeepCopy()
	now := metav1.Now()
	n := *rc.Spec.WorkerGroupSpecs[0].Replicas
	st.State = rayv1.Ready
	st.StateTransitionTimes = map[rayv1.ClusterState]*metav1.Time{rayv1.Ready: &now}
	st.LastUpdateTime = &now
	st.ReadyWorkerReplicas, st.AvailableWorkerReplicas, st.DesiredWorkerReplicas = n, n, n
	st.MinWorkerReplicas, st.MaxWorkerReplicas = *rc.Spec.WorkerGroupSpecs[0].MinReplicas, *rc.Spec.WorkerGroupSpecs[0].MaxReplicas
	st.Head.PodName, st.Head.ServiceName, st.Head.PodIP = headPod, rc.Name+"-head-svc", headIP
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.LastTransitionTime = now
		switch c.Type {
		case "HeadPodReady":
			c.Status, c.Reason = metav1.ConditionTrue, "HeadPodRunningAndReady"
		case "RayClusterProvisioned":
			c.Status, c.Reason, c.Message = metav1.ConditionTrue, "AllPodRunningAndReadyFirstTime", "All Ray Pods are ready for the first time"
		}
	}
	return st
}

// Pod is pod j of rc (0 the head) as KubeRay makes it, owned by rc
// (whose UID must be set), named as KubeRay's generateName would
// (<cluster>-head-xxxxx, <cluster>-<group>-worker-xxxxx) with a suffix
// made from j.
func (s *kuberayShape) Pod(rc *rayv1.RayCluster, j int) (*corev1.Pod, error) {
	tmpl := s.worker
	if j == 0 {
		tmpl = s.head
	}
	b := bytes.ReplaceAll(tmpl, []byte(captureCluster), []byte(rc.Name))
	b = bytes.ReplaceAll(b, []byte(captureNS), []byte(rc.Namespace))
	p := &corev1.Pod{}
	if err := json.Unmarshal(b, p); err != nil {
		return nil, err
	}
	p.Name = p.GenerateName + kubeSuffix(j)
	p.Status = corev1.PodStatus{}
	for i := range p.OwnerReferences {
		p.OwnerReferences[i].UID = rc.UID
	}
	return p, nil
}

// kubeSuffix is j in the alphabet of generateName's five characters
// (k8s.io/apimachinery's rand.String).
func kubeSuffix(j int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	var sb strings.Builder
	for range 5 {
		sb.WriteByte(alphabet[j%len(alphabet)])
		j /= len(alphabet)
	}
	return sb.String()
}
