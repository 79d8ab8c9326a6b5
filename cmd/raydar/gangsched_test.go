package main

import (
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/batchscheduler"
)

// The sandbox simulates every scheduler raydar's operator implements, and
// its start-up line says for each that it is simulated; another is refused
// before the sandbox starts.
func TestSandboxBatchSchedulers(t *testing.T) {
	for _, name := range batchscheduler.Names() {
		if err := checkSandboxBatchScheduler(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		line := gangSchedulerLines[name]
		if !strings.HasPrefix(line, name+", simulated (gangsim), not ") || !strings.HasSuffix(line, "run raydar with --batch-scheduler "+name) {
			t.Errorf("%s: start-up line %q", name, line)
		}
	}
	if err := checkSandboxBatchScheduler("slurm"); err == nil || !strings.Contains(err.Error(), "the sandbox simulates only") {
		t.Errorf("slurm: %v", err)
	}
}
