package sandbox

import (
	_ "embed"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kwok as the pods' kubelet for pods/exec: kwok v0.8.0 serves exec on its
// kubelet server (kwokserver.go) by running the command on this machine,
// as the Exec object (kwok.x-k8s.io/v1alpha1, --enable-crds=Exec, same
// namespace and name as the pod) says: its working directory and its
// environment, added to kwok's own (pkg/kwok/server/debugging_exec.go
// ExecInContainer, pkg/utils/exec Command: os.Environ() then the Exec's
// envs). A pod without one refuses exec ("no exec found"). So that the
// simulated Ray containers answer `ray status`:
//   - Start installs the Exec CRD, and kube/sandbox/execsim writes one Exec
//     per running Ray pod (where its head answers, its name);
//   - kwok's PATH starts with <StateDir>/exec/bin, where Start writes `ray`:
//     a shell script that runs Options.RayCLI with its words (kwok looks a
//     command up on its own PATH; a shell it starts inherits it).

// kwokExecCRD is kwok v0.8.0's Exec CRD.
//
//go:embed kwok_execs_crd.yaml
var kwokExecCRD []byte

// ExecGVR is kwok's Exec resource: one per pod (same namespace and name),
// saying how an exec into it runs.
var ExecGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "execs"}

// ExecDir is where the simulated containers' execs run and find their
// `ray`: <StateDir>/exec (bin/ray, and home/, their working directory).
func (s *Sandbox) ExecDir() string { return filepath.Join(s.StateDir, "exec") }

// ExecHome is the working directory (and HOME) of exec'd commands.
func (s *Sandbox) ExecHome() string { return filepath.Join(s.ExecDir(), "home") }

// writeExecBin writes <ExecDir>/bin/ray and returns kwok's environment
// for it: PATH with that directory first.
func (s *Sandbox) writeExecBin() ([]string, error) {
	bin := filepath.Join(s.ExecDir(), "bin")
	for _, d := range []string{bin, s.ExecHome()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	script := "#!/bin/sh\n"
	if len(s.opts.RayCLI) == 0 {
		script += "echo 'ray: this sandbox simulates no Ray CLI (sandbox.Options.RayCLI is unset)' >&2\nexit 127\n"
	} else {
		script += "exec " + shellWords(s.opts.RayCLI) + " \"$@\"\n"
	}
	if err := os.WriteFile(filepath.Join(bin, "ray"), []byte(script), 0o755); err != nil {
		return nil, err
	}
	return []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, nil
}

// shellWords quotes words for a POSIX shell.
func shellWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
