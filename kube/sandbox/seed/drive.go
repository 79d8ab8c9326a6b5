package seed

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Drive runs the scenario drivers until ctx is done, then returns:
//
//   - the scaler: every Options.ScaleEvery it moves ClusterElastic's
//     ElasticGroup one replica up or down, bouncing between ElasticMin and
//     ElasticMax (and within the group's own min/max). It starts from the
//     current value, so a scale made by a person meanwhile is carried on
//     from, not undone in one jump. Like Ray's autoscaler it writes a JSON
//     patch of replicas (not through kube/actions: it is a machine, not a
//     person), guarded by a test of the value it read, so it never
//     overwrites a change it has not seen.
//   - the upgrader: once ServiceName has been Ready, with an active cluster
//     and no pending one, for Options.UpgradeAfter, it bumps the image tag
//     of every Ray container of the service's cluster spec (v1 → v2 → …),
//     so the reconciler brings up a pending cluster, switches traffic to it
//     and deletes the old one; then it waits for the next settled period.
//
// Errors (an object missing, a refused patch) are logged through
// Options.Logf and retried on the next tick; nothing stops a driver but ctx.
func Drive(ctx context.Context, c client.Client, opts Options) {
	o := opts.withDefaults()
	d := &driver{c: c, o: o}
	var wg sync.WaitGroup
	wg.Go(func() { d.scaleLoop(ctx) })
	wg.Go(func() { d.upgradeLoop(ctx) })
	wg.Wait()
}

type driver struct {
	c client.Client
	o Options
	// lastErr suppresses repeating the same log line every tick.
	lastErr sync.Map // loop name → string
}

func (d *driver) logErr(loop string, err error) {
	msg := err.Error()
	if prev, ok := d.lastErr.Load(loop); ok && prev == msg {
		return
	}
	d.lastErr.Store(loop, msg)
	d.o.Logf("%s: %v", loop, err)
}

func (d *driver) clearErr(loop string) { d.lastErr.Delete(loop) }

// jsonPatchOp is one RFC 6902 operation.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

func (d *driver) jsonPatch(ctx context.Context, obj client.Object, ops []jsonPatchOp) error {
	data, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	return d.c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, data))
}

// ---- scaler ----

func (d *driver) scaleLoop(ctx context.Context) {
	t := time.NewTicker(d.o.ScaleEvery)
	defer t.Stop()
	dir := int32(1)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var err error
		if dir, err = d.scaleStep(ctx, dir); err != nil && ctx.Err() == nil {
			d.logErr("scaler", err)
		} else {
			d.clearErr("scaler")
		}
	}
}

// scaleStep moves ClusterElastic's group one step in direction dir (±1)
// and returns the direction of the next step.
func (d *driver) scaleStep(ctx context.Context, dir int32) (int32, error) {
	rc := &rayv1.RayCluster{}
	if err := d.c.Get(ctx, client.ObjectKey{Namespace: d.o.Namespace, Name: ClusterElastic}, rc); err != nil {
		return dir, fmt.Errorf("reading RayCluster %s: %w", ClusterElastic, err)
	}
	if rc.DeletionTimestamp != nil || rc.Spec.IsSuspended() {
		return dir, nil
	}
	i := groupIndex(rc.Spec.WorkerGroupSpecs, ElasticGroup)
	if i < 0 {
		return dir, fmt.Errorf("RayCluster %s has no worker group %q", ClusterElastic, ElasticGroup)
	}
	g := &rc.Spec.WorkerGroupSpecs[i]
	lo, hi := max(int32(ElasticMin), g.Min()), min(int32(ElasticMax), g.Max())
	cur := g.Min()
	if g.Replicas != nil {
		cur = *g.Replicas
	}
	next, dir := nextReplicas(cur, lo, hi, dir)
	if next == cur {
		return dir, nil
	}
	base := fmt.Sprintf("/spec/workerGroupSpecs/%d", i)
	ops := []jsonPatchOp{{Op: "test", Path: base + "/groupName", Value: ElasticGroup}}
	if g.Replicas != nil {
		ops = append(ops,
			jsonPatchOp{Op: "test", Path: base + "/replicas", Value: cur},
			jsonPatchOp{Op: "replace", Path: base + "/replicas", Value: next})
	} else {
		ops = append(ops, jsonPatchOp{Op: "add", Path: base + "/replicas", Value: next})
	}
	if err := d.jsonPatch(ctx, rc, ops); err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsConflict(err) {
			// Someone changed the group meanwhile: start over next tick.
			return dir, nil
		}
		return dir, fmt.Errorf("scaling %s/%s to %d: %w", ClusterElastic, ElasticGroup, next, err)
	}
	d.o.Logf("scaled RayCluster %s/%s group %s: %d → %d replicas", d.o.Namespace, ClusterElastic, ElasticGroup, cur, next)
	return dir, nil
}

