package podexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
)

// DefaultShell opens bash where the container has it and sh otherwise, in
// one exec (no second round trip when bash is missing).
var DefaultShell = []string{"sh", "-c", "command -v bash >/dev/null && exec bash || exec sh"}

// Request is one exec in a container.
type Request struct {
	Namespace, Pod, Container string
	// Command is the argv run in the container (not through a shell).
	Command []string
}

// Streams are the local ends of the exec. In nil sends no standard input;
// with TTY the remote side gets a terminal (its stderr merged into Out),
// sized by Sizes when set.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
	TTY      bool
	Sizes    remotecommand.TerminalSizeQueue
}

// ExitError is how a command that ran ends with a non-zero status: the
// remote command's exit code, for a CLI to exit with.
type ExitError struct {
	Code int
}

// Error says "command terminated with exit code N", as kubectl does.
func (e *ExitError) Error() string {
	return fmt.Sprintf("command terminated with exit code %d", e.Code)
}

// ExitStatus is the remote command's exit code.
func (e *ExitError) ExitStatus() int { return e.Code }

// URL is the pods/exec subresource URL of r on cfg's API server, with the
// streams' options (stdin, stdout, stderr, tty) as query parameters.
func URL(cfg *rest.Config, r Request, s Streams) (*url.URL, error) {
	rc, err := restClient(cfg)
	if err != nil {
		return nil, err
	}
	return rc.Post().Resource("pods").Namespace(r.Namespace).Name(r.Pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: r.Container,
			Command:   r.Command,
			Stdin:     s.In != nil,
			Stdout:    s.Out != nil,
			Stderr:    s.Err != nil && !s.TTY,
			TTY:       s.TTY,
		}, scheme.ParameterCodec).URL(), nil
}

func restClient(cfg *rest.Config) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientFor(c)
}

// NewExecutor is kubectl exec's executor for u: WebSocket first, SPDY when
// the server refuses the WebSocket upgrade (or a proxy cannot carry it).
func NewExecutor(cfg *rest.Config, u *url.URL) (remotecommand.Executor, error) {
	spdy, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
	if err != nil {
		return nil, err
	}
	// RFC 6455 4.1: a WebSocket handshake is a GET.
	ws, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// Run runs r with s through cfg's API server and returns when the command
// ends (or ctx is done). A command that exits non-zero is an *ExitError.
func Run(ctx context.Context, cfg *rest.Config, r Request, s Streams) error {
	if len(r.Command) == 0 {
		return errors.New("podexec: no command")
	}
	u, err := URL(cfg, r, s)
	if err != nil {
		return err
	}
	ex, err := NewExecutor(cfg, u)
	if err != nil {
		return err
	}
	opts := remotecommand.StreamOptions{Stdin: s.In, Stdout: s.Out, Tty: s.TTY}
	if !s.TTY {
		opts.Stderr = s.Err
	} else {
		opts.TerminalSizeQueue = s.Sizes
	}
	err = ex.StreamWithContext(ctx, opts)
	var ce utilexec.CodeExitError
	if errors.As(err, &ce) {
		return &ExitError{Code: ce.Code}
	}
	return err
}
