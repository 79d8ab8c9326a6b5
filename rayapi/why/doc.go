// Package why owns diagnosis: given what raydar's cache already holds about a
// RayCluster, RayJob or RayService (the object, its pods and their Events,
// the nodes, who reconciles, and Ray's own view of capacity when the
// dashboard answers) it names why the object is not progressing, as a
// ranked list of causes, each with its evidence and what to do.
//
// Every function is pure and cheap: the TUI (WHY column, the Why block of
// each detail page) computes it when an object or its pods change, not per
// frame, and `raydar why KIND NAME` (cmd/raydar, inputs gathered by
// kube/inspect) prints the same causes. A healthy object has no causes.
package why
