// Package addrbook owns the address book of Ray heads reached on loopback:
// where each RayCluster's simulated Ray head (kube/sandbox/headsim) answers,
// its dashboard and its Serve proxy, for raydar processes other than the one
// that runs the heads. It lives beside kube/raydash, whose AddressBook it
// implements, and outside the sandbox tree: the production operator
// (cmd/raydar-operator) links the reader, never the sandbox.
//
// The heads listen on loopback ports inside the process that runs the
// sandbox (`raydar sandbox`, `raydar demo`). A raydar operator or TUI in
// another process cannot reach them the usual ways: kwok's pod IPs route
// nowhere, and the API server refuses to proxy to loopback. So:
//
//   - the process running the heads writes the book, a small JSON file in the
//     sandbox's state directory ([FileName]), on every head start and stop
//     (written whole to a temporary file, then renamed: a reader never sees
//     half a file);
//   - it records the file's path in the sandbox's kubeconfig, as the
//     extension [Extension] of the cluster entry ([Advertise]), so the
//     location travels with the KUBECONFIG a user exports (and survives a
//     merge into another kubeconfig, as kubectl keeps extensions);
//   - every raydar pointed at a context whose cluster carries the extension
//     ([FromKubeconfig]) reads the book ([Open]) instead of service DNS or
//     the API server's service proxy. [Book] implements kube/raydash's
//     AddressBook and the controller's ServeProxyAddressBook.
//
// A file rather than a loopback HTTP endpoint: it needs no server that must
// outlive its readers, works with any number of readers, and when the
// sandbox is gone the file is gone with its state directory (or lists heads
// whose ports refuse connections, which raydar already treats as a
// dashboard that is down).
package addrbook
