package seed

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/rayapi/crds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// DefaultNamespace holds the seeded objects unless Options.Namespace is set.
const DefaultNamespace = "raydar-demo"

// Names of the seeded objects.
const (
	ClusterElastic = "elastic"
	ClusterGPU     = "gpu-train"
	ClusterPaused  = "paused"
	ClusterShared  = "shared"
	// ClusterGPUInfer: one worker with InferGPUs GPUs, of which JobGPUHalf
	// keeps one busy: the demo's idle GPU (issue 44).
	ClusterGPUInfer = "gpu-infer"

	JobLogs      = "train-live-logs"
	JobSucceeded = "wordcount"
	JobFailed    = "etl-missing-input"
	JobWaiting   = "finetune-waits-for-gpus"
	JobSelector  = "score-on-shared"
	// JobInfeasible asks for InfeasibleGPUs GPUs on ClusterShared, whose
	// groups have none: Ray keeps it PENDING, its demand infeasible.
	JobInfeasible = "embed-needs-2-gpus"
	// JobGPUHalf runs on ClusterGPUInfer with one task holding one GPU.
	JobGPUHalf = "infer-on-one-gpu"

	ServiceName = "summarizer"

	CronJobName = "minutely-report"
)

// Worker groups of the seeded clusters.
const (
	// ElasticGroup is ClusterElastic's worker group, scaled by the
	// (simulated) Ray autoscaler as Drive's bursts of demand ask.
	ElasticGroup = "cpu"
	// GPUGroup is ClusterGPU's worker group that cannot be scheduled.
	GPUGroup = "a100x8"
	// SharedGroup is ClusterShared's worker group.
	SharedGroup = "cpu"
	// InferGroup is ClusterGPUInfer's worker group (InferGPUs GPUs a pod).
	InferGroup = "a10gx2"
	InferGPUs  = 2
)

// Shapes the scenarios depend on.
const (
	// ElasticMin and ElasticMax bound the autoscaler's scaling of
	// ClusterElastic; ElasticStart is its seeded replica count.
	ElasticMin, ElasticMax, ElasticStart = 1, 4, 1
	// ElasticIdleSeconds is ClusterElastic's autoscalerOptions
	// idleTimeoutSeconds: how long a worker stays idle before it goes.
	ElasticIdleSeconds = 20
	// ElasticTaskCPUs is the CPUs of each task of Drive's bursts: one
	// ClusterElastic worker's.
	ElasticTaskCPUs = 2
	// SharedReplicas is ClusterShared's seeded worker count; its group
	// allows up to SharedMax (room for a user's scale-up).
	SharedReplicas, SharedMax = 2, 6
	// GPUsPerWorker is what each ClusterGPU worker asks for; it is more
	// than NodeGPUs, the most any node of SandboxOptions has.
	GPUsPerWorker = 8
	NodeGPUs      = 4
	// InfeasibleGPUs is JobInfeasible's entrypoint_num_gpus.
	InfeasibleGPUs = 2
	// GPUResource is the extended resource name of a GPU.
	GPUResource corev1.ResourceName = "nvidia.com/gpu"
	// ServiceDeletionDelay is the RayService's
	// rayClusterDeletionDelaySeconds: how long the old cluster lingers
	// after traffic has switched.
	ServiceDeletionDelay = 15
	// ServiceSurgePercent, ServiceStepPercent and ServiceStepSeconds are
	// the RayService's clusterUpgradeOptions when the sandbox has a Gateway
	// API (Options.GatewayClass): maxSurgePercent, stepSizePercent and
	// intervalSeconds.
	ServiceSurgePercent = 50
	ServiceStepPercent  = 25
	ServiceStepSeconds  = 10
	// FirstServiceImage is the RayService's seeded application image;
	// Drive bumps the tag's number on each upgrade.
	FirstServiceImage = "ghcr.io/raydar-demo/summarizer:v1"
	// RayImage is the image of every other Ray container.
	RayImage = "rayproject/ray:2.52.0"
	// RayVersion is spec.rayVersion of every cluster.
	RayVersion = "2.52.0"
	// LogsDuration is how long JobLogs runs (one line a second).
	LogsDuration = 10 * time.Minute
	// JobTTLSeconds is ttlSecondsAfterFinished of the jobs that make their
	// own cluster: it is deleted that long after the job ends.
	JobTTLSeconds = 60
	// CronJobSchedule is CronJobName's schedule: every minute.
	CronJobSchedule = "* * * * *"
	// CronClusterTTLSeconds and CronJobTTLSeconds are the deletionRules of
	// CronJobName's RayJobs: a finished run's cluster goes after the first,
	// the RayJob itself after the second, so about five runs stay in view
	// and the demo does not pile up a RayJob a minute.
	CronClusterTTLSeconds = 30
	CronJobTTLSeconds     = 300
)

