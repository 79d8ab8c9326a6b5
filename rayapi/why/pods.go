package why

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// A podIssue is one pod-level cause, gathered over the pods that share it:
// per group for most codes (2 gpu workers Pending), per missing object for
// MissingConfig (ConfigMap x: head and 2 workers).
type podIssue struct {
	code string
	// key tells issues of one code apart: the group, the image, the
	// missing object.
	key    string
	groups []groupCount
	pods   []string
	// first is the first pod seen with the issue, msg what it says.
	first *podview.Pod
	msg   string
	// evidence of the first pod; extra lines added later (Ray's demand).
	evidence []string
	// what is the issue's own words (the image, "ConfigMap x").
	what string
}

// groupCount counts pods of one group (head, or a worker group).
type groupCount struct {
	head  bool
	group string
	n     int
}

// podScan is what the pods of a cluster say.
type podScan struct {
	issues    []*podIssue
	head      *podview.Pod
	headReady bool
	// waiting are the workers whose init containers wait (for the GCS).
	waiting []string
	// autoscaling: the cluster has enableInTreeAutoscaling, so
	// autoscalerCauses states the head's autoscaler sidecar crash-looping
	// and the pod causes leave it out; without it, a container of that
	// name is the user's and its crash loop is the pod's.
	autoscaling bool
}

// podGroup is a pod's group: the head, or its worker group.
func podGroup(p *podview.Pod) (head bool, group string) {
	if p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode) {
		return true, rayv1.RayNodeHeadGroupLabelValue
	}
	return false, p.Labels[rayv1.RayNodeGroupLabelKey]
}

// add records that pod has the issue (code, key), creating it with what
// and evidence on first sight; it returns the issue.
func (s *podScan) add(code, key string, pod *podview.Pod, head bool, group, msg, what string, evidence ...string) *podIssue {
	var is *podIssue
	for _, x := range s.issues {
		if x.code == code && x.key == key {
			is = x
			break
		}
	}
	if is == nil {
		is = &podIssue{code: code, key: key, first: pod, msg: msg, what: what, evidence: evidence}
		s.issues = append(s.issues, is)
	}
	is.pods = append(is.pods, pod.Name)
	for i := range is.groups {
		if is.groups[i].head == head && is.groups[i].group == group {
			is.groups[i].n++
			return is
		}
	}
	is.groups = append(is.groups, groupCount{head: head, group: group, n: 1})
	return is
}

// scanPods reads every pod of the cluster once, and the Events about them
// (FailedScheduling, FailedMount) where the pod's own status says less.
func scanPods(s *podScan, pods []*podview.Pod, events []*corev1.Event) {
	var sched, mount map[string]*corev1.Event // pod name → its latest such Event
	for _, e := range events {
		if e.InvolvedObject.Kind != "Pod" || e.Type != corev1.EventTypeWarning {
			continue
		}
		switch e.Reason {
		case reasonFailedScheduling:
			if sched == nil {
				sched = map[string]*corev1.Event{}
			}
			sched[e.InvolvedObject.Name] = e
		case reasonFailedMount:
			if mount == nil {
				mount = map[string]*corev1.Event{}
			}
			mount[e.InvolvedObject.Name] = e
		}
	}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		ready := status.PodIsReady(p)
		if ready && p.Status.Phase == corev1.PodRunning {
			// Every container is ready: nothing waits or crashes.
			if p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode) {
				s.head, s.headReady = p, true
			}
			continue
		}
		head, group := podGroup(p)
		if head {
			s.head, s.headReady = p, ready
		}
		if p.Status.Phase == corev1.PodPending {
			if msg, ok := unschedulable(p, sched[p.Name]); ok {
				if kind, name, detail, ok := missingObject(msg); ok {
					s.missing(p, head, group, kind, name, detail, "scheduler: "+msg)
				} else {
					is := s.add(CodeUnschedulable, groupKey(head, group), p, head, group, msg, "")
					if is.msg == "" && msg != "" { // the first pod had no message
						is.msg = msg
					}
					if len(is.evidence) == 0 && msg != "" {
						is.evidence = []string{"scheduler: " + msg}
					}
				}
				continue
			}
		}
		blocked := s.containers(p, head, group, p.Status.InitContainerStatuses, true)
		blocked = s.containers(p, head, group, p.Status.ContainerStatuses, false) || blocked
		if e := mount[p.Name]; e != nil && !ready && p.Status.Phase == corev1.PodPending {
			if kind, name, detail, ok := missingObject(e.Message); ok {
				s.missing(p, head, group, kind, name, detail, "FailedMount: "+e.Message)
				blocked = true
			}
		}
		if !head && !blocked && p.Status.Phase == corev1.PodPending && initWaits(p) {
			s.waiting = append(s.waiting, p.Name)
		}
	}
}

func groupKey(head bool, group string) string {
	if head {
		return "\x00head"
	}
	return group
}

// unschedulable: the pod's PodScheduled condition is False with reason
// Unschedulable (the scheduler's message), or it is not bound and the
// scheduler's latest Event about it is FailedScheduling.
func unschedulable(p *podview.Pod, ev *corev1.Event) (string, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			if c.Status == corev1.ConditionFalse && c.Reason == reasonUnschedulable {
				if c.Message == "" && ev != nil {
					return ev.Message, true
				}
				return c.Message, true
			}
			if c.Status == corev1.ConditionTrue {
				return "", false
			}
		}
	}
	if ev != nil && p.Spec.NodeName == "" {
		return ev.Message, true
	}
	return "", false
}

