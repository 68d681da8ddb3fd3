#!/usr/bin/env bash
# Writes contrib/link/startup-order.txt: the functions of the static binary that a mount runs,
# for lld's --symbol-ordering-file (see layout.ld and the Makefile). callgrind records every
# function the `asicfs mount` command and its daemon execute while a 2,000-file container is
# mounted, stat'ed, listed with `ls -l` and a file read (first in the list), then while files
# are copied in and the container saved at unmount (after them). Names that a rebuild no longer
# has are skipped by the linker, so a stale list costs start-up time, not correctness; rerun
# this after large changes. Needs root only to install valgrind. Not run by CI.
#
#   contrib/link/startup-order.sh [STATIC-BINARY]   (default: .build/static/release/asicfs)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=$(realpath "${1:-$ROOT/.build/static/release/asicfs}")
OUT=$ROOT/contrib/link/startup-order.txt
command -v valgrind >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q valgrind >/dev/null

work=$(mktemp -d)
trap 'fusermount3 -u -z "$work/mnt" 2>/dev/null || true; rm -rf "$work"' EXIT
# valgrind 3.19 cannot read the toolchain's DWARF 5; the symbol table is all it needs.
strip --strip-debug -o "$work/asicfs" "$BIN"
mkdir "$work/files" "$work/more" "$work/mnt"
python3 - "$work" <<'PY'
import os, sys
work = sys.argv[1]
for i in range(2000):
    with open(os.path.join(work, "files", f"file-{i:05d}.txt"), "w") as f:
        f.write(f"line {i}\n" * (20 + i % 200))
for i in range(3):
    with open(os.path.join(work, "more", f"new-{i}.txt"), "w") as f:
        f.write("new\n" * 1000)
PY
(cd "$work/files" && "$work/asicfs" create "$work/c.asice" ./*)

# The daemon's profile is cut in two when the first file is created.
valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p" --dump-instr=no --compress-strings=no \
  --demangle=no --dump-before='$s2FS9DataFilesC6create_9writeOnly*' "$work/asicfs" mount "$work/c.asice" "$work/mnt" 2>"$work/valgrind.log"
daemon=$(pgrep -f "callgrind.*$work/mnt")
stat "$work/mnt" >/dev/null
ls -l "$work/mnt" >/dev/null
cat "$work/mnt/file-00007.txt" >/dev/null
cp "$work/more/"* "$work/mnt/"
fusermount3 -u "$work/mnt"
while kill -0 "$daemon" 2>/dev/null; do sleep 0.1; done

# The mount command's functions, then the daemon's until the first create, then the rest.
defined=$work/defined
nm --defined-only "$work/asicfs" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u > "$defined"
mount_cmd=$(ls "$work"/cg.* | grep -v "cg.$daemon")
test -e "$work/cg.$daemon.1" || { echo "startup-order.sh: the daemon's profile was not cut at the first create" >&2; exit 1; }
{
  grep -h '^fn=' "$mount_cmd"
  ls "$work/cg.$daemon".* | sort -V | xargs grep -h '^fn='
  grep -h '^fn=' "$work/cg.$daemon"
} | sed 's/^fn=//' | awk '!seen[$0]++' | grep -Fxf "$defined" > "$OUT"
echo "$(wc -l < "$OUT") functions -> $OUT"
