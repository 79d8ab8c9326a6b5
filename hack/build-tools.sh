#!/usr/bin/env bash
# Builds the sandbox control plane (kube-apiserver, etcd, kube-controller-manager,
# kube-scheduler, kwok), controller-gen, gotestsum (the Makefile's test runner),
# helm (test/deploy's charts), staticcheck (make lint's doc-comment
# checks) and KubeRay's operator (the oracle of the conformance suite,
# test/conformance)
# from the Go module proxy into bin/k8s, Kubernetes 1.36's kube-apiserver,
# kube-scheduler and kube-controller-manager into bin/k8s/kubernetes-1.36
# (the KubernetesWAS tests' plane), and cert-manager's CRDs into
# bin/k8s/crds (the sandbox's cert-manager stand-in installs them).
# `hack/build-tools.sh gotestsum` installs gotestsum alone,
# `hack/build-tools.sh cert-manager-crds` gotestsum and the CRDs,
# `hack/build-tools.sh volcano-crds` gotestsum and cert-manager's, Volcano's and scheduler-plugins' CRDs.
# `hack/build-tools.sh gateway-crds` gotestsum, cert-manager's CRDs and the Gateway API's standard CRDs.
# `hack/build-tools.sh helm` gotestsum and helm (test/deploy renders the Helm charts with it).
# `hack/build-tools.sh staticcheck` staticcheck alone (make lint's doc-comment checks).
# `hack/build-tools.sh sandbox` only what `raydar sandbox` and `raydar demo`
# run (the control plane, kwok, cert-manager's and the Gateway API's CRDs): no gotestsum,
# controller-gen nor KubeRay's operator, which only tests and generation use.
# Idempotent: a binary already built from the pinned version is skipped.
# Built binaries are also kept in a per-user cache ($RAYDAR_TOOLS_CACHE,
# default ~/.cache/raydar/tools), by name and stamp, so that another clone
# or worktree of this repository on the machine (CI clones main afresh)
# copies them in a second instead of linking them again (~3 minutes with a
# warm Go build cache, kube-apiserver alone ~80 s). RAYDAR_TOOLS_CACHE=off
# turns it off.
set -euo pipefail
mode="${1:-all}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/bin/k8s"
mkdir -p "$out"
cd "$root/hack/tools"

cache="${RAYDAR_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/raydar/tools}"
# from_cache NAME STAMP [KEY]: copies the cached NAME built at STAMP
# (cached as KEY, default NAME) into $out and writes its stamp; false when
# the cache has none.
from_cache() {
  local key=${3:-$1}
  [[ "$cache" != off && -x "$cache/$key@$2" ]] || return 1
  cp "$cache/$key@$2" "$out/$1.tmp" && mv "$out/$1.tmp" "$out/$1"
  echo "$2" > "$out/.$1.stamp"
}
# to_cache NAME STAMP [KEY]: keeps $out/NAME as the cached KEY (default
# NAME) at STAMP, and drops KEY's entries of other stamps. A cache that
# cannot be written is only a slower next clone.
to_cache() {
  local key=${3:-$1}
  [[ "$cache" != off ]] || return 0
  mkdir -p "$cache" 2>/dev/null || return 0
  rm -f "$cache/$key@"* 2>/dev/null || true
  cp "$out/$1" "$cache/$key@$2.tmp" 2>/dev/null && mv "$cache/$key@$2.tmp" "$cache/$key@$2" || true
}

