# raydar: build, generate, test. `make help` lists the targets.
SHELL := /usr/bin/env bash
GO    ?= go
BIN   := $(CURDIR)/bin
TOOLS := $(BIN)/k8s
export RAYDAR_TOOLS_DIR ?= $(TOOLS)
# Integration tests run on a loaded 2-core machine: one package at a time
# keeps each package's sandbox from starving the others.
TEST_FLAGS ?= -count=1 -p 1 -timeout 25m
# `make test`'s package run builds and runs PACKAGES_P packages at once, so
# the next package's test binary is linked (about 10 s each on this
# machine) while one runs; control planes still run one at a time: each
# test process that starts one takes the flock TEST_EXCLUSIVE names first
# (kube/sandbox.Exclusive; sandbox.Start refuses without it).
PACKAGES_P     ?= 2
TEST_EXCLUSIVE := $(BIN)/test-exclusive.lock

# Every go test line runs through gotestsum (bin/k8s/gotestsum, `make
# gotestsum`): go test's own output (GOTEST: as without -v; GOTEST_V: as
# with -v, for the suites whose summary lines are logged by a passing test),
# then the skipped tests with their reasons and gotestsum's count line, and
# its exit code: non-zero when a test fails. Each run also keeps its events
# in TEST_EVENTS, which `make test` sums up at the end (hack/test-summary.sh).
GOTESTSUM   := $(TOOLS)/gotestsum
TEST_EVENTS := $(BIN)/test-events
GOTEST      = $(GOTESTSUM) --format standard-quiet --jsonfile $(TEST_EVENTS)/$(1).json $(2) --
GOTEST_V    = $(GOTESTSUM) --format standard-verbose --jsonfile $(TEST_EVENTS)/$(1).json $(2) --

.PHONY: help build raydar tools gotestsum staticcheck generate verify-generated test test-faults unit bench bench-scale lint demo clean image image-push fuzz bench-e2e conformance-source

help: ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

build: raydar ## build bin/raydar and bin/raydar-operator (the reconcile loop alone, what the image ships)
	$(GO) build -o $(BIN)/raydar-operator ./cmd/raydar-operator

raydar: ## build bin/raydar alone (what make demo runs)
	$(GO) build -o $(BIN)/raydar ./cmd/raydar

tools: ## build kube-apiserver, etcd, controller-manager, scheduler, kwok, controller-gen, helm, staticcheck and KubeRay's operator (the conformance oracle) into bin/k8s, and write cert-manager's CRDs (the sandbox's) to bin/k8s/crds
	@bash hack/build-tools.sh

sandbox-tools: ## build only what raydar sandbox and raydar demo run (control plane, kwok, cert-manager's and the Gateway API's CRDs) into bin/k8s
	@bash hack/build-tools.sh sandbox

staticcheck: ## install staticcheck alone into bin/k8s (what make lint needs; make tools installs it too)
	@bash hack/build-tools.sh staticcheck

gotestsum: ## install gotestsum alone into bin/k8s (what make unit needs; make tools installs it too)
	@bash hack/build-tools.sh gotestsum

# crd:allowDangerousTypes: KubeRay's RayJob has float32 entrypointNumCpus/entrypointNumGpus.
# crd:generateEmbeddedObjectMeta: keep labels/annotations/name of embedded pod templates and Services
# (without it the API server prunes template.metadata.labels).
# rbac is generated only once controller/ has Go files.
generate: tools ## regenerate deepcopy and CRD manifests from rayapi/v1
	$(TOOLS)/controller-gen object paths=./rayapi/v1/...
	$(TOOLS)/controller-gen crd:maxDescLen=0,allowDangerousTypes=true,generateEmbeddedObjectMeta=true paths=./rayapi/v1/... output:crd:artifacts:config=rayapi/crds/bases
	@if [ -n "$$(find controller -name '*.go' 2>/dev/null | head -1)" ]; then \
	  echo '$(TOOLS)/controller-gen rbac:roleName=raydar-operator paths=./controller/... output:rbac:artifacts:config=config/rbac'; \
	  $(TOOLS)/controller-gen rbac:roleName=raydar-operator paths=./controller/... output:rbac:artifacts:config=config/rbac; \
	else echo 'no Go files under controller/: skipping rbac generation'; fi

verify-generated: generate ## fail when generated files differ from what is committed
	@if [ -n "$$(git status --porcelain -- rayapi config/rbac)" ]; then \
	  echo "generated files are stale; run 'make generate' and commit:"; git status --porcelain -- rayapi config/rbac; git diff --stat -- rayapi config/rbac; exit 1; fi

