package sandbox

import (
	_ "embed"
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kwok as the kubelet's server: with Options.Kwok, kwok also serves the
// kubelet API that `kubectl port-forward` and raydar's forwards go through
// (the API server proxies pods/portforward to the pod's node). So that the
// API server reaches it:
//   - kwok listens on a free loopback port (--server-address), HTTPS with a
//     self-signed certificate; the API server has no
//     --kubelet-certificate-authority, so it does not verify it (a kubelet
//     in a real cluster is verified);
//   - every fake node says so: InternalDNS address 127.0.0.1, the type the
//     API server is told to prefer (--kubelet-preferred-address-types), and
//     daemonEndpoints.kubeletEndpoint.Port (fakeNode);
//   - kwok reads where each pod's ports go from PortForward objects
//     (kwok.x-k8s.io/v1alpha1, --enable-crds=PortForward), whose CRD Start
//     installs. kube/sandbox/podforward writes them for Ray head pods,
//     pointing at the simulated heads; a pod without one refuses every port.

// kwokPortForwardCRD is kwok v0.8.0's PortForward CRD.
//
//go:embed kwok_portforwards_crd.yaml
var kwokPortForwardCRD []byte

// PortForwardGVR is kwok's PortForward resource: one per pod (same
// namespace and name), listing where its ports are forwarded.
var PortForwardGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "portforwards"}

// kubeletAddressType is the node address the API server uses to reach
// kwok's kubelet server.
const kubeletAddressType = corev1.NodeInternalDNS

// kubeletHost is where kwok's kubelet server listens.
const kubeletHost = "127.0.0.1"

// freePort picks a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(kubeletHost, "0"))
	if err != nil {
		return 0, fmt.Errorf("sandbox: picking a port for kwok's server: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// kwokServerArgs are kwok's flags for its kubelet server on port.
func kwokServerArgs(port int) []string {
	return []string{
		"--server-address=" + net.JoinHostPort(kubeletHost, strconv.Itoa(port)),
		"--enable-crds=PortForward,Exec", // kwokexec.go
	}
}

// KubeletPort is the port of kwok's kubelet server (0 without Kwok).
func (s *Sandbox) KubeletPort() int { return s.kubeletPort }
