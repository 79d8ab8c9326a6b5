package rayjob

// observe: reads the cache (and, where a stop may be due, the API server),
// the dashboard about a running job, and this process's memory. It writes
// nothing.

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// observe reads what Decide needs: the cache (the RayJob from the API
// server instead when a stop may be due), the children, the dashboard about
// a running job, and this process's memory. It writes nothing (it only
// drops a dashboard token the dashboard refused, so that the next read
// fetches it again); a nil Observed means the RayJob is gone.
func (r *reconciler) observe(ctx context.Context, rj *rayv1.RayJob) (*Observed, error) {
	o := &Observed{Job: rj, Now: r.now(), Config: r.cfg, NewSuffix: r.newSuffix}
	if stopMayBeDue(rj) {
		// Never a stop twice: one confirmed by another process (or before a
		// restart) shows on the live object before the cache has it.
		live := &rayv1.RayJob{}
		if err := r.api.Get(ctx, client.ObjectKeyFromObject(rj), live); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, fmt.Errorf("reading the RayJob: %w", err)
		}
		rj = live
		o.Job = rj
	}
	r.recall(rj.UID, o)
	o.StatusPrunesConditions = r.prunesConditions.Load()
	st := &rj.Status
	mode := rj.Spec.EffectiveSubmissionMode()

	if st.RayClusterName != "" {
		rc := &rayv1.RayCluster{}
		err := r.client.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: st.RayClusterName}, rc)
		switch {
		case err == nil:
			o.Cluster = rc
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading RayCluster %s: %w", st.RayClusterName, err)
		}
	}
	var err error
	if o.Group, err = r.getGroup(ctx, rj); err != nil {
		return nil, err
	}
	if rj.DeletionTimestamp != nil && o.Cluster != nil && o.Cluster.DeletionTimestamp != nil {
		pods := &corev1.PodList{}
		if err := r.client.List(ctx, pods, client.InNamespace(rj.Namespace),
			client.MatchingLabelsSelector{Selector: kit.ClusterPodsSelector(o.Cluster.Name)}); err != nil {
			return nil, fmt.Errorf("listing the pods of RayCluster %s: %w", o.Cluster.Name, err)
		}
		o.ClusterEmpty = len(pods.Items) == 0
	}
	if mode == rayv1.K8sJobMode {
		job := &batchv1.Job{}
		err := r.jobs.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: kit.RayJobSubmitterName(rj)}, job)
		switch {
		case err == nil:
			o.Submitter = job
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading the submitter Job: %w", err)
		}
	}
	if !rj.Spec.UsesClusterSelector() && rj.DeletionTimestamp == nil {
		svc := &corev1.Service{}
		err := r.jobs.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: HeadServiceName(rj)}, svc)
		switch {
		case err == nil:
			o.HeadService = svc
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading the head Service: %w", err)
		}
	}
	if mode == rayv1.SidecarMode && o.Cluster != nil {
		pods := &corev1.PodList{}
		if err := r.client.List(ctx, pods, client.InNamespace(rj.Namespace), client.MatchingLabels(kit.HeadSelector(o.Cluster.Name))); err != nil {
			return nil, fmt.Errorf("listing head pods: %w", err)
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.DeletionTimestamp == nil && kit.ControllerUID(p.OwnerReferences) == string(o.Cluster.UID) {
				o.HeadPod = p
			}
		}
	}
	// Ask the dashboard about a running job, and before a stop (a deleted
	// RayJob's too): decide_stop.go dashSaysEnded.
	if (rj.DeletionTimestamp == nil || stopMayBeDue(rj)) && st.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning && st.JobId != "" &&
		o.Cluster != nil && o.Cluster.DeletionTimestamp == nil {
		o.Dash = &DashAnswer{}
		dc, err := r.dash.ClientFor(ctx, o.Cluster)
		if err == nil {
			o.Dash.Info, err = dc.GetJobInfo(ctx, st.JobId)
		}
		o.Dash.Err = err
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		if errors.Is(err, dashboard.ErrUnauthorized) {
			if fr, ok := r.dash.(interface{ ForgetToken(*rayv1.RayCluster) }); ok {
				fr.ForgetToken(o.Cluster)
			}
		}
	}
	return o, nil
}
