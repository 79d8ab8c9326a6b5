//go:build linux

package rayhead

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// procState returns the state letter of a process and its process group,
// or ok=false when the process does not exist.
func procState(pid int) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp …
	if len(f) < 3 {
		return 0, 0, false
	}
	pgrp, _ = strconv.Atoi(f[2])
	return f[0][0], pgrp, true
}

// alive reports whether pid exists and is not a zombie (a zombie is dead;
// it only waits for its parent, possibly an init that never reaps).
func alive(pid int) bool {
	st, _, ok := procState(pid)
	return ok && st != 'Z'
}

// groupMembers lists the live (non-zombie) processes in process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, pg, ok := procState(pid); ok && pg == pgid && st != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

func driverPID(t *testing.T, info *dashboard.JobInfo) int {
	t.Helper()
	if info.DriverInfo == nil {
		t.Fatalf("no driver_info: %+v", info)
	}
	pid, err := strconv.Atoi(info.DriverInfo.PID)
	if err != nil || pid <= 0 {
		t.Fatalf("driver pid %q", info.DriverInfo.PID)
	}
	return pid
}

func TestJobRunsInOwnProcessGroup(t *testing.T) {
	_, c := startHead(t, Options{})
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "sleep 300"})
	pid := driverPID(t, waitJob(t, c, id, dashboard.JobRunning))
	_, pgrp, ok := procState(pid)
	if !ok || pgrp != pid {
		t.Errorf("job pid %d is in group %d, want its own group", pid, pgrp)
	}
	if pgrp == syscall.Getpgrp() {
		t.Error("job shares the test's process group")
	}
}

func TestCloseKillsChildren(t *testing.T) {
	h := New(Options{StopGracePeriod: 500 * time.Millisecond})
	if err := h.Start(""); err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	c := newClient(t, h)

	entrypoints := []string{
		"sleep 300",
		"sleep 300 & sleep 301 & echo forked; wait", // children in the group
		`trap "" TERM; echo trapped; sleep 302`,     // ignores SIGTERM: needs the SIGKILL
	}
	var pids []int
	for _, ep := range entrypoints {
		id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: ep})
		pids = append(pids, driverPID(t, waitJob(t, c, id, dashboard.JobRunning)))
		if strings.Contains(ep, "echo") {
			eventually(t, "the job's output", func() (bool, string) {
				logs, _ := c.GetJobLogs(context.Background(), id)
				return logs != "", "no output"
			})
		}
	}
	eventually(t, "the forked sleeps", func() (bool, string) {
		n := len(groupMembers(pids[1]))
		return n >= 3, fmt.Sprintf("%d processes in group %d", n, pids[1])
	})
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("pid %d not running before Close", pid)
		}
	}

	start := time.Now()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Close took %v", time.Since(start))
	// Close waits for the jobs, so they are gone when it returns; poll anyway
	// for grandchildren reparented to init.
	eventually(t, "every job process to be gone", func() (bool, string) {
		var left []string
		for _, pid := range pids {
			if m := groupMembers(pid); len(m) > 0 {
				left = append(left, fmt.Sprintf("group %d: %v", pid, m))
			}
		}
		return len(left) == 0, strings.Join(left, "; ")
	})
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d alive after Close", pid)
		}
	}
}

func TestFinishedJobLeavesNoStragglers(t *testing.T) {
	_, c := startHead(t, Options{})
	// The entrypoint exits at once but leaves a background process behind.
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "sleep 300 & echo $! > bg.pid; echo done"})
	info := waitJob(t, c, id, dashboard.JobSucceeded)
	pgid := driverPID(t, info)
	eventually(t, "the background sleep to be gone", func() (bool, string) {
		m := groupMembers(pgid)
		return len(m) == 0, fmt.Sprint(m)
	})
}

// TestMain runs the helper process of TestPdeathsig when the test binary
// is started with RAYHEAD_HELPER=1 (a helper, not a test: as a test it
// would be skipped in every ordinary run), the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv("RAYHEAD_HELPER") == "1" {
		helperHead()
	}
	os.Exit(m.Run())
}

// helperHead is TestPdeathsig's separate process that owns a Head: it
// prints the dashboard's URL and runs until the parent kills it.
func helperHead() {
	h := New(Options{})
	if err := h.Start(""); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Println("URL", h.DashboardURL())
	bufio.NewReader(os.Stdin).ReadString('\n') // until the parent kills us
	os.Exit(0)
}

func TestPdeathsig(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a helper process")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(exe, "-test.run=^$", "-test.count=1")
	helper.Env = append(os.Environ(), "RAYHEAD_HELPER=1", "TMPDIR="+t.TempDir())
	helper.Stderr = os.Stderr
	stdin, _ := helper.StdinPipe()
	defer stdin.Close()
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	helper.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "URL ") {
		t.Fatalf("helper said %q, %v", line, err)
	}
	c, err := dashboard.New(strings.TrimSpace(strings.TrimPrefix(line, "URL ")), dashboard.WithTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "exec sleep 300"})
	pid := driverPID(t, waitJob(t, c, id, dashboard.JobRunning))
	if !alive(pid) {
		t.Fatalf("job pid %d not running", pid)
	}

	// SIGKILL: the helper gets no chance to clean up; the kernel must.
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	eventually(t, fmt.Sprintf("job pid %d to die with its head", pid), func() (bool, string) {
		return !alive(pid), "still alive"
	})
}