unit: gotestsum ## unit tests only (no control plane); ends with the skipped tests (the integration tests, with -short) and the count
	@rm -rf $(TEST_EVENTS) && mkdir -p $(TEST_EVENTS)
	$(call GOTEST,unit) -short $(TEST_FLAGS) ./...

# The mutation and conformance suites run verbose so that their summary
# lines (mutated manifests and their outcomes; manifests, objects,
# differences intended and unexplained) show when they pass too. Each run
# prints its own count line; the skipped tests of all three, with their
# reasons, and the count over all of them close the output, after the fuzz
# targets: "skipped: 0 tests" where the machine ran them all.
test: tools ## unit and integration tests (integration tests start a real control plane), the mutated-manifest and KubeRay conformance suites, every fuzz target for FUZZTIME, then the skipped tests and the count
	@rm -rf $(TEST_EVENTS) && mkdir -p $(TEST_EVENTS)
	RAYDAR_TEST_EXCLUSIVE=$(TEST_EXCLUSIVE) $(call GOTEST,packages,--hide-summary=skipped) $(TEST_FLAGS) -p $(PACKAGES_P) $$($(GO) list ./... | grep -v -e /test/conformance -e /test/mutation -e /test/faults)
	$(call GOTEST_V,mutation,--hide-summary=skipped) $(TEST_FLAGS) ./test/mutation
	$(call GOTEST_V,conformance,--hide-summary=skipped) $(TEST_FLAGS) ./test/conformance
	@$(MAKE) --no-print-directory fuzz
	@bash hack/test-summary.sh $(GOTESTSUM) $(TEST_EVENTS)

# Fuzz targets, one `go test -fuzz` run each (-fuzz takes one target per
# package), FUZZTIME apiece. New interesting inputs are minimised for at most
# FUZZMINIMIZE (Go's default, 60s each, stalls the loaded machine). A crasher is
# written to <package>/testdata/fuzz/<target>/: fix it and commit the file,
# and plain `go test` replays it from then on.
# FUZZTIME counts executions (Nx), not seconds: with a duration, go1.26's
# fuzz coordinator can fail a target with a bare "context deadline
# exceeded" and no crasher when the time runs out (golang/go#75804, fixed
# in go1.27), as FuzzConfirmDialog did here under load. A count has no
# deadline; a loaded machine only takes longer (the slowest target, ~500
# executions a second on this project's 2 cores, takes ~20 s).
FUZZTIME     ?= 10000x
FUZZMINIMIZE ?= 50x
FUZZ_TARGETS := \
	./rayapi/v1:FuzzDecodeValidate \
	./tui/table:FuzzParseFilter \
	./tui/keys:FuzzParse \
	./tui/widgets:FuzzScaleDialog \
	./tui/widgets:FuzzConfirmDialog \
	./tui/widgets:FuzzProtectedConfirmDialog \
	./tui:FuzzPrompt

fuzz: ## run every fuzz target for FUZZTIME executions (default 10000x) one after another, printing each one's executions
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "== $$name ($$pkg, $(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg 2>&1 | \
	    awk '/^fuzz: elapsed:/ && !/baseline/ {last=$$0; next} /baseline/ {next} {print} END {if (last != "") print last}'; \
	  test $${PIPESTATUS[0]} -eq 0 || exit 1; \
	done

# A comparison by hand with a KubeRay built from its source (v1.7.0, which
# the module proxy does not serve: read it with the fetch tool and extract
# its ray-operator directory): the conformance suite with that operator as
# the oracle, its samples, and the gates turned on in both operators, on the
# samples MANIFESTS matches. Not part of make test: the source is not on a
# fresh machine. docs/kuberay-compatibility.md records the runs.
KUBERAY_SRC ?=
GATES ?= RayClusterNetworkPolicy=true,RayClusterMTLS=true,RayClusterHistoryServer=true,GCSFaultToleranceEmbeddedStorage=true
MANIFESTS ?= network-policy|mtls|historyserver|embedded-gcs
conformance-source: tools gotestsum ## conformance against a KubeRay built from KUBERAY_SRC (its ray-operator dir) with GATES on both sides, on the samples MANIFESTS matches
	@test -n "$(KUBERAY_SRC)" && test -f "$(KUBERAY_SRC)/main.go" || { echo "KUBERAY_SRC must be KubeRay's ray-operator directory (its main.go), e.g. extracted from the fetch tool's snapshot"; exit 1; }
	cd $(KUBERAY_SRC) && $(GO) build -o $(abspath $(TOOLS))/kuberay-operator-source ./main.go
	CONFORMANCE_KUBERAY_OPERATOR=$(abspath $(TOOLS))/kuberay-operator-source CONFORMANCE_KUBERAY_SAMPLES=$(abspath $(KUBERAY_SRC))/config/samples \
	  CONFORMANCE_FEATURE_GATES='$(GATES)' CONFORMANCE_MANIFESTS='$(MANIFESTS)' \
	  $(GO) test -count=1 -p 1 -v -run 'TestConformance$$' -timeout 40m ./test/conformance

