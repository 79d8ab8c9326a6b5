package v1

import (
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func i32(v int32) *int32 { return &v }
func b(v bool) *bool     { return &v }

func TestWorkerGroupPods(t *testing.T) {
	tests := []struct {
		name                    string
		g                       WorkerGroupSpec
		replicas, desired       int32
		minPods, maxPods, hosts int32
	}{
		{"all unset: 0 desired, max is MaxInt32", WorkerGroupSpec{}, 0, 0, 0, math.MaxInt32, 1},
		{"within bounds", WorkerGroupSpec{Replicas: i32(3), MinReplicas: i32(1), MaxReplicas: i32(5)}, 3, 3, 1, 5, 1},
		{"below min is raised", WorkerGroupSpec{Replicas: i32(0), MinReplicas: i32(2), MaxReplicas: i32(5)}, 2, 2, 2, 5, 1},
		{"above max is lowered", WorkerGroupSpec{Replicas: i32(9), MinReplicas: i32(1), MaxReplicas: i32(4)}, 4, 4, 1, 4, 1},
		{"nil replicas counts as 0 then min", WorkerGroupSpec{MinReplicas: i32(1), MaxReplicas: i32(4)}, 1, 1, 1, 4, 1},
		{"multi-host multiplies", WorkerGroupSpec{Replicas: i32(2), MinReplicas: i32(0), MaxReplicas: i32(3), NumOfHosts: 4}, 2, 8, 0, 12, 4},
		{"suspended group wants nothing", WorkerGroupSpec{Replicas: i32(2), MinReplicas: i32(1), MaxReplicas: i32(3), Suspend: b(true), NumOfHosts: 2}, 0, 0, 0, 0, 2},
		{"suspend=false is not suspended", WorkerGroupSpec{Replicas: i32(2), MaxReplicas: i32(3), Suspend: b(false)}, 2, 2, 0, 3, 1},
		{"min > max (invalid): max wins", WorkerGroupSpec{Replicas: i32(1), MinReplicas: i32(5), MaxReplicas: i32(3)}, 3, 3, 5, 3, 1},
		{"negative replicas (invalid) clamp to 0", WorkerGroupSpec{Replicas: i32(-4)}, 0, 0, 0, math.MaxInt32, 1},
		{"negative numOfHosts (invalid) counts as 1", WorkerGroupSpec{Replicas: i32(2), NumOfHosts: -1}, 2, 2, 0, math.MaxInt32, 1},
		{"max × hosts saturates", WorkerGroupSpec{Replicas: i32(math.MaxInt32), NumOfHosts: 4}, math.MaxInt32, math.MaxInt32, 0, math.MaxInt32, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.g
			if got := g.DesiredReplicas(); got != tt.replicas {
				t.Errorf("DesiredReplicas = %d, want %d", got, tt.replicas)
			}
			if got := g.DesiredPods(); got != tt.desired {
				t.Errorf("DesiredPods = %d, want %d", got, tt.desired)
			}
			if got := g.MinPods(); got != tt.minPods {
				t.Errorf("MinPods = %d, want %d", got, tt.minPods)
			}
			if got := g.MaxPods(); got != tt.maxPods {
				t.Errorf("MaxPods = %d, want %d", got, tt.maxPods)
			}
			if got := g.Hosts(); got != tt.hosts {
				t.Errorf("Hosts = %d, want %d", got, tt.hosts)
			}
		})
	}
}

