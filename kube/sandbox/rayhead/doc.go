// Package rayhead owns a simulated Ray head node's HTTP side for the sandbox
// and the tests: the dashboard API (Jobs, Serve, GCS health) on one loopback
// listener and the Serve proxy (/-/healthz and the application routes) on
// another, speaking the wire format rayapi/dashboard expects from a real Ray
// head. It marshals rayapi/dashboard's own types (JobInfo, ServeDetails,
// VersionInfo, ServeRoutes, …) on rayapi/dashboard's paths: the head keeps
// no copy of the JSON shapes, so what it serves is what the client reads.
//
// Jobs the host can run run the way Ray runs them on a head: the entrypoint
// is a real "/bin/sh -c" subprocess in its own process group, with
// runtime_env.env_vars in its environment and a temporary working directory;
// its stdout and stderr are kept in a bounded buffer; its exit code decides
// SUCCEEDED or FAILED. Stopping sends SIGTERM to the process group and
// SIGKILL after a grace period. Close stops every job, so no subprocess
// outlives the Head; on Linux the shell also gets SIGKILL (Pdeathsig) if the
// whole process dies.
//
// Jobs the host cannot run are played out instead of executed, so that a
// real Ray job (KubeRay's samples: `python /home/ray/samples/…`, scripts that
// import ray) shows its whole lifecycle in the sandbox. Played out is:
//
//   - an entrypoint whose first command is not a shell builtin and not an
//     executable on the job's PATH (python, ray, …);
//   - python FILE where FILE does not exist on the host (a relative FILE
//     never does: the job's working directory is new and empty), python -c
//     CODE where CODE imports ray, python -m ray…;
//   - any job that asks for an outcome or a time, through runtime_env
//     env_vars RAYDAR_SANDBOX_OUTCOME=SUCCEEDED|FAILED and
//     RAYDAR_SANDBOX_DURATION=30s (or seconds), or the job metadata keys
//     raydar.io/sandbox-outcome and raydar.io/sandbox-duration (a RayJob's
//     spec.metadata); the env var wins when both are set.
//
// A played job may also ask for resources over time as a Ray driver's tasks
// do (tasks.go): RAYDAR_SANDBOX_TASKS or the metadata key
// raydar.io/sandbox-tasks, a JSON list of batches {"count": 8, "resources":
// {"GPU": 1}, "seconds": 30, "after": 0}; a task waits for a node with room
// (its shape is then the autoscaler's demand), runs its seconds, and goes
// with its job.
//
// A played job is PENDING for up to a second, RUNNING with one log line a
// second for the duration (default 5 s), then SUCCEEDED, or FAILED with exit
// code 1 when asked (an override with a bad value fails at once, naming
// it). Its logs start with a line saying it was not executed, why, and what
// it will do: "raydar sandbox: this entrypoint was not executed (python is
// not on this host); playing it out: SUCCEEDED after 5s". Stop and Close end
// it at once (STOPPED). With Options.AnnounceExecution, an executed job's
// logs start with a line saying it ran on the host. [WouldPlay] tells which
// way an entrypoint goes.
//
// Serve is simulated: a declarative config is validated as Ray's
// ServeDeploySchema would be (schema errors are a 400, as in Ray), then each
// application goes DEPLOYING → RUNNING (or DEPLOY_FAILED when its import_path
// "fails to import", by default when it contains "fail") after a configurable
// delay; applications left out of a new config are deleted.
//
// Capacity is simulated (capacity.go): [Head.SetNodes] tells the head its
// Ray nodes (kube/sandbox/headsim sends one per Ready pod); job entrypoint
// reservations (entrypoint_num_cpus/num_gpus/memory/resources) and Serve
// replicas (ray_actor_options num_cpus/num_gpus/memory/resources, times
// num_replicas) are placed first fit on the alive nodes. A job that does not
// fit stays PENDING, an application whose replicas do not all fit stays
// DEPLOYING (or goes back to it when its node goes), and what does not fit is
// the autoscaler's resource demand. /api/v0/nodes, /api/cluster_status and
// /api/v0/actors/summarize answer in Ray's shapes; [Head.AutoscalerState]
// gives the same to the simulated autoscaler (kube/sandbox/autoscaler).
// Before SetNodes the head knows no resources and places everything.
//
// Ray's log files are simulated (logs.go): /api/v0/logs lists each alive
// node's session log directory (raylet, gcs_server and dashboard logs on the
// head, a job-driver-<submission id>.log per job holding its real output, a
// runtime_env_setup-<submission id>.log per job telling its PENDING time,
// serve/controller_<pid>.log with each deploy and import failure), and
// /api/v0/logs/file and /api/v0/logs/stream serve a file's tail and follow
// it, woken by every write.
//
// Fault switches (SetRefuse, SetHTTP500, SetLatency) let tests exercise the
// client's error handling at runtime. All state changes are event-driven
// (process exit, timers, requests); nothing polls.
package rayhead
