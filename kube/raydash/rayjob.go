package raydash

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// ClientForRayJob reads the RayJob ns/name and returns a client for the
// dashboard of the cluster it runs on (status.rayClusterName, else the
// cluster its clusterSelector names), with the RayJob as read. A missing
// RayJob returns the reader's NotFound error unchanged.
func ClientForRayJob(ctx context.Context, r client.Reader, res Resolver, ns, name string) (*dashboard.Client, *rayv1.RayJob, error) {
	job := &rayv1.RayJob{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
		return nil, nil, err
	}
	cluster := job.Status.RayClusterName
	if cluster == "" && job.Spec.UsesClusterSelector() {
		cluster = job.Spec.SelectedClusterName()
	}
	if cluster == "" {
		return nil, job, fmt.Errorf("RayJob %s/%s has no RayCluster yet (deployment status %q)", ns, name, job.Status.JobDeploymentStatus)
	}
	rc := &rayv1.RayCluster{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, rc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, job, fmt.Errorf("RayCluster %s of RayJob %s/%s is gone, and its dashboard with it: %w", cluster, ns, name, err)
		}
		return nil, job, err
	}
	dc, err := res.ClientFor(ctx, rc)
	if err != nil {
		return nil, job, err
	}
	return dc, job, nil
}
