package headsim

import (
	"context"
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

	rayv1 "github.com/raydar/raydar/rayapi/v1"
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
	runs map[types.UID]context.CancelFunc // pods whose container runs now
	done map[types.UID]bool               // pods whose run ended (or that ended otherwise)
	pods map[types.UID]string             // log keys of the pods run, forgotten with the Job
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

// syncSubmitter plays the submitter container of one K8sJobMode Job: once
// one of its pods runs, it runs the container's command line (script.go)
// and ends the pod Succeeded when it exits 0, Failed otherwise; a pod that
// stops running (deleted) has its run cancelled; a finished Job's runs are
// cancelled, and a deleted Job's logs forgotten.
func (s *Sim) syncSubmitter(ctx context.Context, key string) (time.Duration, error) {
	obj, exists, err := s.jobs.GetStore().GetByKey(key)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	st := s.subs[key]
	if !exists {
		if st != nil {
			for _, cancel := range st.runs {
				cancel()
			}
			for _, k := range st.pods {
				delete(s.logs, k)
			}
			delete(s.subs, key)
		}
		s.mu.Unlock()
		return 0, nil
	}
	job := obj.(*batchv1.Job)
	if st == nil {
		st = &submitter{runs: map[types.UID]context.CancelFunc{}, done: map[types.UID]bool{}, pods: map[types.UID]string{}}
		s.subs[key] = st
	}
	if jobFinished(job) || job.DeletionTimestamp != nil {
		for uid, cancel := range st.runs {
			cancel()
			delete(st.runs, uid)
		}
		s.mu.Unlock()
		return 0, nil
	}
	s.mu.Unlock()

	pods, err := s.cs.CoreV1().Pods(job.Namespace).List(ctx, metav1.ListOptions{LabelSelector: jobControllerUIDLabel + "=" + string(job.UID)})
	if err != nil {
		return 0, err
	}
	running := map[types.UID]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && len(p.Spec.Containers) > 0 {
			running[p.UID] = p
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid, cancel := range st.runs {
		if running[uid] == nil {
			cancel() // the pod went, and its container with it
			delete(st.runs, uid)
			st.done[uid] = true
		}
	}
	for uid, pod := range running {
		if st.done[uid] || st.runs[uid] != nil || s.closed {
			continue
		}
		runCtx, cancel := context.WithCancel(s.loop.Context())
		st.runs[uid] = cancel
		logKey := pod.Namespace + "/" + pod.Name
		log := &podLog{}
		s.logs[logKey] = log
		st.pods[uid] = logKey
		s.loop.Go(func() {
			defer cancel()
			label := "pod " + logKey + " (Job " + key + ")"
			code, err := s.runContainer(runCtx, pod, &pod.Spec.Containers[0], place{namespace: pod.Namespace}, log, label)
			s.mu.Lock()
			delete(st.runs, pod.UID)
			st.done[pod.UID] = true
			s.mu.Unlock()
			if runCtx.Err() != nil {
				return
			}
			phase := corev1.PodSucceeded
			if code != 0 || err != nil {
				phase = corev1.PodFailed
			}
			if err := s.endPod(runCtx, pod, phase); err != nil {
				s.opts.Logf("headsim: submitter %s: ending it %s: %v", label, phase, err)
			}
			s.subQ.Add(key)
		})
	}
	return s.opts.PollInterval, nil
}

// runContainer runs a submitter container's command line to its end and
// logs how it ended; code is its exit status, err what kept the stand-in
// from running it (also written to the container's log).
func (s *Sim) runContainer(ctx context.Context, pod *corev1.Pod, c *corev1.Container, where place, log *podLog, label string) (code int, err error) {
	r := &run{s: s, where: where, out: log, logf: func(format string, args ...any) {
		s.opts.Logf("headsim: submitter "+label+": "+format, args...)
	}}
	env := s.containerEnv(ctx, pod, c, r.logf)
	vals := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vals[k] = v
	}
	// The kubelet expands $(VAR) in command and args too.
	var argv []string
	for _, a := range append(append([]string(nil), c.Command...), c.Args...) {
		argv = append(argv, expandDependent(a, vals))
	}
	r.logf("running its command line")
	code, err = r.exec(ctx, argv, env)
	switch {
	case ctx.Err() != nil:
		r.logf("stopped: its pod went")
	case err != nil:
		fmt.Fprintln(log, err)
		r.logf("%v; it fails", err)
	case code != 0:
		r.logf("exited with status %d:\n%s", code, log.tail(8))
	default:
		r.logf("exited with status 0")
	}
	return code, err
}

// SubmitterLog is what the stand-in submitter of a pod printed: the
// K8sJobMode submitter pod namespace/pod, or the SidecarMode submitter in
// head pod namespace/pod; "" when it ran none. A K8sJobMode pod's log is
// kept until its Job is deleted, a sidecar's until its head stops.
func (s *Sim) SubmitterLog(namespace, pod string) string {
	s.mu.Lock()
	l := s.logs[namespace+"/"+pod]
	s.mu.Unlock()
	if l == nil {
		return ""
	}
	return l.String()
}

// endPod ends the submitter pod in phase (through kwok).
func (s *Sim) endPod(ctx context.Context, pod *corev1.Pod, phase corev1.PodPhase) error {
	if s.opts.SetPodPhase == nil {
		s.opts.Logf("headsim: no SetPodPhase: leaving submitter pod %s/%s running", pod.Namespace, pod.Name)
		return nil
	}
	return s.opts.SetPodPhase(ctx, pod.Namespace, pod.Name, phase)
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

// runSidecar runs the SidecarMode submitter container of a head pod that
// became Ready, in the pod's network (127.0.0.1:<dashboard port> is the
// head), keeps its output (SubmitterLog), and shows its end in the pod's
// status as the kubelet would in a restartPolicy Never head pod (KubeRay's
// for SidecarMode): that container terminated with its exit code, the head
// running on, not Ready (Options.EndContainer). Something the stand-in
// cannot run ends it with exit code 1, as a failing command would.
func (s *Sim) runSidecar(ctx context.Context, pod *corev1.Pod, c *corev1.Container, cluster types.NamespacedName, dashPort int) {
	logKey := pod.Namespace + "/" + pod.Name
	log := &podLog{}
	s.mu.Lock()
	s.logs[logKey] = log
	s.mu.Unlock()
	label := "sidecar in head pod " + logKey
	code, err := s.runContainer(ctx, pod, c, place{namespace: pod.Namespace, sidecarOf: cluster, dashPort: dashPort}, log, label)
	if ctx.Err() != nil || s.opts.EndContainer == nil {
		return
	}
	if err != nil && code == 0 {
		code = 1
	}
	if err := s.opts.EndContainer(ctx, pod.Namespace, pod.Name, c.Name, code); err != nil {
		s.opts.Logf("headsim: submitter %s: showing its exit: %v", label, err)
	}
}
