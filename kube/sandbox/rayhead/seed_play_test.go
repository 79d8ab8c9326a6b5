//go:build unix

package rayhead_test

import (
	"os"
	"testing"

	"github.com/raydar/raydar/kube/sandbox/rayhead"
	"github.com/raydar/raydar/kube/sandbox/seed"
)

// TestDemoJobsRunForReal: the demo's seeded jobs are shell scripts the host
// runs; none of them is played out.
func TestDemoJobsRunForReal(t *testing.T) {
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, ep := range []string{seed.LogsEntrypoint, seed.SucceededEntrypoint, seed.FailedEntrypoint, seed.WaitingEntrypoint, seed.SelectorEntrypoint} {
		if play, why := rayhead.WouldPlay(ep, env, nil); play {
			t.Errorf("%s: played out (%s), want executed", ep, why)
		}
	}
}
