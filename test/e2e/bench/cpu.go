package main

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// Who else used the machine's two cores during a launch: the harness
// itself (this process and the tmux clients it runs and waits for: the
// screen is read with `tmux capture-pane`), the tmux server that keeps the
// pane, and the machine as a whole (/proc/stat), beside raydar and the
// kube-apiserver. A floor client's sync has no terminal to read.

// selfCPU is this process's CPU time and its waited-for children's
// (/proc/self/stat utime, stime, cutime, cstime).
func selfCPU() time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 15 {
		return 0
	}
	var sum int64
	for _, i := range []int{11, 12, 13, 14} {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		sum += v
	}
	return time.Duration(sum) * time.Second / 100
}

// machineBusy is the CPU time all cores have spent not idle (/proc/stat:
// all but idle and iowait).
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var busy int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return time.Duration(busy) * time.Second / 100
}
