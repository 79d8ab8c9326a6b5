// Package sandbox owns raydar's real Kubernetes control plane on loopback: etcd
// and kube-apiserver (started through controller-runtime's envtest), and, on
// request, kube-scheduler, kube-controller-manager and kwok with fake nodes.
//
// One API serves the integration tests, `raydar demo`, `raydar sandbox` and the
// benchmarks:
//
//	sb, err := sandbox.Start(ctx, sandbox.Full())
//	if err != nil { … }
//	defer sb.Stop()
//	clientset := kubernetes.NewForConfigOrDie(sb.Config)
//
// The package owns, and nothing else does:
//   - finding the control-plane binaries (bin/k8s, built by `make tools`);
//   - the state directory layout (logs of every component, certificates, etcd
//     data, the admin kubeconfig);
//   - the kubeconfig's context name (contextname.go): Options.ContextName,
//     raydar-sandbox by default, and the name `raydar sandbox` gives a
//     --state-dir, so that two sandboxes' kubeconfigs merge (KUBECONFIG=a:b);
//   - the lifetime of every child process: each one dies with the process that
//     started it, also when that process is killed with SIGKILL, and Stop
//     (stop.go) ends them in order, the API server's clients first, within
//     seconds even while other clients still watch, and returns once every
//     one has exited;
//   - the kwok stages that move fake nodes and pods through their lifecycle,
//     including the PhaseAnnotation that lets tests fail or complete a pod,
//     and the kubelet failures kwok would otherwise never show (faults.go):
//     a crash loop with an exit code or OOMKilled (CrashAnnotation), an image
//     pull failure (ImagePullAnnotation), and a missing ConfigMap or Secret:
//     the config checker (configcheck.go) does the kubelet's check of the
//     references of every Pending pod (env valueFrom, envFrom, volumes) and
//     marks the pod (ConfigCheckAnnotation, ConfigErrorAnnotation) so that
//     kwok plays CreateContainerConfigError with the kubelet's message
//     (`configmap "x" not found`), or ContainerCreating with a FailedMount
//     Event for a volume, until the object exists;
//   - readiness: Start returns only when every requested component has been
//     seen doing its job;
//   - kwok as the pods' kubelet for pods/portforward (kwokserver.go): its
//     server on a loopback port that every fake node advertises, and the
//     PortForward CRD that says where each pod's ports lead; and for
//     pods/exec (kwokexec.go): the Exec CRD that says how an exec into a
//     pod runs on this machine, and the `ray` on kwok's PATH
//     (Options.RayCLI);
//   - identities and their record (auth.go, audit.go): RBAC authorization,
//     ServiceAccount tokens from the TokenRequest API and kubeconfigs for
//     them, and with Options.Audit the API server's audit log (Metadata
//     level: who, what, response code, never a body) and its reader.
//
// The sandbox is a product feature (`raydar sandbox`, `raydar demo`), and the
// local cluster is this package with its sub-packages: rayhead (one
// simulated Ray head), headsim (a simulated head for every Ready head pod,
// and the RayJob submitters' stand-ins; they write where they answer into
// kube/raydash/addrbook's book, which other raydar processes read), refusable (the switchable HTTP server the
// heads answer on), podforward (the head pods' PortForwards, pointing at
// the simulated heads), execsim (the Ray pods' kwok Execs and their `ray
// status`), certsim (cert-manager's part: cert-manager's CRDs,
// which `make tools` writes from its Go module into the tools directory's
// crds/cert-manager.yaml, and the Secrets its Certificates ask for, for
// mTLS clusters; `raydar sandbox` and `raydar demo` run it), gangsim
// (the batch scheduler's part for `raydar sandbox --batch-scheduler`:
// Volcano's CRDs from crds/volcano.yaml, scheduler-plugins' from
// crds/scheduler-plugins.yaml, and a simulated volcano, yunikorn,
// kai-scheduler or scheduler-plugins) and seed (the
// demo's workloads). The simulators (headsim, certsim, gatewaysim, gangsim,
// and the autoscaler headsim runs beside a head) connect and run through
// simkit: one client set-up, one run loop of watches, work queues and
// periodic passes.
package sandbox
