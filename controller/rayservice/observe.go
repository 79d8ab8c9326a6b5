package rayservice

// observe: what the RayService reconciler reads before deciding — the
// shared cache (clusters, pods), its own cache of the RayServices'
// Services and EndpointSlices, this process's writes the caches do not
// show yet (read-your-writes), and each cluster's Serve through the
// dashboard and the Serve proxies.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// observe reads what decide needs. It writes nothing; the only memory it
// touches is the probe memo (probe), so that a burst of watch events does
// not become a burst of dashboard calls.
func (r *reconciler) observe(ctx context.Context, rs *rayv1.RayService) (*observed, error) {
	now := r.now()
	o := &observed{Service: rs, Now: now, NewSuffix: r.newSuffix, Config: r.cfg, Pods: map[string][]*corev1.Pod{},
		Probes: map[string]*serveProbe{}, Submissions: map[string]*submission{}}
	if rs.DeletionTimestamp != nil {
		return o, nil
	}

	// Clusters.
	list := &rayv1.RayClusterList{}
	if err := r.client.List(ctx, list, client.InNamespace(rs.Namespace), client.MatchingLabels{
		rayv1.RayOriginatedFromCRNameLabelKey: rs.Name, rayv1.RayOriginatedFromCRDLabelKey: rayv1.KindRayService,
	}); err != nil {
		return nil, fmt.Errorf("listing RayClusters: %w", err)
	}
	var cached []*rayv1.RayCluster
	for i := range list.Items {
		if ownedBy(&list.Items[i], rs) {
			cached = append(cached, &list.Items[i])
		}
	}
	o.Clusters = kit.Overlay(r.exp, rs.UID, cached)

	// Pods.
	for _, c := range o.Clusters {
		pods := &corev1.PodList{}
		if err := r.client.List(ctx, pods, client.InNamespace(rs.Namespace), client.MatchingLabels{rayv1.RayClusterLabelKey: c.Name}); err != nil {
			return nil, fmt.Errorf("listing pods of RayCluster %s: %w", c.Name, err)
		}
		for i := range pods.Items {
			pod := &pods.Items[i]
			if kit.ControllerUID(pod.OwnerReferences) == string(c.UID) || c.UID == "" {
				o.Pods[c.Name] = append(o.Pods[c.Name], overlayPod(r.exp, rs.UID, pod))
			}
		}
	}

	// Services and serve endpoints.
	var err error
	if o.HeadService, err = r.getService(ctx, rs, kit.RayServiceHeadServiceName(rs)); err != nil {
		return nil, err
	}
	if o.ServeService, err = r.getService(ctx, rs, kit.RayServiceServeServiceName(rs)); err != nil {
		return nil, err
	}
	if o.ServeService != nil {
		if o.ServeEndpoints, err = r.countServeEndpoints(ctx, o.ServeService); err != nil {
			return nil, err
		}
	}

	incr := incremental(rs, r.cfg.Build.Features)
	if incr {
		if err := r.observeIncremental(ctx, rs, o); err != nil {
			return nil, err
		}
	}

	// Serve probes of the clusters that may serve (not those retiring).
	activeName := ""
	if o.ServeService != nil && !incr {
		activeName = o.ServeService.Spec.Selector[rayv1.RayClusterLabelKey]
	} else if incr && o.HeadService != nil {
		activeName = o.HeadService.Spec.Selector[rayv1.RayClusterLabelKey]
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range o.Clusters {
		if c.DeletionTimestamp != nil || c.UID == "" {
			continue
		}
		if _, retiring := deleteAfter(c); retiring && c.Name != activeName {
			continue
		}
		r.mu.Lock()
		if s := r.subs[c.UID]; s != nil {
			o.Submissions[c.Name] = s
		}
		r.mu.Unlock()
		head := headPod(o.Pods[c.Name])
		if head == nil || !kit.IsRunningAndReady(head) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr := r.probe(ctx, c, head, o.Pods[c.Name], c.Name == activeName, now)
			mu.Lock()
			o.Probes[c.Name] = pr
			mu.Unlock()
		}()
	}
	wg.Wait()
	return o, nil
}

// getService reads one of the RayService's Services (nil: absent), with
// this process's writes laid over (overlayService).
func (r *reconciler) getService(ctx context.Context, rs *rayv1.RayService, name string) (*corev1.Service, error) {
	svc := &corev1.Service{}
	err := r.slices.Get(ctx, types.NamespacedName{Namespace: rs.Namespace, Name: name}, svc)
	switch {
	case apierrors.IsNotFound(err):
		svc = nil
	case err != nil:
		return nil, fmt.Errorf("reading Service %s: %w", name, err)
	}
	return overlayService(r.exp, rs.UID, rs.Namespace, name, svc), nil
}

// overlayService lays the owner's writes over one cached Service (nil:
// absent): one it created shows until cached, one it deleted is absent.
func overlayService(exp *kit.Expectations, owner types.UID, ns, name string, cached *corev1.Service) *corev1.Service {
	got := kit.OverlayOne(exp, owner, ns, name, cached)
	if got != nil && got.DeletionTimestamp != nil && (cached == nil || cached.DeletionTimestamp == nil) {
		return nil // our deletion, not shown yet
	}
	return got
}

