package rayservice

// decide, Serve: whether a cluster gets serveConfigV2 (again), how its
// applications and proxies read, which pods carry ray.io/serve=true, and
// how soon Serve is looked at again. Pure.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/raydar/raydar/controller/kit"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// serveProbe is what one look at a cluster's Serve returned: the dashboard's
// applications and, once Serve runs, the health of each ready pod's proxy.
type serveProbe struct {
	At      time.Time
	HeadUID string
	// OK: the dashboard answered.
	OK   bool
	Apps map[string]dashboard.ServeApplication
	Err  string
	// FailingSince is the first failure of the current streak (zero when OK).
	FailingSince time.Time
	// Proxies maps pod names to their Serve proxy's health; only pods
	// checked are present (Running and Ready pods, once Serve runs).
	Proxies map[string]proxyHealth
	// Active: the cluster was the active one when probed.
	Active bool
}

// proxyHealth is one Serve proxy health check.
type proxyHealth struct {
	Healthy bool
	Err     string
}

// submission records a serveConfigV2 submission to a cluster made by this
// process (memory only: after a restart the dashboard is asked instead).
type submission struct {
	Hash string
	// JSON and Apps: the config submitted (an incremental upgrade
	// resubmits it to the old cluster with a new target_capacity).
	JSON     []byte
	Apps     []string
	At       time.Time
	Err      string // "" when accepted
	Attempts int    // consecutive rejections of Hash
}

// probeSettled reports whether a probe shows Serve settled: the
// dashboard answered and every application is RUNNING or DEPLOY_FAILED.
func probeSettled(p *serveProbe) bool {
	if p == nil || !p.OK {
		return false
	}
	for _, a := range p.Apps {
		if a.Status != dashboard.AppRunning && a.Status != dashboard.AppDeployFailed {
			return false
		}
	}
	if !p.Active && len(p.Apps) > 0 {
		// A pending cluster waits for a healthy proxy before traffic can
		// switch to it: keep looking closely until it has one.
		for _, h := range p.Proxies {
			if h.Healthy {
				return true
			}
		}
		return false
	}
	return len(p.Apps) > 0
}

// probeInterval is how long a probe stays fresh.
func probeInterval(p *serveProbe, cfg config) time.Duration {
	switch {
	case p == nil:
		return 0
	case !p.OK:
		// Back off while the dashboard refuses: every DeployPoll at first,
		// then slower, up to UnreachablePoll.
		d := cfg.DeployPoll
		if failing := p.At.Sub(p.FailingSince); failing > 2*cfg.UnreachableGrace {
			d = cfg.UnreachablePoll
		}
		return d
	case probeSettled(p):
		return cfg.SteadyPoll
	}
	return cfg.DeployPoll
}

// serve decides Serve on the clusters kept: the pending cluster gets the
// desired config; the active one too when no other cluster is being
// prepared (a config change alone). During an upgrade the old cluster
// keeps its config; only its status and proxies are followed.
func (d *deciding) serve() {
	if d.pending != nil {
		decideServe(d.o, d.p, d.view(d.pending), d.serveConfigFor(d.fields.Pending))
	}
	if d.active != nil {
		if d.pending == nil {
			decideServe(d.o, d.p, d.view(d.active), d.serveConfigFor(d.fields.Active))
		} else {
			decideObserveOnly(d.o, d.p, d.view(d.active), d.cfg)
		}
	}
}

// decideServe decides the Serve submission and serve labels of a cluster
// that must run the desired config.
func decideServe(o *observed, p *plan, v *clusterView, cfg serveConfig) {
	rs := o.Service
	if v.New {
		v.Phase = servePhase{Message: "waiting for the head pod of RayCluster " + v.C.Name}
		return
	}
	if v.Head == nil || !kit.IsRunningAndReady(v.Head) {
		v.Phase = servePhase{Message: "waiting for the head pod of RayCluster " + v.C.Name}
		decideServeLabels(o, p, v)
		return
	}
	if cfg.Hash == "" {
		// Nothing to deploy: the cluster is ready once its head is.
		v.Ready = true
		v.Phase = servePhase{Message: "serveConfigV2 is empty: nothing to deploy on RayCluster " + v.C.Name}
		decideServeLabels(o, p, v)
		return
	}
	pr := v.Probe
	if pr == nil {
		v.Phase = servePhase{Message: "deploying Serve applications on RayCluster " + v.C.Name}
		p.requeue(o.Config.DeployPoll)
		return
	}
	p.requeue(pr.At.Add(probeInterval(pr, o.Config)).Sub(o.Now))
	if !pr.OK {
		v.Phase = unreachablePhase(o, v, pr)
		decideServeLabels(o, p, v)
		return
	}
	missing := missingApps(pr.Apps, cfg.Apps)
	sub := o.Submissions[v.C.Name]
	submitted := v.C.Annotations[ServeConfigHashKey] == cfg.Hash
	var why string
	switch {
	case !submitted:
		why = "serveConfigV2 changed"
		if v.C.Annotations[ServeConfigHashKey] == "" {
			why = "first submission"
		}
	case len(missing) > 0 && !(sub != nil && sub.Hash == cfg.Hash && sub.Err == "" && o.Now.Sub(sub.At) < o.Config.ResubmitGrace):
		why = "the cluster lost applications " + strings.Join(missing, ", ") + " (head restarted?)"
	}
	if why != "" {
		if sub != nil && sub.Hash == cfg.Hash && sub.Err != "" {
			wait := submitBackoff(o.Config, sub.Attempts)
			if next := sub.At.Add(wait); o.Now.Before(next) {
				v.Phase = servePhase{Message: fmt.Sprintf("the Ray dashboard of RayCluster %s rejected serveConfigV2: %s", v.C.Name, kit.Truncate(sub.Err, 500)), Failed: true}
				p.requeue(next.Sub(o.Now))
				decideServeLabels(o, p, v)
				return
			}
		}
		p.Submit = append(p.Submit, submitStep{Cluster: v.C, Config: cfg, Why: why})
		v.Phase = servePhase{Message: "deploying Serve applications on RayCluster " + v.C.Name}
		p.requeue(o.Config.DeployPoll)
		decideServeLabels(o, p, v)
		return
	}
	v.Phase = appsPhase(v, pr, cfg)
	v.Ready = len(missing) == 0 && allRunning(pr.Apps)
	decideServeLabels(o, p, v)
	if v.Ready && v.Serving == 0 && !rs.Spec.ExcludeHeadPodFromServeSvc {
		v.Phase = servePhase{Message: "waiting for a healthy Serve proxy on RayCluster " + v.C.Name}
	}
}

