package actions

import (
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Kind is a ray.io/v1 kind the lifecycle actions (suspend, resume, delete)
// apply to.
type Kind string

// Kinds.
const (
	KindRayCluster Kind = rayv1.KindRayCluster
	KindRayJob     Kind = rayv1.KindRayJob
	KindRayService Kind = rayv1.KindRayService
)

// Kinds lists every Kind.
var Kinds = []Kind{KindRayCluster, KindRayJob, KindRayService}

// kindNames are the accepted spellings of each Kind (lower case).
var kindNames = map[string]Kind{
	"raycluster": KindRayCluster, "rayclusters": KindRayCluster, "rc": KindRayCluster,
	"rayjob": KindRayJob, "rayjobs": KindRayJob, "rj": KindRayJob,
	"rayservice": KindRayService, "rayservices": KindRayService, "rs": KindRayService,
}

// ParseKind accepts raycluster/rc, rayjob/rj, rayservice/rs, plurals and the
// kind names, in any case.
func ParseKind(s string) (Kind, error) {
	if k, ok := kindNames[strings.ToLower(strings.TrimSpace(s))]; ok {
		return k, nil
	}
	return "", invalidf("unknown kind %q: use raycluster (rc), rayjob (rj) or rayservice (rs)", s)
}

// newObject returns an empty object of kind k.
func newObject(k Kind) (client.Object, error) {
	switch k {
	case KindRayCluster:
		return &rayv1.RayCluster{}, nil
	case KindRayJob:
		return &rayv1.RayJob{}, nil
	case KindRayService:
		return &rayv1.RayService{}, nil
	}
	return nil, invalidf("unknown kind %q: use raycluster (rc), rayjob (rj) or rayservice (rs)", string(k))
}

// kindOf returns the Kind of a ray.io object.
func kindOf(obj client.Object) (Kind, error) {
	switch obj.(type) {
	case *rayv1.RayCluster:
		return KindRayCluster, nil
	case *rayv1.RayJob:
		return KindRayJob, nil
	case *rayv1.RayService:
		return KindRayService, nil
	}
	return "", fmt.Errorf("actions: %T is not a RayCluster, RayJob or RayService", obj)
}

// resourceOf is the plural resource name of k (for messages).
func resourceOf(k Kind) string {
	switch k {
	case KindRayCluster:
		return rayv1.ResourceRayClusters
	case KindRayJob:
		return rayv1.ResourceRayJobs
	case KindRayService:
		return rayv1.ResourceRayServices
	}
	return strings.ToLower(string(k)) + "s"
}