// Keys set on every seeded object.
const (
	// PartOfLabelKey=PartOfValue marks every seeded object (the
	// well-known app.kubernetes.io/part-of label).
	PartOfLabelKey = "app.kubernetes.io/part-of"
	PartOfValue    = "raydar-demo"
	// ScenarioAnnotationKey says, in a sentence, what an object shows.
	ScenarioAnnotationKey = "demo.raydar.io/scenario"
)

// SandboxOptions is the sandbox the seeded objects are shaped for: a
// scheduler, the controller-manager, kwok, three CPU nodes (16 CPU, 64 GiB)
// and one GPU node with NodeGPUs GPUs, and the ray.io CRDs. Everything seeded
// fits with room to spare (about 25 of 64 CPUs at the busiest, during a
// RayService upgrade), except ClusterGPU's workers, which no node can hold.
func SandboxOptions() sandbox.Options {
	o := sandbox.Full()
	o.Nodes = []sandbox.NodePool{
		{Count: 3, NamePrefix: "kwok-node", CPU: "16", Memory: "64Gi"},
		{Count: 1, NamePrefix: "kwok-gpu-node", CPU: "16", Memory: "64Gi", GPU: NodeGPUs,
			Labels: map[string]string{"nvidia.com/gpu.product": "NVIDIA-A10G"}},
	}
	o.CRDs = [][]byte{crds.YAML()}
	return o
}

// Objects returns the objects Seed creates in namespace ns, in creation
// order: clusters, then jobs, then the service, then the RayCronJob.
func Objects(ns string) []client.Object {
	return []client.Object{
		elasticCluster(ns),
		gpuCluster(ns),
		pausedCluster(ns),
		sharedCluster(ns),
		gpuInferCluster(ns),
		logsJob(ns),
		succeededJob(ns),
		failedJob(ns),
		waitingJob(ns),
		selectorJob(ns),
		infeasibleJob(ns),
		gpuHalfJob(ns),
		service(ns),
		cronJob(ns),
	}
}

func meta(ns, name, scenario string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace:   ns,
		Name:        name,
		Labels:      map[string]string{PartOfLabelKey: PartOfValue},
		Annotations: map[string]string{ScenarioAnnotationKey: scenario},
	}
}

// resources requests and limits cpu CPUs and 4 GiB per CPU (the nodes'
// ratio), plus extra.
func resources(cpu int64, extra corev1.ResourceList) corev1.ResourceRequirements {
	l := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dGi", 4*cpu)),
	}
	for k, v := range extra {
		l[k] = v
	}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

func podTemplate(container, image string, res corev1.ResourceRequirements) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: container, Image: image, Resources: res,
	}}}}
}

func head(image string, cpu int64) rayv1.HeadGroupSpec {
	return rayv1.HeadGroupSpec{
		RayStartParams: map[string]string{"dashboard-host": "0.0.0.0"},
		Template:       podTemplate("ray-head", image, resources(cpu, nil)),
	}
}

func workers(group, image string, replicas, lo, hi int32, res corev1.ResourceRequirements) rayv1.WorkerGroupSpec {
	return rayv1.WorkerGroupSpec{
		GroupName:      group,
		Replicas:       ptr(replicas),
		MinReplicas:    ptr(lo),
		MaxReplicas:    ptr(hi),
		RayStartParams: map[string]string{},
		Template:       podTemplate("ray-worker", image, res),
	}
}

func ptr[T any](v T) *T { return &v }

// smallSpec is a one-head, one-worker cluster for jobs that bring their own.
func smallSpec() *rayv1.RayClusterSpec {
	return &rayv1.RayClusterSpec{
		RayVersion:       RayVersion,
		HeadGroupSpec:    head(RayImage, 1),
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{workers("cpu", RayImage, 1, 0, 2, resources(1, nil))},
	}
}

