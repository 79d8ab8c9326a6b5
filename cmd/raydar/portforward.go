package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/portforward"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// portForwardFlags are raydar port-forward's flags.
type portForwardFlags struct {
	dashboard, serve, client bool
	address                  string
	ports                    []string
}

// ports is what the flags ask for; the dashboard when nothing is asked.
func (f portForwardFlags) list() ([]portforward.Port, error) {
	var out []portforward.Port
	if f.dashboard {
		out = append(out, portforward.Dashboard)
	}
	if f.serve {
		out = append(out, portforward.Serve)
	}
	if f.client {
		out = append(out, portforward.Client)
	}
	for _, s := range f.ports {
		p, err := portforward.ParsePort(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		out = append(out, portforward.Dashboard)
	}
	return out, portforward.CheckPorts(out)
}

// newPortForwardCmd: raydar port-forward CLUSTER [--dashboard] [--serve]
// [--client] [--address ADDR] [--port LOCAL:REMOTE]...
func newPortForwardCmd(g *globals) *cobra.Command {
	var f portForwardFlags
	cmd := &cobra.Command{
		Use:   "port-forward CLUSTER",
		Short: "Forward a RayCluster head's ports here, reconnecting when the head pod changes",
		Long: "Forward ports of a RayCluster's head pod to this machine through the API server\n" +
			"(pods/portforward, as kubectl port-forward; no kubectl needed). The forward follows\n" +
			"the cluster's current head: when the head pod is deleted or restarted, the stream is\n" +
			"reset or times out, it reconnects with back-off and says so. A local port already in\n" +
			"use is an error at once. It prints the local URLs and the ssh -L line to run on your\n" +
			"laptop when raydar runs on a bastion, then every change of state, until Ctrl-C.\n" +
			"Needs create on pods/portforward (the edit ClusterRole grants it, view does not).\n" +
			"Without port flags it forwards the dashboard (8265).",
		Example: "  raydar port-forward my-cluster\n" +
			"  raydar port-forward my-cluster --dashboard --serve --address 0.0.0.0\n" +
			"  raydar port-forward my-cluster --port 18265:8265 -n ray",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("port-forward needs exactly one CLUSTER (got %d arguments): raydar port-forward CLUSTER", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ports, err := f.list()
			if err != nil {
				return err
			}
			t, c, err := oneNamespace(g, "port-forward")
			if err != nil {
				return err
			}
			name, ns := args[0], t.Namespace
			if err := c.Get(cmd.Context(), client.ObjectKey{Namespace: ns, Name: name}, &rayv1.RayCluster{}); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("RayCluster %s/%s does not exist (raydar get clusters -n %s lists them)", ns, name, ns)
				}
				return &actions.APIError{Verb: "get", Resource: "rayclusters", Namespace: ns, Name: name, User: t.User, Err: err}
			}
			m, err := portforward.NewManager(portforward.Options{Config: t.Config})
			if err != nil {
				return err
			}
			defer m.Close()
			fw, err := m.Start(portforward.Spec{Namespace: ns, Cluster: name, Address: f.address, Ports: ports})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			user, host := portforward.Here()
			return followForward(ctx, cmd.OutOrStdout(), fw, user, host)
		},
	}
	cmd.Flags().BoolVar(&f.dashboard, "dashboard", false, "forward the Ray dashboard (8265)")
	cmd.Flags().BoolVar(&f.serve, "serve", false, "forward Ray Serve's HTTP proxy (8000)")
	cmd.Flags().BoolVar(&f.client, "client", false, "forward the Ray client server (10001)")
	cmd.Flags().StringVar(&f.address, "address", "127.0.0.1", "local address to listen on (0.0.0.0 for every interface)")
	cmd.Flags().StringArrayVar(&f.ports, "port", nil, "LOCAL:REMOTE port to forward (repeatable; :REMOTE picks a free local port)")
	return cmd
}

// followForward prints the forward's URLs and ssh line, then each change of
// its phase or pod, until ctx ends (nil) or the forward fails (its error).
func followForward(ctx context.Context, w io.Writer, fw *portforward.Forward, user, host string) error {
	st := fw.State()
	fmt.Fprintf(w, "Forwarding %s:\n", st.Target)
	for _, p := range st.Ports {
		label := p.Name
		if label == "" {
			label = "port"
		}
		fmt.Fprintf(w, "  %-9s %s -> pod port %d\n", label, st.LocalURL(p), p.Remote)
	}
	fmt.Fprintf(w, "From your laptop (raydar on this machine as %s; change user/host to how you reach it):\n  %s\n",
		portforward.Where(user, host), portforward.SSHLine(st.Address, st.Ports, user, host))
	fmt.Fprintln(w, "Ctrl-C ends the forward.")
	var last portforward.State
	for {
		st := fw.State()
		if st.Phase != last.Phase || st.Pod != last.Pod || (st.Phase != portforward.Up && st.LastError != last.LastError) {
			fmt.Fprintln(w, describeForwardState(st, time.Now()))
			last = st
		}
		if st.Phase == portforward.Failed {
			return fmt.Errorf("port-forward: %s", st.LastError)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-fw.Changed():
		}
	}
}

// describeForwardState is one line per change: time, phase, pod, error.
func describeForwardState(st portforward.State, now time.Time) string {
	line := now.Format("15:04:05") + " "
	switch st.Phase {
	case portforward.Up:
		line += "up: pod " + st.Pod
	case portforward.Reconnecting:
		line += fmt.Sprintf("reconnecting since %s: %s", st.Since.Format("15:04:05"), st.LastError)
	case portforward.Connecting:
		line += "connecting"
	default:
		line += string(st.Phase)
		if st.LastError != "" {
			line += ": " + st.LastError
		}
	}
	return line
}
