// Package raylogs is Ray's log files through the dashboard: the file list
// of one node (L), one file followed (a widgets.LogView), the file that
// explains a RayJob or RayService (E), and, when Ray cannot be reached,
// what to read instead. ClusterKey, PodKey and ExplainKey are the keys
// other pages open them with.
package raylogs
