package main

import (
	"context"
	"runtime/debug"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/history"
	kwatch "github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Issue 47's steps from the RayClusters + pods floor to raydar's
// observe-only session (cmd/raydar/session.go connect), one at a time, to
// find which of raydar's other watches (or its handlers, its history
// recorder, its collector setting) delays the pods' initial list: each
// is the session's cache (its options, its wire trim, started before the
// informers are asked for, as connect does) with more of the session's
// informers, then the session's own watch.Source and history recorder on
// it, then the same at the TUI's GOGC 25 (cmd/raydar/tui.go tuneGC).
var sessionFloorClients = []floorClient{
	{"s:clusters+pods", "the session's cache: RayClusters and pods", floorSession(false, 0, rayClusterObj, podObj)},
	{"s:+nodes", "the session's cache: RayClusters, pods, nodes", floorSession(false, 0, rayClusterObj, podObj, nodeObj)},
	{"s:+ray", "the session's cache: RayClusters, RayJobs, RayServices, RayCronJobs, pods", floorSession(false, 0, rayClusterObj, rayJobObj, rayServiceObj, rayCronJobObj, podObj)},
	{"s:+events", "the session's cache: RayClusters, pods, Events", floorSession(false, 0, rayClusterObj, podObj, eventObj)},
	{"s:all", "the session's cache: every informer the session starts (no handlers)", floorSession(false, 0, rayClusterObj, rayJobObj, rayServiceObj, rayCronJobObj, podObj, nodeObj, eventObj)},
	{"s:source", "the session: its cache, history recorder and watch.Source (node access reviews, handlers, a consumer that drops the batches)", floorSession(true, 0)},
	{"s:source-gogc25", "the same at GOGC 25 (the TUI's)", floorSession(true, 25)},
	{"clusters+pods-gogc25", "the RayClusters + pods floor at GOGC 25 (the TUI's)", func(ctx context.Context, cfg *rest.Config) (int, error) {
		defer debug.SetGCPercent(debug.SetGCPercent(25))
		return floorClustersAndPods(ctx, cfg)
	}},
}

func rayClusterObj() client.Object { return &rayv1.RayCluster{} }
func rayJobObj() client.Object     { return &rayv1.RayJob{} }
func rayServiceObj() client.Object { return &rayv1.RayService{} }
func rayCronJobObj() client.Object { return &rayv1.RayCronJob{} }
func podObj() client.Object        { return &corev1.Pod{} }
func nodeObj() client.Object       { return &corev1.Node{} }
func eventObj() client.Object      { return &corev1.Event{} }

// floorSession syncs the session's cache: with source, as connect does
// (history recorder, then watch.Source.Watch with node access), else the
// informers of objs alone. gogc, when not 0, is the collector's percent
// during the sync.
func floorSession(source bool, gogc int, objs ...func() client.Object) func(ctx context.Context, cfg *rest.Config) (int, error) {
	return func(ctx context.Context, cfg *rest.Config) (int, error) {
		if gogc != 0 {
			defer debug.SetGCPercent(debug.SetGCPercent(gogc))
		}
		authors := history.NewAuthors()
		wire := rest.CopyConfig(cfg)
		wire.Wrap(kwatch.SlimPodWire)
		c, err := cache.New(wire, cache.Options{
			Scheme:           scheme.New(),
			DefaultTransform: authors.Keep(kwatch.CompactRay),
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Pod{}: {Label: rayv1.RayPodSelector(), Transform: authors.Keep(kwatch.SlimPod)},
			},
		})
		if err != nil {
			return 0, err
		}
		cctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() { _ = c.Start(cctx) }()
		var synced func() bool
		if source {
			store := history.Memory(history.StoreOptions{}, "bench")
			defer store.Close()
			rec, err := history.StartRecorder(cctx, store, cfg.Host, authors, c, logr.Discard())
			if err != nil {
				return 0, err
			}
			defer rec.Close()
			src := kwatch.NewSource(kwatch.DefaultWindow)
			src.SetNodeAccess(kwatch.NodeAccessFor(cfg))
			if err := src.Watch(cctx, c); err != nil {
				return 0, err
			}
			go func() {
				for {
					if _, err := src.Next(cctx); err != nil {
						return
					}
				}
			}()
			synced = func() bool {
				done := src.Synced()
				if floorPodsAt.IsZero() && !slices.Contains(src.Unsynced(), "Pods") {
					floorPodsAt = time.Now()
				}
				return done
			}
		} else {
			type inf struct {
				pods   bool
				synced func() bool
			}
			var infs []inf
			for _, o := range objs {
				obj := o()
				i, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
				if err != nil {
					return 0, err
				}
				_, pods := obj.(*corev1.Pod)
				infs = append(infs, inf{pods, i.HasSynced})
			}
			synced = func() bool {
				all := true
				for _, i := range infs {
					if !i.synced() {
						all = false
					} else if i.pods && floorPodsAt.IsZero() {
						floorPodsAt = time.Now()
					}
				}
				return all
			}
		}
		if err := waitSynced(ctx, synced); err != nil {
			return 0, err
		}
		var rcs rayv1.RayClusterList
		if err := c.List(ctx, &rcs); err != nil {
			return 0, err
		}
		var ps corev1.PodList
		if err := c.List(ctx, &ps); err != nil {
			return 0, err
		}
		return len(rcs.Items) + len(ps.Items), nil
	}
}