// nextReplicas is one bounce step: it turns at lo and hi and brings a value
// outside [lo, hi] one step closer. With lo >= hi nothing moves.
func nextReplicas(cur, lo, hi, dir int32) (next, nextDir int32) {
	if lo >= hi {
		return cur, dir
	}
	switch {
	case cur >= hi:
		dir = -1
	case cur <= lo:
		dir = 1
	case dir == 0:
		dir = 1
	}
	return cur + dir, dir
}

func groupIndex(groups []rayv1.WorkerGroupSpec, name string) int {
	for i := range groups {
		if groups[i].GroupName == name {
			return i
		}
	}
	return -1
}

// ---- upgrader ----

func (d *driver) upgradeLoop(ctx context.Context) {
	t := time.NewTicker(d.o.PollEvery)
	defer t.Stop()
	var settledSince time.Time
	for {
		rs := &rayv1.RayService{}
		err := d.c.Get(ctx, client.ObjectKey{Namespace: d.o.Namespace, Name: ServiceName}, rs)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				d.logErr("upgrader", fmt.Errorf("reading RayService %s: %w", ServiceName, err))
			}
			settledSince = time.Time{}
		case !Settled(rs):
			d.clearErr("upgrader")
			settledSince = time.Time{}
		case settledSince.IsZero():
			settledSince = time.Now()
		case time.Since(settledSince) >= d.o.UpgradeAfter:
			if err := d.upgrade(ctx, rs); err != nil {
				if ctx.Err() == nil {
					d.logErr("upgrader", err)
				}
			} else {
				d.clearErr("upgrader")
				settledSince = time.Time{}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Settled reports whether a RayService is Ready, serves from an active
// cluster, has no pending one and its reconciler has seen its latest spec:
// the moment the upgrader may start the next upgrade.
func Settled(rs *rayv1.RayService) bool {
	st := rs.Status
	return rs.DeletionTimestamp == nil && !rs.Spec.Suspend &&
		(st.ObservedGeneration == 0 || st.ObservedGeneration >= rs.Generation) &&
		rayv1.IsConditionTrue(st.Conditions, string(rayv1.RayServiceReady)) &&
		!rayv1.IsConditionTrue(st.Conditions, string(rayv1.UpgradeInProgress)) &&
		st.ActiveServiceStatus.RayClusterName != "" &&
		st.PendingServiceStatus.RayClusterName == ""
}

// upgrade bumps the image of the Ray container of the head and of every
// worker group of the service's cluster spec, each guarded by a test of
// the image it read.
func (d *driver) upgrade(ctx context.Context, rs *rayv1.RayService) error {
	spec := &rs.Spec.RayClusterSpec
	type target struct {
		path, image string
	}
	var targets []target
	if cs := spec.HeadGroupSpec.Template.Spec.Containers; len(cs) > rayv1.RayContainerIndex {
		targets = append(targets, target{fmt.Sprintf("/spec/rayClusterConfig/headGroupSpec/template/spec/containers/%d/image", rayv1.RayContainerIndex), cs[rayv1.RayContainerIndex].Image})
	}
	for i, g := range spec.WorkerGroupSpecs {
		if cs := g.Template.Spec.Containers; len(cs) > rayv1.RayContainerIndex {
			targets = append(targets, target{fmt.Sprintf("/spec/rayClusterConfig/workerGroupSpecs/%d/template/spec/containers/%d/image", i, rayv1.RayContainerIndex), cs[rayv1.RayContainerIndex].Image})
		}
	}
	if len(targets) == 0 {
		return fmt.Errorf("RayService %s has no Ray container to upgrade", ServiceName)
	}
	from := targets[0].image
	to := NextImage(from)
	var ops []jsonPatchOp
	for _, t := range targets {
		ops = append(ops, jsonPatchOp{Op: "test", Path: t.path, Value: t.image})
	}
	for _, t := range targets {
		ops = append(ops, jsonPatchOp{Op: "replace", Path: t.path, Value: to})
	}
	if err := d.jsonPatch(ctx, rs, ops); err != nil {
		return fmt.Errorf("upgrading RayService %s to %s: %w", ServiceName, to, err)
	}
	d.o.Logf("upgrading RayService %s/%s: image %s → %s (active cluster %s)",
		d.o.Namespace, ServiceName, from, to, rs.Status.ActiveServiceStatus.RayClusterName)
	return nil
}

var versionTag = regexp.MustCompile(`^v(\d+)$`)

// NextImage returns image with its tag's version number raised by one
// ("…/summarizer:v1" → "…/summarizer:v2"); an image without a "vN" tag gets
// tag v2.
func NextImage(image string) string {
	repo, tag := image, ""
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		repo, tag = image[:i], image[i+1:]
	}
	if m := versionTag.FindStringSubmatch(tag); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return fmt.Sprintf("%s:v%d", repo, n+1)
		}
	}
	return repo + ":v2"
}
