package watch

import (
	"reflect"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// SlimPod keeps every field a reader of the TUI's cache reads and drops
// the bulk of a KubeRay pod's spec.
func TestSlimPod(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	res := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "c-head", Namespace: "ns", Labels: map[string]string{rayv1.RayClusterLabelKey: "c"},
			Annotations: map[string]string{"a": "b"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}},
			OwnerReferences: []metav1.OwnerReference{{Kind: "RayCluster", Name: "c"}}},
		Spec: corev1.PodSpec{
			NodeName: "n1", NodeSelector: map[string]string{"gpu": "a100"}, SchedulerName: "volcano", ServiceAccountName: "c-head-sa",
			Tolerations:    []corev1.Toleration{{Key: "k"}},
			Affinity:       &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}},
			Volumes:        []corev1.Volume{{Name: "log"}},
			Overhead:       corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"sh"}, RestartPolicy: &always}},
			Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray", Resources: res,
				Env: []corev1.EnvVar{{Name: "RAY_ADDRESS", Value: "x"}}, Args: []string{"ray start --head"},
				ReadinessProbe: &corev1.Probe{}, VolumeMounts: []corev1.VolumeMount{{Name: "log"}}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			ContainerStatuses: []corev1.ContainerStatus{{Name: "ray-head", RestartCount: 3}}},
	}
	out, err := SlimPod(p)
	if err != nil {
		t.Fatal(err)
	}
	s := out.(*podview.Pod)
	c := s.Spec.Containers[0]
	switch {
	case s.ManagedFields != nil:
		t.Error("managedFields kept")
	case s.Name != "c-head" || s.Labels[rayv1.RayClusterLabelKey] != "c" || s.Annotations["a"] != "b" || len(s.OwnerReferences) != 1:
		t.Errorf("metadata lost: %+v", s.ObjectMeta)
	case s.Spec.NodeName != "n1" || s.Spec.NodeSelector["gpu"] != "a100" || len(s.Spec.Tolerations) != 1 || s.Spec.Affinity == nil:
		t.Errorf("scheduling fields lost: %+v", s.Spec)
	case c.Name != "ray-head" || c.Image != "rayproject/ray" || !c.Resources.Limits.Memory().Equal(resource.MustParse("4Gi")):
		t.Errorf("container lost name, image or resources: %+v", c)
	case s.Spec.SchedulerName != "volcano" || s.Spec.ServiceAccountName != "c-head-sa":
		// why's SchedulerNotBinding and PodGroupNotRunning read the one, its
		// autoscaler access check the other.
		t.Errorf("scheduler name or service account lost: %+v", s.Spec)
	case s.Spec.Overhead.Cpu().String() != "250m":
		t.Errorf("overhead lost: %v", s.Spec.Overhead)
	case len(s.Spec.InitContainers) != 1 || s.Spec.InitContainers[0].Image != "busybox" || s.Spec.InitContainers[0].Command != nil ||
		s.Spec.InitContainers[0].RestartPolicy == nil:
		t.Errorf("init containers: %+v", s.Spec.InitContainers)
	case c.Env != nil || c.Args != nil || c.ReadinessProbe != nil || c.VolumeMounts != nil:
		t.Errorf("bulk kept: %+v", s.Spec)
	case s.Status.PodIP != "10.0.0.1" || s.Status.ContainerStatuses[0].RestartCount != 3:
		t.Errorf("status lost: %+v", s.Status)
	}
	// A ready pod's containers drop their resources (nothing reads them).
	p.Spec.Containers[0].Resources = res
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	out, _ = SlimPod(p)
	if c := out.(*podview.Pod).Spec.Containers[0]; c.Resources.Limits != nil || c.Name != "ray-head" {
		t.Errorf("a ready pod's container: %+v", c)
	}
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	if out, _ := SlimPod(rc); out.(*rayv1.RayCluster).ManagedFields != nil || out.(*rayv1.RayCluster).Name != "c" {
		t.Error("a RayCluster keeps its managedFields or loses its name")
	}
}

