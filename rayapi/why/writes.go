package why

import (
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// writeCauses are CreateRefused and WriteFailed: raydar's (or KubeRay's:
// the reasons are the same) Warning Events on the object saying a write
// failed, the latest per reason, unless a later Event says the same write
// succeeded since. extra are further failure messages by reason that no
// Event may carry any more (a ReplicaFailure condition), used when no
// Event of that reason is left.
func writeCauses(o object, events []*corev1.Event, extraReason, extraMsg string, out []Cause) []Cause {
	type failed struct{ reason, msg string }
	var fs []failed
	for _, e := range events {
		if !o.about(e) {
			continue
		}
		if e.Type == corev1.EventTypeWarning && isWriteFailure(e.Reason) {
			found := false
			for i := range fs {
				if fs[i].reason == e.Reason {
					fs[i].msg, found = e.Message, true
				}
			}
			if !found {
				fs = append(fs, failed{e.Reason, e.Message})
			}
			continue
		}
		if e.Type == corev1.EventTypeNormal {
			for i := 0; i < len(fs); i++ {
				if succeeds(e.Reason, fs[i].reason) {
					fs = append(fs[:i], fs[i+1:]...)
					i--
				}
			}
		}
	}
	if extraMsg != "" {
		have := false
		for _, f := range fs {
			have = have || writeObject(f.reason) == writeObject(extraReason)
		}
		if !have {
			fs = append(fs, failed{extraReason, extraMsg})
		}
	}
	for _, f := range fs {
		out = append(out, classifyWrite(o, f.reason, f.msg))
	}
	return out
}

// isWriteFailure: KubeRay's FailedTo{Create,Update,Delete}X reasons,
// raydar's FailedCreateX and FailedSubmit (ReplicaFailure reasons too).
func isWriteFailure(reason string) bool {
	return strings.HasPrefix(reason, "FailedTo") || strings.HasPrefix(reason, "FailedCreate") ||
		strings.HasPrefix(reason, "FailedDelete") || strings.HasPrefix(reason, "FailedUpdate")
}

// succeeds reports whether an Event of reason ok says the write that
// failed with reason failed went through since: FailedToCreateWorkerPod is
// answered by CreatedWorkerPod.
func succeeds(ok, failed string) bool {
	verb, obj := splitWrite(failed)
	if verb == "" {
		return false
	}
	return strings.HasPrefix(ok, verb+"d") && strings.TrimPrefix(ok, verb+"d") == obj
}

// splitWrite splits a failure reason into its verb and object:
// FailedToCreateWorkerPod → Create, WorkerPod.
func splitWrite(reason string) (verb, obj string) {
	r := strings.TrimPrefix(strings.TrimPrefix(reason, "Failed"), "To")
	for _, v := range [...]string{"Create", "Update", "Delete"} {
		if strings.HasPrefix(r, v) {
			return v, r[len(v):]
		}
	}
	return "", r
}

func writeObject(reason string) string { _, o := splitWrite(reason); return o }

// writeWords names what a failed write was about, in words: "create worker
// pods".
func writeWords(reason string) string {
	verb, obj := splitWrite(reason)
	what := obj
	switch obj {
	case "WorkerPod":
		what = "worker pods"
	case "HeadPod":
		what = "the head pod"
	case "AllPods", "PodCollection", "Pod", "WorkerPodCollection":
		what = "pods"
	case "Service":
		what = "services"
	case "ServiceAccount":
		what = "the autoscaler's service account"
	case "Role", "RoleBinding":
		what = "the autoscaler's " + strings.ToLower(obj[:1]) + obj[1:]
	case "Ingress":
		what = "the dashboard ingress"
	case "PVC":
		what = "the GCS volume claim"
	case "RedisCleanupJob":
		what = "the Redis clean-up Job"
	case "RayCluster":
		what = "the RayCluster"
	case "RayJobSubmitter":
		what = "the submitter Job"
	case "AuthSecret":
		what = "the auth Secret"
	case "ServeApplications":
		what = "the Serve applications"
	case "Gateway", "HTTPRoute":
		what = "the " + obj
	case "TargetCapacity": // an incremental upgrade's Serve target_capacity, set through the dashboard
		what = "the Serve target_capacity"
	case "":
		what = "objects"
	}
	if verb == "" {
		return "write " + what
	}
	return strings.ToLower(verb) + " " + what
}

// classifyWrite turns one failure message into words: a quota or an
// admission webhook refusing (CreateRefused), raydar lacking the
// permission (WriteFailed, RBAC), another refusal (CreateRefused) or
// another failure (WriteFailed).
func classifyWrite(o object, reason, msg string) Cause {
	what := writeWords(reason)
	c := Cause{Subject: o.subject(), Evidence: []string{reason + ": " + msg}}
	switch {
	case strings.Contains(msg, "exceeded quota"):
		q := after(msg, "exceeded quota: ")
		name, detail, _ := strings.Cut(q, ", ")
		c.Code, c.Rank = CodeCreateRefused, rankCreateRefused
		c.Summary = "quota " + name + " refuses to " + what
		if detail != "" {
			c.Evidence = append(c.Evidence, "quota "+name+": "+strings.ReplaceAll(detail, ": ", " "))
		}
		c.Fix = "raise ResourceQuota " + name + " in namespace " + o.meta.Namespace + ", or lower what the pods request"
	case strings.Contains(msg, "denied the request"):
		hook := between(msg, "admission webhook \"", "\"")
		why := strings.TrimSpace(after(msg, "denied the request"))
		why = strings.TrimPrefix(why, ":")
		c.Code, c.Rank = CodeCreateRefused, rankCreateRefused
		if hook == "" {
			hook = "an admission webhook"
		} else {
			hook = "webhook " + hook
		}
		c.Summary = hook + " refuses to " + what
		if why = strings.TrimSpace(why); why != "" {
			c.Summary += ": " + why
		}
		c.Fix = "change the spec to satisfy the admission policy, or ask its owner to allow it"
	case strings.Contains(msg, "cannot ") && strings.Contains(msg, "is forbidden: User"):
		verb := between(msg, "cannot ", " resource")
		res := between(msg, "resource \"", "\"")
		ns := between(msg, "in the namespace \"", "\"")
		c.Code, c.Rank = CodeWriteFailed, rankWriteFailed
		c.Summary = "raydar may not " + verb + " " + res
		if ns != "" {
			c.Summary += " in namespace " + ns
		}
		c.Summary += " (RBAC)"
		user := between(msg, "User \"", "\"")
		c.Fix = "grant " + orWords(user, "raydar's identity") + " " + verb + " on " + res + " (a Role/RoleBinding, or install raydar's RBAC manifests)"
	case strings.Contains(msg, "forbidden"):
		c.Code, c.Rank = CodeCreateRefused, rankCreateRefused
		c.Summary = "refused to " + what + ": " + shortReason(after(msg, "forbidden: "))
		c.Fix = "change the spec to satisfy the namespace's policy (LimitRange, PodSecurity) or relax the policy"
	default:
		c.Code, c.Rank = CodeWriteFailed, rankWriteFailed
		c.Summary = "raydar failed to " + what + ": " + shortReason(afterLast(msg, ", "))
		c.Fix = "read the message; raydar retries on its own once the cause is gone"
	}
	return c
}

// after is what follows sep in s, or s.
func after(s, sep string) string {
	if i := strings.Index(s, sep); i >= 0 {
		return s[i+len(sep):]
	}
	return s
}

// afterLast is what follows the last sep in s, or s.
func afterLast(s, sep string) string {
	if i := strings.LastIndex(s, sep); i >= 0 && i+len(sep) < len(s) {
		return s[i+len(sep):]
	}
	return s
}

// between is the text between the first start and the next end; "" when
// either is missing.
func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	s = s[i+len(start):]
	j := strings.Index(s, end)
	if j < 0 {
		return ""
	}
	return s[:j]
}

// shortReason is the first sentence of a message's first line, at most
// 80 bytes (cut at a rune boundary).
func shortReason(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(s, ".")
	if len(s) > 80 {
		cut := 77
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

func orWords(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}
