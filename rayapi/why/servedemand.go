package why

import (
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// serveDemand states the Serve deployments of a RayService whose replicas
// ask, in spec.serveConfigV2's ray_actor_options, for what the cluster
// serving them (ci, the side's status: active or new) does not give,
// decided as a RayJob's entrypoint is (shapeDemand): no pod offers one
// replica's shape, the groups that would cannot grow, or Ray holds the
// shape as pending or infeasible demand. Only while the deployment's
// application is not RUNNING (DEPLOYING, UNHEALTHY, or not in the status
// yet) and the deployment is not HEALTHY: a running replica got its
// resources. A deployment whose ray_actor_options the config leaves to the
// code is not judged (raydar reads the spec, not the code). The cluster's
// own RayInfeasible for the same shape is then left out (nested).
func serveDemand(o object, s *rayv1.RayService, ci *ClusterInput, side *rayv1.RayServiceStatus, prefix string, out []Cause) []Cause {
	if ci == nil || ci.Cluster == nil {
		return out
	}
	deps := dashboard.ServeConfigDeployments(s.Spec.ServeConfigV2)
	for i := range deps {
		d := &deps[i]
		if len(d.Shape) == 0 || d.Replicas == 0 {
			continue
		}
		app, ok := side.Applications[d.App]
		if ok {
			switch app.Status {
			case rayv1.ApplicationStatusRunning, rayv1.ApplicationStatusDeployFailed, rayv1.ApplicationStatusDeleting:
				continue
			}
			if dep, ok := app.Deployments[d.Name]; ok && dep.Status == rayv1.DeploymentStatusHealthy {
				continue
			}
		}
		name := d.App + "/" + d.Name
		c, ok := shapeDemand(ci, d.Shape, askerWords{
			who:     prefix + "replica of deployment " + name,
			less:    "ray_actor_options of deployment " + name + " in spec.serveConfigV2",
			cannot:  "its replicas cannot start",
			startOn: "its replicas start",
		})
		if !ok {
			continue
		}
		c.Code, c.Subject = CodeServeDemand, o.subject()+", deployment "+name
		c.Evidence = append([]string{serveShapeField(d)}, c.Evidence...)
		out = append(out, c)
	}
	return out
}

// serveShapeField is the config a replica's shape came from, for evidence:
// "spec.serveConfigV2 applications[0].deployments[0].ray_actor_options:
// {num_gpus: 2} (num_cpus 1: Serve's default); 2 replicas".
func serveShapeField(d *dashboard.ServeConfigDeployment) string {
	s := "spec.serveConfigV2 " + d.Path() + ".ray_actor_options: {" + dashboard.ActorOptionWords(d.Options) + "}"
	if d.DefaultCPU {
		s += " (num_cpus 1: Serve's default)"
	}
	switch {
	case d.Replicas == 1:
		s += "; 1 replica"
	case d.Replicas > 1:
		s += "; " + itoa(int64(d.Replicas)) + " replicas"
	}
	return s
}
