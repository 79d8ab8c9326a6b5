// Package autoscaler owns the sandbox's stand-in for Ray's in-tree
// autoscaler (autoscaler v2 with the KubeRay cloud provider), which in a
// real cluster runs as the head pod's "autoscaler" sidecar.
//
// decide.go is the pure decision, Ray's ResourceDemandScheduler and
// instance launcher (python/ray/autoscaler/v2/scheduler.py,
// instance_manager/subscribers/instance_launcher.py) for what a RayCluster
// can ask: from the pending and infeasible demand, the nodes and their idle
// times, and the worker groups (min/max replicas, resources per pod, idle
// timeouts), which groups to grow by how many, which workers to remove and
// which demand nothing can hold. Its tests are cases of Ray's own tests.
//
// driver.go runs that decision for one RayCluster while its simulated head
// lives (kube/sandbox/headsim starts one per head of a cluster with
// enableInTreeAutoscaling): every interval it reads the RayCluster and its
// pods from the API server, the head's demand and idle times
// (kube/sandbox/rayhead's AutoscalerState), decides, and writes the result
// as Ray's KubeRay provider does: one JSON patch (application/json-patch+json)
// of /spec/workerGroupSpecs/N/replicas and
// /spec/workerGroupSpecs/N/scaleStrategy {"workersToDelete": [...]}, with
// the user agent of Python's requests library, so the API server records
// the field manager "python-requests" (kube/history's AutoscalerManager).
// While a group's workersToDelete still names a pod that exists it waits;
// once they are gone it clears the list. Worker groups with numOfHosts > 1
// are left alone (the status message names them). It writes as the head pod's
// ServiceAccount (impersonated) and does nothing while the autoscaler
// would not run: the head pod has no autoscaler container, or that
// container is not running, or a SubjectAccessReview says the
// ServiceAccount may not patch rayclusters or list pods. What it saw and
// did last is kept for the caller ([Driver.Status]).
package autoscaler
