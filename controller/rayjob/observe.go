package rayjob

// observe: reads the cache (and, where a stop may be due, the API server),
// the dashboard about a running job, and this process's memory. It writes
// nothing.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// skipReason says why raydar leaves rj alone: its spec.managedBy names
// another controller, or a KubeRay operator runs (the Operator's gate).
func (r *reconciler) skipReason(rj *rayv1.RayJob) string {
	probe := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Annotations: rj.Annotations}, Spec: rayv1.RayClusterSpec{ManagedBy: rj.Spec.ManagedBy}}
	var why string
	if r.gate != nil {
		why = r.gate.SkipReason(probe)
	} else {
		why = kit.SkipReason(probe, kit.OtherOperator{})
	}
	return strings.ReplaceAll(why, "this cluster", "this RayJob")
}

// observe reads what Decide needs.
func (r *reconciler) observe(ctx context.Context, rj *rayv1.RayJob) (*Observed, error) {
	o := &Observed{Job: rj, Now: r.now(), Config: r.cfg, NewSuffix: r.newSuffix}
	if o.SkipReason = r.skipReason(rj); o.SkipReason != "" {
		if r.tell(rj.UID, "skip", o.SkipReason) {
			log.FromContext(ctx).Info("not reconciling", "reason", o.SkipReason)
			r.recorder.Eventf(rj, nil, corev1.EventTypeNormal, kit.ReasonManagedElsewhere, "Skip", "raydar does not reconcile this RayJob: %s", o.SkipReason)
		}
		return o, nil
	}
	r.untell(rj.UID, "skip")
	st := &rj.Status
	mode := rj.Spec.EffectiveSubmissionMode()

	// A confirmed stop this process has not seen recorded yet.
	r.mu.Lock()
	rec, haveRec := r.stops[rj.UID]
	if f := r.stopFails[rj.UID]; f != nil {
		o.StopFailures, o.StopLastAttempt, o.StopLastError = f.n, f.at, f.last
	}
	r.mu.Unlock()
	if haveRec {
		if cur, ok := StopRecordOf(rj); !ok || !cur.Confirmed || cur.JobID != rec.JobID || cur.Request != rec.Request {
			rj = rj.DeepCopy()
			SetStopRecord(rj, rec, "confirmed by the dashboard", o.Now)
			o.Job, st = rj, &rj.Status
			o.UnrecordedStop = rj.Annotations[rayv1.JobStopRecordAnnotationKey]
		}
	}
	o.StatusPrunesConditions = r.prunesConditions.Load()
	// The dashboard failure clock, when the CRD prunes it (KubeRay v1.5.0's
	// RayJob status has no jobStatusCheckFailureStartTime).
	r.mu.Lock()
	if c, ok := r.checkFailSince[rj.UID]; ok && st.JobStatusCheckFailureStartTime == nil && c.jobID == st.JobId &&
		st.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning {
		rj = rj.DeepCopy()
		rj.Status.JobStatusCheckFailureStartTime = c.since.DeepCopy()
		o.Job, st = rj, &rj.Status
	}
	r.mu.Unlock()

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
	// Ask the dashboard about a running job.
	if rj.DeletionTimestamp == nil && st.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning && st.JobId != "" &&
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