func elasticCluster(ns string) *rayv1.RayCluster {
	v2 := rayv1.AutoscalerVersionV2
	return &rayv1.RayCluster{
		ObjectMeta: meta(ns, ClusterElastic, fmt.Sprintf(
			"in-tree autoscaling: Ray's autoscaler (simulated) grows worker group %q (%d to %d replicas) when a job's tasks "+
				"ask for more than the workers have, and removes workers idle for %d s through workersToDelete; "+
				"the demo submits such a job again and again",
			ElasticGroup, ElasticMin, ElasticMax, ElasticIdleSeconds)),
		Spec: rayv1.RayClusterSpec{
			RayVersion:              RayVersion,
			EnableInTreeAutoscaling: ptr(true),
			AutoscalerOptions:       &rayv1.AutoscalerOptions{Version: &v2, IdleTimeoutSeconds: ptr(int32(ElasticIdleSeconds))},
			HeadGroupSpec:           head(RayImage, 1),
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
				workers(ElasticGroup, RayImage, ElasticStart, ElasticMin, ElasticMax, resources(ElasticTaskCPUs, nil)),
			},
		},
	}
}

func gpuCluster(ns string) *rayv1.RayCluster {
	gpus := corev1.ResourceList{GPUResource: *resource.NewQuantity(GPUsPerWorker, resource.DecimalSI)}
	return &rayv1.RayCluster{
		ObjectMeta: meta(ns, ClusterGPU, fmt.Sprintf(
			"each worker asks for %d GPUs and no node has more than %d, so the workers stay Pending: see their PodScheduled condition and Events",
			GPUsPerWorker, NodeGPUs)),
		Spec: rayv1.RayClusterSpec{
			RayVersion:    RayVersion,
			HeadGroupSpec: head(RayImage, 1),
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
				workers(GPUGroup, RayImage, 2, 0, 4, resources(8, gpus)),
			},
		},
	}
}

func pausedCluster(ns string) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: meta(ns, ClusterPaused, "suspended: no pods until it is resumed"),
		Spec: rayv1.RayClusterSpec{
			Suspend:       ptr(true),
			RayVersion:    RayVersion,
			HeadGroupSpec: head(RayImage, 1),
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
				workers("cpu", RayImage, 2, 0, 4, resources(2, nil)),
			},
		},
	}
}

func sharedCluster(ns string) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: meta(ns, ClusterShared, fmt.Sprintf("a long-lived cluster that RayJob %s runs on through its clusterSelector", JobSelector)),
		Spec: rayv1.RayClusterSpec{
			RayVersion:    RayVersion,
			HeadGroupSpec: head(RayImage, 1),
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
				workers(SharedGroup, RayImage, SharedReplicas, 0, SharedMax, resources(1, nil)),
			},
		},
	}
}

// Entrypoints. Each is `sh -c '<script>'`, so it means the same to a real
// Ray job submission (which runs the entrypoint in a shell) and to the
// simulated head (which runs it with /bin/sh -c). The scripts contain no
// single quote and use only echo, printf, sleep and shell arithmetic.
var (
	// LogsEntrypoint prints one line a second for LogsDuration, then succeeds.
	LogsEntrypoint = fmt.Sprintf(`sh -c 'echo "training resnet50 on the demo dataset (simulated: one step a second)"; `+
		`n=%d; i=0; while [ "$i" -lt "$n" ]; do i=$((i+1)); l=$((22000/(i+9))); `+
		`printf "step %%d/%%d loss=%%d.%%03d throughput=%%d img/s\n" "$i" "$n" $((l/1000)) $((l%%1000)) $((1180+(i*7)%%41)); `+
		`sleep 1; done; echo "training finished"'`, int(LogsDuration/time.Second))
	// SucceededEntrypoint runs about three seconds and exits 0.
	SucceededEntrypoint = `sh -c 'echo "counting words in 3 shards"; for s in 1 2 3; do echo "shard $s/3 done"; sleep 1; done; echo "total: 4242 words"'`
	// FailedMessage is what FailedEntrypoint writes to stderr before it
	// exits 1.
	FailedMessage = "FileNotFoundError: s3://demo-bucket/2026-11/part-0000.parquet does not exist"
	// FailedEntrypoint reads for two seconds, then fails with FailedMessage.
	FailedEntrypoint = `sh -c 'echo "loading s3://demo-bucket/2026-11/part-0000.parquet"; sleep 2; echo "` + FailedMessage + `" >&2; exit 1'`
	// WaitingEntrypoint would run for a minute, if its cluster ever became
	// ready.
	WaitingEntrypoint = `sh -c 'echo "fine-tuning on 8 GPUs"; sleep 60; echo "done"'`
	// CronEntrypoint is each run of CronJobName: about two seconds, exit 0.
	CronEntrypoint = `sh -c 'echo "summing up the last minute"; sleep 1; echo "42 requests, 0 errors"; sleep 1; echo "report written"'`
	// InfeasibleEntrypoint would embed documents on GPUs, if Ray ever
	// placed it.
	InfeasibleEntrypoint = `sh -c 'echo "embedding 1M documents on 2 GPUs"; sleep 60; echo "done"'`
	// SelectorEntrypoint prints a line every five seconds for five hours.
	SelectorEntrypoint = `sh -c 'i=0; while [ "$i" -lt 3600 ]; do i=$((i+1)); echo "batch $i: scored 512 rows"; sleep 5; done'`
)