# go_install TOOL PKG VERSION LDFLAGS [BUILT]: `go install PKG@VERSION`
# (its own module, with its own dependency versions, outside hack/tools)
# into $out/TOOL, once per VERSION (its stamp), through the tools cache.
# BUILT names the binary go install writes when it is not TOOL.
go_install() {
  local tool=$1 pkg=$2 ver=$3 ld=$4 built=${5:-$1} start tmp
  if [[ -x "$out/$tool" && -f "$out/.$tool.stamp" && "$(cat "$out/.$tool.stamp")" == "$ver" ]]; then
    echo ">> [$tool] $tool $ver: up to date"
    [[ -x "$cache/$tool@$ver" ]] || to_cache "$tool" "$ver"
    return
  fi
  if from_cache "$tool" "$ver"; then
    echo ">> [$tool] $tool $ver: copied from $cache"
    return
  fi
  echo ">> [$tool] building $tool $ver"
  start=$(date +%s)
  tmp="$(mktemp -d)"
  GOBIN="$tmp" go install -trimpath -ldflags "$ld" "$pkg@$ver"
  mv "$tmp/$built" "$out/$tool"
  rm -rf "$tmp"
  echo "$ver" > "$out/.$tool.stamp"
  to_cache "$tool" "$ver"
  echo "   $tool built in $(( $(date +%s) - start ))s"
}

k8sver=v1.37.2
ldk8s="-s -w -X k8s.io/component-base/version.gitVersion=$k8sver -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"

# name|package|ldflags
tools=(
  "etcd|go.etcd.io/etcd/server/v3|-s -w"
  "kube-apiserver|k8s.io/kubernetes/cmd/kube-apiserver|$ldk8s"
  "kube-controller-manager|k8s.io/kubernetes/cmd/kube-controller-manager|$ldk8s"
  "kube-scheduler|k8s.io/kubernetes/cmd/kube-scheduler|$ldk8s"
  "kwok|sigs.k8s.io/kwok/cmd/kwok|-s -w"
  "controller-gen|sigs.k8s.io/controller-tools/cmd/controller-gen|-s -w"
)

# staticcheck runs in `make lint`, its doc-comment checks only (ST1020,
# ST1021, ST1022: a doc comment on an exported name starts with that name),
# which go vet lacks. Its own module, installed with `go install
# module@version` as gotestsum is, not a go.mod dependency of raydar's;
# `hack/build-tools.sh staticcheck` installs it alone (what make lint needs).
# v0.8.2 (staticcheck 2026.2.2) builds with Go 1.26.
install_staticcheck() {
  go_install staticcheck honnef.co/go/tools/cmd/staticcheck v0.8.2 "-s -w"
}
if [[ "$mode" == staticcheck ]]; then
  install_staticcheck
  exit 0
fi

# gotestsum runs the Makefile's go test lines: it ends each run with the
# skipped tests, their reasons and a count. Its own module, installed with
# `go install module@version`; `hack/build-tools.sh gotestsum` installs it
# alone (make unit needs nothing else).
if [[ "$mode" != sandbox ]]; then # the sandbox runs no tests
  go_install gotestsum gotest.tools/gotestsum v1.13.0 "-s -w"
fi
if [[ "$mode" == gotestsum ]]; then
  exit 0
fi

# helm renders (`helm template`) and lints the charts of
# test/deploy: KubeRay's own (test/deploy/testdata/kuberay-operator-v1.7.0),
# which installs raydar's operator unchanged, and raydar's
# (config/helm/raydar-operator). Its own module, installed with
# `go install module@version` as gotestsum is; the version ldflag makes
# `helm version` say v4.3.2 rather than v4.3.
helmver=v4.3.2
install_helm() {
  go_install helm helm.sh/helm/v4/cmd/helm "$helmver" "-s -w -X helm.sh/helm/v4/internal/version.version=$helmver"
}
if [[ "$mode" == helm ]]; then
  install_helm
  exit 0
fi

