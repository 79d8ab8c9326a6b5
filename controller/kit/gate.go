package kit

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Reasons of the Events of a skipped object.
const (
	ReasonManagedElsewhere = "ManagedElsewhere"
	ReasonOtherOperator    = "OtherOperatorDetected"
)

// Labels by which a KubeRay operator's pods are recognised: the Helm chart
// sets app.kubernetes.io/name=kuberay-operator, the kustomize manifests
// app.kubernetes.io/component=kuberay-operator.
var otherOperatorSelectors = []client.MatchingLabels{
	{rayv1.KubernetesApplicationNameLabelKey: "kuberay-operator"},
	{"app.kubernetes.io/component": "kuberay-operator"},
}

// RunsRaydar reports whether a pod labelled as KubeRay's operator runs
// raydar's instead: KubeRay's Helm chart, installed with raydar's image,
// labels its pod app.kubernetes.io/name=kuberay-operator and sets the
// container's command to its operatorCommand value, /raydar-operator
// (docs/deploy.md). Without this raydar would take itself for KubeRay and
// leave every object alone.
func RunsRaydar(p *corev1.Pod) bool {
	for _, c := range p.Spec.Containers {
		if len(c.Command) > 0 && path.Base(c.Command[0]) == "raydar-operator" {
			return true
		}
	}
	return false
}

// OtherOperator is what raydar knows about another operator managing
// ray.io objects in the cluster.
type OtherOperator struct {
	// Detected is true while a KubeRay operator pod is running or starting.
	Detected bool
	// Pods are the detected operator pods, "namespace/name".
	Pods []string
	// Ignored is true when raydar was told to reconcile anyway
	// (Options.IgnoreOtherOperators).
	Ignored bool
	// CheckedAt is the time of the last check; Err its error, if any.
	CheckedAt time.Time
	Err       string
}

// Message says, in words, what the detection means for raydar.
func (o OtherOperator) Message() string {
	switch {
	case !o.Detected:
		return ""
	case o.Ignored:
		return fmt.Sprintf("a KubeRay operator is running (%s) but raydar reconciles anyway (--ignore-other-operator): both will act on the same clusters", joinPhrases(o.Pods))
	}
	return fmt.Sprintf("a KubeRay operator is running (%s): raydar leaves ray.io objects to it, except those opted in with spec.managedBy: %s "+
		"(raydar's CRDs) or the annotation %s: \"true\" with spec.managedBy: %s (KubeRay's CRDs, which KubeRay then leaves alone)",
		joinPhrases(o.Pods), rayv1.ManagedByRaydar, rayv1.ManagedByRaydarAnnotationKey, rayv1.MultiKueueController)
}

// optedIn reports whether an object asks for raydar through the annotation
// raydar.io/managed-by-raydar: "true".
func optedIn(annotations map[string]string) bool {
	return annotations[rayv1.ManagedByRaydarAnnotationKey] == "true"
}

// Gate decides which objects raydar may touch: not those whose
// spec.managedBy names another controller, and, while a KubeRay operator
// runs in the cluster, not those KubeRay would reconcile (managedBy unset
// or ray.io/kuberay-operator) unless told to ignore it.
type Gate struct {
	ignoreOthers bool
	api          client.Reader
	Cache        client.Reader

	mu        sync.RWMutex
	other     OtherOperator
	unmanaged map[types.NamespacedName]string
	kicks     []kick
}

// kick is one kind's channel of objects to re-reconcile when the detection
// changes, and how to list that kind.
type kick struct {
	newList func() client.ObjectList
	ch      chan crevent.GenericEvent
}

// Kicks registers a kind (by its list type) and returns the channel on
// which every cached object of that kind arrives when the other-operator
// detection changes, for the kind's controller to watch
// (source.Channel): a RayJob or RayService left to KubeRay is taken up as
// soon as KubeRay goes, not at its next change. Call it before the
// manager starts.
func (g *Gate) Kicks(newList func() client.ObjectList) <-chan crevent.GenericEvent {
	ch := make(chan crevent.GenericEvent, 1024)
	g.mu.Lock()
	g.kicks = append(g.kicks, kick{newList: newList, ch: ch})
	g.mu.Unlock()
	return ch
}

