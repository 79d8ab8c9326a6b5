package history

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// ClusterOf is the RayCluster a Ray pod belongs to (its controller owner,
// else its ray.io/cluster label); ok is false for pods of no cluster.
func ClusterOf(p *podview.Pod) (Ref, bool) {
	for _, o := range p.OwnerReferences {
		if o.Kind == rayv1.KindRayCluster && o.Controller != nil && *o.Controller {
			return Ref{Kind: rayv1.KindRayCluster, Namespace: p.Namespace, Name: o.Name, UID: o.UID}, true
		}
	}
	if c := p.Labels[rayv1.RayClusterLabelKey]; c != "" {
		return Ref{Kind: rayv1.KindRayCluster, Namespace: p.Namespace, Name: c}, true
	}
	return Ref{}, false
}

// DiffPod is what happened to one Ray pod from old to new, filed under its
// RayCluster: created (old nil), deleted (new nil; old the last state),
// evicted, failed, OOM-killed, a container restarted. Pure.
func DiffPod(old, new *podview.Pod, now time.Time) []Entry {
	p := new
	if p == nil {
		p = old
	}
	if p == nil {
		return nil
	}
	ref, ok := ClusterOf(p)
	if !ok {
		return nil
	}
	d := differ{now: now, ref: ref}
	group := p.Labels[rayv1.RayNodeGroupLabelKey]
	switch {
	case old == nil:
		d.add(Entry{What: WhatPodCreated, Subject: p.Name, To: status.Pod(p), Reason: group})
		return d.out
	case new == nil:
		d.add(Entry{What: WhatPodDeleted, Subject: p.Name, From: status.Pod(p), Reason: group})
		return d.out
	}
	if new.Status.Reason == "Evicted" && old.Status.Reason != "Evicted" {
		d.add(Entry{What: WhatPodEvicted, Subject: p.Name, From: string(old.Status.Phase), To: string(new.Status.Phase), Reason: new.Status.Reason, Message: new.Status.Message})
	} else if new.Status.Phase == corev1.PodFailed && old.Status.Phase != corev1.PodFailed {
		d.add(Entry{What: WhatPodFailed, Subject: p.Name, From: string(old.Status.Phase), To: string(new.Status.Phase), Reason: new.Status.Reason, Message: new.Status.Message})
	}
	for _, cs := range new.Status.ContainerStatuses {
		var prev *podview.ContainerStatus
		for i := range old.Status.ContainerStatuses {
			if old.Status.ContainerStatuses[i].Name == cs.Name {
				prev = &old.Status.ContainerStatuses[i]
			}
		}
		if prev == nil {
			continue
		}
		oom := terminatedNow(prev, &cs, "OOMKilled")
		restarted := cs.RestartCount > prev.RestartCount
		switch {
		case oom != nil:
			d.add(Entry{What: WhatPodOOMKilled, Subject: p.Name + "/" + cs.Name, To: fmt.Sprintf("exit %d", oom.ExitCode),
				Reason: oom.Reason, Message: restartsWord(cs.RestartCount)})
		case restarted:
			e := Entry{What: WhatPodRestarted, Subject: p.Name + "/" + cs.Name, From: fmt.Sprint(prev.RestartCount), To: fmt.Sprint(cs.RestartCount)}
			if t := cs.LastTerminationState.Terminated; t != nil {
				e.Reason, e.Message = t.Reason, fmt.Sprintf("exit %d %s", t.ExitCode, t.Message)
			}
			d.add(e)
		}
	}
	return d.out
}

// terminatedNow is the container's termination with the given reason that
// new shows and prev did not (in its state or its last state).
func terminatedNow(prev, cur *podview.ContainerStatus, reason string) *corev1.ContainerStateTerminated {
	had := func(t *corev1.ContainerStateTerminated) bool {
		return t != nil && t.Reason == reason
	}
	for _, t := range []*corev1.ContainerStateTerminated{cur.State.Terminated, cur.LastTerminationState.Terminated} {
		if t == nil || t.Reason != reason {
			continue
		}
		if cur.RestartCount > prev.RestartCount {
			return t
		}
		if !had(prev.State.Terminated) && !had(prev.LastTerminationState.Terminated) {
			return t
		}
	}
	return nil
}

func restartsWord(n int32) string {
	if n == 1 {
		return "1 restart"
	}
	return fmt.Sprintf("%d restarts", n)
}
