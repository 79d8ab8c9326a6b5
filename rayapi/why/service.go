package why

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func serviceObject(s *rayv1.RayService) object {
	st := &s.Status
	written := len(st.Conditions) > 0 || st.ObservedGeneration != 0 || st.ServiceStatus != "" || st.LastUpdateTime != nil
	return newObject("RayService", &s.ObjectMeta, s.Spec.ManagedBy, written, st.ObservedGeneration)
}

// serviceCauses is Service, unsorted.
func serviceCauses(in *ServiceInput) []Cause {
	s := in.Service
	st := &s.Status
	o := serviceObject(s)
	var cs []Cause
	if r := meta.FindStatusCondition(st.Conditions, string(rayv1.RayServiceReady)); r != nil &&
		r.Status != metav1.ConditionTrue && r.Reason == string(rayv1.RayServiceValidationFailed) {
		cs = append(cs, invalidCause(o, r.Message))
	} else if c, ok := invalidFromEvents(o, in.Events, rayv1.EventInvalidRayServiceSpec, rayv1.EventInvalidRayServiceMetadata); ok {
		cs = append(cs, c)
	}
	cs = whoCauses(o, in.Events, in.Reconciler, cs)
	if s.Spec.Suspend {
		return onlyContext(o, append(cs, suspendedCause(o)))
	}
	if hasCode(cs, CodeInvalidSpec) {
		return cs
	}
	cs = writeCauses(o, in.Events, "", "", cs)
	cs = waitingForOperator(o, in.Events, in.Reconciler, in.Now, in.SpecSeen, cs, serviceProgress(s, in.Now)...)
	if c, ok := dashboardUnreachable(o, in.Events, false, in.Now, nil); ok {
		cs = append(cs, c)
	}
	upgrading := in.Pending != nil && in.Pending.Cluster != nil
	if !upgrading { // during an upgrade the spec's Serve config is the new cluster's
		cs = serveDemand(o, s, in.Active, &st.ActiveServiceStatus, "", cs)
	}
	cs = nested(cs, in.Active, cs)
	cs = appCauses(o, "", &st.ActiveServiceStatus, cs)
	if upgrading {
		n0 := len(cs)
		cs = serveDemand(o, s, in.Pending, &st.PendingServiceStatus, "new cluster: ", cs)
		n := len(cs)
		cs = nested(cs, in.Pending, cs)
		for i := n; i < len(cs); i++ {
			cs[i].Summary = "new cluster: " + cs[i].Summary
		}
		apps := appCauses(o, "new cluster: ", &st.PendingServiceStatus, nil)
		if !blocking(cs[n0:]) && len(apps) == 0 {
			if c, ok := pendingNotReady(s, in.Pending, &st.PendingServiceStatus); ok {
				cs = append(cs, c)
			}
		}
		cs = append(cs, apps...)
	}
	cs = gatewayCauses(o, s, in.Gateway, cs)
	if st.NumServeEndpoints == 0 && clusterReady(in.Active) && !hasCode(cs, CodeAppDeployFailed) {
		cs = append(cs, Cause{Code: CodeNoServeEndpoints, Subject: o.subject(), Rank: rankEndpoints,
			Summary:  "no serve endpoints",
			Evidence: []string{"status.numServeEndpoints is 0 while RayCluster " + in.Active.Cluster.Name + " is ready"},
			Fix:      "check that Serve's proxies run and pass their readiness probe (pods labelled ray.io/serve=true back the serve Service)"})
	}
	return onlyContext(o, cs)
}

// appCauses: applications DEPLOY_FAILED, and deployments UNHEALTHY (an
// UNHEALTHY application without an unhealthy deployment is said as its
// own), in name order.
func appCauses(o object, prefix string, side *rayv1.RayServiceStatus, cs []Cause) []Cause {
	names := make([]string, 0, len(side.Applications))
	for n := range side.Applications {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		app := side.Applications[n]
		switch app.Status {
		case rayv1.ApplicationStatusDeployFailed:
			c := Cause{Code: CodeAppDeployFailed, Subject: o.subject() + ", app " + n, Rank: rankApp,
				Summary: prefix + "app " + n + " DEPLOY_FAILED",
				Fix:     "fix the application's import path, runtime env or code in serveConfigV2; raydar submits it again when the spec changes"}
			if m := strings.TrimSpace(app.Message); m != "" {
				c.Summary += ": " + shortReason(firstLine(m))
				c.Evidence = []string{m}
			}
			cs = append(cs, c)
		case rayv1.ApplicationStatusUnhealthy, rayv1.ApplicationStatusRunning, rayv1.ApplicationStatusDeploying:
			dnames := make([]string, 0, len(app.Deployments))
			for d := range app.Deployments {
				dnames = append(dnames, d)
			}
			slices.Sort(dnames)
			found := false
			for _, d := range dnames {
				dep := app.Deployments[d]
				if dep.Status != rayv1.DeploymentStatusUnhealthy {
					continue
				}
				found = true
				cs = append(cs, unhealthy(o, prefix, n+"/"+d, "deployment", dep.Message))
			}
			if !found && app.Status == rayv1.ApplicationStatusUnhealthy {
				cs = append(cs, unhealthy(o, prefix, n, "app", app.Message))
			}
		}
	}
	return cs
}

