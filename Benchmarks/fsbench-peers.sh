#!/usr/bin/env bash
# asicfs against fuse-zip and ratarmount (and plain files, Info-ZIP, Python's zipfile) with
# ../shared/bench/fsbench.py, all in one run on the same data, and the issue-18 goals table.
# Not run by CI.
#
#   Benchmarks/fsbench-peers.sh [--data DIR] [--reps N] [--only NAMES] [--workloads W1,W2,...]
#
#   --data DIR     fsbench data (default /var/tmp/asicfs-fsbench/data; `fsbench.py gen` makes it
#                  once, ~3.7 GB)
#   --reps N       repetitions of every measurement (default 3; the tables give medians)
#   --only NAMES   comma-separated subset of: plain,infozip,pyzipfile,fuse-zip,ratarmount,asicfs
#   --cli PATH     an asicfs binary to measure (default: a release build in .build/release-bench)
#
# Output: Benchmarks/out/fsbench-STAMP/ with one JSON per system, table.md (fsbench's report)
# and goals.md (the goals of issue 18, from Benchmarks/fsbench-goals.py, with the machine load).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FSBENCH=${FSBENCH:-$ROOT/../shared/bench/fsbench.py}
DATA=/var/tmp/asicfs-fsbench/data
REPS=3
ONLY=plain,infozip,pyzipfile,fuse-zip,ratarmount,asicfs
WORKLOADS=W1,W2,W3,W4,W5,W6
CLI=
while (($#)); do
  case "$1" in
    --data) DATA=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --workloads) WORKLOADS=$2; shift 2 ;;
    --cli) CLI=$(realpath "$2"); shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ -f "$FSBENCH" ] || { echo "fsbench.py not found at $FSBENCH (set FSBENCH=)" >&2; exit 1; }

RATARMOUNT=$("$ROOT/Benchmarks/install-peers.sh")
export PATH="/opt/swift/usr/bin:$PATH"
if [ -z "$CLI" ]; then
  SCRATCH="$ROOT/.build/release-bench"
  echo "== building asicfs (release, $SCRATCH)" >&2
  swift build -c release --product asicfs --scratch-path "$SCRATCH" >/dev/null
  CLI="$SCRATCH/release/asicfs"
fi

python3 "$FSBENCH" gen --data-dir "$DATA" >&2
OUT="$ROOT/Benchmarks/out/fsbench-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
uptime > "$OUT/load-before.txt"
common=(--data-dir "$DATA" --reps "$REPS" --workloads "$WORKLOADS")
jsons=()
for name in ${ONLY//,/ }; do
  echo "== $name ($(uptime | sed 's/.*load/load/'))" >&2
  case "$name" in
    plain|infozip|pyzipfile)
      python3 "$FSBENCH" baseline --which "$name" "${common[@]}" --out "$OUT/$name.json" >&2 ;;
    fuse-zip)
      python3 "$FSBENCH" run --name fuse-zip "${common[@]}" --out "$OUT/$name.json" \
        --mount-cmd 'fuse-zip {archive} {mnt}' --umount-cmd 'fusermount3 -u {mnt}' >&2 ;;
    ratarmount)
      python3 "$FSBENCH" run --name ratarmount --read-only "${common[@]}" --out "$OUT/$name.json" \
        --mount-cmd "$RATARMOUNT {archive} {mnt}" --umount-cmd 'fusermount3 -u {mnt}' >&2 ;;
    asicfs)
      python3 "$FSBENCH" run --name asicfs "${common[@]}" --out "$OUT/$name.json" \
        --mount-cmd "$CLI mount {archive} {mnt}" --umount-cmd "$CLI umount {mnt}" >&2 ;;
    *) echo "unknown system $name" >&2; exit 2 ;;
  esac
  jsons+=("$OUT/$name.json")
done
uptime > "$OUT/load-after.txt"
python3 "$FSBENCH" report "${jsons[@]}" --out "$OUT/table.md" >&2
python3 "$ROOT/Benchmarks/fsbench-goals.py" "$OUT" > "$OUT/goals.md"
cat "$OUT/goals.md"
echo "results in $OUT" >&2
