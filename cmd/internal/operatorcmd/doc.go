// Package operatorcmd owns the headless operator command, shared by
// `raydar operator` and the controller-only binary cmd/raydar-operator (the
// one the container image ships): its flags, how it picks the leader
// election Lease, its logger, and how it finds the sandbox's address book
// of simulated Ray heads. It links the reconcile loop (controller) and
// nothing of the terminal UI or the sandbox itself.
package operatorcmd
