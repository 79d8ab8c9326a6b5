package scale

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/benchkit"
)

// BenchmarkRayJobs replays the perf-tests' N-rayjob tests and kuberay#2646:
// N RayJobs of their two templates (a head and 2 workers; K8sJobMode, a
// submitter Job each) over their 10 or 100 namespaces, created at 100 a
// second, on a plane with simulated Ray heads (the jobs' entrypoints are
// played out: RUNNING for 5 s, then SUCCEEDED). A job has started when its
// jobStatus leaves PENDING (RUNNING or past it); the time runs from its
// create. Half-way through, a RayCluster of the perf-tests' shape is
// created in a namespace of its own: its time to ready is the wait a
// cluster has behind the jobs. Raw creates each job's 3 pods and the
// cluster's 4 and counts a job started when its head pod is Running and
// Ready: the floor under both operators (no submission). N from
// RAYDAR_SCALE_JOBS (default 100). KubeRay runs with its defaults.
func BenchmarkRayJobs(b *testing.B) {
	eachSize(b, "RAYDAR_SCALE_JOBS", "jobs", false, runJobs)
}

func runJobs(b *testing.B, c contender, n int, raw time.Duration) time.Duration {
	p := newPlane(b, 4*n+10, true)
	defer p.stop()
	nss := p.namespaces(b, perfTestNamespaces(n))
	var op *operator
	if c.start != nil {
		op = c.start(b, p, flagsOf(c, kubeRayFlags()))
		defer op.stop()
		warmUp(b, p, op)
	}
	ctx := context.Background()
	if _, err := p.kc.CoreV1().Namespaces().Create(ctx, namespace("scale-middle"), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	op.mark(b)
	before := benchkit.LoadAverage()
	name := func(i int) (string, string) { return nss[i%len(nss)], fmt.Sprintf("rayjob-%d", i/len(nss)) }
	index := map[string]int{}
	for i := range n {
		ns, nm := name(i)
		index[ns+"/"+nm] = i
	}
	middle := perfTestCluster(b, "scale-middle", "middle", 3)
	createdAt := make([]time.Time, n)
	var middleAt time.Time
	list := jobList
	if c.start == nil {
		list = podList
	}
	w := newWatcher(b, p, list)
	// The clusters' ready, on a watch of their own (an operator's
	// contender; raw reads its pods from w): the middle one's, and each
	// job's (by the label both operators give a RayJob's cluster).
	middleReady := make(chan time.Time, 1)
	jobClusterUp := map[string]time.Time{} // read after middleReady
	var cw *watcher
	if c.start != nil {
		cw = newWatcher(b, p, clusterList)
		go func() {
			var at time.Time
			cw.until(b, 30*time.Minute, func(obj client.Object, t time.Time) bool {
				if !clusterReady(obj) {
					return false
				}
				if obj.GetNamespace() == "scale-middle" && at.IsZero() {
					at = t
				}
				if job := obj.GetLabels()[rayv1.RayOriginatedFromCRNameLabelKey]; job != "" {
					if _, ok := jobClusterUp[obj.GetNamespace()+"/"+job]; !ok {
						jobClusterUp[obj.GetNamespace()+"/"+job] = t
					}
				}
				return !at.IsZero() && len(jobClusterUp) == n
			})
			middleReady <- at
		}()
	}
	// Each job's submitter: its Job created, its pod created and Running
	// (both operators name the Job after the RayJob, in its namespace).
	var subs *submitterSteps
	if c.start != nil {
		subs = watchSubmitters(b, p)
	}
	start := time.Now()
	created := paced(b, n+1, perfTestQPS, func(i int) error {
		if i == n/2 {
			middleAt = time.Now() // read after the wait below
			if c.start == nil {
				return createAll(p.cl, rawPods(middle.DeepCopy()))
			}
			return create(ctx, p.cl, middle.DeepCopy())
		}
		if i > n/2 {
			i--
		}
		ns, nm := name(i)
		rj := perfTestJob(b, i, ns, nm)
		createdAt[i] = time.Now()
		if c.start == nil {
			rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: nm}, Spec: *rj.Spec.RayClusterSpec}
			return createAll(p.cl, rawPods(rc))
		}
		return create(ctx, p.cl, rj)
	})
	startedAt := map[string]time.Time{}
	submittedAt := map[string]time.Time{} // rayJobInfo.startTime: Ray's, to the second
	var middleRawReady time.Time
	middlePods := map[string]bool{}
	failed := map[string]bool{}
	ok := w.until(b, 30*time.Minute, func(obj client.Object, at time.Time) bool {
		switch o := obj.(type) {
		case *rayv1.RayJob:
			if _, ok := index[key(o)]; ok && o.Status.JobStatus != rayv1.JobStatusNew && o.Status.JobStatus != rayv1.JobStatusPending {
				if _, ok := startedAt[key(o)]; !ok {
					startedAt[key(o)] = at
					if t := o.Status.RayJobStatusInfo.StartTime; t != nil {
						submittedAt[key(o)] = t.Time
					}
				}
			}
			if o.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed {
				failed[key(o)] = true
			}
		case *corev1.Pod:
			if !kit.IsRunningAndReady(o) {
				return false
			}
			if o.Namespace == "scale-middle" {
				if middlePods[o.Name] = true; len(middlePods) == 4 && middleRawReady.IsZero() {
					middleRawReady = at
				}
			} else if _, ok := index[podCluster(o)]; ok && kit.IsHeadPod(o) {
				if _, ok := startedAt[podCluster(o)]; !ok {
					startedAt[podCluster(o)] = at
				}
			}
		}
		return len(startedAt) == n && (c.start != nil || !middleRawReady.IsZero())
	})
	if !ok {
		b.Fatalf("%s: %d of %d jobs started after 30 minutes (%d with jobDeploymentStatus Failed)", c.name, len(startedAt), n, len(failed))
	}
	all := time.Since(start)
	createdEnd := <-created
	var mid time.Time
	if c.start == nil {
		mid = middleRawReady
	} else {
		cw.stop() // every job started: what its cluster did is known
		mid = <-middleReady
	}
	var waits []time.Duration
	for k, t := range startedAt {
		waits = append(waits, t.Sub(createdAt[index[k]]))
	}
	if c.start != nil {
		var toCluster, toStart []time.Duration
		for k, up := range jobClusterUp {
			toCluster = append(toCluster, up.Sub(createdAt[index[k]]))
			if st, ok := startedAt[k]; ok {
				toStart = append(toStart, st.Sub(up))
			}
		}
		b.Logf("%s N=%d, where a job's time goes: create → its cluster ready: %s; cluster ready → jobStatus past PENDING: %s",
			c.name, n, quantiles(toCluster), quantiles(toStart))
		subs.log(b, c.name, n, jobClusterUp, submittedAt, startedAt)
	}
	cpu, writes, peak, rss := op.usage(b)
	ratio := ""
	if raw > 0 && c.start != nil {
		ratio = fmt.Sprintf(" (%.2f× the pods' floor, which submits nothing)", all.Seconds()/raw.Seconds())
	}
	b.Logf("%s N=%d RayJobs: all started %.1f s%s (created in %.1f s); each job create → started: %s; %d jobDeploymentStatus Failed; the RayCluster created half-way: ready %.1f s after its create; CPU %.1f s, writes %.1f per job, peak RSS %.1f MiB (%.1f at the end); load %s → %s",
		c.name, n, all.Seconds(), ratio, createdEnd.Sub(start).Seconds(), quantiles(waits), len(failed), mid.Sub(middleAt).Seconds(), cpu, writes/float64(n), peak, rss, before, benchkit.LoadAverage())
	b.ReportMetric(all.Seconds(), c.name+"-all-started-s")
	b.ReportMetric(benchkit.Quantile(waits, 0.99).Seconds(), c.name+"-p99-s")
	b.ReportMetric(mid.Sub(middleAt).Seconds(), c.name+"-middle-cluster-s")
	if c.start != nil {
		b.ReportMetric(peak, c.name+"-peak-RSS-MiB")
	}
	return all
}