// NewGate is a Gate reading pods through api; ignoreOthers reconciles
// every object even while another operator runs (OtherOperator.Ignored).
func NewGate(api client.Reader, ignoreOthers bool) *Gate {
	return &Gate{
		api: api, ignoreOthers: ignoreOthers,
		unmanaged: map[types.NamespacedName]string{},
		other:     OtherOperator{Ignored: ignoreOthers},
	}
}

// SkipReason says why raydar must not reconcile rc, "" if it may.
func (g *Gate) SkipReason(rc *rayv1.RayCluster) string {
	g.mu.RLock()
	other := g.other
	g.mu.RUnlock()
	return SkipReason(rc, other)
}

// SkipReason is the pure rule behind Gate.SkipReason. raydar reconciles
// an object whose spec.managedBy is raydar.io/raydar (raydar's CRDs only:
// KubeRay's allow no such value), or that carries the annotation
// raydar.io/managed-by-raydar: "true" — with spec.managedBy
// kueue.x-k8s.io/multikueue, the one other value KubeRay's CRDs allow and
// that KubeRay's operator leaves alone, or unset while no KubeRay operator
// runs (an annotated object with managedBy unset would be reconciled by a
// running KubeRay too, so it is refused then).
func SkipReason(rc *rayv1.RayCluster, other OtherOperator) string {
	mb := rc.Spec.ManagedBy
	kuberayRuns := other.Detected && !other.Ignored
	switch {
	case rayv1.IsManagedBy(mb, rayv1.ManagedByRaydar):
		return ""
	case optedIn(rc.Annotations) && rayv1.IsManagedBy(mb, rayv1.MultiKueueController):
		return ""
	case !rayv1.IsManagedBy(mb, rayv1.KubeRayController):
		return fmt.Sprintf("spec.managedBy is %q: that controller reconciles this cluster, raydar does not touch it", *mb)
	case optedIn(rc.Annotations) && kuberayRuns:
		return fmt.Sprintf("the annotation %s is set, but a KubeRay operator is running (%s) and reconciles every object whose spec.managedBy is unset or %s; "+
			"set spec.managedBy: %s too so that it leaves this one to raydar", rayv1.ManagedByRaydarAnnotationKey, joinPhrases(other.Pods),
			rayv1.KubeRayController, rayv1.MultiKueueController)
	case kuberayRuns:
		return other.Message()
	}
	return ""
}

// gateNoun names an object of kind d in the gate's messages: "cluster" for
// a RayCluster, as SkipReason words it ("this cluster"), else the API kind
// ("RayJob").
func gateNoun(d *kinds.Kind) string {
	if d == kinds.RayCluster {
		return "cluster"
	}
	return d.Kind
}

// SkipReasonFor says why raydar must not reconcile an object of any kind
// with these annotations and spec.managedBy, "" if it may; noun names the
// object in the message ("cluster", "RayJob", "RayService"). A nil gate
// knows of no other operator.
func (g *Gate) SkipReasonFor(annotations map[string]string, managedBy *string, noun string) string {
	probe := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}, Spec: rayv1.RayClusterSpec{ManagedBy: managedBy}}
	var why string
	if g != nil {
		why = g.SkipReason(probe)
	} else {
		why = SkipReason(probe, OtherOperator{})
	}
	if noun != "" && noun != "cluster" {
		why = strings.ReplaceAll(why, "this cluster", "this "+noun)
	}
	return why
}

// setUnmanaged records why raydar leaves the object nn alone ("" : it no
// longer does), for Unmanaged.
func (g *Gate) setUnmanaged(nn types.NamespacedName, why string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if why == "" {
		delete(g.unmanaged, nn)
	} else {
		g.unmanaged[nn] = why
	}
}

