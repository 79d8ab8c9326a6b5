// Package batchscheduler is the one interface of raydar's batch
// schedulers (gang scheduling), selected as KubeRay v1.6.2 selects its
// own: by the operator's --batch-scheduler flag
// (ray-operator/controllers/ray/batchscheduler/schedulermanager.go:58-75),
// never by a label; the labels only configure the chosen scheduler.
// KubeRay's deprecated --enable-batch-scheduler, which also selects
// volcano (schedulermanager.go:77-81, main.go:98-99), raydar does not
// have: --batch-scheduler volcano is the same. No
// flag, no scheduler: a nil Scheduler, and the reconcilers build exactly
// what they build without one (KubeRay's no-op DefaultBatchScheduler,
// batchscheduler/interface/interface.go:48-80).
//
// One subpackage per scheduler (volcano, yunikorn, kaischeduler,
// schedulerplugins), pure: it says what the gang object is (a PodGroup,
// or none: YuniKorn and KAI get everything from the pods' labels and
// annotations) and what a child carries; the reconcilers observe the
// object, decide with it and write it (controller/raycluster gang.go,
// controller/rayjob gang.go). gang counts a cluster's gang as KubeRay
// does, for the schedulers that make a PodGroup. kuberneteswas is KubeRay
// v1.7.0's Kubernetes WAS, selected by the KubernetesWAS feature gate
// (controller/operator.go), not by the flag: two immutable objects,
// replaced rather than updated (its Plan).
package batchscheduler

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/batchscheduler/kaischeduler"
	"github.com/raydar/raydar/controller/batchscheduler/schedulerplugins"
	"github.com/raydar/raydar/controller/batchscheduler/volcano"
	"github.com/raydar/raydar/controller/batchscheduler/yunikorn"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Scheduler is one batch scheduler. KubeRay's BatchScheduler
// (interface/interface.go:14-32) does its own reads and writes; this one
// only says what they are: DoBatchSchedulingOnSubmission becomes
// ClusterGroup/JobGroup (what to have) and UpdateGroup (how an existing
// one is brought to it), CleanupOnCompletion FinishedJobGroup,
// AddMetadataToChildResource Decorate.
type Scheduler interface {
	// Name is the --batch-scheduler value.
	Name() string
	// AddToScheme registers the gang object's type (its factory's
	// AddToScheme); GroupKind is that object's, which the API server
	// must serve (its CRD installed). A scheduler that makes no gang
	// object registers nothing, its GroupKind is empty and its NewGroup
	// nil (HasGroup).
	AddToScheme(*runtime.Scheme) error
	GroupKind() schema.GroupKind
	// NewGroup is an empty gang object, to read one into.
	NewGroup() client.Object
	// ClusterGroup is the gang object of a RayCluster, nil when it has
	// none of its own (a RayJob's cluster, whose RayJob's holds its pods).
	ClusterGroup(rc *rayv1.RayCluster) (client.Object, error)
	// JobGroup is the gang object of a RayJob, made before its cluster.
	JobGroup(rj *rayv1.RayJob) (client.Object, error)
	// FinishedJobGroup is the gang object of a finished RayJob, from its
	// cluster as it stands (nil: gone); ok false when nothing is to be
	// written.
	FinishedJobGroup(rj *rayv1.RayJob, rc *rayv1.RayCluster) (group client.Object, ok bool, err error)
	// UpdateGroup is existing brought to want, nil when it matches.
	UpdateGroup(existing, want client.Object) client.Object
	// Decorate adds the scheduler's labels, annotations and
	// schedulerName to child (a pod, a pod template, a RayJob's
	// RayCluster) of parent (its RayCluster or RayJob); task names the
	// pod's Ray group ("" for a RayCluster).
	Decorate(parent, child metav1.Object, task string)
}

// implemented are the schedulers raydar has, by --batch-scheduler value.
var implemented = map[string]Scheduler{
	volcano.Name:          volcano.Scheduler{},
	yunikorn.Name:         yunikorn.Scheduler{},
	kaischeduler.Name:     kaischeduler.Scheduler{},
	schedulerplugins.Name: schedulerplugins.Scheduler{},
}

// kuberay are the --batch-scheduler values KubeRay v1.6.2 accepts
// (schedulermanager.go:58-70).
var kuberay = []string{"kai-scheduler", "scheduler-plugins", "volcano", "yunikorn"}

// Names are the --batch-scheduler values raydar accepts.
func Names() []string {
	var n []string
	for k := range implemented {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// New is the scheduler of a --batch-scheduler value: nil for "" (none), an
// error for a value KubeRay accepts and raydar does not implement (never
// accepted and ignored) and for one KubeRay does not know either (as
// KubeRay: "the scheduler is not supported").
func New(name string) (Scheduler, error) {
	if name == "" {
		return nil, nil
	}
	if s, ok := implemented[name]; ok {
		return s, nil
	}
	if slices.Contains(kuberay, name) {
		return nil, fmt.Errorf("--batch-scheduler %s: KubeRay's %s batch scheduler is not implemented by raydar (it implements %s)",
			name, name, strings.Join(Names(), ", "))
	}
	return nil, fmt.Errorf("--batch-scheduler %s: the scheduler is not supported (raydar implements %s; KubeRay knows %s)",
		name, strings.Join(Names(), ", "), strings.Join(kuberay, ", "))
}

// HasGroup reports whether s makes a gang object (a CRD's): false for
// none and for the schedulers that only label pods (yunikorn,
// kai-scheduler).
func HasGroup(s Scheduler) bool { return s != nil && !s.GroupKind().Empty() }

// NameOf is s's name, "" for none.
func NameOf(s Scheduler) string {
	if s == nil {
		return ""
	}
	return s.Name()
}

// Usage is the flag's help.
func Usage() string {
	return "gang-schedule Ray pods with this batch scheduler, as KubeRay's --batch-scheduler (" + strings.Join(Names(), ", ") +
		`; default none: pods are scheduled one by one)`
}
