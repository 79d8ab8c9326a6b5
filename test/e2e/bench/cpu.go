package main

import (
	"os"
	"time"

	"github.com/raydar/raydar/test/internal/procstat"
)

// Who else used the machine's two cores during a launch: the harness
// itself (this process and the tmux clients it runs and waits for: the
// screen is read with `tmux capture-pane`), the tmux server that keeps the
// pane, and the machine as a whole (/proc/stat), beside raydar and the
// kube-apiserver. A floor client's sync has no terminal to read.

// selfCPU is this process's CPU time and its waited-for children's.
func selfCPU() time.Duration {
	d, _ := procstat.CPUWithChildren(os.Getpid())
	return d
}

// machineBusy is the CPU time all cores have spent not idle.
func machineBusy() time.Duration {
	d, _ := procstat.MachineBusy()
	return d
}
