#!/usr/bin/env bash
# Entry-count benchmark: how `asicfs ls`, `asicfs extract` and a mount scale with the number of
# data files (all empty, so only per-entry work is measured). Never run by CI. See Benchmarks/README.md.
#
#   Benchmarks/entry-count-bench.sh [--work DIR] [--counts "4000 16000 65000"] [--runs N] [--cli PATH]
#                                   [--extract-to DIR]
#
#   --work DIR      test data folder (default $ASICFS_BENCH_DIR or /tmp/asicfs-entrybench);
#                   containers already there are reused
#   --counts LIST   entry counts to measure (default "4000 16000 65000")
#   --runs N        runs of each measurement; the fastest counts (default 1)
#   --cli PATH      measure this asicfs binary instead of building the release one (e.g. an
#                   older build, for before/after numbers)
#   --extract-to DIR  where the extractions go (default: the work folder). On ext4, creating
#                   files right after many were deleted is slow in the kernel (inode reuse
#                   checks), so the extracted files are only removed at the end; a tmpfs such
#                   as /dev/shm shows asicfs's own cost without the disk's.
#
# Each container is made with Python's zipfile: `mimetype` first and stored, N empty entries
# file-000000.txt ... (stored), then META-INF/manifest.xml listing every one of them.
# Measured per count: `asicfs ls C` (table to /dev/null), `asicfs extract C -d OUT` into a fresh
# folder, `asicfs mount C MNT` until it returns (it returns once the mount is ready), and the
# daemon's peak RSS from `/usr/bin/time -v asicfs mount -f` over mount, `ls -l MNT` and umount.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${ASICFS_BENCH_DIR:-/tmp/asicfs-entrybench}
COUNTS="4000 16000 65000"
RUNS=1
CLI=""
EXTRACT_TO=""
while (($#)); do
  case "$1" in
    --work) WORK=$2; shift 2 ;;
    --counts) COUNTS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --cli) CLI=$2; shift 2 ;;
    --extract-to) EXTRACT_TO=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

EXTRACT_TO=${EXTRACT_TO:-$WORK}
export PATH="/opt/swift/usr/bin:$PATH"
OUT_DIR="$ROOT/Benchmarks/out"
STAMP=$(date +%Y%m%d-%H%M%S)
mkdir -p "$WORK" "$OUT_DIR"
LOG="$OUT_DIR/entry-count-$STAMP.log"
REPORT="$OUT_DIR/entry-count-$STAMP.md"
: >"$LOG"
say() { echo "== $*" >&2; }

for tool in /usr/bin/time python3 fusermount3 mountpoint; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install time python3 fuse3 util-linux)" >&2; exit 1; }
done
PY=$(python3 -c 'import sys; print(sys.executable)')

if [ -z "$CLI" ]; then
  SCRATCH="$ROOT/.build/release-bench"
  say "building asicfs (release, $SCRATCH)"
  (cd "$ROOT" && swift build -c release --scratch-path "$SCRATCH" --product asicfs >>"$LOG" 2>&1)
  CLI="$SCRATCH/release/asicfs"
fi
[ -x "$CLI" ] || { echo "no asicfs binary at $CLI" >&2; exit 1; }

# --- test data ---------------------------------------------------------------------------------
container() { echo "$WORK/empty-$1.asice"; }
for count in $COUNTS; do
  c=$(container "$count")
  [ -f "$c" ] && continue
  say "creating $c ($count empty entries, Python zipfile)"
  "$PY" - "$c.tmp" "$count" <<'PY'
import sys, zipfile
from xml.sax.saxutils import quoteattr
out, count = sys.argv[1], int(sys.argv[2])
names = ["file-%06d.txt" % i for i in range(count)]
with zipfile.ZipFile(out, "w") as z:
    z.writestr(zipfile.ZipInfo("mimetype", date_time=(2026, 12, 3, 12, 0, 0)), "application/vnd.etsi.asic-e+zip")
    for name in names:
        z.writestr(zipfile.ZipInfo(name, date_time=(2026, 12, 3, 12, 0, 0)), b"")
    z.writestr("META-INF/manifest.xml",
        '<?xml version="1.0" encoding="UTF-8" standalone="no" ?>\n'
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">\n'
        '  <manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/>\n'
        + "".join('  <manifest:file-entry manifest:full-path=%s manifest:media-type="text/plain"/>\n' % quoteattr(n)
                  for n in names)
        + "</manifest:manifest>\n", compress_type=zipfile.ZIP_DEFLATED)
