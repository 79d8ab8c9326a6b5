package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube/raydash/addrbook"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/rayapi/crds"
)

// sandboxCRDs are the CRDs the sandbox installs: ray.io/v1.
func sandboxCRDs() []byte { return crds.YAML() }

// newSandboxCmd runs a real control plane on loopback in the foreground, for
// trying raydar (or kubectl) without a cluster.
func newSandboxCmd() *cobra.Command {
	var (
		stateDir, toolsDir, contextName, kubernetesVersion string
		batchScheduler                                     string
		pool                                               sandbox.NodePool
	)
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run a local Kubernetes control plane with fake nodes, simulated Ray heads and cert-manager, and the ray.io CRDs until Ctrl-C",
		Long: `Run etcd, kube-apiserver, kube-scheduler, kube-controller-manager and kwok on
loopback, with fake nodes and the ray.io/v1 CRDs installed, until Ctrl-C or
SIGTERM. Pods bound to the fake nodes become Running with an IP; no container
runs. Point raydar or kubectl at it with the printed KUBECONFIG.

Ray heads are simulated as kwok simulates kubelets: when a RayCluster's head
pod is Ready, a simulated head answers for it (the Jobs and Serve API of
Ray's dashboard, a Serve proxy), and RayJob submitters submit to it. A job's
entrypoint runs as a host shell command when the host can run it; otherwise
(python scripts, ray imports) it is played out: RUNNING with a few log lines,
then SUCCEEDED, or FAILED when the RayJob asks for it (docs/sandbox.md). A
raydar operator or TUI pointed at this KUBECONFIG reaches the simulated heads
through the address book that the kubeconfig names.

cert-manager is simulated too (certsim), for RayClusters with tlsOptions
under an operator with --feature-gates RayClusterMTLS=true: its v1.19.4
Issuer, ClusterIssuer and Certificate CRDs (written into the tools
directory by ` + "`make tools`" + `) are installed, and each Certificate's
Secret is issued at once (real x509) by a selfSigned or CA issuer; there is
no cert-manager, no renewal on a timer, no ACME or other issuers. Without
the CRD file there is no cert-manager, and the start-up line says so.

With --batch-scheduler volcano, yunikorn, kai-scheduler or
scheduler-plugins, a simulated gang scheduler, not the real one, binds the
pods whose schedulerName is that scheduler's: Volcano's and
scheduler-plugins' PodGroups (their CRDs, written into the tools directory
by ` + "`make tools`" + `, are installed) only when minMember of their pods exist
and all fit at once; YuniKorn's task groups once all fit; KAI's pods per
cluster, only with a kai.scheduler/queue label. The start-up line says
what it does not do; run raydar with the same --batch-scheduler.

Without node flags the nodes are three CPU nodes and one node with 4 GPUs;
any of --nodes, --node-cpu, --node-memory, --node-gpu gives instead --nodes
identical nodes.

The kubeconfig's context is named raydar-sandbox, or raydar-sandbox-DIR
with --state-dir .../DIR, or --context-name: two sandboxes with their own
state directories have distinct contexts, so their kubeconfigs merge
(KUBECONFIG=A:B) and one raydar opens both: raydar --context NAME1,NAME2.

--kubernetes 1.36 runs Kubernetes 1.36's API server, scheduler and
controller-manager instead of 1.37's, with the scheduling.k8s.io/v1alpha2
Workload and PodGroup API and gang scheduling on (GenericWorkload,
GangScheduling): what KubeRay's KubernetesWAS gate needs (1.37 removed
that API); run raydar with --feature-gates KubernetesWAS=true.

The binaries come from bin/k8s (built by ` + "`make tools`" + `) or $` + sandbox.ToolsDirEnv + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// envtest logs through controller-runtime; without a logger it
			// prints a warning with a stack trace after 30 seconds.
			ctrllog.SetLogger(logr.Discard())
			if err := checkSandboxBatchScheduler(batchScheduler); err != nil {
				return err // before the sandbox starts
			}
			errOut := cmd.ErrOrStderr()
			if !cmd.Flags().Changed("context-name") {
				contextName = sandbox.ContextNameFor(stateDir)
			}
			if err := sandbox.CheckContextName(contextName); err != nil {
				if cmd.Flags().Changed("context-name") {
					return fmt.Errorf("--context-name: %w", err)
				}
				return fmt.Errorf("%w: the context name comes from --state-dir's base name; name it with --context-name", err)
			}
			opts := sandbox.Full()
			opts.StateDir = stateDir
			opts.ContextName = contextName
			opts.ToolsDir = toolsDir
			opts.Kubernetes = kubernetesVersion
			opts.CRDs = [][]byte{sandboxCRDs()}
			opts.RayCLI = rayCLI() // sandboxray.go
			f := cmd.Flags()
			if f.Changed("nodes") || f.Changed("node-cpu") || f.Changed("node-memory") || f.Changed("node-gpu") {
				opts.Nodes = []sandbox.NodePool{pool}
			}
			opts.Logf = func(format string, args ...any) {
				fmt.Fprintf(errOut, "  "+format+"\n", args...)
			}

			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintln(errOut, "starting the sandbox…")
			begin := time.Now()
			sb, err := sandbox.Start(ctx, opts)
			if err != nil {
				return err
			}
			sim, err := startHeads(ctx, sb, func(format string, args ...any) { opts.Logf(format, args...) })
			if err != nil {
				_ = sb.Stop()
				return err
			}
			certs, certLine, err := startCertManager(ctx, sb, func(format string, args ...any) { opts.Logf(format, args...) })
			if err != nil {
				_ = sim.Close()
				_ = sb.Stop()
				return err
			}
			gateways, gatewayLine, err := startGateway(ctx, sb, func(format string, args ...any) { opts.Logf(format, args...) })
			if err != nil {
				if certs != nil {
					certs.Close()
				}
				_ = sim.Close()
				_ = sb.Stop()
				return err
			}
			var gang interface{ Close() }
			var gangLine string
			if batchScheduler != "" {
				g, line, err := startGangScheduler(ctx, sb, batchScheduler, func(format string, args ...any) { opts.Logf(format, args...) })
				if err != nil {
					if certs != nil {
						certs.Close()
					}
					if gateways != nil {
						gateways.Close()
					}
					_ = sim.Close()
					_ = sb.Stop()
					return err
				}
				gang, gangLine = g, line
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "sandbox ready in %s\n", time.Since(begin).Round(time.Millisecond))
			fmt.Fprintf(out, "  server:     %s\n", sb.Config.Host)
			fmt.Fprintf(out, "  kubeconfig: %s\n", sb.KubeconfigPath)
			fmt.Fprintf(out, "  context:    %s\n", sb.ContextName)
			fmt.Fprintf(out, "  logs:       %s\n", sb.StateDir)
			fmt.Fprintf(out, "  nodes:      %s\n", strings.Join(sb.Nodes(), " "))
			fmt.Fprintf(out, "  ray heads:  simulated; addresses in %s\n", filepath.Join(sb.StateDir, addrbook.FileName))
			fmt.Fprintf(out, "  cert-manager: %s\n", certLine)
			fmt.Fprintf(out, "  gateways:   %s\n", gatewayLine)
			if gang != nil {
				fmt.Fprintf(out, "  batch scheduler: %s\n", gangLine)
			}
			if kubernetesVersion == sandbox.Kubernetes136 {
				fmt.Fprintf(out, "  kubernetes: 1.36, serving scheduling.k8s.io/v1alpha2 (run raydar with --feature-gates KubernetesWAS=true)\n")
			}
			fmt.Fprintf(out, "\nexport KUBECONFIG=%s\n\n", sb.KubeconfigPath)
			fmt.Fprint(out, twoSandboxes(sb.KubeconfigPath, sb.ContextName, sb.StateDir))
			fmt.Fprintln(out, "Ctrl-C stops it.")

			<-ctx.Done()
			stop() // a second Ctrl-C kills raydar, and the sandbox with it
			fmt.Fprintln(errOut, "stopping the sandbox…")
			begin = time.Now()
			if certs != nil {
				certs.Close()
			}
			if gateways != nil {
				gateways.Close()
			}
			if gang != nil {
				gang.Close()
			}
			simErr := sim.Close()
			if err := errors.Join(simErr, sb.Stop()); err != nil {
				return err
			}
			fmt.Fprintf(errOut, "stopped in %s\n", time.Since(begin).Round(time.Millisecond))
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&pool.Count, "nodes", 4, "number of fake nodes")
	f.StringVar(&pool.CPU, "node-cpu", "16", "CPU capacity of each node")
	f.StringVar(&pool.Memory, "node-memory", "64Gi", "memory capacity of each node")
	f.IntVar(&pool.GPU, "node-gpu", 0, "nvidia.com/gpu capacity of each node")
	f.StringVar(&stateDir, "state-dir", "", "directory for logs, certificates and etcd data, kept after exit (default: a temporary directory, removed on exit)")
	f.StringVar(&contextName, "context-name", "", "the kubeconfig context (and cluster) name (default: raydar-sandbox, or raydar-sandbox-DIR with --state-dir .../DIR)")
	f.StringVar(&batchScheduler, "batch-scheduler", "", "simulate this gang scheduler (volcano, yunikorn, kai-scheduler, scheduler-plugins: its CRDs and a stand-in that binds its gangs' pods together); run raydar with the same --batch-scheduler")
	f.StringVar(&kubernetesVersion, "kubernetes", "", "the control plane's Kubernetes version: 1.37 (default) or 1.36 (serves KubeRay's KubernetesWAS API; make tools builds it)")
	f.StringVar(&toolsDir, "tools-dir", "", "directory of the control-plane binaries (default: $"+sandbox.ToolsDirEnv+" or the repository's bin/k8s)")
	cmd.AddCommand(newSandboxRayCmd()) // sandboxray.go
	return cmd
}

// twoSandboxes is the start-up's paragraph on opening this sandbox beside
// another: a second one needs a context name of its own (a --state-dir
// gives one), then one raydar opens both from the merged kubeconfigs
// (kubectl merges KUBECONFIG=A:B, the first file winning a name both have).
// The second's state directory and context differ from this one's.
func twoSandboxes(kubeconfig, contextName, stateDir string) string {
	var dir, other string
	for _, d := range []string{"b", "c", "d"} {
		dir, other = filepath.Join(os.TempDir(), d), sandbox.ContextNameFor(d)
		if dir != stateDir && other != contextName {
			break
		}
	}
	return fmt.Sprintf("Two sandboxes at once: start the second with a context name of its own\n"+
		"(raydar sandbox --state-dir %s: its context is %s), then open both:\n"+
		"  KUBECONFIG=%s:%s raydar --context %s,%s\n\n",
		dir, other, kubeconfig, filepath.Join(dir, "kubeconfig"), contextName, other)
}
