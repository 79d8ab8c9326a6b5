// Package seed owns the live workloads of `raydar demo`: the ray.io/v1
// objects it creates in the sandbox, the scenario drivers that keep them
// moving, and the shape of the sandbox they are meant for.
//
//	sb, _ := sandbox.Start(ctx, seed.SandboxOptions())
//	c, _ := seed.NewClient(sb.Config)
//	_ = seed.Seed(ctx, c, seed.Options{})   // idempotent
//	go seed.Drive(ctx, c, seed.Options{Heads: sim}) // until ctx is done; sim: headsim's Sim
//
// What is seeded (Objects lists it; the names are the constants below), all
// in one namespace (DefaultNamespace unless Options.Namespace says otherwise)
// and labelled PartOfLabelKey=PartOfValue, each with a ScenarioAnnotationKey
// annotation telling what it shows:
//
//   - RayCluster ClusterElastic: in-tree autoscaling; Drive submits a job to
//     its head every Options.BurstEvery whose tasks need ElasticMax workers
//     for a while, so Ray's autoscaler (simulated beside the head when the
//     heads run with headsim's Options.Autoscaler, as in the demo) grows
//     the group, then removes the idle workers after ElasticIdleSeconds
//     through workersToDelete;
//   - RayCluster ClusterGPU: its worker group asks for more GPUs per pod than
//     any node of SandboxOptions has, so its workers stay Pending with
//     PodScheduled=False, reason Unschedulable ("Insufficient nvidia.com/gpu");
//   - RayCluster ClusterGPUInfer: one worker with InferGPUs GPUs, on the
//     GPU node; RayJob JobGPUHalf runs on it (clusterSelector) for a day,
//     played out by the simulated head with one task holding one GPU, so
//     the simulated node's gauges show one GPU busy and one idle (the
//     idle GPU of `:gpus` and `raydar top gpus`);
//   - RayCluster ClusterPaused: suspended;
//   - RayCluster ClusterShared: a long-lived cluster that jobs select;
//   - RayJob JobLogs: running, printing a line every second (LogsDuration);
//   - RayJob JobSucceeded and JobFailed: short jobs ending SUCCEEDED and
//     FAILED (exit 1 with a message on stderr);
//   - RayJob JobWaiting: clusterSelector on ClusterGPU, which never becomes
//     ready, so the job waits in Initializing;
//   - RayJob JobSelector: clusterSelector on ClusterShared, running;
//   - RayJob JobInfeasible: clusterSelector on ClusterShared with
//     entrypointNumGpus InfeasibleGPUs; no group of ClusterShared has GPUs,
//     so the Ray job stays PENDING and Ray's demand {GPU: 2} is infeasible;
//   - RayService ServiceName: once it is Ready and settled for
//     Options.UpgradeAfter, Drive bumps its application image tag (v1 → v2 →
//     …), so a pending cluster comes up, traffic switches to it and the old
//     cluster is deleted after ServiceDeletionDelay seconds; then again.
//     With Options.GatewayClass (the demo's simulated Gateway controller)
//     it upgrades with NewClusterWithIncrementalUpgrade
//     (IncrementalUpgrade): the traffic moves ServiceStepPercent every
//     ServiceStepSeconds through its Gateway and HTTPRoute;
//   - RayCronJob CronJobName: a two-second job every minute (CronEntrypoint),
//     each run on its own small cluster; deletionRules remove a finished
//     run's cluster after CronClusterTTLSeconds and its RayJob after
//     CronJobTTLSeconds, so a handful of runs stay in view.
//
// Every entrypoint is a short POSIX shell script (echo, printf, sleep and
// shell arithmetic only: no files, no network), because the sandbox's
// simulated Ray heads (kube/sandbox/headsim) run entrypoints as real
// subprocesses on this machine.
//
// The package does not start anything itself: the sandbox, the reconcile
// loop and the simulated heads are the caller's (cmd/raydar's demo).
package seed
