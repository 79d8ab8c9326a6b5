// Package execsim owns what an exec into a simulated Ray container does in
// the sandbox. kwok, the sandbox's kubelet, serves pods/exec by running the
// command on this machine as the pod's kwok Exec object (kwok.x-k8s.io/
// v1alpha1, same namespace and name as the pod; kube/sandbox kwokexec.go)
// says: in its working directory, with its environment.
//
//   - A [Writer] keeps one Exec per running Ray pod (label ray.io/cluster):
//     the working directory and HOME are the sandbox's exec home, the
//     environment names the pod (HOSTNAME) and its
//     RayCluster (RAY_CLUSTER_NAME, as KubeRay sets it) and where the
//     cluster's simulated head answers (DashboardEnv), as the heads'
//     address source says (kube/sandbox/headsim.Sim or an addrbook.Book).
//     It looks again on every pod event and every Interval, so a replaced
//     head's address reaches its cluster's pods. Each object is owned by
//     its pod, so the garbage collector removes it with the pod.
//   - [Ray] is the `ray` of those containers (kube/sandbox writes a `ray`
//     on kwok's PATH that runs `raydar sandbox ray`): `ray status` prints
//     what the cluster's simulated head answers to Ray's
//     /api/cluster_status?format=1 (kube/sandbox/rayhead status_text.go),
//     the text a real `ray status` prints. Other ray commands are refused,
//     naming them.
//
// A shell opened in a simulated container is a shell on this machine, in the
// exec home: the sandbox runs no containers.
package execsim
