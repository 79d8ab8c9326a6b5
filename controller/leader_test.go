package controller

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
)

// A stop that releases the Lease logs what it is, at info level; any other
// error, including a real loss of the Lease while running, stays an error.
func TestQuietReleaseOnStop(t *testing.T) {
	var lines []string
	l := quietRelease(funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{}))
	l.WithName("manager").Error(errors.New(leaderElectionErr), stopSequenceMsg)
	l.Error(errors.New("leader election lost"), "problem running manager")
	l.Error(errors.New("boom"), stopSequenceMsg)
	if len(lines) != 3 {
		t.Fatalf("lines %q", lines)
	}
	if !strings.Contains(lines[0], `"msg"="released the leader election Lease"`) || strings.Contains(lines[0], `"error"`) ||
		!strings.Contains(lines[0], "manager") {
		t.Errorf("release logged as %q", lines[0])
	}
	for _, l := range lines[1:] {
		if !strings.Contains(l, `"error"=`) {
			t.Errorf("an error lost its level: %q", l)
		}
	}
}
