package raydash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// RayLogs reaches the Ray log files of a cluster's nodes through its
// dashboard (the state API's log endpoints, rayapi/dashboard logs.go). Its
// methods do I/O: call them inside a command or a goroutine, never from a
// UI loop.
type RayLogs struct {
	// Resolver hands out the dashboard clients (required).
	Resolver Resolver
	// Cluster returns the RayCluster namespace/name from a cache
	// (required); nil and no error when it does not exist.
	Cluster func(namespace, name string) (*rayv1.RayCluster, error)
}

// ExplainLines is how many lines from the end an explaining file opens
// with (the log pages keep no more).
const ExplainLines = 5000

// ErrNoCluster is returned when the RayCluster whose logs were asked for does not exist.
var ErrNoCluster = errors.New("no such RayCluster")

func (l *RayLogs) client(ctx context.Context, namespace, cluster string) (*dashboard.Client, error) {
	if l == nil || l.Resolver == nil || l.Cluster == nil {
		return nil, errors.New("raydash: RayLogs needs a Resolver and a Cluster lookup")
	}
	rc, err := l.Cluster(namespace, cluster)
	if err != nil {
		return nil, fmt.Errorf("raydash: RayCluster %s/%s: %w", namespace, cluster, err)
	}
	if rc == nil {
		return nil, fmt.Errorf("raydash: RayCluster %s/%s: %w", namespace, cluster, ErrNoCluster)
	}
	return l.Resolver.ClientFor(ctx, rc)
}

// List lists a node's log files, the top of its log directory and inside
// its directories (serve/, …).
func (l *RayLogs) List(ctx context.Context, namespace, cluster string, node dashboard.LogNode) (dashboard.LogFiles, error) {
	c, err := l.client(ctx, namespace, cluster)
	if err != nil {
		return nil, err
	}
	return c.ListAllLogs(ctx, node)
}

// Open opens a log file: its tail, then (follow) what is appended until
// ctx ends or the reader is closed; without follow, the tail only.
func (l *RayLogs) Open(ctx context.Context, namespace, cluster string, req dashboard.LogRequest, follow bool) (io.ReadCloser, error) {
	c, err := l.client(ctx, namespace, cluster)
	if err != nil {
		return nil, err
	}
	if follow {
		return c.StreamLog(ctx, req)
	}
	text, err := c.ReadLog(ctx, req)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(strings.NewReader(text)), nil
}

// NodeForPod is the Ray node of a pod: by its IP (a Ray node's IP is its
// pod's on KubeRay), with the node ID when Ray's capacity view (c, may be
// nil) has an alive node at that IP. The zero LogNode when the pod has no
// IP yet.
func NodeForPod(pod *podview.Pod, c *dashboard.Capacity) dashboard.LogNode {
	if pod == nil || pod.Status.PodIP == "" {
		return dashboard.LogNode{}
	}
	n := dashboard.LogNode{IP: pod.Status.PodIP}
	if c != nil {
		for _, rn := range c.Nodes {
			if rn.Alive && rn.IP == n.IP {
				n.ID = rn.ID
				break
			}
		}
	}
	return n
}

// HeadPod is the head pod among a cluster's pods (label ray.io/node-type
// head), preferring one with an IP; nil when there is none.
func HeadPod(pods []*podview.Pod) *podview.Pod {
	var head *podview.Pod
	for _, p := range pods {
		if p.Labels[rayv1.RayNodeTypeLabelKey] != string(rayv1.HeadNode) {
			continue
		}
		if head == nil || (head.Status.PodIP == "" && p.Status.PodIP != "") {
			head = p
		}
	}
	return head
}

// Explanation names the Ray log file that explains an object's state: the
// file itself (Req with a SubmissionID), or files on the head node to
// pick from (Glob, then Pick).
type Explanation struct {
	// Cluster is the RayCluster the file is on.
	Cluster string
	// Why says which file and why, for the page title and messages.
	Why string
	// Req is the file when it is known without a listing (Filename or
	// SubmissionID set).
	Req dashboard.LogRequest
	// Glob lists the candidates on the head node when Req is not known.
	Glob string
	// Prefer: a candidate whose name contains one of these wins.
	Prefer []string
	// Fallback is the file to open when no candidate is listed ("": none).
	Fallback string
}

// Known reports whether the file is known without a listing.
func (e Explanation) Known() bool { return e.Req.Filename != "" || e.Req.SubmissionID != "" }

