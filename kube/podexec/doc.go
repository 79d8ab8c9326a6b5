// Package podexec owns running a command in a pod's container through the
// API server (pods/exec), for kube/actions' Exec, the one place raydar
// opens a shell or runs a command in a Ray container:
//
//   - the transport is client-go's remotecommand as kubectl exec uses it: a
//     WebSocket (RFC 6455, protocol v5.channel.k8s.io) where the API server
//     offers it, SPDY where the upgrade fails (NewFallbackExecutor; kubectl's
//     cmd/exec createExecutor). The request goes to the API server only;
//     raydar never dials a kubelet;
//   - the local terminal (Terminal): raw mode while a TTY session runs,
//     the terminal's size and its changes (SIGWINCH) sent to the remote TTY,
//     and a standard input that stops being read when the session ends, so
//     that a caller that keeps running (the TUI) gets its keys back.
//
// DefaultShell is what a shell opens when no command is given: bash where
// the container has it, sh otherwise, the fallback k9s uses.
package podexec