// compactPod changes no value a reader sees, and two pods of one group
// share their label and annotation maps, tolerations and owner references.
func TestCompactPodSharesAndKeepsEveryValue(t *testing.T) {
	yes, no, secs := true, false, int64(300)
	now := metav1.Now()
	mk := func(name, ip string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", GenerateName: "c-worker-", UID: "u-" + types.UID(name),
				Labels:          map[string]string{rayv1.RayClusterLabelKey: "c", rayv1.RayNodeTypeLabelKey: "worker"},
				Annotations:     map[string]string{"ray.io/kuberay-version": "v1.6.2"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "c", UID: "rc-uid", Controller: &yes, BlockOwnerDeletion: &yes}},
				Finalizers:      []string{"f"}},
			Spec: corev1.PodSpec{NodeName: "n1", NodeSelector: map[string]string{"gpu": "a100"},
				Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs}},
				Containers:  []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.52.0"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, HostIP: "172.18.0.1", HostIPs: []corev1.HostIP{{IP: "172.18.0.1"}},
				QOSClass:   corev1.PodQOSBurstable,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "ray-worker", Image: "rayproject/ray:2.52.0", ImageID: "docker://sha", Started: &no,
					State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}},
		}
	}
	a, b := podview.Of(mk("c-worker-1", "10.0.0.1")), podview.Of(mk("c-worker-2", "10.0.0.2"))
	wantA, wantB := a.DeepCopy(), b.DeepCopy()
	compactPod(a)
	compactPod(b)
	if !equality.Semantic.DeepEqual(a, wantA) || !equality.Semantic.DeepEqual(b, wantB) {
		t.Fatalf("a value changed:\n%+v\n%+v", a, wantA)
	}
	same := func(what string, x, y any) {
		if reflect.ValueOf(x).UnsafePointer() != reflect.ValueOf(y).UnsafePointer() {
			t.Errorf("%s not shared", what)
		}
	}
	same("labels", a.Labels, b.Labels)
	same("annotations", a.Annotations, b.Annotations)
	same("node selector", a.Spec.NodeSelector, b.Spec.NodeSelector)
	same("tolerations", a.Spec.Tolerations, b.Spec.Tolerations)
	same("owner references", a.OwnerReferences, b.OwnerReferences)
	same("started", a.Status.ContainerStatuses[0].Started, b.Status.ContainerStatuses[0].Started)
	same("containers", a.Spec.Containers, b.Spec.Containers)
	if unsafe.StringData(a.Spec.Containers[0].Image) != unsafe.StringData(b.Spec.Containers[0].Image) {
		t.Error("image string not shared")
	}

	// A pod whose labels differ keeps its own; so do containers with
	// another image, and containers with resources (a pod not ready).
	c := podview.Of(mk("c-head", "10.0.0.3"))
	c.Labels[rayv1.RayNodeTypeLabelKey] = "head"
	c.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	compactPod(c)
	if c.Labels[rayv1.RayNodeTypeLabelKey] != "head" || a.Labels[rayv1.RayNodeTypeLabelKey] != "worker" {
		t.Errorf("labels mixed up: %v %v", c.Labels, a.Labels)
	}
	if c.Spec.Containers[0].Image != "rayproject/ray:2.53.0" || a.Spec.Containers[0].Image != "rayproject/ray:2.52.0" {
		t.Errorf("containers mixed up: %v %v", c.Spec.Containers, a.Spec.Containers)
	}
	d := podview.Of(mk("c-worker-3", "10.0.0.4"))
	d.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
	compactPod(d)
	if &d.Spec.Containers[0] == &a.Spec.Containers[0] || d.Spec.Containers[0].Resources.Limits.Memory().String() != "1Gi" {
		t.Errorf("a container with resources was shared or changed: %+v", d.Spec.Containers[0])
	}
}

