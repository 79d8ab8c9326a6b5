package rayservice

// decide, spec.suspend: the RayService's clusters and Services go, with
// KubeRay v1.7.0's Suspending and Suspended conditions. Pure.

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// decideSuspend handles spec.suspend: every owned cluster and Service is
// deleted (Suspending), then Suspended is set. A suspension, once started,
// completes before a resume. It returns true when the RayService is
// suspending or suspended (nothing else is decided).
func decideSuspend(o *observed, p *plan, st *rayv1.RayServiceStatuses) bool {
	rs := o.Service
	suspending := rayv1.IsConditionTrue(rs.Status.Conditions, string(rayv1.RayServiceSuspending))
	suspended := rayv1.IsConditionTrue(rs.Status.Conditions, string(rayv1.RayServiceSuspended))
	if !rs.Spec.Suspend && !suspending {
		if suspended {
			// KubeRay v1.7.0 handleSuspend: Suspended False Resumed, and
			// Ready and UpgradeInProgress start over as Initializing (a
			// fresh transition time re-arms the initializing timeout).
			meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceSuspended, false, rayv1.RayServiceResumed, "suspend is false: the RayService is being brought up again", o.Now))
			meta.RemoveStatusCondition(&st.Conditions, string(rayv1.RayServiceReady))
			meta.RemoveStatusCondition(&st.Conditions, string(rayv1.UpgradeInProgress))
			meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, false, rayv1.RayServiceInitializing, "RayService is initializing after resuming from suspend.", o.Now))
			meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.UpgradeInProgress, false, rayv1.RayServiceInitializing, "RayService is initializing after resuming from suspend.", o.Now))
			p.eventf(corev1.EventTypeNormal, reasonResumed, "Resume", "suspend is false: bringing the RayService up again")
		}
		return false
	}
	remaining := 0
	for _, c := range o.Clusters {
		remaining++
		if c.DeletionTimestamp == nil {
			p.DeleteClusters = append(p.DeleteClusters, deletion{c, "the RayService is suspended"})
		}
	}
	for _, s := range []*corev1.Service{o.HeadService, o.ServeService} {
		if s != nil && ownedBy(s, rs) {
			remaining++
			if s.DeletionTimestamp == nil {
				p.DeleteServices = append(p.DeleteServices, s)
			}
		}
	}
	st.ActiveServiceStatus = rayv1.RayServiceStatus{}
	st.PendingServiceStatus = rayv1.RayServiceStatus{}
	st.NumServeEndpoints = 0
	st.ServiceStatus = rayv1.NotRunning
	if remaining > 0 {
		if !suspending {
			p.eventf(corev1.EventTypeNormal, reasonSuspending, "Suspend", "suspend is true: deleting every RayCluster and Service of the RayService")
		}
		// KubeRay: Suspending True SuspendRequested when suspend is first
		// seen, SuspendInProgress while deleting; Ready, UpgradeInProgress
		// and RollbackInProgress False SuspendInProgress; Suspended not
		// set until the end.
		why := rayv1.SuspendRequested
		if suspending {
			why = rayv1.SuspendInProgress
		}
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceSuspending, true, why, "deleting the RayService's RayClusters and Services", o.Now))
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, false, rayv1.SuspendInProgress, "the RayService is being suspended", o.Now))
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.UpgradeInProgress, false, rayv1.SuspendInProgress, "No upgrade in progress.", o.Now))
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RollbackInProgress, false, rayv1.SuspendInProgress, "No rollback in progress.", o.Now))
	} else {
		if !suspended {
			p.eventf(corev1.EventTypeNormal, reasonSuspended, "Suspend", "every RayCluster and Service of the RayService is gone")
		}
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceSuspending, false, rayv1.SuspendComplete, "", o.Now))
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceSuspended, true, rayv1.SuspendComplete, "every RayCluster and Service of the RayService is deleted", o.Now))
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, false, rayv1.SuspendComplete, "the RayService is suspended", o.Now))
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.UpgradeInProgress, false, rayv1.SuspendComplete, "No upgrade in progress.", o.Now))
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RollbackInProgress, false, rayv1.SuspendComplete, "No rollback in progress.", o.Now))
	}
	return true
}
