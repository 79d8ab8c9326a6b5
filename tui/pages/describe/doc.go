// Package describe is the describe page (d): an object's summary with the
// fields of its kind (Cluster, Job, Service, CronJob, Pod, read through
// host.Kinds), its Events and its YAML (secrets redacted; a pod read whole
// from the API server).
package describe
