package controller

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Event reasons of write outcomes.
const (
	reasonCreated           = "Created"
	reasonCreatedHeadPod    = "CreatedHeadPod"
	reasonCreatedWorkerPods = "CreatedWorkerPods"
	reasonCreatedService    = "CreatedService"
	reasonDeletedHeadPod    = "DeletedHeadPod"
	reasonDeletedWorkerPods = "DeletedWorkerPods"
	reasonDeletedPods       = "DeletedPods"
)

// maxNamesInEvent bounds the pod names listed in one Event.
const maxNamesInEvent = 10

// summarizeEvents turns what a pass did into few, informative Events: one
// for everything created, one per reason things were deleted, one per kind
// of failure. Every object created or deleted is named (up to a limit).
func summarizeEvents(p *plan, out *outcome) []event {
	var evs []event

	// Creations.
	var parts []string
	kinds := map[string]bool{}
	for _, s := range out.createdServices {
		parts = append(parts, "Service "+s.Name)
		kinds[reasonCreatedService] = true
	}
	for _, o := range out.createdRBAC {
		parts = append(parts, "autoscaler "+kindOf(o)+" "+o.GetName())
		kinds[reasonCreated] = true
	}
	workers := map[string][]string{}
	for _, pod := range out.createdPods {
		if isHeadPod(pod) {
			parts = append(parts, "head pod "+pod.Name)
			kinds[reasonCreatedHeadPod] = true
			continue
		}
		workers[podGroup(pod)] = append(workers[podGroup(pod)], pod.Name)
		kinds[reasonCreatedWorkerPods] = true
	}
	for _, g := range sortedKeys(workers) {
		parts = append(parts, podPhrase(len(workers[g]), "worker pod")+" in group "+g+" ("+nameList(workers[g])+")")
	}
	if out.createdJob != nil {
		parts = append(parts, "Redis clean-up Job "+out.createdJob.Name)
		kinds[reasonCreated] = true
	}
	if len(parts) > 0 {
		reason := reasonCreated
		if len(kinds) == 1 {
			for k := range kinds {
				reason = k
			}
		}
		evs = append(evs, event{Type: corev1.EventTypeNormal, Reason: reason, Action: "Create", Message: "Created " + joinPhrases(parts)})
	}

	// Deletions, one Event per reason.
	byReason := map[string][]podDeletion{}
	for _, d := range out.deleted {
		byReason[d.Reason] = append(byReason[d.Reason], d)
	}
	for _, why := range sortedKeys(byReason) {
		ds := byReason[why]
		var heads, ws []string
		for _, d := range ds {
			if isHeadPod(d.Pod) {
				heads = append(heads, d.Pod.Name)
			} else {
				ws = append(ws, d.Pod.Name)
			}
		}
		var what []string
		reason := reasonDeletedPods
		switch {
		case len(heads) > 0 && len(ws) == 0:
			reason = reasonDeletedHeadPod
		case len(heads) == 0:
			reason = reasonDeletedWorkerPods
		}
		if len(heads) > 0 {
			what = append(what, "head pod "+nameList(heads))
		}
		if len(ws) > 0 {
			what = append(what, podPhrase(len(ws), "worker pod")+" ("+nameList(ws)+")")
		}
		evs = append(evs, event{Type: corev1.EventTypeNormal, Reason: reason, Action: "Delete",
			Message: "Deleted " + joinPhrases(what) + ": " + why})
	}

	// Failures, one Warning per reason.
	byFailure := map[string][]string{}
	for _, f := range out.failures {
		byFailure[f.Reason] = append(byFailure[f.Reason], f.Message)
	}
	for _, reason := range sortedKeys(byFailure) {
		msgs := byFailure[reason]
		msg := "Failed " + strings.Join(dedupe(msgs), "; ")
		evs = append(evs, event{Type: corev1.EventTypeWarning, Reason: reason, Action: "Reconcile", Message: msg})
	}
	return evs
}

func podPhrase(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func nameList(names []string) string {
	names = append([]string(nil), names...)
	sort.Strings(names)
	if len(names) > maxNamesInEvent {
		return strings.Join(names[:maxNamesInEvent], ", ") + fmt.Sprintf(" and %d more", len(names)-maxNamesInEvent)
	}
	return strings.Join(names, ", ")
}

func joinPhrases(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func dedupe(msgs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range msgs {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}