// Forget drops what the gate holds about an object that is gone.
func (g *Gate) Forget(uid types.UID, nn types.NamespacedName) {
	g.mu.Lock()
	delete(g.unmanaged, nn)
	g.mu.Unlock()
}

// Unmanaged lists the RayClusters raydar currently leaves alone and why.
func (g *Gate) Unmanaged() map[types.NamespacedName]string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make(map[types.NamespacedName]string, len(g.unmanaged))
	for k, v := range g.unmanaged {
		out[k] = v
	}
	return out
}

// OtherOperator is a copy of the last detection (Check).
func (g *Gate) OtherOperator() OtherOperator {
	g.mu.RLock()
	defer g.mu.RUnlock()
	o := g.other
	o.Pods = append([]string(nil), o.Pods...)
	return o
}

// WatchKicks makes the controller b builds re-reconcile every object of its
// kind (listed by newList) when the other-operator detection changes; a nil
// gate leaves b as it is. Every kind's controller calls it.
func WatchKicks(b *builder.Builder, g *Gate, newList func() client.ObjectList) *builder.Builder {
	if g == nil {
		return b
	}
	return b.WatchesRawSource(source.Channel(g.Kicks(newList), &handler.EnqueueRequestForObject{}))
}

// Check looks for KubeRay operator pods once. When the answer changes,
// every cached object of every registered kind (Kicks) is re-queued.
func (g *Gate) Check(ctx context.Context) {
	found := map[string]bool{}
	var errMsg string
	for _, sel := range otherOperatorSelectors {
		list := &corev1.PodList{}
		if err := g.api.List(ctx, list, sel); err != nil {
			errMsg = err.Error()
			continue
		}
		for _, p := range list.Items {
			if RunsRaydar(&p) {
				continue
			}
			if p.DeletionTimestamp == nil && (p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending) {
				found[p.Namespace+"/"+p.Name] = true
			}
		}
	}
	pods := SortedKeys(found)
	sort.Strings(pods)
	g.mu.Lock()
	before := g.other.Detected
	if errMsg == "" || len(pods) > 0 {
		g.other.Detected = len(pods) > 0
		g.other.Pods = pods
	}
	g.other.CheckedAt = time.Now()
	g.other.Err = errMsg
	changed := before != g.other.Detected
	msg := g.other.Message()
	g.mu.Unlock()
	if changed {
		if msg != "" {
			log.FromContext(ctx).Info("other operator detected", "message", msg)
		} else {
			log.FromContext(ctx).Info("no other operator any more; reconciling every RayCluster")
		}
		g.requeueAll(ctx)
	}
}

func (g *Gate) requeueAll(ctx context.Context) {
	if g.Cache == nil {
		return
	}
	g.mu.RLock()
	kicks := append([]kick(nil), g.kicks...)
	g.mu.RUnlock()
	for _, k := range kicks {
		list := k.newList()
		if err := g.Cache.List(ctx, list); err != nil {
			continue
		}
		objs, err := apimeta.ExtractList(list)
		if err != nil {
			continue
		}
	send:
		for _, o := range objs {
			obj, ok := o.(client.Object)
			if !ok {
				continue
			}
			// Never block: a process that does not lead has no consumer,
			// and gaining the lead reconciles every object anyway.
			select {
			case k.ch <- crevent.GenericEvent{Object: obj}:
			default:
				break send
			}
		}
	}
}

// OtherOperatorWatcher runs G.Check every Interval on every raydar
// process, leader or not, so that every TUI can show it.
type OtherOperatorWatcher struct {
	G        *Gate
	Interval time.Duration
}

// NeedLeaderElection is false: the watcher runs on followers too.
func (w *OtherOperatorWatcher) NeedLeaderElection() bool { return false }

// Start runs G.Check on every tick of Interval until ctx ends.
func (w *OtherOperatorWatcher) Start(ctx context.Context) error {
	t := time.NewTicker(w.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			w.G.Check(ctx)
		}
	}
}
