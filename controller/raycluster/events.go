package raycluster

import (
	"fmt"
	"sort"
	"strings"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// ReasonCreated is the reason of raydar's Events for objects KubeRay
// creates without an Event of its own (the auth Secret).
const ReasonCreated = "Created"

// maxNamesInEvent bounds the pod names listed in one Event.
const maxNamesInEvent = 10

// summarizeEvents turns what a pass did into Events with KubeRay's reasons
// (v1.7.0 utils.K8sEventType; rayapi/v1 Event*): one per reason, and per
// worker group for worker pods, where KubeRay emits one per object. An
// Event about one object has KubeRay's message; one about several names
// them all (up to a limit). Deletions are grouped by why, which the
// message says. Failures are Warnings, one per reason, their messages
// KubeRay's, joined.
func summarizeEvents(p *plan, out *outcome) []kit.Event {
	var evs []kit.Event
	normal := func(reason, action, msg string) {
		evs = append(evs, kit.Event{Type: corev1.EventTypeNormal, Reason: reason, Action: action, Message: msg})
	}

	// Creations.
	for _, s := range out.createdServices {
		normal(rayv1.EventCreatedService, "Create", "Created service "+s.Namespace+"/"+s.Name)
	}
	for _, o := range out.createdRBAC {
		reason, what := rbacEvent(o, true)
		normal(reason, "Create", "Created "+what+" "+o.GetNamespace()+"/"+o.GetName())
	}
	workers := map[string][]*corev1.Pod{}
	for _, pod := range out.createdPods {
		if kit.IsHeadPod(pod) {
			normal(rayv1.EventCreatedHeadPod, "Create", "Created head Pod "+pod.Namespace+"/"+pod.Name)
			continue
		}
		workers[kit.PodGroup(pod)] = append(workers[kit.PodGroup(pod)], pod)
	}
	for _, g := range kit.SortedKeys(workers) {
		ps := workers[g]
		msg := "Created worker Pod " + ps[0].Namespace + "/" + ps[0].Name
		if len(ps) > 1 {
			msg = fmt.Sprintf("Created %d worker Pods in group %s: %s", len(ps), g, nameList(namesOf(ps)))
		}
		normal(rayv1.EventCreatedWorkerPod, "Create", msg)
	}
	if j := out.createdJob; j != nil {
		normal(rayv1.EventCreatedRedisCleanupJob, "Create", "Created Redis cleanup Job "+j.Namespace+"/"+j.Name)
	}

	// Deletions, grouped by why.
	byWhy := map[string][]*corev1.Pod{}
	for _, d := range out.deleted {
		byWhy[d.Reason] = append(byWhy[d.Reason], d.Pod)
	}
	for _, why := range kit.SortedKeys(byWhy) {
		var heads, ws []*corev1.Pod
		for _, pod := range byWhy[why] {
			if kit.IsHeadPod(pod) {
				heads = append(heads, pod)
			} else {
				ws = append(ws, pod)
			}
		}
		switch {
		case p.DeleteAll:
			// One deletecollection request: KubeRay's DeletedPod.
			normal(rayv1.EventDeletedPod, "Delete", fmt.Sprintf("Deleted %s (%s): %s",
				podPhrase(len(heads)+len(ws), "Pod"), nameList(namesOf(byWhy[why])), why))
		default:
			for _, h := range heads {
				normal(rayv1.EventDeletedHeadPod, "Delete", "Deleted head Pod "+h.Namespace+"/"+h.Name+": "+why)
			}
			switch len(ws) {
			case 0:
			case 1:
				normal(rayv1.EventDeletedWorkerPod, "Delete", "Deleted worker Pod "+ws[0].Namespace+"/"+ws[0].Name+": "+why)
			default:
				normal(rayv1.EventDeletedWorkerPod, "Delete", fmt.Sprintf("Deleted %d worker Pods (%s): %s", len(ws), nameList(namesOf(ws)), why))
			}
		}
	}

	// Failures, one Warning per reason.
	byFailure := map[string][]string{}
	for _, f := range out.failures {
		byFailure[f.Event] = append(byFailure[f.Event], f.Message)
	}
	for _, reason := range kit.SortedKeys(byFailure) {
		evs = append(evs, kit.Event{Type: corev1.EventTypeWarning, Reason: reason, Action: failureAction(reason),
			Message: strings.Join(dedupe(byFailure[reason]), "; ")})
	}
	return evs
}

// failureAction is KubeRay's Event action of a failure reason.
func failureAction(reason string) string {
	switch {
	case strings.HasPrefix(reason, "FailedToDelete"):
		return "Delete"
	case strings.HasPrefix(reason, "FailedToUpdate"):
		return "Update"
	}
	return "Create"
}

// rbacEvent is KubeRay's Event reason for creating (or failing to create)
// an autoscaler RBAC object, and how its messages name the kind.
func rbacEvent(o client.Object, created bool) (reason, what string) {
	switch kindOf(o) {
	case "ServiceAccount":
		if created {
			return rayv1.EventCreatedServiceAccount, "service account"
		}
		return rayv1.EventFailedToCreateServiceAccount, "service account"
	case "Role":
		if created {
			return rayv1.EventCreatedRole, "role"
		}
		return rayv1.EventFailedToCreateRole, "role"
	}
	if created {
		return rayv1.EventCreatedRoleBinding, "role binding"
	}
	return rayv1.EventFailedToCreateRoleBinding, "role binding"
}

func namesOf(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
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
