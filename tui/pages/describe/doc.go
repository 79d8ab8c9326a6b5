// Package describe is the describe page (d): an object's summary with the
// fields of its kind (its registry entry's, in the kind's page package,
// read through host.Kinds), its Events and its YAML (secrets redacted; a pod read whole
// from the API server).
package describe
