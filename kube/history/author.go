package history

import (
	"bytes"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/raydar/raydar/rayapi/kinds"
)

// Who classifies the writer of a change.
type Who string

// The writers raydar tells apart.
const (
	// WhoAutoscaler is the Ray autoscaler: its KubeRay node provider
	// (python/ray/autoscaler/_private/kuberay/node_provider.py,
	// KubernetesHttpApiClient.patch) PATCHes the RayCluster with Python's
	// requests and sets no fieldManager, so the API server names the
	// manager after requests' User-Agent: "python-requests".
	WhoAutoscaler Who = "autoscaler"
	// WhoRaydarUser is a person through raydar's TUI or CLI: kube/actions
	// writes with the field manager "raydar" or "raydar:<user>".
	WhoRaydarUser Who = "raydar-user"
	// WhoReconciler is raydar's own reconcile loop ("raydar-operator").
	WhoReconciler Who = "reconciler"
	// WhoKubectl is kubectl (kubectl-patch, kubectl-edit,
	// kubectl-client-side-apply, kubectl-scale, kubectl for server-side apply).
	WhoKubectl Who = "kubectl"
	// WhoOther is any other client; Author.Manager names it.
	WhoOther Who = "other"
)

// Field managers raydar knows.
const (
	// AutoscalerManager is the manager name of the Ray autoscaler's writes.
	AutoscalerManager = "python-requests"
	// RaydarManager is kube/actions' field manager; "raydar:<user>" when
	// the kube user is known (FieldManagerFor).
	RaydarManager = "raydar"
	// ReconcilerManager is the manager name of raydar's reconcile loop
	// (its client's User-Agent, set by controller.New).
	ReconcilerManager = "raydar-operator"
)

// maxManager is the API server's limit on a field manager's length.
const maxManager = 128

// FieldManagerFor is the field manager kube/actions writes with for the
// kube user actor ("" or "unknown": just "raydar").
func FieldManagerFor(actor string) string {
	if actor == "" || actor == "unknown" {
		return RaydarManager
	}
	m := RaydarManager + ":" + actor
	if len(m) > maxManager {
		m = m[:maxManager]
	}
	return m
}

// Author is who last wrote a part of an object, from its managedFields.
type Author struct {
	Who     Who    `json:"who"`
	Manager string `json:"manager"`
	// User is the kube user, when the manager says it (raydar:<user>).
	User      string    `json:"user,omitempty"`
	Operation string    `json:"operation,omitempty"`
	Time      time.Time `json:"time,omitzero"`
}

// Classify names the writer behind a field manager.
func Classify(manager string) (Who, string) {
	switch {
	case manager == AutoscalerManager:
		return WhoAutoscaler, ""
	case manager == RaydarManager:
		return WhoRaydarUser, ""
	case strings.HasPrefix(manager, RaydarManager+":"):
		return WhoRaydarUser, strings.TrimPrefix(manager, RaydarManager+":")
	case manager == ReconcilerManager:
		return WhoReconciler, ""
	case manager == "kubectl" || strings.HasPrefix(manager, "kubectl-"):
		return WhoKubectl, ""
	}
	return WhoOther, ""
}

// String is the author in words: "alice via raydar", "Ray autoscaler",
// "kubectl (kubectl-patch)", "raydar's reconciler", "helm".
func (a *Author) String() string {
	if a == nil {
		return ""
	}
	switch a.Who {
	case WhoAutoscaler:
		return "Ray autoscaler (" + a.Manager + ")" // inferred from the manager name Ray's autoscaler writes with
	case WhoRaydarUser:
		if a.User != "" {
			return a.User + " via raydar"
		}
		return "a person via raydar"
	case WhoReconciler:
		return "raydar's reconciler"
	case WhoKubectl:
		return "kubectl (" + a.Manager + ")"
	}
	return a.Manager
}

