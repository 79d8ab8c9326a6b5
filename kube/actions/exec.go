package actions

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/raydar/raydar/kube/podexec"
	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Exec runs a command, or opens a shell, in a Ray container, the way
// `kubectl exec` does (kube/podexec: pods/exec through the API server). It
// is a write: a command in a container can change anything there, and the
// API server authorizes it as "create pods/exec". So it passes the choke
// point as every other action does: read-only refuses it before any I/O, a
// protected context wants the RayCluster's name confirmed, it is audited
// (one line when it ends, with the command and its exit code) and it leaves
// an Event on the pod.

// ActionExec is a command or shell in a Ray container.
const ActionExec Action = "exec"

// ReasonExec is the reason of the Event an exec leaves on its pod.
const ReasonExec = "Exec"

// ExecFunc runs one exec (podexec.Run by default; Options.Exec).
type ExecFunc func(ctx context.Context, cfg *rest.Config, r podexec.Request, s podexec.Streams) error

// ExecRequest says where to exec and what.
type ExecRequest struct {
	// Pod is one of the RayCluster's pods; "" is its head pod.
	Pod string `json:"pod,omitempty"`
	// Container is a container of the pod; "" is the Ray container, the
	// pod's first (KubeRay's utils.RayContainerIndex,
	// ray-operator/controllers/ray/utils/constant.go:51 of v1.7.0).
	Container string `json:"container,omitempty"`
	// Command is the argv to run; none opens a shell (podexec.DefaultShell).
	Command []string `json:"command,omitempty"`
}

// ExecPlan is the preview of Exec, and its audit details.
type ExecPlan struct {
	Namespace string `json:"namespace"`
	Cluster   string `json:"cluster"`
	Pod       string `json:"pod"`
	// Node is the Ray node type of the pod: head or worker.
	Node      string   `json:"node"`
	Container string   `json:"container"`
	Command   []string `json:"command"`
	// Shell is true when no command was given: DefaultShell runs.
	Shell bool `json:"shell,omitempty"`
	TTY   bool `json:"tty,omitempty"`
	// ExitCode is the command's exit status, once it ended.
	ExitCode *int `json:"exitCode,omitempty"`
}

// Lines implements Plan.
func (p *ExecPlan) Lines() []string {
	what := "run " + quoteArgs(p.Command)
	if p.Shell {
		what = "open a shell (bash, else sh)"
	}
	l := []string{fmt.Sprintf("%s in container %s of %s pod %s/%s (RayCluster %s)", what, p.Container, p.Node, p.Namespace, p.Pod, p.Cluster)}
	if p.ExitCode != nil {
		l = append(l, fmt.Sprintf("exit code %d", *p.ExitCode))
	}
	return l
}

// quoteArgs shows an argv as one line, quoting words with spaces.
func quoteArgs(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"") {
			a = fmt.Sprintf("%q", a)
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// PlanExec validates req against rc and its pods (the TUI's cache, or a
// fresh read): the pod (the head by default) must be one of rc's, running
// and not being deleted; the container one of its containers and running.
// Pure.
func PlanExec(rc *rayv1.RayCluster, pods []corev1.Pod, req ExecRequest) (*ExecPlan, error) {
	var pod *corev1.Pod
	var names []string
	for i := range pods {
		p := &pods[i]
		if p.Labels[rayv1.RayClusterLabelKey] != rc.Name || p.Namespace != rc.Namespace {
			continue
		}
		names = append(names, p.Name)
		switch {
		case req.Pod != "" && p.Name == req.Pod:
			pod = p
		case req.Pod == "" && p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode) && p.DeletionTimestamp == nil:
			pod = p
		}
	}
	switch {
	case pod == nil && req.Pod == "":
		return nil, invalidf("RayCluster %s/%s has no head pod", rc.Namespace, rc.Name)
	case pod == nil:
		sort.Strings(names)
		return nil, invalidf("pod %s is not a pod of RayCluster %s/%s (its pods: %s)", req.Pod, rc.Namespace, rc.Name, orNone(names))
	case pod.DeletionTimestamp != nil:
		return nil, invalidf("pod %s/%s is being deleted", pod.Namespace, pod.Name)
	case pod.Status.Phase != corev1.PodRunning:
		return nil, invalidf("pod %s/%s is %s, not Running: there is no container to exec in", pod.Namespace, pod.Name, orUnknown(string(pod.Status.Phase)))
	case len(pod.Spec.Containers) == 0:
		return nil, invalidf("pod %s/%s has no containers", pod.Namespace, pod.Name)
	}
	container := req.Container
	if container == "" {
		container = pod.Spec.Containers[0].Name
	}
	var cnames []string
	found := false
	for _, c := range pod.Spec.Containers {
		cnames = append(cnames, c.Name)
		found = found || c.Name == container
	}
	if !found {
		return nil, invalidf("pod %s/%s has no container %q (its containers: %s)", pod.Namespace, pod.Name, container, strings.Join(cnames, ", "))
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == container && cs.State.Running == nil {
			return nil, invalidf("container %s of pod %s/%s is not running%s", container, pod.Namespace, pod.Name, waitingWhy(cs.State))
		}
	}
	p := &ExecPlan{Namespace: pod.Namespace, Cluster: rc.Name, Pod: pod.Name, Node: orUnknown(pod.Labels[rayv1.RayNodeTypeLabelKey]),
		Container: container, Command: req.Command}
	if len(p.Command) == 0 {
		p.Command, p.Shell = append([]string(nil), podexec.DefaultShell...), true
	}
	return p, nil
}

