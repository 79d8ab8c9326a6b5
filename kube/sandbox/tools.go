package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ToolsDirEnv names the environment variable that points at the directory of
// control-plane binaries. The Makefile sets it; without it the binaries are
// looked up in the repository's bin/k8s.
const ToolsDirEnv = "RAYDAR_TOOLS_DIR"

// Binary names inside the tools directory.
const (
	binEtcd       = "etcd"
	binAPIServer  = "kube-apiserver"
	binScheduler  = "kube-scheduler"
	binController = "kube-controller-manager"
	binKwok       = "kwok"
)

// toolsSubdir is where `make tools` puts the binaries, relative to the
// repository root.
var toolsSubdir = filepath.Join("bin", "k8s")

// errToolsHint is appended to every "binary missing" error.
const errToolsHint = "run `make tools` to build the control plane into bin/k8s, or set " + ToolsDirEnv

// FindToolsDir returns the directory holding the control-plane binaries:
// $RAYDAR_TOOLS_DIR when set, otherwise the first bin/k8s found walking up from
// the working directory and then from the directory of the running executable.
func FindToolsDir() (string, error) {
	if d := os.Getenv(ToolsDirEnv); d != "" {
		return filepath.Abs(d)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		starts = append(starts, filepath.Dir(exe))
	}
	for _, s := range starts {
		if d, ok := findUp(s, toolsSubdir); ok {
			return d, nil
		}
	}
	return "", fmt.Errorf("sandbox: no %s directory found above %q; %s", toolsSubdir, starts, errToolsHint)
}

// findUp looks for dir/rel in dir and each of its parents.
func findUp(dir, rel string) (string, bool) {
	dir = filepath.Clean(dir)
	for {
		cand := filepath.Join(dir, rel)
		if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
			return cand, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Kubernetes136 is the other Kubernetes version the sandbox runs
// (Options.Kubernetes): its kube-apiserver, kube-scheduler and
// kube-controller-manager are in the tools directory's kubernetes-1.36
// (`make tools` builds them); etcd and kwok are shared. 1.36 alone serves
// scheduling.k8s.io/v1alpha2, KubeRay's KubernetesWAS API (removed in
// 1.37), and the sandbox turns it on (GenericWorkload, GangScheduling).
const Kubernetes136 = "1.36"

// binPath is the binary name's path inside the tools directory for the
// options' Kubernetes version.
func (o *Options) binPath(name string) string {
	if o.Kubernetes == Kubernetes136 && (name == binAPIServer || name == binScheduler || name == binController) {
		return filepath.Join("kubernetes-"+Kubernetes136, name)
	}
	return name
}

// requiredBinaries lists the binaries the options need, as paths inside
// the tools directory.
func requiredBinaries(o *Options) []string {
	bins := []string{binEtcd, o.binPath(binAPIServer)}
	if o.Scheduler {
		bins = append(bins, o.binPath(binScheduler))
	}
	if o.ControllerManager {
		bins = append(bins, o.binPath(binController))
	}
	if o.Kwok {
		bins = append(bins, binKwok)
	}
	return bins
}

// checkBinaries verifies that every needed binary exists and is executable;
// the error names each missing file and says how to build them.
func checkBinaries(dir string, names []string) error {
	var problems []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			problems = append(problems, "missing "+p)
		case fi.IsDir() || fi.Mode()&0o111 == 0:
			problems = append(problems, p+" is not an executable file")
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("sandbox: %s; %s", strings.Join(problems, ", "), errToolsHint)
}
