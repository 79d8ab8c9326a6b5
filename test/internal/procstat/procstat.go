// Package procstat reads a process's CPU time and memory, and the
// machine's busy CPU time, from /proc, for the benchmarks that measure
// raydar's processes from outside (test/bench, test/e2e/bench,
// test/scale).
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clkTck is USER_HZ on Linux: /proc/PID/stat counts CPU time in 1/100 s.
const clkTck = 100

// CPU is the process's user + system CPU time so far (/proc/PID/stat).
func CPU(pid int) (time.Duration, error) {
	return statTicks(pid, 11, 12)
}

// CPUWithChildren is CPU and its children's that it waited for (cutime,
// cstime): what a harness that runs short-lived commands spends.
func CPUWithChildren(pid int) (time.Duration, error) {
	return statTicks(pid, 11, 12, 13, 14)
}

// statTicks sums fields of /proc/PID/stat, counted from the state after
// the command name (state is 0, utime 11), as CPU time.
func statTicks(pid int, fields ...int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: count from after ")".
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	var sum int64
	for _, i := range fields {
		if i >= len(f) {
			return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command", pid, len(f))
		}
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing /proc/%d/stat: %w", pid, err)
		}
		sum += v
	}
	return time.Duration(sum) * time.Second / clkTck, nil
}

// MachineBusy is the CPU time all the machine's cores have spent not idle
// so far (/proc/stat's first line, all but idle and iowait).
func MachineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: first line %q", line)
	}
	var busy int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing /proc/stat: %w", err)
		}
		busy += n
	}
	return time.Duration(busy) * time.Second / clkTck, nil
}

// StatusKB is a "<field>: <n> kB" line of /proc/PID/status (VmHWM, VmRSS).
func StatusKB(pid int, field string) (int64, error) {
	v, err := StatusKBs(pid, field)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// StatusKBs are several such lines of one read of /proc/PID/status, in the
// order asked: one moment's VmRSS, RssAnon and RssFile add up.
func StatusKBs(pid int, fields ...string) ([]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(fields))
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		for i, f := range fields {
			if name == f {
				n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err != nil {
					return nil, fmt.Errorf("/proc/%d/status %s: %w", pid, f, err)
				}
				out[i] = n
				found++
			}
		}
	}
	if found < len(fields) {
		return nil, fmt.Errorf("/proc/%d/status lacks one of %v", pid, fields)
	}
	return out, nil
}