# cert-manager's Issuer, ClusterIssuer and Certificate CRDs, which the
# sandbox installs for its cert-manager stand-in (kube/sandbox/certsim):
# copied from deploy/crds of cert-manager's Go module, at the version
# certsim.Version names, into crds/cert-manager.yaml, so that `raydar
# sandbox` and `raydar demo` read them without the go tool.
# `hack/build-tools.sh cert-manager-crds` writes them alone.
certsim_go="$root/kube/sandbox/certsim/certsim.go"
cmver="$(sed -n 's/^[[:space:]]*Version[[:space:]]*=[[:space:]]*"\(v[0-9][^"]*\)"$/\1/p' "$certsim_go")"
cmmod="$(sed -n 's/^[[:space:]]*Module[[:space:]]*=[[:space:]]*"\([^"]*\)"$/\1/p' "$certsim_go")"
if [[ -z "$cmver" || -z "$cmmod" ]]; then
  echo "hack/build-tools.sh: no Module/Version constants found in $certsim_go" >&2
  exit 1
fi
crdout="$out/crds/cert-manager.yaml"
if [[ -f "$crdout" && "$(head -1 "$crdout")" == "# cert-manager $cmver "* ]]; then
  echo ">> [cert-manager] CRDs $cmver: up to date"
else
  echo ">> [cert-manager] writing cert-manager $cmver's Issuer, ClusterIssuer and Certificate CRDs"
  # Outside any module, so that no go.mod records the download.
  cmtmp="$(mktemp -d)"
  cmdir="$(cd "$cmtmp" && GOFLAGS=-mod=mod GO111MODULE=on go mod download -json "$cmmod@$cmver" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
  rm -rf "$cmtmp"
  if [[ -z "$cmdir" || ! -d "$cmdir/deploy/crds" ]]; then
    echo "hack/build-tools.sh: go mod download $cmmod@$cmver gave no deploy/crds" >&2
    exit 1
  fi
  mkdir -p "$out/crds"
  {
    echo "# cert-manager $cmver (from $cmmod@$cmver deploy/crds, by hack/build-tools.sh): Issuer, ClusterIssuer, Certificate"
    for f in cert-manager.io_issuers.yaml cert-manager.io_clusterissuers.yaml cert-manager.io_certificates.yaml; do
      echo "---"
      cat "$cmdir/deploy/crds/$f"
    done
  } > "$crdout.tmp"
  mv "$crdout.tmp" "$crdout"
  echo "   $crdout"
fi
if [[ "$mode" == cert-manager-crds ]]; then
  exit 0
fi

# Volcano's PodGroup and Queue CRDs (scheduling.volcano.sh/v1beta1), which
# `raydar sandbox --batch-scheduler volcano` and the batch-scheduler tests
# install: generated by controller-gen from the volcano.sh/apis module at the
# version raydar's go.mod requires (KubeRay v1.6.2's own dependency), into
# crds/volcano.yaml. `hack/build-tools.sh volcano-crds` writes them alone
# (controller-gen must be built).
volcano_crds() {
  local ver crd
  ver="$(cd "$root" && go list -m -f '{{.Version}}' volcano.sh/apis)"
  crd="$out/crds/volcano.yaml"
  if [[ -f "$crd" && "$(head -1 "$crd")" == "# volcano.sh/apis $ver "* ]]; then
    echo ">> [volcano] CRDs $ver: up to date"
    return
  fi
  echo ">> [volcano] generating Volcano $ver's PodGroup and Queue CRDs"
  mkdir -p "$out/crds"
  {
    echo "# volcano.sh/apis $ver (scheduling/v1beta1, by controller-gen in hack/build-tools.sh): PodGroup, Queue"
    (cd "$root" && "$out/controller-gen" crd:maxDescLen=0 paths=volcano.sh/apis/pkg/apis/scheduling/v1beta1 output:crd:stdout)
  } > "$crd.tmp"
  mv "$crd.tmp" "$crd"
  echo "   $crd"
}
# scheduler-plugins' PodGroup CRD (scheduling.x-k8s.io/v1alpha1), which
# `raydar sandbox --batch-scheduler scheduler-plugins` and the
# batch-scheduler conformance test install: generated by controller-gen
# from the sigs.k8s.io/scheduler-plugins module at the version raydar's
# go.mod requires (KubeRay v1.6.2's own), PodGroup alone (the package also
# holds ElasticQuota, which neither KubeRay nor raydar makes), into
# crds/scheduler-plugins.yaml. YuniKorn and KAI need no CRD of KubeRay's
# making (labels and annotations only).
scheduler_plugins_crds() {
  local ver crd
  ver="$(cd "$root" && go list -m -f '{{.Version}}' sigs.k8s.io/scheduler-plugins)"
  crd="$out/crds/scheduler-plugins.yaml"
  if [[ -f "$crd" && "$(head -1 "$crd")" == "# sigs.k8s.io/scheduler-plugins $ver "* ]]; then
    echo ">> [scheduler-plugins] CRD $ver: up to date"
    return
  fi
  echo ">> [scheduler-plugins] generating scheduler-plugins $ver's PodGroup CRD"
  mkdir -p "$out/crds"
  local tmp
  tmp="$(mktemp -d)"
  (cd "$root" && "$out/controller-gen" crd:maxDescLen=0 paths=sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1 output:crd:dir="$tmp")
  {
    echo "# sigs.k8s.io/scheduler-plugins $ver (scheduling/v1alpha1, by controller-gen in hack/build-tools.sh): PodGroup"
    cat "$tmp/scheduling.x-k8s.io_podgroups.yaml"
  } > "$crd.tmp"
  rm -rf "$tmp"
  mv "$crd.tmp" "$crd"
  echo "   $crd"
}
if [[ "$mode" == volcano-crds ]]; then
  volcano_crds
  scheduler_plugins_crds
  exit 0
fi

# The Gateway API's standard CRDs (gateway.networking.k8s.io: GatewayClass,
# Gateway, HTTPRoute, GRPCRoute, ReferenceGrant, BackendTLSPolicy), which the
# RayService incremental-upgrade tests and the sandbox's simulated Gateway
# controller (kube/sandbox/gatewaysim) install: copied from
# config/crd/standard of the sigs.k8s.io/gateway-api module at the version
# raydar's go.mod requires (KubeRay v1.6.2's own dependency), into
# crds/gateway-api.yaml; `hack/build-tools.sh gateway-crds` writes them (after gotestsum and cert-manager's CRDs).
gateway_crds() {
  local ver crd dir f
  ver="$(cd "$root" && go list -m -f '{{.Version}}' sigs.k8s.io/gateway-api)"
  crd="$out/crds/gateway-api.yaml"
  if [[ -f "$crd" && "$(head -1 "$crd")" == "# sigs.k8s.io/gateway-api $ver "* ]]; then
    echo ">> [gateway-api] CRDs $ver: up to date"
    return
  fi
  echo ">> [gateway-api] copying the Gateway API $ver's standard CRDs"
  dir="$(cd "$root" && go mod download -json sigs.k8s.io/gateway-api@"$ver" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  mkdir -p "$out/crds"
  {
    echo "# sigs.k8s.io/gateway-api $ver (config/crd/standard, by hack/build-tools.sh): GatewayClass, Gateway, HTTPRoute, GRPCRoute, ReferenceGrant, BackendTLSPolicy"
    for f in "$dir"/config/crd/standard/*.yaml; do
      echo "---"
      cat "$f"
    done
  } > "$crd.tmp"
  mv "$crd.tmp" "$crd"
  echo "   $crd"
}
if [[ "$mode" == gateway-crds ]]; then
  gateway_crds
  exit 0
fi

# The stamp records the tools module's go.sum so that a version bump rebuilds.
stamp_of() { sha256sum go.mod go.sum | sha256sum | cut -c1-16; }
want="$(stamp_of)"

echo ">> downloading tool modules (first time: ~700 MB, about a minute)"
go mod download

if [[ "$mode" == sandbox ]]; then
  kept=()
  for t in "${tools[@]}"; do
    [[ "${t%%|*}" == controller-gen ]] || kept+=("$t") # generation only
  done
  tools=("${kept[@]}")
fi
n=${#tools[@]}; i=0
for t in "${tools[@]}"; do
  i=$((i+1))
  IFS='|' read -r name pkg flags <<<"$t"
  if [[ -x "$out/$name" && -f "$out/.$name.stamp" && "$(cat "$out/.$name.stamp")" == "$want" ]]; then
    echo ">> [$i/$n] $name: up to date"
    [[ -x "$cache/$name@$want" ]] || to_cache "$name" "$want"
    continue
  fi
  if from_cache "$name" "$want"; then
    echo ">> [$i/$n] $name: copied from $cache"
    continue
  fi
  echo ">> [$i/$n] building $name (first build of the control plane takes several minutes)"
  start=$(date +%s)
  go build -trimpath -ldflags "$flags" -o "$out/$name.tmp" "$pkg"
  mv "$out/$name.tmp" "$out/$name"
  echo "$want" > "$out/.$name.stamp"
  to_cache "$name" "$want"
  echo "   $name built in $(( $(date +%s) - start ))s"
done
if [[ "$mode" == sandbox ]]; then
  gateway_crds # the demo's RayService upgrades incrementally through the simulated Gateway
  echo ">> sandbox tools ready in $out (make tools adds controller-gen, gotestsum and KubeRay's operator for the tests)"
  exit 0
fi
volcano_crds
scheduler_plugins_crds
gateway_crds

# Kubernetes 1.36's kube-apiserver, kube-scheduler and
# kube-controller-manager, into bin/k8s/kubernetes-1.36 (etcd and kwok are
# shared): the plane of `raydar sandbox --kubernetes 1.36` and of the
# KubernetesWAS tests, since 1.36 alone serves scheduling.k8s.io/v1alpha2
# (removed in 1.37). Their own module, hack/tools/kubernetes-1.36, whose
# go.sum is their stamp; cached under NAME-1.36. About 7 minutes the
# first time on two cores.
kubernetes_136() {
  local dir="$root/hack/tools/kubernetes-1.36" out="$out/kubernetes-1.36" stamp name start
  local ld="-s -w -X k8s.io/component-base/version.gitVersion=v1.36.3 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36"
  mkdir -p "$out"
  stamp="$(cd "$dir" && stamp_of)"
  for name in kube-apiserver kube-scheduler kube-controller-manager; do
    if [[ -x "$out/$name" && -f "$out/.$name.stamp" && "$(cat "$out/.$name.stamp")" == "$stamp" ]]; then
      echo ">> [kubernetes 1.36] $name: up to date"
      [[ -x "$cache/$name-1.36@$stamp" ]] || to_cache "$name" "$stamp" "$name-1.36"
      continue
    fi
    if from_cache "$name" "$stamp" "$name-1.36"; then
      echo ">> [kubernetes 1.36] $name: copied from $cache"
      continue
    fi
    echo ">> [kubernetes 1.36] building $name"
    start=$(date +%s)
    (cd "$dir" && go build -trimpath -ldflags "$ld" -o "$out/$name.tmp" "k8s.io/kubernetes/cmd/$name")
    mv "$out/$name.tmp" "$out/$name"
    echo "$stamp" > "$out/.$name.stamp"
    to_cache "$name" "$stamp" "$name-1.36"
    echo "   $name built in $(( $(date +%s) - start ))s"
  done
}
kubernetes_136

# KubeRay's operator is its own module with its own dependency versions, so it
# is built with `go install module@version` outside hack/tools. Its samples
# (config/samples) stay in the module cache, where the conformance suite reads
# them.
go_install kuberay-operator github.com/ray-project/kuberay/ray-operator v1.6.2 "-s -w" ray-operator
install_helm
install_staticcheck
echo ">> tools ready in $out"
