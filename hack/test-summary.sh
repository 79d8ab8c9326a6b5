#!/usr/bin/env bash
# The closing lines of `make test`: the skipped tests of every go test run
# the Makefile made through gotestsum (their --jsonfile event streams in
# DIR), with the reason each printed, gotestsum's count line over all of
# them, and one line naming the skipped tests ("skipped: 0 tests" where the
# machine ran them all).
#
#   hack/test-summary.sh GOTESTSUM DIR
set -euo pipefail
gotestsum="$1"
dir="$2"
shopt -s nullglob
files=("$dir"/*.json)
if [ ${#files[@]} -eq 0 ]; then
  echo "test-summary: no test events in $dir" >&2
  exit 1
fi
# gotestsum replays the events: its summary (=== Skipped with each test's
# output, where the reason is, and DONE N tests, M skipped) without the
# per-package lines that the runs printed already.
# (The runs decided pass or fail already: the replay's exit code is not
# this script's.)
{ "$gotestsum" --raw-command --format pkgname -- cat "${files[@]}" || true; } |
  awk '/^=== (Skipped|Failed|Errors)$/ {show=1} show || /^DONE / {print}'
module=$(go list -m 2>/dev/null || true)
skipped=$(grep -h '"Action":"skip"' "${files[@]}" | grep '"Test":' |
  sed -E 's/.*"Package":"([^"]*)","Test":"([^"]*)".*/\1 \2/' | sed "s#^$module/##" | sort || true)
if [ -z "$skipped" ]; then
  echo "skipped: 0 tests"
  exit 0
fi
n=$(printf '%s\n' "$skipped" | wc -l)
tests=tests
[ "$n" -eq 1 ] && tests=test
echo "skipped: $n $tests: $(printf '%s\n' "$skipped" | paste -sd ',' | sed 's/,/, /g')"
