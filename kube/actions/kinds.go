package actions

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

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

// kindInfo is what the actions know of one kind. Adding a kind is one row
// in kindTable (and its cases in planSuspend and planDelete).
type kindInfo struct {
	kind Kind
	// short is its abbreviation, accepted with the lower-case kind and
	// resource names.
	short string
	// resource is the plural resource name.
	resource string
	// aliases are further names accepted (lower case).
	aliases []string
	// new returns an empty object of the kind.
	new func() client.Object
}

var kindTable = []kindInfo{
	{KindRayCluster, "rc", rayv1.ResourceRayClusters, nil, func() client.Object { return &rayv1.RayCluster{} }},
	{KindRayJob, "rj", rayv1.ResourceRayJobs, nil, func() client.Object { return &rayv1.RayJob{} }},
	{KindRayService, "rs", rayv1.ResourceRayServices, nil, func() client.Object { return &rayv1.RayService{} }},
	{KindRayCronJob, "rcj", rayv1.ResourceRayCronJobs, []string{"cronjob", "cronjobs"}, func() client.Object { return &rayv1.RayCronJob{} }},
}

// kindByType maps each Kind's Go type (*rayv1.RayCluster, …) to it.
var kindByType = func() map[reflect.Type]Kind {
	m := make(map[reflect.Type]Kind, len(kindTable))
	for _, k := range kindTable {
		m[reflect.TypeOf(k.new())] = k.kind
	}
	return m
}()

// Kinds lists every Kind.
var Kinds = func() []Kind {
	out := make([]Kind, len(kindTable))
	for i, k := range kindTable {
		out[i] = k.kind
	}
	return out
}()

func lookupKind(k Kind) (kindInfo, bool) {
	for _, ki := range kindTable {
		if ki.kind == k {
			return ki, true
		}
	}
	return kindInfo{}, false
}

// unknownKind is the error for a kind name no row has:
// `unknown kind "pod": use raycluster (rc), rayjob (rj), rayservice (rs) or
// raycronjob (rcj)`.
func unknownKind(s string) error {
	names := make([]string, len(kindTable))
	for i, k := range kindTable {
		names[i] = fmt.Sprintf("%s (%s)", strings.ToLower(string(k.kind)), k.short)
	}
	list := names[len(names)-1]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " or " + list
	}
	return invalidf("unknown kind %q: use %s", s, list)
}

// ParseKind accepts raycluster/rc, rayjob/rj, rayservice/rs,
// raycronjob/rcj/cronjob, plurals and the kind names, in any case.
func ParseKind(s string) (Kind, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for _, k := range kindTable {
		if name == strings.ToLower(string(k.kind)) || name == k.resource || name == k.short || slices.Contains(k.aliases, name) {
			return k.kind, nil
		}
	}
	return "", unknownKind(s)
}

// newObject returns an empty object of kind k.
func newObject(k Kind) (client.Object, error) {
	if ki, ok := lookupKind(k); ok {
		return ki.new(), nil
	}
	return nil, unknownKind(string(k))
}

// kindOf returns the Kind of a ray.io object.
func kindOf(obj client.Object) (Kind, error) {
	if k, ok := kindByType[reflect.TypeOf(obj)]; ok {
		return k, nil
	}
	return "", fmt.Errorf("actions: %T is not one of the kinds %v", obj, Kinds)
}

// resourceOf is the plural resource name of k (for messages).
func resourceOf(k Kind) string {
	if ki, ok := lookupKind(k); ok {
		return ki.resource
	}
	return strings.ToLower(string(k)) + "s"
}