func TestClusterPods(t *testing.T) {
	groups := []WorkerGroupSpec{
		{GroupName: "a", Replicas: i32(2), MinReplicas: i32(1), MaxReplicas: i32(4)},
		{GroupName: "tpu", Replicas: i32(1), MinReplicas: i32(1), MaxReplicas: i32(2), NumOfHosts: 4},
		{GroupName: "off", Replicas: i32(3), MinReplicas: i32(3), MaxReplicas: i32(3), Suspend: b(true)},
	}
	tests := []struct {
		name                              string
		spec                              RayClusterSpec
		desiredWorkers, minW, maxW, total int32
	}{
		{"no workers", RayClusterSpec{}, 0, 0, 0, 1},
		{"sums groups with hosts, suspended group is 0", RayClusterSpec{WorkerGroupSpecs: groups}, 2 + 4, 1 + 4, 4 + 8, 1 + 6},
		{"suspended cluster: status counts unchanged, no pods", RayClusterSpec{WorkerGroupSpecs: groups, Suspend: b(true)}, 6, 5, 12, 0},
		{"unbounded max saturates", RayClusterSpec{WorkerGroupSpecs: []WorkerGroupSpec{{}, {}}}, 0, 0, math.MaxInt32, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.spec
			if got := s.DesiredWorkerPods(); got != tt.desiredWorkers {
				t.Errorf("DesiredWorkerPods = %d, want %d", got, tt.desiredWorkers)
			}
			if got := s.MinWorkerPods(); got != tt.minW {
				t.Errorf("MinWorkerPods = %d, want %d", got, tt.minW)
			}
			if got := s.MaxWorkerPods(); got != tt.maxW {
				t.Errorf("MaxWorkerPods = %d, want %d", got, tt.maxW)
			}
			if got := s.DesiredPods(); got != tt.total {
				t.Errorf("DesiredPods = %d, want %d", got, tt.total)
			}
		})
	}
}

func TestWorkerGroupLookup(t *testing.T) {
	s := RayClusterSpec{WorkerGroupSpecs: []WorkerGroupSpec{{GroupName: "a"}, {GroupName: "b"}}}
	g, ok := s.WorkerGroup("b")
	if !ok || g != &s.WorkerGroupSpecs[1] {
		t.Fatalf("WorkerGroup(b) = %p, %v; want a pointer into the spec", g, ok)
	}
	if _, ok := s.WorkerGroup("c"); ok {
		t.Fatal("WorkerGroup(c) found a group")
	}
}

func TestStatusPredicates(t *testing.T) {
	for _, s := range AllJobStatuses {
		want := s == JobStatusStopped || s == JobStatusSucceeded || s == JobStatusFailed
		if IsJobTerminal(s) != want || s.IsTerminal() != want {
			t.Errorf("IsJobTerminal(%q) = %v, want %v", s, IsJobTerminal(s), want)
		}
	}
	for _, s := range AllJobDeploymentStatuses {
		want := s == JobDeploymentStatusComplete || s == JobDeploymentStatusFailed
		if IsJobDeploymentTerminal(s) != want || s.IsTerminal() != want {
			t.Errorf("IsJobDeploymentTerminal(%q) = %v, want %v", s, IsJobDeploymentTerminal(s), want)
		}
	}
	j := &RayJob{Status: RayJobStatus{JobDeploymentStatus: JobDeploymentStatusFailed}}
	if !j.IsTerminal() {
		t.Error("a Failed RayJob is terminal")
	}
	if !IsServeApplicationFailed(ApplicationStatusDeployFailed) || IsServeApplicationFailed(ApplicationStatusRunning) {
		t.Error("IsServeApplicationFailed")
	}
}

