// Command bench (make bench-e2e) measures the real raydar TUI from outside,
// as a user meets it (issue 15, "The TUI end to end"): it starts a sandbox
// with the API server's audit log, creates the data set directly (N
// RayClusters of 1 head + 9 workers, their pods built as raydar's operator
// builds them, bound to fake Ready nodes (100 pods each) and written
// Running and Ready by this program; no operator, no kwok: nothing else
// changes while raydar is measured), builds the raydar binary and runs `raydar -A -c VIEW
// --no-reconcile` in a tmux pane of 120×40, and measures:
//
//   - first full render after the cache syncs (the "cache synced" line of
//     raydar's log → the output that completed a screen showing every row);
//   - the CPU time raydar and the kube-apiserver spent from the launch to
//     that full screen (/proc/PID/stat of each);
//   - idle CPU per minute (/proc/PID/stat) and bytes written to the
//     terminal while idle (tmux pipe-pane into a FIFO this program reads);
//   - peak RSS (VmHWM);
//   - key → screen latency: a key sent through a tmux control-mode client
//     (no process per key) → the first byte the program writes back;
//   - sort and filter latency (the same, for N/S and each typed filter
//     character);
//   - CPU per minute under 50 pod patches/s;
//   - bytes per steady update (one visible pod's restart count changes) vs a
//     full repaint (a resize);
//   - LIST requests after the cache synced, counted in the audit log;
//   - with -floor N, before raydar starts: how long clients that only sync
//     the same pods take on the same plane, and the kube-apiserver's CPU for
//     each (floor.go), the floor under raydar's "cache synced after start".
//
// -shape kuberay makes the objects as KubeRay v1.6.2's own operator made
// them (stamped from testdata/kuberay-v1.6.2.json, which -capture-kuberay
// wrote from the real binary: kuberayshape.go); -workers 0-1 and
// -big-cluster 1000 give issue 47's scale (10,000 clusters of 1 head and 0
// or 1 worker, and one of 1,000 workers), and -view big-cluster measures
// that cluster's page, opened from the RayCluster list.
//
// Issue 47's launch, against its floor: -floor-clients picks the floor
// clients by key, among them the steps from the RayClusters + pods cache
// to raydar's whole session (floorsession.go); each floor sync and each
// launch reports the requests it made (the audit log), the API server's
// /metrics around it (requests, watch-list seconds, bytes per watch event,
// its garbage collections) and the CPU of everything else on the machine
// (wire.go, cpu.go). -launch-only stops each run at its first full screen.
// The pane is read at a launch only once raydar has written (-screen-poll
// output): reading it every 10 ms cost the harness 0.25–0.36 CPU-s beside
// each launch.
//
// -raydar A,B measures several binaries in turn against one data set (an
// entry GOGC=100@A runs A with that environment); -view pods,rayclusters
// measures each binary on each view in turn; -rounds N repeats the turn.
//
// It lives under test/ (not hack/) because it reuses the test harnesses'
// objects (test/internal/testobj) and drives the binary in tmux as test/e2e
// does; it is a program, not a test, so `go test ./...` never runs it.
package main