// containers records the waiting or crashing containers of a pod; it
// reports whether one is blocked by an error (not merely starting).
func (s *podScan) containers(p *podview.Pod, head bool, group string, sts []podview.ContainerStatus, init bool) bool {
	blocked := false
	gk := groupKey(head, group)
	for i := range sts {
		cs := &sts[i]
		w := cs.State.Waiting
		if w == nil {
			continue
		}
		where := "pod " + p.Name + " container " + cs.Name
		if init {
			where = "pod " + p.Name + " init container " + cs.Name
		}
		switch w.Reason {
		case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull":
			image := cs.Image
			if image == "" {
				image = specImage(p, cs.Name)
			}
			s.add(CodeImagePull, gk+"\x00"+image, p, head, group, w.Message, image, where+": "+w.Reason+": "+w.Message)
			blocked = true
		case "CrashLoopBackOff":
			if head && cs.Name == rayv1.AutoscalerContainerName && s.autoscaling {
				blocked = true // the autoscaler's own cause (autoscaler.go) says it
				continue
			}
			s.add(CodeCrashLoop, gk, p, head, group, w.Message, crashWords(p, cs), crashEvidence(where, p, cs)...)
			blocked = true
		case "CreateContainerConfigError", "CreateContainerError":
			if kind, name, detail, ok := missingObject(w.Message); ok {
				s.missing(p, head, group, kind, name, detail, where+": "+w.Reason+": "+w.Message)
				blocked = true
			}
		}
	}
	return blocked
}

// missing records a missing ConfigMap, Secret or PersistentVolumeClaim.
func (s *podScan) missing(p *podview.Pod, head bool, group, kind, name, detail, evidence string) {
	what := kind + " " + name
	if detail != "" {
		what += " " + detail
	} else {
		what += " missing"
	}
	s.add(CodeMissingConfig, kind+"/"+name+"/"+detail, p, head, group, evidence, what, evidence)
}

// missingObject finds the object a kubelet or scheduler message says is
// not there: `configmap "x" not found`, `secret "x" not found`,
// `persistentvolumeclaim "x" not found`, `couldn't find key k in
// ConfigMap ns/x`.
func missingObject(msg string) (kind, name, detail string, ok bool) {
	for _, k := range [...]struct{ word, kind string }{
		{"configmap \"", "ConfigMap"}, {"secret \"", "Secret"}, {"persistentvolumeclaim \"", "PersistentVolumeClaim"},
	} {
		i := strings.Index(msg, k.word)
		if i < 0 {
			continue
		}
		rest := msg[i+len(k.word):]
		j := strings.IndexByte(rest, '"')
		if j > 0 && strings.HasPrefix(rest[j+1:], " not found") {
			return k.kind, rest[:j], "", true
		}
	}
	if key := between(msg, "couldn't find key ", " in "); key != "" {
		rest := after(msg, "couldn't find key "+key+" in ")
		kind, ref, _ := strings.Cut(rest, " ")
		if kind == "ConfigMap" || kind == "Secret" {
			ref = strings.TrimRight(ref, ".,;:")
			if _, n, ok := strings.Cut(ref, "/"); ok {
				ref = n
			}
			return kind, ref, "has no key " + key, true
		}
	}
	return "", "", "", false
}

// initWaits: an init container has not finished and none failed (it runs
// or waits to start: a worker's wait for the GCS).
func initWaits(p *podview.Pod) bool {
	for _, cs := range p.Status.InitContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode == 0 {
			continue
		}
		return true
	}
	return false
}

func specImage(p *podview.Pod, name string) string {
	for _, cs := range [2][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				return cs[i].Image
			}
		}
	}
	return "(unknown image)"
}

func specContainer(p *podview.Pod, name string) *corev1.Container {
	for _, cs := range [2][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}

// crashWords is how a crash loop ended last: "OOMKilled (memory limit
// 4Gi)", "exit 1".
func crashWords(p *podview.Pod, cs *podview.ContainerStatus) string {
	t := cs.LastTerminationState.Terminated
	if t == nil {
		return "restarted " + itoa(int64(cs.RestartCount)) + " times"
	}
	if t.Reason == "OOMKilled" {
		if c := specContainer(p, cs.Name); c != nil {
			if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
				return "OOMKilled (memory limit " + q.String() + ")"
			}
		}
		return "OOMKilled"
	}
	return "exit " + itoa(int64(t.ExitCode))
}

// exitWords: "exit code 1 (Error)", the reason when the kubelet gives one.
func exitWords(t *corev1.ContainerStateTerminated) string {
	w := "exit code " + itoa(int64(t.ExitCode))
	if t.Reason != "" {
		w += " (" + t.Reason + ")"
	}
	return w
}

func crashEvidence(where string, p *podview.Pod, cs *podview.ContainerStatus) []string {
	line := where + ": CrashLoopBackOff, restarted " + itoa(int64(cs.RestartCount)) + " times"
	if t := cs.LastTerminationState.Terminated; t != nil {
		line += ", last " + exitWords(t)
		if m := strings.TrimSpace(t.Message); m != "" {
			return []string{line, "last message: " + shortReason(m)}
		}
	}
	return []string{line}
}
