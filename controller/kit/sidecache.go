package kit

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// SideCache starts, with the manager, an informer cache of its own that
// holds only the objects of the given types that match selector, in
// namespaces (all when empty), with managed fields stripped. A kind uses
// it for children the shared cache does not hold because they lack
// ray.io/cluster (a RayJob's submitter Jobs and head Service, a
// RayService's Services and EndpointSlices, all labelled
// ray.io/originated-from-crd). what names it in errors.
func SideCache(mgr manager.Manager, what string, selector labels.Selector, namespaces []string, objs ...client.Object) (cache.Cache, error) {
	opts := cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         map[client.Object]cache.ByObject{},
	}
	for _, o := range objs {
		opts.ByObject[o] = cache.ByObject{Label: selector}
	}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	c, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, fmt.Errorf("controller: %s cache: %w", what, err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, err
	}
	return c, nil
}
