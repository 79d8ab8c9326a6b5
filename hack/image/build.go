package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// BuildInfo is what the image says about the source it was built from.
type BuildInfo struct {
	Version  string    // raydar version, stamped into main.version
	Revision string    // the git commit, "" when unknown
	Created  time.Time // the commit's time (reproducible), or SOURCE_DATE_EPOCH
}

// staticBuildArgs are the `go build` arguments of the image's binary: no
// cgo (a static binary, no libc in the image), no file paths of the build
// host, no symbol table or DWARF, the version stamp, and the embedded time
// zone database (the timetzdata tag) because the image has no zoneinfo.
func staticBuildArgs(out, version string) []string {
	return []string{
		"build", "-trimpath", "-tags", "timetzdata",
		"-ldflags", "-s -w -X main.version=" + version,
		"-o", out, "./cmd/raydar-operator",
	}
}

// buildBinary builds ./cmd/raydar-operator (the reconcile loop alone: no
// terminal UI, no sandbox) of the module in dir for linux/goarch
// into out.
func buildBinary(ctx context.Context, goTool, dir, out, goarch, version string) error {
	cmd := exec.CommandContext(ctx, goTool, staticBuildArgs(out, version)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = os.Stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(cmd.Args[1:], " "), err, stderr.String())
	}
	return nil
}

// gitBuildInfo reads the version (git describe), the commit and its time
// from the git work tree at dir. Missing parts are filled in as
// "dev" / "" / SOURCE_DATE_EPOCH or the Unix epoch, and notes says so.
func gitBuildInfo(ctx context.Context, dir string) (info BuildInfo, notes []string) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		b, err := cmd.Output()
		return strings.TrimSpace(string(b)), err
	}
	var err error
	if info.Version, err = git("describe", "--tags", "--always", "--dirty"); err != nil || info.Version == "" {
		info.Version = "dev"
		notes = append(notes, "no git version (git describe failed): version dev")
	}
	if info.Revision, err = git("rev-parse", "HEAD"); err != nil {
		info.Revision = ""
		notes = append(notes, "no git revision: the revision label is left out")
	}
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
			info.Created = time.Unix(sec, 0).UTC()
			return info, notes
		}
		notes = append(notes, "SOURCE_DATE_EPOCH="+s+" is not a number of seconds: ignored")
	}
	if s, err := git("log", "-1", "--format=%ct"); err == nil {
		if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
			info.Created = time.Unix(sec, 0).UTC()
			return info, notes
		}
	}
	info.Created = time.Unix(0, 0).UTC()
	notes = append(notes, "no commit time: the image's creation time is the Unix epoch")
	return info, notes
}