test-faults: tools ## the fault suite (test/faults): kills, restarts, cuts and Ray-side faults on one sandbox; prints its figures, the summary line and the skipped tests
	@mkdir -p $(TEST_EVENTS)
	$(call GOTEST_V,faults) $(TEST_FLAGS) ./test/faults

# One package at a time (-p 1): a benchmark that starts a control plane (the sandbox's, the
# admission one) would otherwise run beside another package's and measure the contention.
bench: tools ## benchmarks; results are recorded in docs/benchmarks.md
	$(GO) test -p 1 -run '^$$' -bench . -benchmem -count=1 -timeout 30m ./...

# KubeRay's scalability scenarios (test/scale): the perf-tests' N RayClusters and
# N RayJobs, kuberay#3907's scale-up and kuberay#3909's fairness, each for the raw
# ceiling, raydar and KubeRay v1.6.2 on fresh planes. `make bench` runs the
# smallest sizes; this the issue's (hours on 2 cores: SCALE_SIZES=100,1000 for less).
SCALE_SIZES ?= 100,1000,5000,10000
SCALE_JOBS ?= 100,1000

bench-scale: tools ## KubeRay's scalability scenarios: raw / raydar / KubeRay v1.6.2 (SCALE_SIZES, SCALE_JOBS; figures in docs/benchmarks.md)
	RAYDAR_SCALE_SIZES=$(SCALE_SIZES) RAYDAR_SCALE_JOBS=$(SCALE_JOBS) $(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -count=1 -timeout 600m -v ./test/scale

# The TUI measured end to end (test/e2e/bench): a sandbox with 10,000 Ray
# pods / 1,000 RayClusters (BENCH_E2E_FLAGS=-big: 100,000 / 10,000), the real
# binary in tmux at 120x40. Figures go to stdout and -out FILE; record them
# in docs/benchmarks.md. -duration 20s shortens the 60 s runs.
BENCH_E2E_FLAGS ?=

bench-e2e: tools ## the TUI end to end against a sandbox: first render, idle CPU, RSS, key latency, bytes, LISTs (BENCH_E2E_FLAGS="-big -duration 20s -out FILE")
	$(GO) run ./test/e2e/bench $(BENCH_E2E_FLAGS)

# lint's doc-comment checks: staticcheck's ST1020-ST1022 (a doc comment on
# an exported name starts with that name) and test/docs's
# TestExportedNamesHaveDocComments (every exported name has one), which
# staticcheck has no check for.
lint: staticcheck ## gofmt, go vet, doc comments on exported names (staticcheck ST1020-ST1022, test/docs), and no built binary or file over 1 MiB tracked (hack/check-tracked-files.sh)
	@bash hack/check-tracked-files.sh
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(TOOLS)/staticcheck -checks ST1020,ST1021,ST1022 ./...
	$(GO) test -count=1 -run '^TestExportedNamesHaveDocComments$$' ./test/docs

# The demo builds bin/raydar alone: raydar-operator (the image's binary) is
# not what it runs.
demo: sandbox-tools raydar ## start the sandbox, the reconcile loop and the TUI with seeded workloads
	$(BIN)/raydar demo

# The operator's container image, assembled without a Docker engine
# (hack/image): a static linux binary on a distroless-style root (nonroot
# 65532, CA certificates, no shell). IMAGE is the tag in the tarball and,
# for image-push, where it goes; GOARCH picks the platform.
IMAGE  ?= raydar:dev
GOARCH ?= $(shell $(GO) env GOARCH)

image: ## build bin/raydar-image.tar (docker load -i / kind load image-archive), tagged $(IMAGE)
	$(GO) run ./hack/image --image $(IMAGE) --arch $(GOARCH) --out $(BIN)/raydar-image.tar

image-push: ## build the image and push it to IMAGE=REGISTRY/raydar:TAG (credentials of ~/.docker/config.json)
	@if [ "$(IMAGE)" = raydar:dev ]; then echo "set IMAGE=REGISTRY/raydar:TAG"; exit 2; fi
	$(GO) run ./hack/image --image $(IMAGE) --arch $(GOARCH) --out $(BIN)/raydar-image.tar --push

clean: ## remove built binaries (not the tools)
	rm -f $(BIN)/raydar $(BIN)/raydar-operator $(BIN)/raydar-image.tar $(BIN)/raydar-linux-*
	rm -rf $(TEST_EVENTS)
