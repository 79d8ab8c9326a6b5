package why

import (
	"strconv"
	"strings"
)

// podCauses turns the scan's issues into causes, one per issue.
func podCauses(s *podScan, in *ClusterInput, out []Cause) []Cause {
	ns := in.Cluster.Namespace
	for _, is := range s.issues {
		who := whoWords(is.groups)
		c := Cause{Code: is.code, Subject: issueSubject(is, ns)}
		var podRank int
		switch is.code {
		case CodeUnschedulable:
			podRank = podRankUnschedulable
			sc := explainSchedule(is.first, is.msg, in.Nodes, len(is.pods) > 1)
			c.Summary = who + " Pending: "
			if len(sc.reasons) > 0 {
				c.Summary += sc.reasons[0]
				c.Fix = sc.fixes[0]
			} else {
				c.Summary += orWords(shortReason(after(is.msg, "nodes are available: ")), "unschedulable")
				c.Fix = "read the scheduler's message: the pods ask for what no node offers"
			}
			c.Evidence = append(c.Evidence, sc.reasons...)
			for _, f := range sc.fixes[min(1, len(sc.fixes)):] {
				if !strings.Contains(c.Fix, f) {
					c.Fix += "; also " + f
				}
			}
		case CodeImagePull:
			podRank = podRankImagePull
			c.Summary = who + " can't pull " + is.what
			c.Fix = imagePullFix(is.evidence)
		case CodeCrashLoop:
			podRank = podRankCrashLoop
			c.Summary = who + " crash-looping: " + is.what
			if strings.HasPrefix(is.what, "OOMKilled") {
				c.Fix = "raise the container's memory limit, or make the work use less memory"
			} else {
				c.Fix = "read the container's previous log (kubectl logs --previous) for why it exits"
			}
		case CodeMissingConfig:
			podRank = podRankMissingConfig
			c.Summary = is.what + " (" + who + ")"
			kind, name := issueObject(is)
			c.Fix = "create " + kind + " " + name + " in namespace " + ns + ", or fix the reference in the pod template"
		}
		c.Evidence = append(c.Evidence, is.evidence...)
		if len(is.pods) > 1 || !mentions(is.evidence, "pod "+is.pods[0]) {
			c.Evidence = append(c.Evidence, podList(is.pods))
		}
		c.Rank = rankWorkerPod + podRank
		for _, g := range is.groups {
			if g.head {
				c.Rank = rankHeadPod + podRank
			}
		}
		out = append(out, c)
	}
	if len(s.waiting) > 0 && !s.headReady {
		head := "there is no head pod"
		if s.head != nil {
			head = "head pod " + s.head.Name + " is not ready"
		}
		n := len(s.waiting)
		out = append(out, Cause{Code: CodeWaitingForGCS, Subject: in.subject(), Rank: rankWaitingForGCS,
			Summary:  plural(n, "worker waits", "workers wait") + " for the GCS: head not ready",
			Evidence: []string{head, podList(s.waiting) + ": init container waits for the head's GCS"},
			Fix:      "get the head Ready first (see its cause); the workers start once its GCS answers"})
	}
	return out
}

func (in *ClusterInput) subject() string {
	return "RayCluster " + in.Cluster.Namespace + "/" + in.Cluster.Name
}

func issueSubject(is *podIssue, ns string) string {
	if is.code == CodeMissingConfig {
		kind, name := issueObject(is)
		return kind + " " + ns + "/" + name
	}
	if len(is.groups) == 1 && is.groups[0].head {
		return "pod " + is.first.Name
	}
	return "group " + is.groups[0].group
}

// issueObject is the missing object of a MissingConfig issue, from its key
// "Kind/name/detail".
func issueObject(is *podIssue) (kind, name string) {
	kind, rest, _ := strings.Cut(is.key, "/")
	name, _, _ = strings.Cut(rest, "/")
	return kind, name
}

// whoWords names the pods of an issue: "head", "2 gpu workers", "head, 1
// cpu worker".
func whoWords(gs []groupCount) string {
	var b strings.Builder
	for i, g := range gs {
		if i > 0 {
			b.WriteString(", ")
		}
		if g.head {
			if g.n == 1 {
				b.WriteString("head")
			} else {
				b.WriteString(strconv.Itoa(g.n) + " heads")
			}
			continue
		}
		b.WriteString(strconv.Itoa(g.n) + " " + g.group + " worker")
		if g.n != 1 {
			b.WriteString("s")
		}
	}
	return b.String()
}

// podList names up to three pods: "pods a, b, c (+4)".
func podList(names []string) string {
	if len(names) == 1 {
		return "pod " + names[0]
	}
	const most = 3
	s := "pods " + strings.Join(names[:min(most, len(names))], ", ")
	if len(names) > most {
		s += " (+" + strconv.Itoa(len(names)-most) + ")"
	}
	return s
}

// imagePullFix reads the kubelet's message: a registry refusing
// credentials wants an imagePullSecret, a missing tag a fixed name.
func imagePullFix(evidence []string) string {
	msg := strings.ToLower(strings.Join(evidence, " "))
	switch {
	case strings.Contains(msg, "unauthorized") || strings.Contains(msg, "denied") || strings.Contains(msg, "authentication"):
		return "give the pods an imagePullSecret that may read the image (spec.imagePullSecrets of the group's template)"
	case strings.Contains(msg, "not found") || strings.Contains(msg, "manifest unknown") || strings.Contains(msg, "invalid reference"):
		return "fix the image name or tag in the group's template"
	}
	return "fix the image name or tag, or give the pods an imagePullSecret that may read it"
}

func mentions(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
