package execsim

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// Ray is the `ray` command of a simulated Ray container: args are the words
// after `ray`, getenv the exec's environment. It returns the exit status.
// `ray status` prints the cluster's simulated head's status text, as Ray's
// own does (python/ray/scripts/scripts.py status: debug_status of the
// GCS's cluster status); without a head to ask it fails as Ray does when
// no cluster runs. Other commands are refused, naming them.
func Ray(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "status" {
		fmt.Fprintf(stderr, "raydar sandbox: `ray %s` is not simulated in this container; `ray status` is\n", strings.Join(args, " "))
		return 1
	}
	if len(args) > 1 {
		fmt.Fprintf(stderr, "raydar sandbox: `ray status %s`: options of ray status are not simulated; `ray status` is\n", strings.Join(args[1:], " "))
		return 2
	}
	url := getenv(DashboardEnv)
	if url == "" {
		fmt.Fprintln(stderr, "ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by setting `--address` flag or `RAY_ADDRESS` environment variable.")
		return 1
	}
	c, err := dashboard.New(url)
	if err != nil {
		fmt.Fprintln(stderr, "raydar sandbox:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	text, err := c.StatusText(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "ConnectionError: Could not connect to the Ray cluster's head (%v).\n", err)
		return 1
	}
	fmt.Fprint(stdout, text)
	if !strings.HasSuffix(text, "\n") {
		fmt.Fprintln(stdout)
	}
	return 0
}
