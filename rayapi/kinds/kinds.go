package kinds

import (
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Object is an API object (the method set of controller-runtime's
// client.Object, which every Object is).
type Object interface {
	metav1.Object
	runtime.Object
}

// ObjectList is a list of API objects (the method set of controller-runtime's
// client.ObjectList).
type ObjectList interface {
	metav1.ListInterface
	runtime.Object
}

// Kind is everything raydar knows of one kind that is not a view of it.
type Kind struct {
	// Kind is the API kind: "RayCluster".
	Kind string
	// Plural is the kind's plural as a title: "RayClusters".
	Plural string
	// Resource is the kind's group, version and resource.
	Resource schema.GroupVersionResource
	// Short is the kind's abbreviation ("rc"), as kubectl's short names.
	Short string
	// Names is every name a user may type for the kind, lower case (input
	// is matched case-insensitively): the kind and its plural, the short
	// name, and the plain words ("cluster", "clusters"). The first is the
	// one help texts offer (":rc", ":pods").
	Names []string
	// Word is the kind's plain plural, one of Names, as `raydar get` says
	// it ("No clusters found"): "clusters", …, "workers" for the Ray pods.
	Word string
	// New returns an empty object of the kind; NewList an empty list.
	New     func() Object
	NewList func() ObjectList
	// Record returns an empty object of the type the TUI's cache holds for
	// the kind when that is not New's (a pod's podview.Pod); nil otherwise.
	// Of knows both types.
	Record func() Object
	// Status is the STATUS word of an object of the kind (rayapi/status).
	Status func(Object) string
	// Suspend says how the kind is suspended; nil when it cannot be.
	Suspend *Suspend
	// Optional kinds may be missing from the API server: RayCronJob is
	// KubeRay v1.7's, and clusters with older KubeRay CRDs do not serve it.
	Optional bool
	// Why reports whether rayapi/why diagnoses the kind (`raydar why`).
	Why bool
}

// Suspend is how a kind is suspended: its spec.suspend.
type Suspend struct {
	// Suspended reports whether obj's spec.suspend is set.
	Suspended func(obj Object) bool
	// With returns a copy of obj with spec.suspend set to suspend.
	With func(obj Object, suspend bool) Object
	// Validate is the kind's spec validation, which the copy must pass as
	// the object did.
	Validate func(obj Object) field.ErrorList
	// Effect says what the controller does once obj's spec.suspend is set
	// to suspend (obj is the copy With made): the "effect:" line of
	// `raydar suspend`/`resume` and of the TUI's confirmation.
	Effect func(obj Object, suspend bool) string
}

// The kinds.
var (
	RayCluster = &Kind{
		Kind: rayv1.KindRayCluster, Plural: "RayClusters",
		Resource: rayv1.SchemeGroupVersion.WithResource(rayv1.ResourceRayClusters),
		Short:    "rc", Names: []string{"rc", "raycluster", "rayclusters", "cluster", "clusters"}, Word: "clusters",
		New:     func() Object { return &rayv1.RayCluster{} },
		NewList: func() ObjectList { return &rayv1.RayClusterList{} },
		Status:  word(status.Cluster),
		Suspend: suspendBy(func(o *rayv1.RayCluster) *rayv1.RayCluster { return o.DeepCopy() },
			func(o *rayv1.RayCluster) bool { return o.Spec.IsSuspended() },
			func(o *rayv1.RayCluster, s bool) { o.Spec.Suspend = ptr.To(s) },
			rayv1.ValidateRayCluster,
			func(o *rayv1.RayCluster, suspend bool) string {
				if suspend {
					return "every pod of the cluster is deleted; the spec and the cluster's Services stay"
				}
				return fmt.Sprintf("the head and %s are created again", count(int(o.Spec.DesiredWorkerPods()), "worker pod"))
			}),
		Why: true,
	}
	RayJob = &Kind{
		Kind: rayv1.KindRayJob, Plural: "RayJobs",
		Resource: rayv1.SchemeGroupVersion.WithResource(rayv1.ResourceRayJobs),
		Short:    "rj", Names: []string{"rj", "rayjob", "rayjobs", "job", "jobs"}, Word: "jobs",
		New:     func() Object { return &rayv1.RayJob{} },
		NewList: func() ObjectList { return &rayv1.RayJobList{} },
		Status:  word(status.Job),
		Suspend: suspendBy(func(o *rayv1.RayJob) *rayv1.RayJob { return o.DeepCopy() },
			func(o *rayv1.RayJob) bool { return o.Spec.Suspend },
			func(o *rayv1.RayJob, s bool) { o.Spec.Suspend = s },
			rayv1.ValidateRayJob,
			effects[*rayv1.RayJob]("the Ray job is stopped and the job's RayCluster and submitter are deleted; resuming starts the job over",
				"the RayJob creates its RayCluster again and submits the job anew")),
		Why: true,
	}
	RayService = &Kind{
		Kind: rayv1.KindRayService, Plural: "RayServices",
		Resource: rayv1.SchemeGroupVersion.WithResource(rayv1.ResourceRayServices),
		Short:    "rs", Names: []string{"rs", "rayservice", "rayservices", "service", "services"}, Word: "services",
		New:     func() Object { return &rayv1.RayService{} },
		NewList: func() ObjectList { return &rayv1.RayServiceList{} },
		Status:  word(status.Service),
		Suspend: suspendBy(func(o *rayv1.RayService) *rayv1.RayService { return o.DeepCopy() },
			func(o *rayv1.RayService) bool { return o.Spec.Suspend },
			func(o *rayv1.RayService, s bool) { o.Spec.Suspend = s },
			rayv1.ValidateRayService,
			effects[*rayv1.RayService]("every RayCluster of the service is deleted; Serve stops answering",
				"the service creates a RayCluster again and redeploys its Serve applications")),
		Why: true,
	}
	RayCronJob = &Kind{
		Kind: rayv1.KindRayCronJob, Plural: "RayCronJobs",
		Resource: rayv1.SchemeGroupVersion.WithResource(rayv1.ResourceRayCronJobs),
		Short:    "rcj", Names: []string{"rcj", "raycronjob", "raycronjobs", "cronjob", "cronjobs"}, Word: "cronjobs",
		New:     func() Object { return &rayv1.RayCronJob{} },
		NewList: func() ObjectList { return &rayv1.RayCronJobList{} },
		Status:  word(status.CronJob),
		Suspend: suspendBy(func(o *rayv1.RayCronJob) *rayv1.RayCronJob { return o.DeepCopy() },
			func(o *rayv1.RayCronJob) bool { return o.Spec.IsSuspended() },
			func(o *rayv1.RayCronJob, s bool) { o.Spec.Suspend = ptr.To(s) },
			rayv1.ValidateRayCronJob,
			effects[*rayv1.RayCronJob]("no new RayJobs are created on its schedule; the RayJobs it created already keep running",
				"its schedule creates RayJobs again; of the ticks missed while suspended, raydar's reconciler runs only the latest, at once")),
		Optional: true,
	}
	// Pod is the Ray pods (label ray.io/node-type): the heads and workers
	// of the RayClusters (`raydar get workers`, the TUI's :pods).
	Pod = &Kind{
		Kind: "Pod", Plural: "Pods",
		Resource: corev1.SchemeGroupVersion.WithResource("pods"),
		Short:    "po", Names: []string{"pods", "po", "pod", "workers", "worker"}, Word: "workers",
		New:     func() Object { return &corev1.Pod{} },
		NewList: func() ObjectList { return &corev1.PodList{} },
		Record:  func() Object { return &podview.Pod{} },
		Status: func(o Object) string {
			if p, ok := podview.From(o); ok {
				return status.Pod(p)
			}
			return ""
		},
	}
)

// All is every kind, in the order help texts list them.
var All = []*Kind{RayCluster, RayJob, RayService, RayCronJob, Pod}

// Ray is the ray.io kinds of All: the ones raydar reconciles, deletes and
// keeps a history of.
var Ray = func() []*Kind {
	var out []*Kind
	for _, k := range All {
		if k.IsRay() {
			out = append(out, k)
		}
	}
	return out
}()

// IsRay reports whether k is a ray.io kind.
func (k *Kind) IsRay() bool { return k.Resource.Group == rayv1.GroupName }

// String is the kind's name (Kind).
func (k *Kind) String() string { return k.Kind }

// MarshalText writes a kind as its API kind ("RayCluster"), as an object's
// kind is written (TypeMeta.Kind): kube/actions' results and audit lines
// name the kind they acted on so.
func (k *Kind) MarshalText() ([]byte, error) { return []byte(k.Kind), nil }

// byName and byType index All.
var (
	byName = map[string]*Kind{}
	byType = map[reflect.Type]*Kind{}
)

func init() {
	for _, k := range All {
		for _, n := range append([]string{strings.ToLower(k.Kind), strings.ToLower(k.Plural), k.Resource.Resource, k.Short}, k.Names...) {
			if prev, ok := byName[n]; ok && prev != k {
				panic(fmt.Sprintf("kinds: %q names both %s and %s", n, prev.Kind, k.Kind))
			}
			byName[n] = k
		}
		byType[reflect.TypeOf(k.New())] = k
		if k.Record != nil {
			byType[reflect.TypeOf(k.Record())] = k
		}
	}
}

// Lookup returns the kind a user's name for it means (any of its Names, the
// kind, its plural or its resource), in any case and with spaces around.
func Lookup(name string) (*Kind, bool) {
	k, ok := byName[strings.ToLower(strings.TrimSpace(name))]
	return k, ok
}

// Of returns the kind of a typed object (nil, false for another type).
func Of(obj runtime.Object) (*Kind, bool) {
	if obj == nil {
		return nil, false
	}
	k, ok := byType[reflect.TypeOf(obj)]
	return k, ok
}

// StatusOf is the STATUS word of obj, whichever kind it is; "" for a type
// that is none of All.
func StatusOf(obj runtime.Object) string {
	k, ok := Of(obj)
	if !ok {
		return ""
	}
	return k.Status(obj.(Object))
}

// word adapts a kind's status word function to Status.
func word[T Object](f func(T) string) func(Object) string {
	return func(o Object) string {
		t, ok := o.(T)
		if !ok {
			return ""
		}
		return f(t)
	}
}

// suspendBy makes a Suspend from the typed accessors of spec.suspend and
// the kind's effect texts.
func suspendBy[T Object](deepCopy func(T) T, get func(T) bool, set func(T, bool), validate func(T) field.ErrorList, effect func(T, bool) string) *Suspend {
	return &Suspend{
		Suspended: func(o Object) bool {
			t, ok := o.(T)
			return ok && get(t)
		},
		With: func(o Object, s bool) Object {
			c := deepCopy(o.(T))
			set(c, s)
			return c
		},
		Validate: func(o Object) field.ErrorList { return validate(o.(T)) },
		Effect:   func(o Object, s bool) string { return effect(o.(T), s) },
	}
}

// effects is an Effect that says the same whatever the object: onSuspend
// or onResume.
func effects[T Object](onSuspend, onResume string) func(T, bool) string {
	return func(_ T, suspend bool) string {
		if suspend {
			return onSuspend
		}
		return onResume
	}
}

// count is "1 word" or "n words".
func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