func TestEffectiveValues(t *testing.T) {
	var js RayJobSpec
	if js.EffectiveSubmissionMode() != K8sJobMode || js.SubmitterBackoffLimit() != 2 || js.BackoffLimitOrDefault() != 0 {
		t.Errorf("RayJob defaults: mode %q submitter backoff %d backoff %d",
			js.EffectiveSubmissionMode(), js.SubmitterBackoffLimit(), js.BackoffLimitOrDefault())
	}
	js = RayJobSpec{SubmissionMode: HTTPMode, BackoffLimit: i32(3), SubmitterConfig: &SubmitterConfig{BackoffLimit: i32(0)},
		ClusterSelector:  map[string]string{RayClusterLabelKey: "c1"},
		DeletionStrategy: &DeletionStrategy{DeletionRules: []DeletionRule{{Policy: DeleteSelf}}}}
	if js.EffectiveSubmissionMode() != HTTPMode || js.SubmitterBackoffLimit() != 0 || js.BackoffLimitOrDefault() != 3 ||
		!js.UsesClusterSelector() || js.SelectedClusterName() != "c1" || !js.UsesDeletionRules() {
		t.Errorf("RayJob explicit values not returned: %+v", js)
	}

	var ss RayServiceSpec
	if ss.DeletionDelaySeconds() != 60 || ss.EffectiveUpgradeType() != NewCluster {
		t.Errorf("RayService defaults: delay %d upgrade %q", ss.DeletionDelaySeconds(), ss.EffectiveUpgradeType())
	}
	none := None
	ss = RayServiceSpec{RayClusterDeletionDelaySeconds: i32(0), UpgradeStrategy: &RayServiceUpgradeStrategy{Type: &none}}
	if ss.DeletionDelaySeconds() != 0 || ss.EffectiveUpgradeType() != None {
		t.Errorf("RayService explicit values not returned")
	}

	var cs RayClusterSpec
	if cs.IsAutoscalingEnabled() || cs.IsSuspended() || cs.GcsFTBackend() != "" || cs.UpgradeType() != RayClusterUpgradeNone ||
		cs.EffectiveAuthMode() != AuthModeDisabled || cs.IsGCSFaultToleranceEnabled(nil) {
		t.Error("RayCluster zero-value predicates")
	}
	// KubeRay lower-cases ray.io/ft-enabled (utils.IsGCSFaultToleranceEnabled).
	for v, want := range map[string]bool{"true": true, "True": true, "TRUE": true, "false": false, "yes": false, "": false} {
		if got := cs.IsGCSFaultToleranceEnabled(map[string]string{RayFTEnabledAnnotationKey: v}); got != want {
			t.Errorf("ray.io/ft-enabled %q: GCS FT %v, want %v", v, got, want)
		}
	}
	// Token auth needs an explicit mode: token (KubeRay's utils.IsAuthEnabled).
	for _, tc := range []struct {
		opts *AuthOptions
		want AuthMode
	}{
		{nil, AuthModeDisabled},
		{&AuthOptions{}, AuthModeDisabled},
		{&AuthOptions{Mode: AuthModeDisabled}, AuthModeDisabled},
		{&AuthOptions{Mode: AuthModeToken}, AuthModeToken},
	} {
		if got := (&RayClusterSpec{AuthOptions: tc.opts}).EffectiveAuthMode(); got != tc.want {
			t.Errorf("authOptions %+v: mode %q, want %q", tc.opts, got, tc.want)
		}
	}
	var nilSpec *RayClusterSpec
	if nilSpec.IsAutoscalingEnabled() {
		t.Error("nil spec autoscaling")
	}
	cs = RayClusterSpec{EnableInTreeAutoscaling: b(true), GcsFaultToleranceOptions: &GcsFaultToleranceOptions{},
		AuthOptions: &AuthOptions{Mode: AuthModeToken}}
	if !cs.IsAutoscalingEnabled() || cs.GcsFTBackend() != GcsFTBackendRedis || !cs.IsGCSFaultToleranceEnabled(nil) ||
		cs.EffectiveAuthMode() != AuthModeToken {
		t.Error("RayCluster set predicates")
	}

	var io *IngressOptions
	if io.PathOrDefault() != "/" || io.PathTypeOrDefault() != IngressPathTypePrefix {
		t.Error("ingress defaults")
	}

	rd := ManagedByRaydar
	empty := ""
	for _, tt := range []struct {
		v          *string
		controller string
		want       bool
	}{
		{nil, KubeRayController, true}, {nil, ManagedByRaydar, false}, {&empty, KubeRayController, true},
		{&rd, ManagedByRaydar, true}, {&rd, KubeRayController, false},
	} {
		if got := IsManagedBy(tt.v, tt.controller); got != tt.want {
			t.Errorf("IsManagedBy(%v, %q) = %v", tt.v, tt.controller, got)
		}
	}
}

