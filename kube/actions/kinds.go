package actions

import (
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Kind is a ray.io/v1 kind the lifecycle actions (suspend, resume, delete)
// apply to; Trigger applies to KindRayCronJob only.
type Kind string

// Kinds.
const (
	KindRayCluster Kind = rayv1.KindRayCluster
	KindRayJob     Kind = rayv1.KindRayJob
	KindRayService Kind = rayv1.KindRayService
	KindRayCronJob Kind = rayv1.KindRayCronJob
)

// Kinds lists every Kind: the ray.io kinds of rayapi/kinds, whose
// descriptors say their names, objects, resources and spec.suspend with
// what suspending one does (Suspend.Effect). What the actions add per kind
// is what to beware of (planSuspend's warnings and refusals) and what
// deleting one takes with it (planDelete).
var Kinds = func() []Kind {
	out := make([]Kind, len(kinds.Ray))
	for i, k := range kinds.Ray {
		out[i] = Kind(k.Kind)
	}
	return out
}()

// descriptor returns k's descriptor.
func descriptor(k Kind) (*kinds.Kind, bool) {
	for _, d := range kinds.Ray {
		if d.Kind == string(k) {
			return d, true
		}
	}
	return nil, false
}

// unknownKind is the error for a kind name that is no Kind, the same for
// every spelling of a kind the actions do not apply to:
// `unknown kind "pod": use raycluster (rc), rayjob (rj), rayservice (rs) or
// raycronjob (rcj)`.
func unknownKind(s string) error {
	names := make([]string, len(kinds.Ray))
	for i, k := range kinds.Ray {
		names[i] = fmt.Sprintf("%s (%s)", strings.ToLower(k.Kind), k.Short)
	}
	list := names[len(names)-1]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " or " + list
	}
	return invalidf("unknown kind %q: use %s", s, list)
}

// ParseKind accepts every name rayapi/kinds knows for a ray.io kind
// (raycluster, rc, cluster, clusters, rayjob, rj, job, …, raycronjob, rcj,
// cronjob), in any case.
func ParseKind(s string) (Kind, error) {
	if k, ok := kinds.Lookup(s); ok && k.IsRay() {
		return Kind(k.Kind), nil
	}
	return "", unknownKind(s)
}

// newObject returns an empty object of kind k.
func newObject(k Kind) (client.Object, error) {
	if d, ok := descriptor(k); ok {
		return d.New(), nil
	}
	return nil, unknownKind(string(k))
}

// kindOf returns the Kind of a ray.io object.
func kindOf(obj client.Object) (Kind, error) {
	if d, ok := kinds.Of(obj); ok && d.IsRay() {
		return Kind(d.Kind), nil
	}
	return "", fmt.Errorf("actions: %T is not one of the kinds %v", obj, Kinds)
}

// resourceOf is the plural resource name of k (for messages).
func resourceOf(k Kind) string {
	if d, ok := descriptor(k); ok {
		return d.Resource.Resource
	}
	return strings.ToLower(string(k)) + "s"
}