func unhealthy(o object, prefix, name, what, msg string) Cause {
	c := Cause{Code: CodeDeploymentUnhealthy, Subject: o.subject() + ", " + what + " " + name, Rank: rankDeployment,
		Summary: prefix + what + " " + name + " UNHEALTHY",
		Fix:     "read the replicas' logs (the Serve controller restarts them); its health check or constructor fails"}
	if m := strings.TrimSpace(msg); m != "" {
		c.Summary += ": " + shortReason(firstLine(m))
		c.Evidence = []string{m}
	}
	return c
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// pendingNotReady: the new cluster, without a more specific cause of its
// own, is not what the upgrade waits for yet, and says which part: its
// head pod not ready, workers not all ready, Serve applications not all
// RUNNING (KubeRay switches, or under NewClusterWithIncrementalUpgrade
// moves traffic, only once the pending cluster's Serve applications are
// ready: rayservice_controller.go:220-241, reconcileServe).
func pendingNotReady(s *rayv1.RayService, in *ClusterInput, side *rayv1.RayServiceStatus) (Cause, bool) {
	rc := in.Cluster
	word := status.Cluster(rc)
	var parts, evidence []string
	evidence = append(evidence, "pending cluster status: "+word+", workers "+status.Workers(rc))
	var head *podview.Pod
	for _, p := range in.Pods {
		if h, _ := podGroup(p); h && p.DeletionTimestamp == nil {
			head = p
		}
	}
	switch {
	case head == nil && word != "ready":
		parts = append(parts, "no head pod")
	case head != nil && !status.PodIsReady(head):
		parts = append(parts, "head not ready")
		evidence = append(evidence, "head pod "+head.Name+": "+status.Pod(head)+", not Ready")
	}
	if !rc.Spec.IsSuspended() && rc.Status.ReadyWorkerReplicas < rc.Spec.DesiredWorkerPods() {
		parts = append(parts, "workers pending ("+status.Workers(rc)+" ready)")
	}
	var notRunning []string
	for _, n := range slices.Sorted(maps.Keys(side.Applications)) {
		if a := side.Applications[n]; a.Status != rayv1.ApplicationStatusRunning {
			notRunning = append(notRunning, n+" "+status.OrNone(a.Status))
			if m := strings.TrimSpace(a.Message); m != "" {
				evidence = append(evidence, "app "+n+": "+a.Status+": "+firstLine(m))
			}
		}
	}
	if len(notRunning) > 0 {
		parts = append(parts, "Serve apps not running ("+strings.Join(notRunning, ", ")+")")
	}
	if len(parts) == 0 && word == "ready" {
		return Cause{}, false
	}
	sum := "new cluster " + rc.Name + " not ready (" + word + ")"
	if word == "ready" {
		sum = "new cluster " + rc.Name + " not serving yet"
	}
	if len(parts) > 0 {
		sum += ": " + strings.Join(parts, ", ")
	}
	fix := "wait for the new cluster; the upgrade switches traffic once it is ready and its apps run"
	if o := incrementalOptions(s); o != nil {
		step := "in steps"
		if o.StepSizePercent != nil {
			step = fmt.Sprintf("in steps of %d%%", *o.StepSizePercent)
		}
		fix = "wait for the new cluster; traffic moves to it " + step + " once its head is ready and its Serve apps run"
	}
	return Cause{Code: CodePendingClusterNotReady, Subject: in.subject(), Rank: rankClusterReady,
		Summary: sum, Evidence: evidence, Fix: fix}, true
}

// serviceProgress is how long the RayService has been in its status: since
// its Ready condition last changed.
func serviceProgress(s *rayv1.RayService, now time.Time) []string {
	r := meta.FindStatusCondition(s.Status.Conditions, string(rayv1.RayServiceReady))
	if r == nil || r.LastTransitionTime.IsZero() || now.IsZero() {
		return nil
	}
	return []string{"status " + status.Service(s) + ", Ready " + string(r.Status) + " since " + clock(r.LastTransitionTime.Time) + " (" + duration.HumanDuration(now.Sub(r.LastTransitionTime.Time)) + ")"}
}
