// Package refusable owns the sandbox's switchable HTTP server: it serves a
// handler on one address and can stop accepting, so connections to that
// address are refused (as to a Ray head that is down or a pod that is
// gone), then listen again on the same address. The simulated Ray head
// (kube/sandbox/rayhead: its dashboard and its Serve proxy) and headsim's
// counting front of each cluster's dashboard are built on it.
package refusable