// decideObserveOnly follows a cluster without changing its config: its
// serve labels, and its phase for the status.
func decideObserveOnly(o *observed, p *plan, v *clusterView, cfg serveConfig) {
	if pr := v.Probe; pr != nil {
		p.requeue(pr.At.Add(probeInterval(pr, o.Config)).Sub(o.Now))
		if pr.OK {
			v.Phase = appsPhase(v, pr, cfg)
			v.Ready = allRunning(pr.Apps)
		}
	}
	decideServeLabels(o, p, v)
}

// unreachablePhase is the phase of a cluster whose dashboard does not
// answer: reported only once that lasted UnreachableGrace.
func unreachablePhase(o *observed, v *clusterView, pr *serveProbe) servePhase {
	if o.Now.Sub(pr.FailingSince) >= o.Config.UnreachableGrace {
		return servePhase{Message: "the Ray dashboard of RayCluster " + v.C.Name + " is not answering"}
	}
	return servePhase{Message: "deploying Serve applications on RayCluster " + v.C.Name}
}

// appsPhase describes the applications of a probed cluster.
func appsPhase(v *clusterView, pr *serveProbe, cfg serveConfig) servePhase {
	for _, name := range kit.SortedKeys(pr.Apps) {
		if a := pr.Apps[name]; rayv1.IsServeApplicationFailed(string(a.Status)) {
			return servePhase{Message: fmt.Sprintf("Serve application %s of RayCluster %s is %s", name, v.C.Name, a.Status), Failed: true}
		}
	}
	return servePhase{Message: "deploying Serve applications on RayCluster " + v.C.Name}
}

func allRunning(apps map[string]dashboard.ServeApplication) bool {
	for _, a := range apps {
		if a.Status != dashboard.AppRunning {
			return false
		}
	}
	return true
}

// missingApps lists desired applications the dashboard does not show.
func missingApps(have map[string]dashboard.ServeApplication, want []string) []string {
	var out []string
	for _, n := range want {
		if a, ok := have[n]; !ok || a.Status == dashboard.AppDeleting {
			out = append(out, n)
		}
	}
	return out
}

func submitBackoff(cfg config, attempts int) time.Duration {
	d := cfg.SubmitBackoff
	limit := 6 * cfg.SteadyPoll
	for i := 1; i < attempts && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// decideServeLabels keeps ray.io/serve "true" only on Running and Ready pods
// whose Serve proxy answered (never on the head with
// excludeHeadPodFromServeSvc), and counts the cluster's serving pods.
// Pods not checked keep their label; the check runs once Serve runs.
func decideServeLabels(o *observed, p *plan, v *clusterView) {
	rs := o.Service
	var proxies map[string]proxyHealth
	if v.Probe != nil && v.Probe.OK && len(v.Probe.Apps) > 0 {
		proxies = v.Probe.Proxies
	}
	v.Serving = 0
	for _, pod := range o.Pods[v.C.Name] {
		if !kit.IsHeadPod(pod) && !kit.IsWorkerPod(pod) {
			continue
		}
		cur, has := pod.Labels[rayv1.RayClusterServingServiceLabelKey]
		want := cur
		switch {
		case kit.IsHeadPod(pod) && rs.Spec.ExcludeHeadPodFromServeSvc:
			want = "false"
		case !kit.IsRunningAndReady(pod):
		default:
			if h, ok := proxies[pod.Name]; ok {
				want = strconv.FormatBool(h.Healthy)
			}
		}
		if want != cur || (!has && want != "") {
			p.PodLabels = append(p.PodLabels, podLabel{Pod: pod, Value: want})
		}
		if want == "true" && kit.IsRunningAndReady(pod) {
			v.Serving++
		}
	}
}
