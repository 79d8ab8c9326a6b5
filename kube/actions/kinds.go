package actions

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/kinds"
)

// Kind is a kind the lifecycle actions (suspend, resume, delete) apply to:
// one of rayapi/kinds' ray.io kinds (kinds.Ray), whose descriptor says its
// names, objects, resource and spec.suspend with what suspending one does
// (Suspend.Effect). Trigger applies to kinds.RayCronJob only. What the
// actions add per kind is what to beware of (planSuspend's warnings and
// refusals) and what deleting one takes with it (planDelete).
type Kind = *kinds.Kind

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
		return k, nil
	}
	return nil, unknownKind(s)
}

// checkKind refuses a kind the actions do not apply to (nil, or not a
// ray.io kind: the Ray pods), naming it.
func checkKind(k Kind) error {
	if k == nil || !k.IsRay() {
		return unknownKind(kindName(k))
	}
	return nil
}

// kindName is k's API kind ("RayCluster"), "" for nil.
func kindName(k Kind) string {
	if k == nil {
		return ""
	}
	return k.Kind
}

// kindOf returns the Kind of a ray.io object.
func kindOf(obj client.Object) (Kind, error) {
	if d, ok := kinds.Of(obj); ok && d.IsRay() {
		return d, nil
	}
	return nil, fmt.Errorf("actions: %T is not one of the kinds %v", obj, kinds.Ray)
}

// resourceOf is the plural resource name of k (for messages).
func resourceOf(k Kind) string {
	if k == nil {
		return ""
	}
	return k.Resource.Resource
}

// UnmarshalJSON reads an ObjectRef as written (its kind as the API kind,
// kinds.Kind.MarshalText): the kind is its rayapi/kinds descriptor, so a
// reference read back equals the one written.
func (r *ObjectRef) UnmarshalJSON(b []byte) error {
	var w struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var k Kind
	if w.Kind != "" { // written from a nil Kind: null
		var ok bool
		if k, ok = kinds.Lookup(w.Kind); !ok || !k.IsRay() {
			return fmt.Errorf("actions: object reference of unknown kind %q", w.Kind)
		}
	}
	*r = ObjectRef{Kind: k, Namespace: w.Namespace, Name: w.Name}
	return nil
}