// submitterSteps are the times a watch saw each job's submitter Job
// created, its pod created and its pod Running, by namespace/RayJob.
type submitterSteps struct {
	jobs, pods *watcher
	done       chan struct{}
	jobAt      map[string]time.Time
	podAt      map[string]time.Time
	runAt      map[string]time.Time
}

func watchSubmitters(b *testing.B, p *plane) *submitterSteps {
	s := &submitterSteps{done: make(chan struct{}, 2), jobAt: map[string]time.Time{}, podAt: map[string]time.Time{}, runAt: map[string]time.Time{}}
	s.jobs = newWatcher(b, p, func() client.ObjectList { return &batchv1.JobList{} })
	s.pods = newWatcher(b, p, podList, client.HasLabels{batchv1.JobNameLabel})
	first := func(m map[string]time.Time, k string, at time.Time) {
		if _, ok := m[k]; !ok {
			m[k] = at
		}
	}
	go func() {
		s.jobs.until(b, time.Hour, func(obj client.Object, at time.Time) bool {
			first(s.jobAt, key(obj), at)
			return false
		})
		s.done <- struct{}{}
	}()
	go func() {
		s.pods.until(b, time.Hour, func(obj client.Object, at time.Time) bool {
			k := obj.GetNamespace() + "/" + obj.GetLabels()[batchv1.JobNameLabel]
			first(s.podAt, k, at)
			if obj.(*corev1.Pod).Status.Phase == corev1.PodRunning {
				first(s.runAt, k, at)
			}
			return false
		})
		s.done <- struct{}{}
	}()
	return s
}

// log stops the watches and says where the time from a job's cluster
// ready to its jobStatus past PENDING went.
func (s *submitterSteps) log(b *testing.B, name string, n int, up, submitted, started map[string]time.Time) {
	s.jobs.stop()
	s.pods.stop()
	<-s.done
	<-s.done
	step := func(from, to map[string]time.Time) string {
		var ds []time.Duration
		for k, t := range to {
			if f, ok := from[k]; ok {
				ds = append(ds, t.Sub(f))
			}
		}
		return fmt.Sprintf("%s (%d)", quantiles(ds), len(ds))
	}
	b.Logf("%s N=%d, cluster ready → started by step: → submitter Job created %s; → its pod created %s; → pod Running %s; → Ray's job start %s; → jobStatus past PENDING %s",
		name, n, step(up, s.jobAt), step(s.jobAt, s.podAt), step(s.podAt, s.runAt), step(s.runAt, submitted), step(submitted, started))
}
