// Package mutation owns the bad-input suite for the API objects: every
// manifest of the conformance corpus (KubeRay's samples and raydar's own,
// loaded as test/conformance does) is mutated deterministically from a
// printed seed (a required field removed, a wrong type, out-of-range numbers,
// huge strings) and applied to one sandbox with raydar's operator running
// in-process. Each mutation must end refused at admission with the field
// named in the API error, refused by raydar with its refusal condition
// (ValidationFailed; for a RayCluster whose head pod the pod API refuses,
// ReplicaFailure) and a Warning Event naming the field, with no pod (and for
// a RayJob or RayService no RayCluster) created, or, when the mutation is
// harmless (an unknown field, which the API server prunes; a 1 MiB env value
// in the head container), reconciled into what the manifest unmutated gives:
// the manifest is applied unmutated too, in a namespace of its own, and the
// objects raydar made of both (pods, Services, ServiceAccounts, Secrets,
// Ingresses, Roles, RoleBindings, Jobs, RayClusters, normalised as
// test/conformance does) and
// the status it wrote on the applied object must be equal, less what the
// mutation changes by design (Mutation.Without: the added variable, spec
// hashes). Never a panic in the operator, an operator that stops, or a
// half-created cluster.
//
// mutate.go holds the mutations (pure functions over unstructured objects);
// the integration test applies them and prints the summary line
// "mutation: N mutated manifests applied, A refused at admission, R refused
// by raydar, H harmless (reconciled as the manifest unmutated: O objects
// compared), V violations". RAYDAR_MUTATION_SEED replays a seed.
package mutation