// ownClusterJob is a RayJob that brings its own (small) cluster, deleted
// JobTTLSeconds after the job ends.
func ownClusterJob(ns, name, scenario, entrypoint string) *rayv1.RayJob {
	return &rayv1.RayJob{
		ObjectMeta: meta(ns, name, scenario),
		Spec: rayv1.RayJobSpec{
			Entrypoint:               entrypoint,
			RayClusterSpec:           smallSpec(),
			ShutdownAfterJobFinishes: true,
			TTLSecondsAfterFinished:  JobTTLSeconds,
		},
	}
}

func selectorJobOn(ns, name, scenario, cluster, entrypoint string) *rayv1.RayJob {
	return &rayv1.RayJob{
		ObjectMeta: meta(ns, name, scenario),
		Spec: rayv1.RayJobSpec{
			Entrypoint:      entrypoint,
			ClusterSelector: map[string]string{rayv1.RayClusterLabelKey: cluster},
		},
	}
}

func infeasibleJob(ns string) *rayv1.RayJob {
	j := selectorJobOn(ns, JobInfeasible, fmt.Sprintf(
		"asks Ray for %d GPUs (entrypointNumGpus) on cluster %s, whose only worker group has none: the Ray job stays PENDING and its demand is infeasible",
		InfeasibleGPUs, ClusterShared), ClusterShared, InfeasibleEntrypoint)
	j.Spec.EntrypointNumGpus = InfeasibleGPUs
	return j
}

func logsJob(ns string) *rayv1.RayJob {
	return ownClusterJob(ns, JobLogs, fmt.Sprintf("runs for %s printing a line a second: follow its logs, or stop it", LogsDuration), LogsEntrypoint)
}

func succeededJob(ns string) *rayv1.RayJob {
	return ownClusterJob(ns, JobSucceeded, "finishes in a few seconds and SUCCEEDS; its cluster is deleted a minute later", SucceededEntrypoint)
}

func failedJob(ns string) *rayv1.RayJob {
	return ownClusterJob(ns, JobFailed, "exits 1 after two seconds: FAILED, with the error in its message and logs", FailedEntrypoint)
}

func waitingJob(ns string) *rayv1.RayJob {
	return selectorJobOn(ns, JobWaiting,
		fmt.Sprintf("selects cluster %s, whose GPU workers cannot be scheduled, so it waits for the cluster to become ready", ClusterGPU),
		ClusterGPU, WaitingEntrypoint)
}

func gpuInferCluster(ns string) *rayv1.RayCluster {
	gpus := corev1.ResourceList{GPUResource: *resource.NewQuantity(InferGPUs, resource.DecimalSI)}
	return &rayv1.RayCluster{
		ObjectMeta: meta(ns, ClusterGPUInfer, fmt.Sprintf(
			"one worker holding %d GPUs; job %s keeps one busy and the other idle: find it with :gpus or `raydar top gpus`",
			InferGPUs, JobGPUHalf)),
		Spec: rayv1.RayClusterSpec{
			RayVersion:       RayVersion,
			HeadGroupSpec:    head(RayImage, 1),
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{workers(InferGroup, RayImage, 1, 1, 1, resources(4, gpus))},
		},
	}
}

// GPUHalfTasks is JobGPUHalf's simulated work (kube/sandbox/rayhead
// TasksMetadata): one task holding one GPU until the job ends.
const GPUHalfTasks = `[{"count": 1, "resources": {"GPU": 1}}]`

func gpuHalfJob(ns string) *rayv1.RayJob {
	j := selectorJobOn(ns, JobGPUHalf, fmt.Sprintf(
		"runs on %s for a day with one task on one GPU: the worker's other GPU stays idle", ClusterGPUInfer),
		ClusterGPUInfer, SelectorEntrypoint)
	j.Spec.Metadata = map[string]string{"raydar.io/sandbox-duration": "86400", "raydar.io/sandbox-tasks": GPUHalfTasks}
	return j
}

