package headsim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Environment variables of the submitter container (KubeRay's names): the
// dashboard's host:port and the submission ID.
const (
	EnvDashboardAddress = "RAY_DASHBOARD_ADDRESS"
	EnvSubmissionID     = "RAY_JOB_SUBMISSION_ID"
)

// jobControllerUIDLabel is set by the Job controller on a Job's pods.
const jobControllerUIDLabel = "batch.kubernetes.io/controller-uid"

// submitterSelector selects the K8sJobMode submitter Jobs of RayJobs: the
// only Jobs labelled as originated from a RayJob. KubeRay labels them with
// the originated-from pair and created-by, without the submission mode.
func submitterSelector() string {
	return rayv1.RayOriginatedFromCRDLabelKey + "=" + rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob)
}

func newSubmitterJobInformer(cs kubernetes.Interface, ns string) toolscache.SharedIndexInformer {
	return batchinformers.NewFilteredJobInformer(cs, ns, 0, toolscache.Indexers{}, func(o *metav1.ListOptions) {
		o.LabelSelector = submitterSelector()
	})
}

// submitter is the stand-in state of one submitter Job.
type submitter struct {
	submitted bool               // the Ray job is known to the current head
	headUID   types.UID          // the head that knows it
	done      map[types.UID]bool // pods already ended
	logged    map[string]bool    // one-time log lines
}

// jobFinished reports whether a Job has a true Complete or Failed condition.
func jobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// envValue is the value the container sees for name: the last entry of
// that name, as the kubelet resolves duplicates (KubeRay appends its
// submitter env after a template's own).
func envValue(c *corev1.Container, name string) string {
	v := ""
	for _, e := range c.Env {
		if e.Name == name {
			v = e.Value
		}
	}
	return v
}

