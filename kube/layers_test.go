package kube

import (
	"os/exec"
	"slices"
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
// under any of the listed prefixes ("=" before one: on that package itself,
// not the ones below it).
var layerRules = map[string][]string{
	module + "/rayapi": {module + "/kube", module + "/controller", module + "/tui", module + "/cmd"},
	module + "/kube":   {module + "/controller", module + "/tui", module + "/cmd"},

	// The TUI's rooms (tui/doc.go), lowest first: the key map, the styles
	// and the table; the words (format) and the diagnosis cache (diagnose);
	// the page plumbing (host); the widgets beside the registry of kinds
	// (its mechanism: entries, columns, the list page); the pages, each
	// kind's with its registry entry; the actions; the App (tui itself) on
	// top.
	module + "/tui/keys":     tuiAbove("format", "diagnose", "host", "widgets", "registry", "pages", "actions"),
	module + "/tui/styles":   tuiAbove("format", "diagnose", "host", "widgets", "registry", "pages", "actions"),
	module + "/tui/table":    tuiAbove("format", "diagnose", "host", "widgets", "registry", "pages", "actions"),
	module + "/tui/format":   tuiAbove("diagnose", "host", "widgets", "registry", "pages", "actions"),
	module + "/tui/diagnose": tuiAbove("format", "host", "widgets", "registry", "pages", "actions"),
	module + "/tui/host":     tuiAbove("widgets", "registry", "pages", "actions"),
	module + "/tui/widgets":  tuiAbove("registry", "pages", "actions"),
	module + "/tui/registry": tuiAbove("widgets", "pages", "actions"),
	module + "/tui/pages":    tuiAbove("actions"),
	module + "/tui/actions":  tuiAbove(),
	// Among the pages, the leaves open no other page; the cluster, job,
	// service and pod pages open the Ray logs. A page opens another
	// kind's page (a job's RayCluster, a cronjob's RayJobs) through the
	// registry (host.Kinds.Open), never by importing it.
	module + "/tui/pages/raylogs":  pagesBut("raylogs"),
	module + "/tui/pages/describe": pagesBut("describe"),
	module + "/tui/pages/logs":     pagesBut("logs"),
	module + "/tui/pages/forwards": pagesBut("forwards"),
	module + "/tui/pages/cluster":  pagesBut("cluster", "raylogs"),
	module + "/tui/pages/job":      pagesBut("job", "raylogs"),
	module + "/tui/pages/service":  pagesBut("service", "raylogs"),
	module + "/tui/pages/pod":      pagesBut("pod", "raylogs"),
	module + "/tui/pages/cronjob":  pagesBut("cronjob"),
	module + "/tui/pages/gpus":     pagesBut("gpus"),
}

// tuiAbove is the rule of a TUI room: none of rooms (under tui/), nor the
// App, nor cmd.
func tuiAbove(rooms ...string) []string {
	out := []string{"=" + module + "/tui", module + "/cmd"}
	for _, r := range rooms {
		out = append(out, module+"/tui/"+r)
	}
	return out
}

// pages are the TUI's page packages (tui/pages/...).
var pages = []string{"cluster", "job", "service", "cronjob", "pod", "describe", "logs", "raylogs", "forwards", "gpus"}

// pagesBut is the rule of a page package: none of the pages but the ones
// named (itself among them), nor the actions, the App or cmd.
func pagesBut(allowed ...string) []string {
	rooms := []string{"actions"}
	for _, p := range pages {
		if !slices.Contains(allowed, p) {
			rooms = append(rooms, "pages/"+p)
		}
	}
	return tuiAbove(rooms...)
}

// under reports whether pkg is prefix or a package below it; "=prefix"
// is that package only.
func under(pkg, prefix string) bool {
	if p, ok := strings.CutPrefix(prefix, "="); ok {
		return pkg == p
	}
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
	return slices.Compact(out) // a package under two rules is named once
}

func TestLayerViolationsFindsUpwardImports(t *testing.T) {
	deps := map[string][]string{
		module + "/kube/sandbox/seed": {"fmt", module + "/rayapi/v1", module + "/controller"},
		module + "/kube/watch":        {module + "/rayapi/v1", module + "/kube"},
		module + "/rayapi/dashboard":  {module + "/kube/raydash", module + "/tuition"}, // tuition is not tui
		module + "/tui":               {module + "/controller"},                        // no rule for the top
		module + "/tui/host":          {module + "/tui/table", module + "/tui/widgets"},
		module + "/tui/pages/job":     {module + "/tui/pages/raylogs", module + "/tui/pages/cluster", module + "/tui"},
	}
	got := layerViolations(deps, layerRules)
	want := []string{
		module + "/kube/sandbox/seed imports " + module + "/controller",
		module + "/rayapi/dashboard imports " + module + "/kube/raydash",
		module + "/tui/host imports " + module + "/tui/widgets",
		module + "/tui/pages/job imports " + module + "/tui",
		module + "/tui/pages/job imports " + module + "/tui/pages/cluster",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("layerViolations =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNoImportAgainstTheLayers runs `go list -deps` over kube/...,
// rayapi/... and tui/...: neither kube nor rayapi may depend on
// controller, tui or cmd, rayapi not on kube, and each of the TUI's rooms
// only on the rooms beneath it.
func TestNoImportAgainstTheLayers(t *testing.T) {
	deps := listDeps(t, module+"/kube/...", module+"/rayapi/...", module+"/tui/...")
	if len(deps) < 5 {
		t.Fatalf("go list listed %d packages, want kube/..., rayapi/... and tui/...", len(deps))
	}
	for pkg := range deps {
		if p, ok := strings.CutPrefix(pkg, module+"/tui/pages/"); ok && layerRules[pkg] == nil {
			t.Errorf("%s: a page package without its rule: add %q to pages and a pagesBut rule for it", pkg, p)
		}
	}
	if v := layerViolations(deps, layerRules); len(v) > 0 {
		t.Errorf("imports against the layers (rayapi < kube < controller, tui, cmd; see kube/doc.go; the TUI's rooms: tui/doc.go):\n  %s\n"+
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

// sandboxWall: the sandbox (kube/sandbox/...: the control plane, the
// simulated heads, schedulers and certificates) is a wing of its own. No
// production package may link it, so raydar-operator and the reconcilers,
// the TUI and the API types ship no simulator: only cmd/raydar (its
// `raydar sandbox` and `raydar demo`) and the tests under test/ may.
const sandboxWall = module + "/kube/sandbox"

// sandboxViolations lists, sorted, every "pkg imports dep" where a
// production package depends (directly or not) on the sandbox.
func sandboxViolations(deps map[string][]string) []string {
	var out []string
	for pkg, ds := range deps {
		if under(pkg, sandboxWall) || under(pkg, module+"/test") || pkg == module+"/cmd/raydar" {
			continue
		}
		for _, d := range ds {
			if under(d, sandboxWall) {
				out = append(out, pkg+" imports "+d)
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestSandboxViolationsFindsProductionImports(t *testing.T) {
	deps := map[string][]string{
		module + "/kube/sandbox/seed":        {module + "/kube/sandbox"},
		module + "/cmd/raydar":               {module + "/kube/sandbox"},
		module + "/test/faults":              {module + "/kube/sandbox/headsim"},
		module + "/cmd/internal/operatorcmd": {module + "/kube/sandbox/headsim"},
		module + "/kube/raydash":             {module + "/kube/sandboxed"}, // not the sandbox
		module + "/controller/raycluster":    {module + "/kube/sandbox"},
		module + "/tui/pages/cluster":        {"fmt"},
	}
	got := sandboxViolations(deps)
	want := []string{
		module + "/cmd/internal/operatorcmd imports " + module + "/kube/sandbox/headsim",
		module + "/controller/raycluster imports " + module + "/kube/sandbox",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sandboxViolations =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestProductionImportsNoSandbox runs `go list -deps` over every package
// of the module but the tests' (test/...): none but cmd/raydar and the
// sandbox's own may depend on kube/sandbox.
func TestProductionImportsNoSandbox(t *testing.T) {
	deps := listDeps(t, module+"/rayapi/...", module+"/kube/...", module+"/controller/...", module+"/tui/...", module+"/cmd/...")
	if _, ok := deps[module+"/cmd/raydar-operator"]; !ok {
		t.Fatalf("go list listed %d packages without cmd/raydar-operator", len(deps))
	}
	if v := sandboxViolations(deps); len(v) > 0 {
		t.Errorf("production packages link the sandbox (only cmd/raydar and test/ may):\n  %s\n"+
			"move what both need out of kube/sandbox into the package that owns it",
			strings.Join(v, "\n  "))
	}
}