// overlayPod lays the owner's label patch over one cached pod: only the
// ray.io/serve label is taken from the write, the cached pod's status is
// as new as anything known.
func overlayPod(exp *kit.Expectations, owner types.UID, cached *corev1.Pod) *corev1.Pod {
	got := kit.OverlayOne(exp, owner, cached.Namespace, cached.Name, cached)
	if got == cached {
		return cached
	}
	q := cached.DeepCopy()
	if q.Labels == nil {
		q.Labels = map[string]string{}
	}
	q.Labels[rayv1.RayClusterServingServiceLabelKey] = got.Labels[rayv1.RayClusterServingServiceLabelKey]
	return q
}

// countServeEndpoints counts the distinct ready endpoints in the serve
// Service's EndpointSlices (kube-controller-manager's EndpointSlice
// controller maintains them; the sandbox runs it). An endpoint without a
// ready condition counts as ready, as the API says.
func (r *reconciler) countServeEndpoints(ctx context.Context, svc *corev1.Service) (int32, error) {
	list := &discoveryv1.EndpointSliceList{}
	if err := r.slices.List(ctx, list, client.InNamespace(svc.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: svc.Name}); err != nil {
		return 0, fmt.Errorf("listing the EndpointSlices of Service %s: %w", svc.Name, err)
	}
	seen := map[string]bool{}
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			key := strings.Join(ep.Addresses, ",")
			if ep.TargetRef != nil {
				key = ep.TargetRef.Name
			}
			seen[key] = true
		}
	}
	return int32(len(seen)), nil
}

// probe returns the cluster's latest Serve probe, taking a new one when the
// last is stale (see probeInterval), the head pod changed, or a
// submission was made since.
func (r *reconciler) probe(ctx context.Context, rc *rayv1.RayCluster, head *corev1.Pod, pods []*corev1.Pod, active bool, now time.Time) *serveProbe {
	r.mu.Lock()
	last := r.probes[rc.UID]
	r.mu.Unlock()
	if last != nil && last.HeadUID == string(head.UID) && last.Active == active && now.Before(last.At.Add(probeInterval(last, r.cfg))) {
		return last
	}
	pr := &serveProbe{At: now, HeadUID: string(head.UID), Active: active}
	details, err := r.serveDetails(ctx, rc)
	if err != nil {
		pr.Err = err.Error()
		pr.FailingSince = now
		if last != nil && !last.OK && last.HeadUID == pr.HeadUID {
			pr.FailingSince = last.FailingSince
		}
	} else {
		pr.OK = true
		pr.Apps = details.Applications
	}
	if pr.OK && len(pr.Apps) > 0 {
		pr.Proxies = r.checkProxies(ctx, rc, pods)
	}
	r.mu.Lock()
	r.probes[rc.UID] = pr
	r.mu.Unlock()
	return pr
}

func (r *reconciler) serveDetails(ctx context.Context, rc *rayv1.RayCluster) (*dashboard.ServeDetails, error) {
	dc, err := r.dash.ClientFor(ctx, rc)
	if err != nil {
		return nil, err
	}
	return dc.GetServeApplications(ctx)
}

// checkProxies checks the Serve proxy of every Running and Ready pod, a few
// at a time.
func (r *reconciler) checkProxies(ctx context.Context, rc *rayv1.RayCluster, pods []*corev1.Pod) map[string]proxyHealth {
	out := map[string]proxyHealth{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, pod := range pods {
		if !kit.IsRunningAndReady(pod) || (!kit.IsHeadPod(pod) && !kit.IsWorkerPod(pod)) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(ctx, dashboard.DefaultTimeout)
			err := r.proxy.CheckServeProxy(cctx, rc, pod)
			cancel()
			h := proxyHealth{Healthy: err == nil}
			if err != nil {
				h.Err = err.Error()
			}
			mu.Lock()
			out[pod.Name] = h
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// observeIncremental reads what an incremental upgrade needs: the Gateway
// and the HTTPRoute, straight from the API server (whether it serves them
// at all), and each cluster's own serve Service with its endpoints.
func (r *reconciler) observeIncremental(ctx context.Context, rs *rayv1.RayService, o *observed) error {
	io := &o.Incremental
	io.ClusterServices = map[string]*corev1.Service{}
	io.ClusterEndpoints = map[string]int32{}
	if r.reader != nil {
		gw := &gwv1.Gateway{}
		switch err := r.reader.Get(ctx, types.NamespacedName{Namespace: rs.Namespace, Name: rs.GatewayName()}, gw); {
		case err == nil:
			io.Gateway = gw
		case meta.IsNoMatchError(err) || discovery.IsGroupDiscoveryFailedError(err):
			io.GatewayAPIMissing = true
			return nil
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("reading Gateway %s: %w", rs.GatewayName(), err)
		}
		rt := &gwv1.HTTPRoute{}
		switch err := r.reader.Get(ctx, types.NamespacedName{Namespace: rs.Namespace, Name: rs.HTTPRouteName()}, rt); {
		case err == nil:
			io.HTTPRoute = rt
		case meta.IsNoMatchError(err) || discovery.IsGroupDiscoveryFailedError(err):
			io.GatewayAPIMissing = true
			return nil
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("reading HTTPRoute %s: %w", rs.HTTPRouteName(), err)
		}
	}
	for _, c := range o.Clusters {
		if c.DeletionTimestamp != nil {
			continue
		}
		svc, err := r.getService(ctx, rs, clusterServeServiceName(c.Name))
		if err != nil {
			return err
		}
		if svc == nil {
			continue
		}
		io.ClusterServices[c.Name] = svc
		if io.ClusterEndpoints[c.Name], err = r.countServeEndpoints(ctx, svc); err != nil {
			return err
		}
	}
	return nil
}