// ExplainRayJob is the file that explains a RayJob's state: while its Ray
// job is PENDING, the runtime env setup log (the runtime env agent writes
// runtime_env_setup-<job id>.log; the one naming the job, else the newest
// by name, else runtime_env_agent.log); otherwise (FAILED first of all)
// its driver log, job-driver-<submission id>.log. false when the job has no
// cluster or no submission ID yet.
func ExplainRayJob(j *rayv1.RayJob) (Explanation, bool) {
	cluster, id := j.ClusterName(), j.Status.JobId
	if cluster == "" || id == "" {
		return Explanation{}, false
	}
	if j.Status.JobStatus == rayv1.JobStatusPending || j.Status.JobStatus == rayv1.JobStatusNew ||
		(j.Status.JobStatus == "" && !j.IsTerminal()) {
		return Explanation{
			Cluster: cluster, Why: "runtime env setup of job " + id + " (PENDING)",
			Glob: dashboard.RuntimeEnvSetupPrefix + "*", Prefer: []string{id}, Fallback: "runtime_env_agent.log",
		}, true
	}
	why := "driver log of job " + id
	if j.Status.JobStatus == rayv1.JobStatusFailed || j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed {
		why += " (FAILED)"
	}
	return Explanation{Cluster: cluster, Why: why, Req: dashboard.LogRequest{SubmissionID: id, Lines: ExplainLines}}, true
}

// ExplainRayService is the Serve controller's log (serve/controller_<pid>.log
// on the head), where a deploy failure's traceback is, on the cluster of
// the RayService with a failed application (the pending cluster's first),
// else its active cluster. false when it has no cluster.
func ExplainRayService(s *rayv1.RayService) (Explanation, bool) {
	failed := func(st rayv1.RayServiceStatus) string {
		names := make([]string, 0, len(st.Applications))
		for n, a := range st.Applications {
			if a.Status == rayv1.ApplicationStatusDeployFailed || a.Status == rayv1.ApplicationStatusUnhealthy {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		return strings.Join(names, ", ")
	}
	pick := func(st rayv1.RayServiceStatus) (Explanation, bool) {
		why := "Serve controller log"
		if f := failed(st); f != "" {
			why += " (" + f + " failed)"
		}
		return Explanation{Cluster: st.RayClusterName, Why: why, Glob: "serve/controller_*"}, true
	}
	pending, active := s.Status.PendingServiceStatus, s.Status.ActiveServiceStatus
	switch {
	case pending.RayClusterName != "" && failed(pending) != "":
		return pick(pending)
	case active.RayClusterName != "":
		return pick(active)
	case pending.RayClusterName != "":
		return pick(pending)
	}
	return Explanation{}, false
}

// Pick chooses the file of e among a listing of the head node: the
// candidates matching e.Glob; one whose name contains a Prefer string
// wins, else the last by name (the newest, for Ray's increasing IDs);
// e.Fallback when no candidate is listed and it is; false otherwise.
func (e Explanation) Pick(files dashboard.LogFiles) (string, bool) {
	var cands, all []string
	for _, names := range files {
		for _, n := range names {
			all = append(all, n)
			if ok, _ := path.Match(e.Glob, n); ok && !strings.HasSuffix(n, "/") {
				cands = append(cands, n)
			}
		}
	}
	sort.Strings(cands)
	for _, p := range e.Prefer {
		for _, c := range cands {
			if p != "" && strings.Contains(c, p) {
				return c, true
			}
		}
	}
	if len(cands) > 0 {
		return cands[len(cands)-1], true
	}
	for _, n := range all {
		if e.Fallback != "" && n == e.Fallback {
			return n, true
		}
	}
	return "", false
}

// Resolve turns e into a request: as is when known, else by listing the
// head node (head) and picking.
func (l *RayLogs) Resolve(ctx context.Context, namespace string, e Explanation, head dashboard.LogNode) (dashboard.LogRequest, error) {
	if e.Known() {
		return e.Req, nil
	}
	files, err := l.List(ctx, namespace, e.Cluster, head)
	if err != nil {
		return dashboard.LogRequest{}, err
	}
	name, ok := e.Pick(files)
	if !ok {
		return dashboard.LogRequest{}, fmt.Errorf("raydash: %s: no %s on the head node: %w", e.Why, e.Glob, dashboard.ErrNotFound)
	}
	return dashboard.LogRequest{Node: head, Filename: name, Lines: ExplainLines}, nil
}
