package rayservice

// The RayService annotation ray.io/initializing-timeout, as KubeRay v1.7.0
// (and v1.5.0) implement it (rayservice_controller.go
// markFailedOnInitializingTimeout, isInitializingTimeout,
// cleanUpRayClusterInstance):
//
//   - a Go duration ("10m") or whole seconds ("600"), validated in rayapi/v1;
//   - when Ready has been False with reason Initializing for that long, and
//     no serve endpoint is up, Ready becomes False with reason
//     InitializingTimeout, a Warning Event RayServiceInitializingTimeout is
//     emitted, and the status names no active or pending cluster;
//   - that is final: the RayService is not reconciled any more (a spec change
//     does not revive it; delete and re-create it), and each of its clusters
//     is deleted rayClusterDeletionDelaySeconds later.

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// initializingTimeout is the annotation's duration, false without one.
func initializingTimeout(rs *rayv1.RayService) (time.Duration, bool) {
	v := rs.Annotations[rayv1.RayServiceInitializingTimeoutAnnotation]
	if v == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d, true
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second, true
	}
	return 0, false
}

// decideInitializingTimeout fails a RayService that stayed Initializing
// past its timeout, and keeps a failed one failed while its clusters go. It
// reports whether it decided the pass (nothing else is to be done).
func decideInitializingTimeout(o *observed, p *plan, st *rayv1.RayServiceStatuses) bool {
	rs := o.Service
	ready := meta.FindStatusCondition(st.Conditions, string(rayv1.RayServiceReady))
	failed := ready != nil && ready.Status == metav1.ConditionFalse && ready.Reason == string(rayv1.RayServiceInitializingTimeout)
	if !failed {
		timeout, ok := initializingTimeout(rs)
		if !ok || ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != string(rayv1.RayServiceInitializing) || o.ServeEndpoints > 0 {
			return false
		}
		spent := o.Now.Sub(ready.LastTransitionTime.Time)
		if spent < timeout {
			p.requeue(timeout - spent)
			return false
		}
		msg := fmt.Sprintf("RayService failed to become ready within the configured timeout of %s. Time spent initializing: %s",
			timeout, spent.Round(time.Second))
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, false, rayv1.RayServiceInitializingTimeout, msg, o.Now))
		st.ActiveServiceStatus = rayv1.RayServiceStatus{}
		st.PendingServiceStatus = rayv1.RayServiceStatus{}
		st.NumServeEndpoints = 0
		p.Urgent = true // a failure is written at once
		p.eventf(corev1.EventTypeWarning, rayv1.EventRayServiceInitializingTimeout, "Reconcile",
			"RayService initializing timeout exceeded after %s (configured timeout: %s)", spent.Round(time.Second), timeout)
	}
	// Failed: every cluster goes after the deletion delay.
	delay := time.Duration(rs.Spec.DeletionDelaySeconds()) * time.Second
	for _, c := range o.Clusters {
		if c.DeletionTimestamp != nil {
			continue
		}
		at, ok := deleteAfter(c)
		if !ok {
			t := o.Now.Add(delay).UTC().Format(time.RFC3339)
			p.Annotate = append(p.Annotate, annotation{c, map[string]*string{DeleteAfterKey: &t}})
			p.requeue(delay)
			continue
		}
		if o.Now.Before(at) {
			p.requeue(at.Sub(o.Now))
			continue
		}
		p.DeleteClusters = append(p.DeleteClusters, deletion{c, "the RayService failed: " + rayv1.RayServiceInitializingTimeoutAnnotation + " elapsed"})
	}
	return true
}
