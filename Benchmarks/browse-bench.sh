#!/usr/bin/env bash
# Browse-mode benchmark (issue 16): a folder of N containers of 5 small files each, mounted with
# `asicfs mount FOLDER MOUNTPOINT`. Not a test; CI never runs it. See Benchmarks/README.md.
#
#   Benchmarks/browse-bench.sh [--work DIR] [--count N] [--runs N] [--asicfs PATH]
#
#   --work DIR     where the folder of containers is made (default $ASICFS_BENCH_DIR or
#                  /tmp/asicfs-bench, subfolder browse-N); reused when complete
#   --count N      containers (default 1000)
#   --runs N       fresh mounts measured; the median of each figure is reported (default 5)
#   --asicfs PATH  the binary (default: a release build in .build/release-bench)
#
# Targets: mount ready < 0.5 s; the first `ls -l` of the mounted folder <= 3x a plain `ls -l` of
# the real folder; `find MOUNT -type f` walking into every container <= 10 s, with the daemon's
# peak RSS (VmHWM) <= 100 MiB. The page cache is warm (the real folder is listed before timing).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE=${ASICFS_BENCH_DIR:-/tmp/asicfs-bench}
COUNT=1000
RUNS=5
ASICFS=""
while (($#)); do
  case "$1" in
    --work) BASE=$2; shift 2 ;;
    --count) COUNT=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --asicfs) ASICFS=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

export PATH="/opt/swift/usr/bin:$PATH"
if [ -z "$ASICFS" ]; then
  echo "== building asicfs (release, .build/release-bench)" >&2
  (cd "$ROOT" && swift build -c release --scratch-path "$ROOT/.build/release-bench" --product asicfs >&2)
  ASICFS="$ROOT/.build/release-bench/release/asicfs"
fi
WORK="$BASE/browse-$COUNT"
TREE="$WORK/tree"
MNT="$WORK/mnt"
mkdir -p "$WORK" "$MNT"

# --- data: one container of 5 files, copied COUNT times ---------------------------------------
if [ ! -f "$WORK/complete" ]; then
  echo "== making $COUNT containers in $TREE" >&2
  rm -rf "$TREE" "$WORK/src"; mkdir -p "$TREE" "$WORK/src"
  for i in 1 2 3 4 5; do
    python3 -c "import sys; sys.stdout.write(''.join('line %d of file $i\n' % n for n in range(100)))" > "$WORK/src/file$i.txt"
  done
  "$ASICFS" create -q "$WORK/template.asice" "$WORK"/src/file*.txt
  for ((i = 0; i < COUNT; i++)); do cp "$WORK/template.asice" "$(printf '%s/c%05d.asice' "$TREE" "$i")"; done
  touch "$WORK/complete"
fi

OUT_DIR="$ROOT/Benchmarks/out"
mkdir -p "$OUT_DIR"
REPORT="$OUT_DIR/browse-bench-$(date +%Y%m%d-%H%M%S).md"

/usr/bin/python3 - "$ASICFS" "$TREE" "$MNT" "$RUNS" "$COUNT" "$REPORT" <<'PY'
import os, subprocess, sys, time, statistics

asicfs, tree, mnt, runs, count, report = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]

def mounted():
    with open('/proc/self/mountinfo') as f:
        return any(line.split()[4] == mnt for line in f)

def timed(argv):
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start

def vm(pid, key):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith(key + ':'):
                return int(line.split()[1]) / 1024  # MiB
    return 0.0

if mounted():
    subprocess.run(['fusermount3', '-u', '-z', mnt])
timed(['ls', '-l', tree])                                     # warm the real folder
loads = [os.getloadavg()[0]]
rows = []
plains = []
for run in range(runs):
    # The plain listing is timed in every run, next to the mount's, so both see the same load.
    plains.append(timed(['ls', '-l', tree]))
    start = time.perf_counter()
    daemon = subprocess.Popen([asicfs, 'mount', tree, mnt, '-f'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not mounted():
        if daemon.poll() is not None:
            sys.exit('the mount failed')
        time.sleep(0.001)
    os.stat(mnt)
    ready = time.perf_counter() - start
    first_ls = timed(['ls', '-l', mnt])
    second_ls = timed(['ls', '-l', mnt])
    start = time.perf_counter()
    found = subprocess.run(['find', mnt, '-type', 'f'], stdout=subprocess.PIPE, check=True).stdout.count(b'\n')
    walk = time.perf_counter() - start
    peak = vm(daemon.pid, 'VmHWM')
    subprocess.run([asicfs, 'umount', mnt], check=True)
    daemon.wait()
    loads.append(os.getloadavg()[0])
    rows.append((ready, first_ls, second_ls, walk, peak, found))
    print(f'run {run + 1}: ready {ready:.3f} s, first ls -l {first_ls:.3f} s, second {second_ls:.3f} s, '
          f'find {walk:.2f} s ({found} files), peak RSS {peak:.1f} MiB', file=sys.stderr)

med = lambda i: statistics.median(r[i] for r in rows)
worst = lambda i: max(r[i] for r in rows)
ready, first_ls, second_ls, walk, peak = med(0), med(1), med(2), med(3), worst(4)
plain = statistics.median(plains)
verdict = lambda ok: 'pass' if ok else '**FAIL**'
cpu = os.cpu_count()
text = f"""# Browse-mode benchmark, {time.strftime('%Y-%m-%d %H:%M')}

`Benchmarks/browse-bench.sh --count {count} --runs {runs}`: {count} containers of 5 text files
(~2 KiB each) in one folder, mounted in browse mode by `{os.path.relpath(asicfs)}` in the foreground.
Medians of {runs} fresh mounts (peak RSS: the largest). Machine: {cpu} cores, load average
{min(loads):.2f}–{max(loads):.2f} during the runs (shared with other people's builds).

| measurement | result | target | |
|---|---|---|---|
| mount ready (start of `asicfs mount -f` until the mount answers) | {ready:.3f} s | < 0.5 s | {verdict(ready < 0.5)} |
| first `ls -l MOUNT` (median) | {first_ls * 1000:.1f} ms = {first_ls / plain:.2f}× plain | ≤ 3× plain `ls -l` of the folder (median {plain * 1000:.1f} ms) | {verdict(first_ls <= 3 * plain)} |
| second `ls -l MOUNT` (kernel cache) | {second_ls * 1000:.1f} ms | | |
| `find MOUNT -type f` ({rows[0][5]} files) | {walk:.2f} s | ≤ 10 s | {verdict(walk <= 10)} |
| daemon peak RSS (VmHWM) after the find | {peak:.1f} MiB | ≤ 100 MiB | {verdict(peak <= 100)} |

Each run: {'; '.join(f'{r[0]:.3f} s / {p*1000:.1f} ms / {r[1]*1000:.1f} ms / {r[3]:.2f} s / {r[4]:.1f} MiB' for r, p in zip(rows, plains))}
(ready / plain ls -l / first ls -l of the mount / find / RSS).
"""
with open(report, 'w') as f:
    f.write(text)
print(text)
print(f'report: {report}', file=sys.stderr)
PY