// kubeletStatus is a Ray pod's status as a kubelet of 1.33 or later writes
// it (containerd; a spec with no pod-level resources): what SlimPod keeps,
// and what no reader reads besides.
func kubeletStatus(state, last corev1.ContainerState) corev1.PodStatus {
	now := metav1.Now()
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	uid, started := int64(1000), true
	cs := corev1.ContainerStatus{Name: "ray-worker", Image: "docker.io/rayproject/ray:2.52.0", Ready: state.Running != nil, RestartCount: 4,
		State: state, LastTerminationState: last, Started: &started,
		ImageID:            "docker.io/rayproject/ray@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		ContainerID:        "containerd://fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
		AllocatedResources: res, Resources: &corev1.ResourceRequirements{Requests: res, Limits: res},
		VolumeMounts: []corev1.VolumeMountStatus{{Name: "ray-logs", MountPath: "/tmp/ray"}, {Name: "shared-mem", MountPath: "/dev/shm"}},
		User:         &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: uid, GID: uid, SupplementalGroups: []int64{uid}}}}
	return corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.9", PodIP: "10.1.0.7", StartTime: &now, QOSClass: corev1.PodQOSGuaranteed,
		HostIPs: []corev1.HostIP{{IP: "10.0.0.9"}}, PodIPs: []corev1.PodIP{{IP: "10.1.0.7"}}, ObservedGeneration: 1,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [ray-worker]", LastTransitionTime: now, LastProbeTime: now},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{cs}, InitContainerStatuses: []corev1.ContainerStatus{cs}}
}

// SlimPod keeps of a pod's status what the views, the diagnosis and history
// read, and drops what a kubelet reports besides (IDs, resources, mounts,
// users).
func TestSlimPodStatusKeepsWhatReadersRead(t *testing.T) {
	oom := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, Message: "m",
		ContainerID: "containerd://0123"}}
	for _, tc := range []struct{ state, last corev1.ContainerState }{
		{corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, corev1.ContainerState{}},
		{corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s"}}, oom},
		{oom, corev1.ContainerState{}},
	} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "c-w", Labels: map[string]string{rayv1.RayClusterLabelKey: "c"}},
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-worker"}}},
			Status: kubeletStatus(tc.state, tc.last)}
		// The pod's own resources, reported when its spec has them.
		p.Status.AllocatedResources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
		p.Status.Resources = &corev1.ResourceRequirements{Limits: p.Status.AllocatedResources}
		full := p.DeepCopy()
		out, _ := SlimPod(p)
		slim := out.(*podview.Pod)
		st := slim.Status
		if got, want := status.Pod(slim), status.Pod(podview.Of(full)); got != want {
			t.Errorf("status word %q, want %q", got, want)
		}
		r1, n1 := status.PodReady(slim)
		if r0, n0 := status.PodReady(podview.Of(full)); r0 != r1 || n0 != n1 {
			t.Errorf("ready %s/%d, want %s/%d", r1, n1, r0, n0)
		}
		// Every field of the record, as the full pod has it, but the
		// terminated states' container IDs.
		want := full.Status
		want.Conditions = []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [ray-worker]",
				LastTransitionTime: full.Status.Conditions[0].LastTransitionTime},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: full.Status.Conditions[1].LastTransitionTime}}
		for _, cs := range []*[]corev1.ContainerStatus{&want.ContainerStatuses, &want.InitContainerStatuses} {
			c := &(*cs)[0]
			for _, term := range []*corev1.ContainerStateTerminated{c.State.Terminated, c.LastTerminationState.Terminated} {
				if term != nil {
					term.ContainerID = ""
				}
			}
		}
		if !equality.Semantic.DeepEqual(st, podview.Of(&corev1.Pod{Status: want}).Status) {
			t.Errorf("status after SlimPod:\n got %+v\nwant %+v", st, want)
		}
	}
}

// The Ray container's port named "metrics" survives the trim: kube/gauges
// reads Ray's gauges there, and never guesses a port.
func TestSlimPodKeepsTheMetricsPort(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-worker", Ports: []corev1.ContainerPort{
		{Name: "dashboard", ContainerPort: 8265}, {Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}}}}}}
	got, err := SlimPod(p)
	if err != nil {
		t.Fatal(err)
	}
	ports := got.(*podview.Pod).Spec.Containers[0].Ports
	if len(ports) != 1 || ports[0].Name != "metrics" || ports[0].ContainerPort != 9090 {
		t.Errorf("ports %+v, want only metrics:9090", ports)
	}
}
