// Package procstat reads a process's CPU time and memory from /proc, for
// the benchmarks that measure raydar's processes from outside (test/bench,
// test/e2e/bench).
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
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: count from after ")".
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command", pid, len(f))
	}
	// state(0) … utime(11) stime(12)
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parsing /proc/%d/stat", pid)
	}
	return time.Duration(u+st) * time.Second / clkTck, nil
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
