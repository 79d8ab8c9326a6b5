package kube

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// The layers, lowest first: rayapi (API types, the one scheme, the
// dashboard client), kube (the connection, the mutation choke point, the
// watch, the local cluster), then controller, tui and cmd on top. A package
// may import only packages of its own or a lower layer. Tests may drive
// higher layers (kube/actions' and kube/sandbox/seed's integration tests run
// the reconcilers), so only the packages themselves are checked.
const module = "github.com/raydar/raydar"

// layerRules: a package under the key prefix must not depend on a package
// under any of the listed prefixes.
var layerRules = map[string][]string{
	module + "/rayapi": {module + "/kube", module + "/controller", module + "/tui", module + "/cmd"},
	module + "/kube":   {module + "/controller", module + "/tui", module + "/cmd"},
}

// under reports whether pkg is prefix or a package below it.
func under(pkg, prefix string) bool {
	return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
}

// layerViolations lists, sorted, every "pkg imports dep" where a package
// depends (directly or not) on a package its layer must not import.
func layerViolations(deps map[string][]string, rules map[string][]string) []string {
	var out []string
	for pkg, ds := range deps {
		for layer, forbidden := range rules {
			if !under(pkg, layer) {
				continue
			}
			for _, d := range ds {
				for _, f := range forbidden {
					if under(d, f) {
						out = append(out, pkg+" imports "+d)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestLayerViolationsFindsUpwardImports(t *testing.T) {
	deps := map[string][]string{
		module + "/kube/sandbox/seed": {"fmt", module + "/rayapi/v1", module + "/controller"},
		module + "/kube/watch":        {module + "/rayapi/v1", module + "/kube"},
		module + "/rayapi/dashboard":  {module + "/kube/raydash", module + "/tuition"}, // tuition is not tui
		module + "/tui":               {module + "/controller"},                        // no rule for the top
	}
	got := layerViolations(deps, layerRules)
	want := []string{
		module + "/kube/sandbox/seed imports " + module + "/controller",
		module + "/rayapi/dashboard imports " + module + "/kube/raydash",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("layerViolations =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNoImportAgainstTheLayers runs `go list -deps` over kube/... and
// rayapi/...: neither may depend on controller, tui or cmd, and rayapi not
// on kube.
func TestNoImportAgainstTheLayers(t *testing.T) {
	deps := listDeps(t, module+"/kube/...", module+"/rayapi/...")
	if len(deps) < 5 {
		t.Fatalf("go list listed %d packages, want kube/... and rayapi/...", len(deps))
	}
	if v := layerViolations(deps, layerRules); len(v) > 0 {
		t.Errorf("imports against the layers (rayapi < kube < controller, tui, cmd; see kube/doc.go):\n  %s\n"+
			"move what is needed into a lower layer (a shared type or the scheme into rayapi) instead",
			strings.Join(v, "\n  "))
	}
}

// tuiRules: the TUI, beside the controller on the top layer, links neither
// the reconcilers nor the CLI. What it shows of a kind is rayapi's (the
// descriptors of rayapi/kinds, a RayCronJob's schedule in words from
// rayapi/schedule), so the controller's code stays out of it.
var tuiRules = map[string][]string{
	module + "/tui": {module + "/controller", module + "/cmd"},
}

// TestTUIImportsNoControllerOrCLI runs `go list -deps` over tui/....
func TestTUIImportsNoControllerOrCLI(t *testing.T) {
	deps := listDeps(t, module+"/tui/...")
	if len(deps) < 2 {
		t.Fatalf("go list listed %d packages, want tui/...", len(deps))
	}
	if v := layerViolations(deps, tuiRules); len(v) > 0 {
		t.Errorf("the TUI imports the controller or the CLI:\n  %s\nread it from rayapi (rayapi/kinds, rayapi/schedule, rayapi/status) instead",
			strings.Join(v, "\n  "))
	}
}

// listDeps is `go list -deps` of the patterns: each package with every
// package it depends on, directly or not.
func listDeps(t *testing.T, patterns ...string) map[string][]string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	cmd := exec.Command(goTool, append([]string{"list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`}, patterns...)...)
	outb, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + string(ee.Stderr)
		}
		t.Fatalf("go list: %s", msg)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(outb)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			deps[f[0]] = f[1:]
		}
	}
	return deps
}
