package procstat

import (
	"crypto/sha256"
	"os"
	"testing"
	"time"
)

// This process has used some CPU and holds some memory: both read as more
// than nothing, and an unknown field or process is an error.
func TestSelf(t *testing.T) {
	pid := os.Getpid()
	// Work until the kernel has counted a tick of CPU time (10 ms), within
	// a generous deadline.
	sum := sha256.Sum256(nil)
	deadline := time.Now().Add(30 * time.Second)
	d, err := CPU(pid)
	for err == nil && d <= 0 && time.Now().Before(deadline) {
		for i := 0; i < 1000; i++ {
			sum = sha256.Sum256(sum[:])
		}
		d, err = CPU(pid)
	}
	if err != nil || d <= 0 {
		t.Errorf("CPU = %v, %v; want > 0", d, err)
	}
	if all, err := CPUWithChildren(pid); err != nil || all < d {
		t.Errorf("CPUWithChildren = %v, %v; want at least CPU's %v", all, err, d)
	}
	if busy, err := MachineBusy(); err != nil || busy < d {
		t.Errorf("MachineBusy = %v, %v; want at least this process's %v", busy, err, d)
	}
	if kb, err := StatusKB(pid, "VmHWM"); err != nil || kb <= 0 {
		t.Errorf("VmHWM = %d, %v; want > 0", kb, err)
	}
	if m, err := StatusKBs(pid, "VmRSS", "RssAnon", "RssFile"); err != nil || m[0] <= 0 || m[1] <= 0 || m[1]+m[2] > m[0] {
		t.Errorf("VmRSS, RssAnon, RssFile = %v, %v; want each > 0, anonymous + file within the whole", m, err)
	}
	if _, err := StatusKBs(pid, "VmRSS", "NoSuchField"); err == nil {
		t.Error("an unknown field among known ones read without error")
	}
	if _, err := StatusKB(pid, "NoSuchField"); err == nil {
		t.Error("an unknown field read without error")
	}
	if _, err := CPU(-1); err == nil {
		t.Error("an unknown process read without error")
	}
}