// syncSubmitter plays the submitter container of one K8sJobMode Job: wait
// for a running pod and a reachable dashboard, submit unless the submission
// ID is known, follow the Ray job, end the pod when the job is terminal.
func (s *Sim) syncSubmitter(ctx context.Context, key string) (time.Duration, error) {
	obj, exists, err := s.jobs.GetStore().GetByKey(key)
	if err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	job := obj.(*batchv1.Job)
	poll := s.opts.PollInterval
	s.mu.Lock()
	st := s.subs[job.UID]
	if jobFinished(job) || job.DeletionTimestamp != nil {
		delete(s.subs, job.UID)
		s.mu.Unlock()
		return 0, nil
	}
	if st == nil {
		st = &submitter{done: map[types.UID]bool{}, logged: map[string]bool{}}
		s.subs[job.UID] = st
	}
	s.mu.Unlock()
	logOnce := func(k, format string, args ...any) {
		s.mu.Lock()
		first := !st.logged[k]
		st.logged[k] = true
		s.mu.Unlock()
		if first {
			s.opts.Logf("headsim: submitter Job %s: "+format, append([]any{key}, args...)...)
		}
	}

	if len(job.Spec.Template.Spec.Containers) == 0 {
		return 0, nil
	}
	c := &job.Spec.Template.Spec.Containers[0]
	id := envValue(c, EnvSubmissionID)
	if id == "" {
		logOnce("noid", "no %s in its container: cannot stand in for it", EnvSubmissionID)
		return 0, nil
	}

	// The submitter runs only in a running pod.
	pods, err := s.cs.CoreV1().Pods(job.Namespace).List(ctx, metav1.ListOptions{LabelSelector: jobControllerUIDLabel + "=" + string(job.UID)})
	if err != nil {
		return 0, err
	}
	var pod *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		s.mu.Lock()
		done := st.done[p.UID]
		s.mu.Unlock()
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && !done {
			pod = p
			break
		}
	}
	if pod == nil {
		return poll, nil
	}

	rj, err := s.ownerRayJob(ctx, job)
	if err != nil {
		logOnce("norayjob", "%v", err)
		return poll, nil
	}
	cluster, err := s.submitterCluster(ctx, job, envValue(c, EnvDashboardAddress), rj)
	if err != nil {
		logOnce("nocluster", "%v", err)
		return poll, nil
	}
	dc, headUID, ok := s.clientFor(cluster)
	if !ok {
		return poll, nil // the script waits for /api/gcs_healthz
	}

	s.mu.Lock()
	if st.headUID != headUID {
		st.submitted, st.headUID = false, headUID
	}
	submitted := st.submitted
	s.mu.Unlock()
	if !submitted {
		// if ! ray job status $ID; then ray job submit --no-wait --submission-id $ID …; fi
		_, err := dc.GetJobInfo(ctx, id)
		switch {
		case errors.Is(err, dashboard.ErrNotFound):
			req, rerr := raydash.SubmitRequest(rj, id)
			if rerr == nil {
				_, err = dc.SubmitJob(ctx, req)
			} else {
				err = fmt.Errorf("%w: %v", dashboard.ErrBadRequest, rerr)
			}
			switch {
			case err == nil:
				s.opts.Logf("headsim: submitter Job %s: submitted Ray job %s to %s", key, id, cluster)
			case errors.Is(err, dashboard.ErrSubmissionIDInUse):
			case errors.Is(err, dashboard.ErrBadRequest):
				// `ray job submit` exits non-zero: the pod fails.
				s.opts.Logf("headsim: submitter Job %s: submission refused: %v", key, err)
				return poll, s.endPod(ctx, st, pod, corev1.PodFailed)
			default:
				return poll, nil
			}
		case err != nil:
			return poll, nil
		}
		s.mu.Lock()
		st.submitted = true
		s.mu.Unlock()
	}

	// ray job logs --follow $ID
	info, err := dc.GetJobInfo(ctx, id)
	switch {
	case errors.Is(err, dashboard.ErrNotFound):
		s.mu.Lock()
		st.submitted = false
		s.mu.Unlock()
		return poll, nil
	case err != nil:
		return poll, nil
	}
	if !info.Status.IsTerminal() {
		return poll, nil
	}
	s.opts.Logf("headsim: submitter Job %s: Ray job %s is %s; ending pod %s", key, id, info.Status, pod.Name)
	return poll, s.endPod(ctx, st, pod, corev1.PodSucceeded)
}

// endPod ends the submitter pod in phase (through kwok).
func (s *Sim) endPod(ctx context.Context, st *submitter, pod *corev1.Pod, phase corev1.PodPhase) error {
	if s.opts.SetPodPhase == nil {
		s.mu.Lock()
		st.done[pod.UID] = true
		s.mu.Unlock()
		s.opts.Logf("headsim: no SetPodPhase: leaving submitter pod %s/%s running", pod.Namespace, pod.Name)
		return nil
	}
	if err := s.opts.SetPodPhase(ctx, pod.Namespace, pod.Name, phase); err != nil {
		return err
	}
	s.mu.Lock()
	st.done[pod.UID] = true
	s.mu.Unlock()
	return nil
}

// ownerRayJob reads the RayJob a submitter Job belongs to.
func (s *Sim) ownerRayJob(ctx context.Context, job *batchv1.Job) (*rayv1.RayJob, error) {
	name := job.Labels[rayv1.RayOriginatedFromCRNameLabelKey]
	for _, o := range job.OwnerReferences {
		if o.Kind == rayv1.KindRayJob {
			name = o.Name
		}
	}
	if name == "" {
		return nil, errors.New("no owning RayJob")
	}
	rj := &rayv1.RayJob{}
	if err := s.cl.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: name}, rj); err != nil {
		return nil, fmt.Errorf("reading RayJob %s: %w", name, err)
	}
	return rj, nil
}

