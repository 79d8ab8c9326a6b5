package job

import "testing"

// TestSplitLogs: a job's logs are cut into lines without escape codes or
// carriage returns, tabs expanded.
func TestSplitLogs(t *testing.T) {
	if lines := splitLogs("\x1b[1mA\x1b[0m\tB\r\n"); len(lines) != 1 || lines[0] != "A    B" {
		t.Fatalf("splitLogs: %q", lines)
	}
}
