// Package v1 owns raydar's Go model of KubeRay's ray.io/v1 API: the
// RayCluster, RayJob, RayService and RayCronJob types (wire-compatible with
// KubeRay, so a manifest written for KubeRay decodes strictly into them),
// their defaults and
// kubebuilder markers (from which `make generate` writes the CRDs in
// rayapi/crds/bases), every label, annotation, finalizer, port, condition and
// state name (labels.go), small pure helpers every consumer needs
// (helpers.go), the one definition of a Ray pod (raypods.go), the one parser
// of a RayCronJob's schedule (ParseCronSchedule), the RayJobs a RayCronJob
// creates (raycronjob_jobs.go: a tick's and trigger now's), and the only
// implementation of spec validation (validation.go: entry points and shared
// rules; validation_<kind>.go: one kind's spec).
//
// +kubebuilder:object:generate=true
// +groupName=ray.io
package v1
