package scale

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
)

// The package holds benchmarks only; each starts its own planes, one at a
// time, under the machine's sandbox lock. Nothing runs with -short or
// without -bench.
func TestMain(m *testing.M) {
	flag.Parse()
	// controller-runtime's clients log through it; set before the first.
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	if tmp != "" {
		_ = os.RemoveAll(tmp)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	tmp       string
	raydarBin string
	buildErr  error
)

// setUp takes the sandbox lock and builds raydar-operator once
// (RAYDAR_SCALE_RAYDAR_BIN names another build instead); it skips b
// without a control plane (-short).
func setUp(b *testing.B) {
	b.Helper()
	if testing.Short() {
		b.Skip("needs the sandbox control plane (skipped with -short)")
	}
	buildOnce.Do(func() {
		sandboxtest.MustExclusive()
		if tmp, buildErr = os.MkdirTemp("", "raydar-scale-"); buildErr != nil {
			return
		}
		if raydarBin = os.Getenv("RAYDAR_SCALE_RAYDAR_BIN"); raydarBin != "" {
			return // another build of raydar-operator, for an A/B
		}
		raydarBin = filepath.Join(tmp, "raydar-operator")
		out, err := exec.Command("go", "build", "-o", raydarBin, "github.com/raydar/raydar/cmd/raydar-operator").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string {
	return "building raydar-operator: " + e.err.Error() + "\n" + e.out
}
