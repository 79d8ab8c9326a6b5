// Package podforward owns where the sandbox's pods' ports lead when someone
// port-forwards to them. kwok, the sandbox's kubelet, serves pods/portforward
// (kube/sandbox kwokserver.go) but runs no containers; it forwards a pod's
// port to the address a kwok PortForward object (kwok.x-k8s.io/v1alpha1,
// same namespace and name as the pod) gives.
//
// A [Writer] keeps one PortForward per Running, Ready Ray head pod: the
// dashboard port (8265) to the simulated head's dashboard and the Serve port
// (8000) to its Serve proxy, as the heads' address source says
// (kube/sandbox/headsim.Sim or an addrbook.Book). It looks again on every
// head pod event and every Interval, so a replaced head pod's forward moves
// to the new simulated head as soon as that one listens. Each object is
// owned by its pod, so the garbage collector removes it with the pod.
// Other ports of head pods, and every port of other pods, are refused by
// kwok ("no forward found").
package podforward