func selectorJob(ns string) *rayv1.RayJob {
	return selectorJobOn(ns, JobSelector,
		fmt.Sprintf("runs on the existing cluster %s (clusterSelector); stopping it leaves the cluster alone", ClusterShared),
		ClusterShared, SelectorEntrypoint)
}

// ServeConfig is the RayService's serveConfigV2.
const ServeConfig = `applications:
  - name: summarizer
    route_prefix: /summarize
    import_path: summarizer.app:deployment
    deployments:
      - name: Summarizer
        num_replicas: 2
        ray_actor_options:
          num_cpus: 0.5
`

func service(ns string) *rayv1.RayService {
	return &rayv1.RayService{
		ObjectMeta: meta(ns, ServiceName, fmt.Sprintf(
			"upgraded while you watch: a new image tag brings up a pending cluster, traffic switches to it, the old cluster goes %d s later",
			ServiceDeletionDelay)),
		Spec: rayv1.RayServiceSpec{
			RayClusterDeletionDelaySeconds: ptr(int32(ServiceDeletionDelay)),
			ServeConfigV2:                  ServeConfig,
			RayClusterSpec: rayv1.RayClusterSpec{
				RayVersion:    RayVersion,
				HeadGroupSpec: head(FirstServiceImage, 1),
				WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
					workers("serve", FirstServiceImage, 1, 1, 4, resources(2, nil)),
				},
			},
		},
	}
}

// IncrementalUpgrade makes rs upgrade with NewClusterWithIncrementalUpgrade
// through a Gateway of GatewayClass class: the new cluster's Serve
// capacity raised ServiceSurgePercent at a time, the traffic moved
// ServiceStepPercent every ServiceStepSeconds, as KubeRay v1.6.2 does it.
// KubeRay requires the in-tree autoscaler for it (the new cluster's workers
// follow the Serve replicas); the serve group keeps its minimum of one.
func IncrementalUpgrade(rs *rayv1.RayService, class string) {
	v2 := rayv1.AutoscalerVersionV2
	inc := rayv1.NewClusterWithIncrementalUpgrade
	rs.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr(true)
	rs.Spec.RayClusterSpec.AutoscalerOptions = &rayv1.AutoscalerOptions{Version: &v2}
	rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: &inc, ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{
		GatewayClassName: class,
		MaxSurgePercent:  ptr(int32(ServiceSurgePercent)),
		StepSizePercent:  ptr(int32(ServiceStepPercent)),
		IntervalSeconds:  ptr(int32(ServiceStepSeconds)),
	}}
	rs.Annotations[ScenarioAnnotationKey] = fmt.Sprintf(
		"upgraded while you watch, incrementally: a new image tag brings up a new cluster, traffic moves to it %d%% every %d s "+
			"through Gateway %s (GatewayClass %s, simulated), the old cluster goes %d s after the last step",
		ServiceStepPercent, ServiceStepSeconds, rs.GatewayName(), class, ServiceDeletionDelay)
}

// cronJob is a RayCronJob that runs a small job every minute; each run
// brings its own small cluster, deleted CronClusterTTLSeconds after the run
// ends, and the run's RayJob goes CronJobTTLSeconds after it ends.
func cronJob(ns string) *rayv1.RayCronJob {
	spec := ownClusterJob(ns, CronJobName, "", CronEntrypoint).Spec
	spec.ShutdownAfterJobFinishes = false
	spec.TTLSecondsAfterFinished = 0
	var rules []rayv1.DeletionRule
	for _, st := range []rayv1.JobStatus{rayv1.JobStatusSucceeded, rayv1.JobStatusFailed} {
		rules = append(rules,
			rayv1.DeletionRule{Policy: rayv1.DeleteCluster, Condition: rayv1.DeletionCondition{JobStatus: ptr(st), TTLSeconds: CronClusterTTLSeconds}},
			rayv1.DeletionRule{Policy: rayv1.DeleteSelf, Condition: rayv1.DeletionCondition{JobStatus: ptr(st), TTLSeconds: CronJobTTLSeconds}})
	}
	spec.DeletionStrategy = &rayv1.DeletionStrategy{DeletionRules: rules}
	return &rayv1.RayCronJob{
		ObjectMeta: meta(ns, CronJobName, fmt.Sprintf(
			"runs a two-second job every minute (schedule %q): trigger it now, suspend it, or watch its runs come and go (each RayJob is deleted %d s after it ends)",
			CronJobSchedule, CronJobTTLSeconds)),
		Spec: rayv1.RayCronJobSpec{Schedule: CronJobSchedule, JobTemplate: spec},
	}
}