// authorOf is the newest managedFields entry on the main resource or its
// scale subresource (kubectl scale), not status, whose fields contain
// marker, nil when none.
func authorOf(mf []metav1.ManagedFieldsEntry, marker []byte) *Author {
	var best *metav1.ManagedFieldsEntry
	for i := range mf {
		e := &mf[i]
		if (e.Subresource != "" && e.Subresource != "scale") || e.FieldsV1 == nil || !bytes.Contains(e.FieldsV1.Raw, marker) {
			continue
		}
		if best == nil || timeOf(e).After(timeOf(best)) || timeOf(e).Equal(timeOf(best)) {
			best = e
		}
	}
	if best == nil {
		return nil
	}
	who, user := Classify(best.Manager)
	return &Author{Who: who, Manager: best.Manager, User: user, Operation: string(best.Operation), Time: timeOf(best)}
}

func timeOf(e *metav1.ManagedFieldsEntry) time.Time {
	if e.Time == nil {
		return time.Time{}
	}
	return e.Time.Time
}

// The markers of the fields whose writers are kept. workerGroupSpecs has no
// x-kubernetes-list-type in KubeRay's CRD (rayapi/crds), so it is an atomic
// list: whoever wrote it last owns all of it, and that owner is the author
// of the replica change it carries.
var (
	markerWorkerGroups = []byte(`"f:workerGroupSpecs"`)
	markerSpec         = []byte(`"f:spec"`)
)

// Written is who last wrote an object's spec at one resourceVersion.
type Written struct {
	ResourceVersion string
	// Spec is the newest writer of any spec field; Scale the owner of a
	// RayCluster's workerGroupSpecs (nil for the other kinds).
	Spec, Scale *Author
}

// writtenOf reads the writers of a Ray object; ok is false for other types.
func writtenOf(obj any) (types.UID, Written, bool) {
	o, ok := obj.(kinds.Object)
	if !ok {
		return "", Written{}, false
	}
	k, ok := kinds.Of(o)
	if !ok || !k.IsRay() {
		return "", Written{}, false
	}
	mf := o.GetManagedFields()
	w := Written{ResourceVersion: o.GetResourceVersion(), Spec: authorOf(mf, markerSpec)}
	if k == kinds.RayCluster {
		w.Scale = authorOf(mf, markerWorkerGroups)
	}
	return o.GetUID(), w, true
}

// Authors keeps, per object UID, who wrote the spec at its last few
// resourceVersions, read from managedFields in a cache's transform before
// they are stripped (the cached copies never carry them, and nothing is
// written back to the objects). The Recorder reads it by UID and
// resourceVersion. Safe for concurrent use; bounded (MaxObjects).
type Authors struct {
	mu   sync.Mutex
	byID map[types.UID][]Written
}

// Versions kept per object: an informer hands over an update a few
// versions behind the newest at most.
const keptVersions = 4

// MaxObjects bounds Authors; past it the map is cleared (the authors of
// the next changes are read again from their objects).
const MaxObjects = 100000

// NewAuthors returns an empty Authors.
func NewAuthors() *Authors { return &Authors{byID: map[types.UID][]Written{}} }

// Keep wraps a cache transform (cache.TransformStripManagedFields()): it
// notes the writers of each Ray object, then calls next. A nil Authors
// returns next unchanged.
func (a *Authors) Keep(next toolscache.TransformFunc) toolscache.TransformFunc {
	if a == nil {
		return next
	}
	return func(obj any) (any, error) {
		if uid, w, ok := writtenOf(obj); ok {
			a.note(uid, w)
		}
		if next == nil {
			return obj, nil
		}
		return next(obj)
	}
}

func (a *Authors) note(uid types.UID, w Written) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.byID[uid]
	if n := len(l); n > 0 && l[n-1].ResourceVersion == w.ResourceVersion {
		return
	}
	if len(a.byID) >= MaxObjects {
		clear(a.byID)
	}
	if len(l) >= keptVersions {
		l = append(l[:0:0], l[len(l)-keptVersions+1:]...)
	}
	a.byID[uid] = append(l, w)
}

// At is who wrote the object's spec at resourceVersion rv (false when
// that version was not noted: the author is then not guessed).
func (a *Authors) At(uid types.UID, rv string) (Written, bool) {
	if a == nil {
		return Written{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.byID[uid]
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].ResourceVersion == rv {
			return l[i], true
		}
	}
	return Written{}, false
}

// Forget drops what is known of a deleted object.
func (a *Authors) Forget(uid types.UID) {
	if a == nil {
		return
	}
	a.mu.Lock()
	delete(a.byID, uid)
	a.mu.Unlock()
}
