package v1

// This file applies, in Go, the defaults the CRD schemas declare with
// +kubebuilder:default, for objects that never pass through an API server
// (fake clients, tests, `raydar` dry runs). The crds package tests that each
// default here matches the schema.

func ptrTo[T any](v T) *T { return &v }

// Default fills unset fields with the CRD defaults.
func (c *RayCluster) Default() { c.Spec.Default() }

// Default fills unset fields with the CRD defaults.
func (s *RayClusterSpec) Default() {
	for i := range s.WorkerGroupSpecs {
		g := &s.WorkerGroupSpecs[i]
		if g.Replicas == nil {
			g.Replicas = ptrTo(int32(0))
		}
		if g.MinReplicas == nil {
			g.MinReplicas = ptrTo(int32(0))
		}
		if g.MaxReplicas == nil {
			g.MaxReplicas = ptrTo(DefaultWorkerGroupMaxReplicas)
		}
		if g.Priority == nil {
			g.Priority = ptrTo(int32(0))
		}
		if g.NumOfHosts == 0 {
			g.NumOfHosts = 1
		}
	}
	if np := s.NetworkPolicy; np != nil && np.Mode == nil {
		np.Mode = ptrTo(NetworkPolicyDenyAll)
	}
}

// Default fills unset fields with the CRD defaults.
func (j *RayJob) Default() { j.Spec.Default() }

// Default fills unset fields with the CRD defaults (the jobTemplate's, which
// are a RayJob's).
func (c *RayCronJob) Default() { c.Spec.JobTemplate.Default() }

// Default fills unset fields with the CRD defaults.
func (s *RayJobSpec) Default() {
	if s.BackoffLimit == nil {
		s.BackoffLimit = ptrTo(int32(0))
	}
	if s.SubmissionMode == "" {
		s.SubmissionMode = K8sJobMode
	}
	if s.RayClusterSpec != nil {
		s.RayClusterSpec.Default()
	}
}

// Default fills unset fields with the CRD defaults.
func (r *RayService) Default() {
	s := &r.Spec
	if u := s.UpgradeStrategy; u != nil && u.ClusterUpgradeOptions != nil && u.ClusterUpgradeOptions.MaxSurgePercent == nil {
		u.ClusterUpgradeOptions.MaxSurgePercent = ptrTo(DefaultMaxSurgePercent)
	}
	s.RayClusterSpec.Default()
}
