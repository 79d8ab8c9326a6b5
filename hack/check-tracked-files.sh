#!/usr/bin/env bash
# Refuses a tracked file that is a built binary (ELF, Mach-O, PE, a.out
# magic) or larger than 1 MiB: built programs belong in bin/ (ignored),
# never in git, where each version stays in every clone's history for good
# (a 91 MB test/e2e/bench executable once did). Run by `make lint`, so CI
# fails on one. Usage: hack/check-tracked-files.sh [limit-bytes]
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
limit=${1:-1048576}
bad=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue # deleted in the work tree, or a submodule
  size=$(stat -c %s -- "$f")
  if [ "$size" -gt "$limit" ]; then
    echo "tracked file over $limit bytes: $f ($size bytes)"; bad=1; continue
  fi
  magic=$(head -c 4 -- "$f" | od -An -tx1 | tr -d ' \n')
  case "$magic" in
    7f454c46) kind=ELF ;;
    feedface|feedfacf|cefaedfe|cffaedfe|cafebabe) kind=Mach-O ;;
    4d5a*) kind=PE ;;
    *) continue ;;
  esac
  # "MZ" starts some text files too: a PE has "PE\0\0" at the offset in 0x3c.
  if [ "$kind" = PE ]; then
    off=$(od -An -tu4 -j 60 -N 4 -- "$f" 2>/dev/null | tr -d ' ')
    [ -n "$off" ] && [ "$(od -An -tx1 -j "$off" -N 4 -- "$f" 2>/dev/null | tr -d ' \n')" = 50450000 ] || continue
  fi
  # Java class files share Mach-O's fat magic cafebabe; none are expected here either.
  echo "tracked executable binary ($kind): $f"; bad=1
done < <(git ls-files -z)
if [ "$bad" -ne 0 ]; then
  echo "built binaries and files over 1 MiB do not belong in git: git rm --cached them and ignore them (.gitignore)"
  exit 1
fi