PY
  mv "$c.tmp" "$c"
done

# --- measuring ---------------------------------------------------------------------------------
seconds() { "$PY" -c "print(f'{$2 - $1:.3f}')"; }
fastest() { printf '%s\n' "$@" | sort -g | head -1; }
rss_mib() { awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$1"; }

MNT="$WORK/mnt"
mkdir -p "$MNT"
mountpoint -q "$MNT" && fusermount3 -u "$MNT"
ROWS=()
OUTPUTS=()
for count in $COUNTS; do
  c=$(container "$count")
  cat "$c" >/dev/null
  ls_times=(); extract_times=(); mount_times=(); ls_rss=""; extract_rss=""
  for ((run = 0; run < RUNS; run++)); do
    t0=$EPOCHREALTIME
    /usr/bin/time -v -o "$WORK/.time" "$CLI" ls "$c" >/dev/null 2>>"$LOG"
    ls_times+=("$(seconds "$t0" "$EPOCHREALTIME")"); ls_rss=$(rss_mib "$WORK/.time")

    out="$EXTRACT_TO/asicfs-entrybench-out-$STAMP-$count-$run"
    OUTPUTS+=("$out")
    t0=$EPOCHREALTIME
    /usr/bin/time -v -o "$WORK/.time" "$CLI" extract "$c" -d "$out" 2>>"$LOG"
    extract_times+=("$(seconds "$t0" "$EPOCHREALTIME")"); extract_rss=$(rss_mib "$WORK/.time")
    extracted=$(find "$out" -type f | wc -l)
    [ "$extracted" -eq "$count" ] || { echo "extract of $c gave $extracted files, not $count" >&2; exit 1; }

    t0=$EPOCHREALTIME
    "$CLI" mount "$c" "$MNT" 2>>"$LOG"
    mount_times+=("$(seconds "$t0" "$EPOCHREALTIME")")
    "$CLI" umount "$MNT" 2>>"$LOG"
  done

  # The daemon's own peak memory: in the foreground under time(1), through a full listing.
  /usr/bin/time -v -o "$WORK/.time-mount" "$CLI" mount -f "$c" "$MNT" 2>>"$LOG" &
  daemon=$!
  t0=$EPOCHREALTIME
  until mountpoint -q "$MNT"; do
    kill -0 "$daemon" 2>/dev/null || { echo "mount of $c failed (see $LOG)" >&2; exit 1; }
    sleep 0.01
  done
  t1=$EPOCHREALTIME
  listed=$(ls -l "$MNT" | grep -c ' file-' || true)
  t2=$EPOCHREALTIME
  [ "$listed" -eq "$count" ] || { echo "the mount of $c lists $listed files, not $count" >&2; exit 1; }
  "$CLI" umount "$MNT" 2>>"$LOG"
  wait "$daemon"
  row="| $count | $(fastest "${ls_times[@]}") | $ls_rss | $(fastest "${extract_times[@]}") | $extract_rss"
  row+=" | $(fastest "${mount_times[@]}") | $(seconds "$t0" "$t1") | $(seconds "$t1" "$t2") | $(rss_mib "$WORK/.time-mount") |"
  ROWS+=("$row")
  say "$row"
done
rm -f "$WORK/.time" "$WORK/.time-mount"
rm -rf "${OUTPUTS[@]}"

{
  echo "# Entry-count benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo
  echo "Machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg). Binary: $CLI."
  echo "Extracted into $EXTRACT_TO ($(df --output=fstype "$EXTRACT_TO" | tail -1))."
  echo "Containers: N empty entries, made with Python zipfile. Best of $RUNS run(s); seconds, MiB."
  echo
  echo "| entries | ls | ls RSS | extract | extract RSS | mount returns | mount -f ready | ls -l of the mount | mount RSS (peak, through ls -l) |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${ROWS[@]}"
} | tee "$REPORT"
