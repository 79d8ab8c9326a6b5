// Package rayhead owns a simulated Ray head node's HTTP side for the sandbox
// and the tests: the dashboard API (Jobs, Serve, GCS health) on one loopback
// listener and the Serve proxy (/-/healthz and the application routes) on
// another, speaking the wire format rayapi/dashboard expects from a real Ray
// head.
//
// Jobs run the way Ray runs them on a head: the entrypoint is a real
// "/bin/sh -c" subprocess in its own process group, with runtime_env.env_vars
// in its environment and a temporary working directory; its stdout and stderr
// are kept in a bounded buffer; its exit code decides SUCCEEDED or FAILED.
// Stopping sends SIGTERM to the process group and SIGKILL after a grace
// period. Close stops every job, so no subprocess outlives the Head; on Linux
// the shell also gets SIGKILL (Pdeathsig) if the whole process dies.
//
// Serve is simulated: a declarative config is validated as Ray's
// ServeDeploySchema would be (schema errors are a 400, as in Ray), then each
// application goes DEPLOYING → RUNNING (or DEPLOY_FAILED when its import_path
// "fails to import", by default when it contains "fail") after a configurable
// delay; applications left out of a new config are deleted.
//
// Fault switches (SetRefuse, SetHTTP500, SetLatency) let tests exercise the
// client's error handling at runtime. All state changes are event-driven
// (process exit, timers, requests); nothing polls.
package rayhead