func waitingWhy(s corev1.ContainerState) string {
	switch {
	case s.Waiting != nil && s.Waiting.Reason != "":
		return " (" + s.Waiting.Reason + ")"
	case s.Terminated != nil:
		return fmt.Sprintf(" (terminated: %s, exit code %d)", orUnknown(s.Terminated.Reason), s.Terminated.ExitCode)
	}
	return ""
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// PreviewExec reads the RayCluster and its pods and returns PlanExec's
// preview.
func (a *Actions) PreviewExec(ctx context.Context, ns, cluster string, req ExecRequest) (*ExecPlan, error) {
	p, _, err := a.readAndPlanExec(ctx, ns, cluster, req)
	return p, err
}

func (a *Actions) readAndPlanExec(ctx context.Context, ns, cluster string, req ExecRequest) (*ExecPlan, *corev1.Pod, error) {
	obj, err := a.getObject(ctx, kinds.RayCluster, ns, cluster)
	if err != nil {
		return nil, nil, err
	}
	pods, err := a.podsFor(ctx, ns, cluster, nil)
	if err != nil {
		return nil, nil, err
	}
	p, err := PlanExec(obj.(*rayv1.RayCluster), pods, req)
	if err != nil {
		return nil, nil, err
	}
	for i := range pods {
		if pods[i].Name == p.Pod {
			return p, &pods[i], nil
		}
	}
	return p, nil, nil
}

// Exec runs req in a pod of RayCluster ns/cluster with streams s, and
// returns when the command (or shell) ends. The audit line and the Event
// (on the pod, reason Exec) are written then, with the exit code; a
// command that exits non-zero is applied all the same (it ran) and Exec
// returns a *podexec.ExitError with its code beside the Result. The object
// confirmed on a protected context is the RayCluster.
func (a *Actions) Exec(ctx context.Context, ns, cluster string, req ExecRequest, s podexec.Streams) (*Result, error) {
	ref := ObjectRef{Kind: kinds.RayCluster, Namespace: ns, Name: cluster}
	var exitErr *podexec.ExitError
	r, err := a.run(ctx, ActionExec, ref, func(r *Result) (*change, error) {
		if a.opts.Config == nil && a.opts.Exec == nil {
			return nil, errors.New("exec: no API server configuration (Options.Config) to exec through")
		}
		p, pod, err := a.readAndPlanExec(ctx, ns, cluster, req)
		if err != nil {
			return nil, err
		}
		p.TTY = s.TTY
		r.Plan = p
		r.Attempts = 1
		run := a.opts.Exec
		if run == nil {
			run = podexec.Run
		}
		err = run(ctx, a.opts.Config, podexec.Request{Namespace: ns, Pod: p.Pod, Container: p.Container, Command: p.Command}, s)
		code := 0
		switch {
		case errors.As(err, &exitErr):
			code = exitErr.Code
		case err != nil:
			if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
				return nil, a.apiErr(err, "create", "pods/exec", ns, p.Pod)
			}
			return nil, fmt.Errorf("exec in pod %s/%s: %w", ns, p.Pod, err)
		}
		p.ExitCode = &code
		what := fmt.Sprintf("Ran %s in container %s, exit code %d", quoteArgs(p.Command), p.Container, code)
		if p.Shell {
			what = fmt.Sprintf("Opened a shell in container %s, exit code %d", p.Container, code)
		}
		return &change{obj: pod, reason: ReasonExec, verb: "Exec", what: what}, nil
	})
	if err == nil && exitErr != nil {
		return r, exitErr
	}
	return r, err
}