func TestEffectiveAutoscalerVersion(t *testing.T) {
	v1, v2 := AutoscalerVersionV1, AutoscalerVersionV2
	head := func(env ...corev1.EnvVar) HeadGroupSpec {
		return HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray", Env: env}}}}}
	}
	for _, tt := range []struct {
		name string
		spec RayClusterSpec
		want AutoscalerVersion
	}{
		{"no autoscaling", RayClusterSpec{RayVersion: "2.52.0"}, ""},
		{"old Ray: v1", RayClusterSpec{EnableInTreeAutoscaling: b(true), RayVersion: "2.46.0"}, v1},
		{"Ray 2.47: v2", RayClusterSpec{EnableInTreeAutoscaling: b(true), RayVersion: "2.47.0"}, v2},
		{"unparsable version: v1", RayClusterSpec{EnableInTreeAutoscaling: b(true), RayVersion: "nightly"}, v1},
		{"explicit v1 wins", RayClusterSpec{EnableInTreeAutoscaling: b(true), RayVersion: "2.52.0", AutoscalerOptions: &AutoscalerOptions{Version: &v1}}, v1},
		{"env var on old Ray", RayClusterSpec{EnableInTreeAutoscaling: b(true), RayVersion: "2.40.0",
			HeadGroupSpec: head(corev1.EnvVar{Name: EnvRayEnableAutoscalerV2, Value: "1"})}, v2},
		{"env var off on new Ray", RayClusterSpec{EnableInTreeAutoscaling: b(true), RayVersion: "2.52.0",
			HeadGroupSpec: head(corev1.EnvVar{Name: EnvRayEnableAutoscalerV2, Value: "false"})}, v1},
	} {
		if got := tt.spec.EffectiveAutoscalerVersion(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDefault(t *testing.T) {
	c := &RayCluster{Spec: RayClusterSpec{
		HeadGroupSpec:    HeadGroupSpec{IngressOptions: &IngressOptions{}},
		NetworkPolicy:    &NetworkPolicyConfig{},
		WorkerGroupSpecs: []WorkerGroupSpec{{GroupName: "w", Replicas: i32(2)}},
	}}
	c.Default()
	g := c.Spec.WorkerGroupSpecs[0]
	if *g.Replicas != 2 || *g.MinReplicas != 0 || *g.MaxReplicas != math.MaxInt32 || g.NumOfHosts != 1 || *g.Priority != 0 {
		t.Errorf("worker group defaults: %+v", g)
	}
	// KubeRay's schema has no ingress defaults: the operator applies them.
	if o := c.Spec.HeadGroupSpec.IngressOptions; o.Path != nil || o.PathType != nil || o.PathOrDefault() != "/" || o.PathTypeOrDefault() != IngressPathTypePrefix {
		t.Errorf("ingress defaults: %+v", o)
	}
	if *c.Spec.NetworkPolicy.Mode != NetworkPolicyDenyAll {
		t.Error("network policy mode default")
	}

	j := &RayJob{Spec: RayJobSpec{RayClusterSpec: &RayClusterSpec{WorkerGroupSpecs: []WorkerGroupSpec{{}}}}}
	j.Default()
	if j.Spec.SubmissionMode != K8sJobMode || *j.Spec.BackoffLimit != 0 || j.Spec.RayClusterSpec.WorkerGroupSpecs[0].NumOfHosts != 1 {
		t.Errorf("RayJob defaults: %+v", j.Spec)
	}

	inc := NewClusterWithIncrementalUpgrade
	s := &RayService{Spec: RayServiceSpec{UpgradeStrategy: &RayServiceUpgradeStrategy{Type: &inc, ClusterUpgradeOptions: &ClusterUpgradeOptions{}}}}
	s.Default()
	// rayClusterDeletionDelaySeconds has no schema default in KubeRay.
	if s.Spec.RayClusterDeletionDelaySeconds != nil || s.Spec.DeletionDelaySeconds() != 60 || *s.Spec.UpgradeStrategy.ClusterUpgradeOptions.MaxSurgePercent != 100 {
		t.Errorf("RayService defaults: %+v", s.Spec)
	}
}

func TestDefaultPorts(t *testing.T) {
	want := map[string]int32{"gcs-server": 6379, "dashboard": 8265, "client": 10001, "serve": 8000, "metrics": 8080, "dashboard-agent": 52365}
	got := DefaultPorts()
	if len(got) != len(want) {
		t.Fatalf("DefaultPorts = %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("port %s = %d, want %d", k, got[k], v)
		}
	}
}

func TestRayPodDefinition(t *testing.T) {
	cases := map[string]struct {
		podLabels map[string]string
		want      bool
	}{
		"head":         {map[string]string{RayNodeTypeLabelKey: string(HeadNode)}, true},
		"worker":       {map[string]string{RayNodeTypeLabelKey: string(WorkerNode)}, true},
		"submitter":    {map[string]string{RayNodeTypeLabelKey: "submitter"}, true},
		"cluster only": {map[string]string{RayClusterLabelKey: "c"}, false},
		"no labels":    {nil, false},
	}
	sel := RayPodSelector()
	for name, c := range cases {
		if got := IsRayPod(c.podLabels); got != c.want {
			t.Errorf("%s: IsRayPod = %v, want %v", name, got, c.want)
		}
		if got := sel.Matches(labels.Set(c.podLabels)); got != c.want {
			t.Errorf("%s: RayPodSelector matches = %v, want %v", name, got, c.want)
		}
	}
}
