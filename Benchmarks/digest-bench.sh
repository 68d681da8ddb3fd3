#!/usr/bin/env bash
# The signing digest of a 1 GiB deflated entry (`Container.sha256(of:)`: inflate, CRC-32 and
# SHA-256, as a signing computes it) against `openssl dgst -sha256` of the same bytes as a plain
# file, medians of N runs each, warm page cache. Not run by CI.
#
#   Benchmarks/digest-bench.sh [--data DIR] [--runs N] [--bench PATH]
#
#   --bench PATH   an asicfs-bench binary (default: a release build in .build/release-bench)
#
# Uses fsbench's big-deflated.asice and plain/big-text.txt (see fsbench-peers.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATA=/var/tmp/asicfs-fsbench/data
RUNS=3
BENCH=
while (($#)); do
  case "$1" in
    --data) DATA=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --bench) BENCH=$(realpath "$2"); shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
export PATH="/opt/swift/usr/bin:$PATH"
if [ -z "$BENCH" ]; then
  SCRATCH="$ROOT/.build/release-bench"
  swift build -c release --product asicfs-bench --scratch-path "$SCRATCH" >/dev/null
  BENCH="$SCRATCH/release/asicfs-bench"
fi
CONTAINER="$DATA/big-deflated.asice"
PLAIN="$DATA/plain/big-text.txt"
cat "$CONTAINER" "$PLAIN" > /dev/null
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ours=() theirs=()
for _ in $(seq "$RUNS"); do
  s=$( { "$BENCH" digest "$CONTAINER" big-text.txt; } 2>&1 | sed -n 's/.* seconds=\([0-9.]*\).*/\1/p')
  ours+=("$s")
  t=$( { /usr/bin/time -f "%e" openssl dgst -sha256 "$PLAIN" >/dev/null; } 2>&1 | tail -1)
  theirs+=("$t")
done
o=$(printf '%s\n' "${ours[@]}" | median)
t=$(printf '%s\n' "${theirs[@]}" | median)
bytes=$(stat -c %s "$PLAIN")
python3 - "$o" "$t" "$bytes" "$(uptime)" "${ours[*]}" "${theirs[*]}" <<'PY'
import sys
o, t, n, load, ours, theirs = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
ratio = t / o
print(f"| signing digest, 1 GiB deflated entry | asicfs {n / o / 1e6:.0f} MB/s ({o:.2f} s; runs {ours}) | "
      f"openssl dgst -sha256 {n / t / 1e6:.0f} MB/s ({t:.2f} s; runs {theirs}) | {ratio:.2f}x | goal >= 0.6x: "
      f"{'PASS' if ratio >= 0.6 else 'FAIL'} |")
print(f"load: {load.strip()}")
PY
