#!/usr/bin/env bash
# Builds the sandbox control plane (kube-apiserver, etcd, kube-controller-manager,
# kube-scheduler, kwok), controller-gen, gotestsum (the Makefile's test runner)
# and KubeRay's operator (the oracle of the conformance suite, test/conformance)
# from the Go module proxy into bin/k8s. `hack/build-tools.sh gotestsum`
# installs gotestsum alone.
# Idempotent: a binary already built from the pinned version is skipped.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/bin/k8s"
mkdir -p "$out"
cd "$root/hack/tools"

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

# gotestsum runs the Makefile's go test lines: it ends each run with the
# skipped tests, their reasons and a count. Its own module, installed with
# `go install module@version`; `hack/build-tools.sh gotestsum` installs it
# alone (make unit needs nothing else).
gotestsum=gotest.tools/gotestsum
gotestsumver=v1.13.0
if [[ -x "$out/gotestsum" && -f "$out/.gotestsum.stamp" && "$(cat "$out/.gotestsum.stamp")" == "$gotestsumver" ]]; then
  echo ">> [gotestsum] gotestsum $gotestsumver: up to date"
else
  echo ">> [gotestsum] installing gotestsum $gotestsumver"
  tmp="$(mktemp -d)"
  GOBIN="$tmp" go install -trimpath -ldflags "-s -w" "$gotestsum@$gotestsumver"
  mv "$tmp/gotestsum" "$out/gotestsum"
  rm -rf "$tmp"
  echo "$gotestsumver" > "$out/.gotestsum.stamp"
fi
if [[ "${1:-}" == gotestsum ]]; then
  exit 0
fi

# The stamp records the tools module's go.sum so that a version bump rebuilds.
stamp_of() { sha256sum go.mod go.sum | sha256sum | cut -c1-16; }
want="$(stamp_of)"

echo ">> downloading tool modules (first time: ~700 MB, about a minute)"
go mod download

n=${#tools[@]}; i=0
for t in "${tools[@]}"; do
  i=$((i+1))
  IFS='|' read -r name pkg flags <<<"$t"
  if [[ -x "$out/$name" && -f "$out/.$name.stamp" && "$(cat "$out/.$name.stamp")" == "$want" ]]; then
    echo ">> [$i/$n] $name: up to date"
    continue
  fi
  echo ">> [$i/$n] building $name (first build of the control plane takes several minutes)"
  start=$(date +%s)
  go build -trimpath -ldflags "$flags" -o "$out/$name.tmp" "$pkg"
  mv "$out/$name.tmp" "$out/$name"
  echo "$want" > "$out/.$name.stamp"
  echo "   $name built in $(( $(date +%s) - start ))s"
done
# KubeRay's operator is its own module with its own dependency versions, so it
# is built with `go install module@version` outside hack/tools. Its samples
# (config/samples) stay in the module cache, where the conformance suite reads
# them.
kuberay=github.com/ray-project/kuberay/ray-operator
kuberayver=v1.6.2
if [[ -x "$out/kuberay-operator" && -f "$out/.kuberay-operator.stamp" && "$(cat "$out/.kuberay-operator.stamp")" == "$kuberayver" ]]; then
  echo ">> [kuberay] kuberay-operator $kuberayver: up to date"
else
  echo ">> [kuberay] building KubeRay's operator $kuberayver (the conformance suite's oracle)"
  start=$(date +%s)
  tmp="$(mktemp -d)"
  GOBIN="$tmp" go install -trimpath -ldflags "-s -w" "$kuberay@$kuberayver"
  mv "$tmp/ray-operator" "$out/kuberay-operator"
  rm -rf "$tmp"
  echo "$kuberayver" > "$out/.kuberay-operator.stamp"
  echo "   kuberay-operator built in $(( $(date +%s) - start ))s"
fi
echo ">> tools ready in $out"
