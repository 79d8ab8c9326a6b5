// Package e2e owns raydar's end-to-end test of `raydar demo` (issue 8): it
// builds the binary, runs the demo in a tmux session as a person would (a
// fixed-size terminal, keys sent with send-keys, the screen read with
// capture-pane), checks that every seeded workload shows with its expected
// state, scales a worker group and stops a job through the TUI's keys,
// checks both in the API, quits, and checks that nothing the demo started
// is left running.
//
// TestSandboxThenOperator (issue 12) runs the README's first run in two
// processes: `raydar sandbox`, then `raydar operator` with the KUBECONFIG it
// printed, then KubeRay's ray-job and ray-service samples (read from the
// oracle's module, KubeRay v1.6.2, in the Go module cache, as
// test/conformance reads them)
// applied server-side: the RayJob SUCCEEDS
// (played out by the simulated head), the same job asking for failure FAILS,
// the RayService becomes Ready.
//
// TestDemo needs tmux; both need the control-plane binaries (`make tools`)
// and are skipped with -short. The package has no code besides its tests.
package e2e
