// Package kit is what raydar's three reconcilers (controller/raycluster,
// controller/rayjob, controller/rayservice) share: the names of every
// child object (names.go; labels are in rayapi/v1/labels.go), the
// other-operator gate and its detection (gate.go), conditions
// (kit_conditions.go), the Event record (kit_events.go), the filter of pod
// updates that change nothing a decision reads (kit_handler.go), child
// metadata as KubeRay writes it (kit_children.go) and small helpers
// (kit_util.go).
package kit
