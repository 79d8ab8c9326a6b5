package raycronjob

import (
	"context"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// statusChange classifies the status Decide computed (nil: it would not
// change) for the kit's StatusWriter: a RayCronJob's status changes seldom
// (a tick, the ScheduleValid condition) and each change is written at
// once, never held.
func statusChange(st *rayv1.RayCronJobStatus) kit.StatusChange {
	return kit.StatusChange{Unchanged: st == nil}
}

// writeStatus writes st (nil: nothing) through the status subresource,
// the whole status with the resourceVersion read (a stale view is a 409:
// the Loop decides again from a fresh read); the write is remembered, so
// the next pass reads it even before the cache shows it (kit.Latest).
func (r *reconciler) writeStatus(ctx context.Context, cj *rayv1.RayCronJob, st *rayv1.RayCronJobStatus) error {
	obj := cj.DeepCopy()
	if st != nil {
		obj.Status = *st
	}
	_, err := r.status.Write(ctx, cj, obj, statusChange(st), r.now(), nil)
	return err
}
