package raycronjob

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// observe reads what Decide needs: the RayJobs labelled with the
// RayCronJob's name in its namespace, from the cache with the RayJobs this
// process created and the cache does not show yet laid over it
// (kit.Overlay: a pass right after a create never creates the tick again),
// or live after a create whose outcome is unknown (kit.Observed picks).
func (r *reconciler) observe(ctx context.Context, cj *rayv1.RayCronJob) (Input, error) {
	in := Input{CronJob: cj, Now: r.now(), Local: r.local}
	sel := client.MatchingLabelsSelector{Selector: rayv1.CronJobRayJobSelector(cj.Name)}
	var reader client.Reader = r.client
	uncertain := r.exp.TakeUncertain(cj.UID)
	if uncertain {
		reader = r.api
	}
	list := &rayv1.RayJobList{}
	if err := reader.List(ctx, list, client.InNamespace(cj.Namespace), sel); err != nil {
		if uncertain {
			r.exp.MarkUncertain(cj.UID)
		}
		return Input{}, fmt.Errorf("listing the RayJobs of RayCronJob %s: %w", cj.Name, err)
	}
	jobs := make([]*rayv1.RayJob, 0, len(list.Items))
	for i := range list.Items {
		jobs = append(jobs, &list.Items[i])
	}
	in.Jobs = kit.Observed(r.exp, cj.UID, jobs, uncertain)
	return in, nil
}
