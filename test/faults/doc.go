// Package faults owns raydar's fault suite (issue 12): integration tests
// that inject faults into one sandbox (kube/sandbox with kwok, the
// scheduler and the controller-manager; simulated Ray heads from
// kube/sandbox/headsim) while raydar's operator reconciles, and check the
// same invariants after each scenario (invariants_test.go): pods ==
// desired for every group, no orphan pod, Service or RBAC object, no
// duplicate replica index, every requested stop sent exactly once, no
// status write storm, no leaked goroutine or child process.
//
// The faults: `raydar operator` SIGKILLed at random points (a seeded rand;
// FAULTS_SEED replays a run) while clusters are created, scaled, suspended
// and deleted; the API server restarted during a scale-up and a delete,
// etcd restarted with its data; the operator's connection to the API
// server cut and restored (APIProxy, a loopback proxy the test controls);
// two operators electing a leader, the leader killed; a Ray head pod
// deleted under a running RayJob, a dashboard refusing connections during
// stops, answering 500s and answering slowly (FaultyHTTP).
//
// TestMain prints "faults: N faults injected into raydar, M invariants
// about raydar checked, V violations; harness: H self-checks, F failed":
// faults and invariants about raydar apart from the harness's checks of
// itself (that a fault really happened, that the audit saw the requests),
// each defined in tally_test.go; docs/reliability.md records the figures.
// The non-test files are the tools the tests use: APIProxy and its Audit,
// FaultyHTTP.
// Everything is skipped with -short except the tools' own tests.
package faults
