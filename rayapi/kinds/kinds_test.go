package kinds

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/scheme"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Every descriptor is whole, its names are its own, and its object, list
// and resource are the ones the scheme knows under its kind.
func TestDescriptors(t *testing.T) {
	s := scheme.New()
	for _, k := range All {
		if k.Kind == "" || k.Plural == "" || k.Short == "" || len(k.Names) == 0 || k.New == nil || k.NewList == nil || k.Status == nil {
			t.Fatalf("%s: incomplete descriptor %+v", k.Kind, k)
		}
		if !slices.Contains(k.Names, k.Word) {
			t.Errorf("%s: word %q is not one of its names %v", k.Kind, k.Word, k.Names)
		}
		if !slices.Contains(k.Names, k.Short) || !slices.Contains(k.Names, strings.ToLower(k.Kind)) || !slices.Contains(k.Names, k.Resource.Resource) {
			t.Errorf("%s: names %v lack the short name, the kind or the resource", k.Kind, k.Names)
		}
		for _, n := range k.Names {
			if n != strings.ToLower(n) {
				t.Errorf("%s: name %q is not lower case", k.Kind, n)
			}
			for _, in := range []string{n, strings.ToUpper(n), " " + n + " "} {
				if got, ok := Lookup(in); !ok || got != k {
					t.Errorf("Lookup(%q) = %v, %v; want %s", in, got, ok, k.Kind)
				}
			}
		}
		gvks, _, err := s.ObjectKinds(k.New())
		if err != nil || gvks[0].Kind != k.Kind || gvks[0].GroupVersion() != k.Resource.GroupVersion() {
			t.Errorf("%s: the scheme knows its object as %v, %v", k.Kind, gvks, err)
		}
		lgvks, _, err := s.ObjectKinds(k.NewList())
		if err != nil || lgvks[0].Kind != k.Kind+"List" {
			t.Errorf("%s: the scheme knows its list as %v, %v", k.Kind, lgvks, err)
		}
		if got, ok := Of(k.New()); !ok || got != k {
			t.Errorf("Of(%T) = %v, %v", k.New(), got, ok)
		}
		if (k.Suspend != nil) != k.IsRay() {
			t.Errorf("%s: suspendable %v, a ray.io kind %v: every Ray kind and only they have spec.suspend", k.Kind, k.Suspend != nil, k.IsRay())
		}
	}
	if _, ok := Lookup("deployments"); ok {
		t.Error("Lookup(deployments) found a kind")
	}
	if len(Ray) != 4 || Ray[0] != RayCluster || Ray[3] != RayCronJob {
		t.Errorf("Ray = %v", Ray)
	}
}

// StatusOf is each kind's word from rayapi/status, and "" for other types.
func TestStatusOf(t *testing.T) {
	now := metav1.Now()
	objs := []runtime.Object{
		&rayv1.RayCluster{}, &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}},
		&rayv1.RayCluster{Status: rayv1.RayClusterStatus{State: rayv1.Ready}},
		&rayv1.RayJob{}, &rayv1.RayJob{Status: rayv1.RayJobStatus{JobStatus: rayv1.JobStatusRunning, JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}},
		&rayv1.RayService{}, &rayv1.RayCronJob{Spec: rayv1.RayCronJobSpec{Schedule: "* * * * *"}},
		&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}},
	}
	for _, o := range objs {
		var want string
		switch o := o.(type) {
		case *rayv1.RayCluster:
			want = status.Cluster(o)
		case *rayv1.RayJob:
			want = status.Job(o)
		case *rayv1.RayService:
			want = status.Service(o)
		case *rayv1.RayCronJob:
			want = status.CronJob(o)
		case *corev1.Pod:
			want = status.Pod(podview.Of(o))
		}
		if got := StatusOf(o); got != want || got == "" {
			t.Errorf("StatusOf(%T) = %q, want %q", o, got, want)
		}
	}
	j := &rayv1.RayJob{}
	if StatusOf(j) != status.None {
		t.Errorf("new job: %q, want %q", StatusOf(j), status.None)
	}
	j.Status = rayv1.RayJobStatus{JobStatus: rayv1.JobStatusRunning}
	if StatusOf(j) != "RUNNING" {
		t.Errorf("running job: %q", StatusOf(j))
	}
	for _, o := range []runtime.Object{&corev1.Service{}, &corev1.Event{}, nil} {
		if got := StatusOf(o); got != "" {
			t.Errorf("StatusOf(%T) = %q, want empty", o, got)
		}
	}
}

// Suspend reads and sets each Ray kind's spec.suspend on a copy.
func TestSuspend(t *testing.T) {
	for _, k := range Ray {
		o := k.New()
		o.SetName("x")
		if k.Suspend.Suspended(o) {
			t.Fatalf("%s: a new object is suspended", k.Kind)
		}
		c := k.Suspend.With(o, true)
		if !k.Suspend.Suspended(c) || k.Suspend.Suspended(o) || c.GetName() != "x" {
			t.Errorf("%s: With(true) gave suspended %v (original %v)", k.Kind, k.Suspend.Suspended(c), k.Suspend.Suspended(o))
		}
		if k.Suspend.Suspended(k.Suspend.With(c, false)) {
			t.Errorf("%s: With(false) is still suspended", k.Kind)
		}
		if on, off := k.Suspend.Effect(c, true), k.Suspend.Effect(o, false); on == "" || off == "" || on == off {
			t.Errorf("%s: effects %q and %q: each says what it does, and they differ", k.Kind, on, off)
		}
	}
	rc := &rayv1.RayCluster{Spec: rayv1.RayClusterSpec{Suspend: ptr.To(true)}}
	if !RayCluster.Suspend.Suspended(rc) || RayJob.Suspend.Suspended(rc) {
		t.Error("Suspended reads only its own kind")
	}
}
