package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every type in this package.
const GroupName = "ray.io"

// Version is the only version of the ray.io API this package models.
const Version = "v1"

var (
	// SchemeGroupVersion is ray.io/v1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}
	// GroupVersion is an alias of SchemeGroupVersion, under the name
	// controller-runtime code usually expects.
	GroupVersion = SchemeGroupVersion

	// SchemeBuilder registers the ray.io/v1 kinds in a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds RayCluster, RayJob, RayService, RayCronJob and their
	// lists to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns a GroupResource in ray.io for the given plural resource name.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

// Kind returns a GroupKind in ray.io for the given kind.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

// Kind and resource names, for dynamic clients, RBAC and discovery.
const (
	KindRayCluster = "RayCluster"
	KindRayJob     = "RayJob"
	KindRayService = "RayService"
	KindRayCronJob = "RayCronJob"

	ResourceRayClusters = "rayclusters"
	ResourceRayJobs     = "rayjobs"
	ResourceRayServices = "rayservices"
	ResourceRayCronJobs = "raycronjobs"
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&RayCluster{}, &RayClusterList{},
		&RayJob{}, &RayJobList{},
		&RayService{}, &RayServiceList{},
		&RayCronJob{}, &RayCronJobList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