// submitterCluster finds the cluster the submitter talks to: the Service
// named by the host of its dashboard address ("<svc>.<ns>.svc…:8265"), whose
// ray.io/cluster label names the cluster; else the RayJob's rayClusterName.
func (s *Sim) submitterCluster(ctx context.Context, job *batchv1.Job, addr string, rj *rayv1.RayJob) (types.NamespacedName, error) {
	host := addr
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	if i := strings.IndexAny(host, ":/"); i >= 0 {
		host = host[:i]
	}
	if parts := strings.Split(host, "."); host != "" && len(parts) >= 1 {
		ns := job.Namespace
		if len(parts) >= 2 {
			ns = parts[1]
		}
		svc, err := s.cs.CoreV1().Services(ns).Get(ctx, parts[0], metav1.GetOptions{})
		if err == nil && svc.Labels[rayv1.RayClusterLabelKey] != "" {
			return types.NamespacedName{Namespace: ns, Name: svc.Labels[rayv1.RayClusterLabelKey]}, nil
		}
	}
	if rj.Status.RayClusterName != "" {
		return types.NamespacedName{Namespace: rj.Namespace, Name: rj.Status.RayClusterName}, nil
	}
	return types.NamespacedName{}, fmt.Errorf("cannot tell which cluster %q is", addr)
}

// clientFor returns a client for the cluster's current head (through its
// counting front), and that head's pod UID.
func (s *Sim) clientFor(cluster types.NamespacedName) (*dashboard.Client, types.UID, bool) {
	s.mu.Lock()
	h, ok := s.byClust[cluster]
	s.mu.Unlock()
	if !ok {
		return nil, "", false
	}
	c, err := dashboard.New(h.front.URL(), dashboard.WithToken(h.token))
	if err != nil {
		return nil, "", false
	}
	return c, h.uid, true
}

// sidecar returns the SidecarMode submitter container of a head pod.
func sidecar(pod *corev1.Pod) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == rayv1.RayJobSubmitterContainerName {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

// sidecarSubmit plays the SidecarMode submitter: submit the RayJob's job to
// the head it runs next to, unless the submission ID is known.
func (s *Sim) sidecarSubmit(ctx context.Context, rc *rayv1.RayCluster, c *corev1.Container, url, token string) {
	if rc.Labels[rayv1.RayOriginatedFromCRDLabelKey] != rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob) {
		return
	}
	name := rc.Labels[rayv1.RayOriginatedFromCRNameLabelKey]
	rj := &rayv1.RayJob{}
	if err := s.cl.Get(ctx, types.NamespacedName{Namespace: rc.Namespace, Name: name}, rj); err != nil {
		s.opts.Logf("headsim: sidecar of %s/%s: reading RayJob %s: %v", rc.Namespace, rc.Name, name, err)
		return
	}
	id := envValue(c, EnvSubmissionID)
	if id == "" {
		id = rj.Status.JobId
	}
	if id == "" {
		s.opts.Logf("headsim: sidecar of %s/%s: no submission ID", rc.Namespace, rc.Name)
		return
	}
	dc, err := dashboard.New(url, dashboard.WithToken(token))
	if err != nil {
		return
	}
	req, err := raydash.SubmitRequest(rj, id)
	if err != nil {
		s.opts.Logf("headsim: sidecar of %s/%s: %v", rc.Namespace, rc.Name, err)
		return
	}
	for attempt := 0; attempt < 20 && ctx.Err() == nil; attempt++ {
		_, err := dc.GetJobInfo(ctx, id)
		if err == nil {
			return
		}
		if errors.Is(err, dashboard.ErrNotFound) {
			_, err = dc.SubmitJob(ctx, req)
			if err == nil || errors.Is(err, dashboard.ErrSubmissionIDInUse) {
				s.opts.Logf("headsim: sidecar of %s/%s: submitted Ray job %s", rc.Namespace, rc.Name, id)
				return
			}
			if errors.Is(err, dashboard.ErrBadRequest) {
				s.opts.Logf("headsim: sidecar of %s/%s: submission refused: %v", rc.Namespace, rc.Name, err)
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.opts.PollInterval):
		}
	}
}
