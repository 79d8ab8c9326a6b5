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

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/sandbox/rayhead"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Drive runs the scenario drivers until ctx is done, then returns:
//
//   - the burster: every Options.BurstEvery it submits to ClusterElastic's
//     simulated head (Options.Heads) a played-out job whose tasks ask for
//     ElasticMax × {CPU: ElasticTaskCPUs} for a third of BurstEvery (the
//     head's raydar.io/sandbox-tasks), unless the previous one still runs.
//     The cluster has in-tree autoscaling, so Ray's autoscaler (simulated
//     beside the head, kube/sandbox/autoscaler) grows the group to fit the
//     tasks, and once they are done removes the idle workers after
//     ElasticIdleSeconds: nothing here writes replicas.
//   - the upgrader: once ServiceName has been Ready, with an active cluster
//     and no pending one, for Options.UpgradeAfter, it bumps the image tag
//     of every Ray container of the service's cluster spec (v1 → v2 → …),
//     so the reconciler brings up a pending cluster, switches traffic to it
//     and deletes the old one; then it waits for the next settled period.
//
// Errors (an object missing, a refused patch, no head yet) are logged
// through Options.Logf and retried on the next tick; nothing stops a
// driver but ctx.
func Drive(ctx context.Context, c client.Client, opts Options) {
	o := opts.withDefaults()
	d := &driver{c: c, o: o}
	var wg sync.WaitGroup
	wg.Go(func() { d.burstLoop(ctx) })
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

// ---- burster ----

// BurstEntrypoint is the entrypoint of ClusterElastic's bursts: python on a
// file the host lacks, so the head plays it out.
const BurstEntrypoint = "python /home/ray/samples/elastic_burst.py"

func (d *driver) burstLoop(ctx context.Context) {
	if d.o.Heads == nil {
		d.o.Logf("burster: no simulated heads (Options.Heads): %s gets no demand and stays at its minimum", ClusterElastic)
		return
	}
	t := time.NewTicker(d.o.BurstEvery)
	defer t.Stop()
	for {
		if err := d.burst(ctx); err != nil && ctx.Err() == nil {
			d.logErr("burster", err)
		} else {
			d.clearErr("burster")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// burst submits one burst job, unless one still runs.
func (d *driver) burst(ctx context.Context) error {
	url, ok := d.o.Heads.DashboardURL(d.o.Namespace, ClusterElastic)
	if !ok {
		return fmt.Errorf("RayCluster %s has no head yet", ClusterElastic)
	}
	dc, err := dashboard.New(url)
	if err != nil {
		return err
	}
	jobs, err := dc.ListJobs(ctx)
	if err != nil {
		return fmt.Errorf("listing the jobs of %s: %w", ClusterElastic, err)
	}
	for _, j := range jobs {
		if j.Entrypoint == BurstEntrypoint && !j.Status.IsTerminal() {
			return nil // the last burst still runs
		}
	}
	run := max(time.Second, d.o.BurstEvery/3)
	tasks, err := json.Marshal([]rayhead.TaskBatch{{Count: ElasticMax, Resources: dashboard.Resources{"CPU": ElasticTaskCPUs}, Seconds: run.Seconds()}})
	if err != nil {
		return err
	}
	id, err := dc.SubmitJob(ctx, dashboard.SubmitJobRequest{Entrypoint: BurstEntrypoint, Metadata: map[string]string{
		rayhead.TasksMetadata:    string(tasks),
		rayhead.DurationMetadata: fmt.Sprintf("%.0f", (run + run/2).Seconds()),
	}})
	if err != nil {
		return fmt.Errorf("submitting a burst to %s: %w", ClusterElastic, err)
	}
	d.o.Logf("burst %s on RayCluster %s/%s: %d tasks of {CPU: %d} for %s", id, d.o.Namespace, ClusterElastic, ElasticMax, ElasticTaskCPUs, run)
	return nil
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
