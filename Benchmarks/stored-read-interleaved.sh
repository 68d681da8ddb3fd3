#!/usr/bin/env bash
# W2 stored, taken in turns: a cold `cat` of fsbench's 1 GiB plain file, a cold `cat` of the
# stored container itself (the very disk blocks the mount reads), then a cold read of the same
# bytes through an asicfs mount of that container (fsbench's reader: 1 MiB reads), N rounds, so
# that all see the disk in the same state. fsbench measures every system's repetitions
# together, minutes apart, and this machine's cold reads drift between 0.3 and 1.9 GB/s over
# minutes, and differ between two files at the same moment (one file read at 0.6-0.9 GB/s while
# the other read at 1.8, six rounds in turns). Needs root (drop_caches). Not run by CI.
#
#   Benchmarks/stored-read-interleaved.sh [--rounds N] [--cli PATH] [--data DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=5
CLI=
DATA=/var/tmp/asicfs-fsbench/data
while (($#)); do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --cli) CLI=$(realpath "$2"); shift 2 ;;
    --data) DATA=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
source "$ROOT/Benchmarks/common.sh"
CLI=$(bench_cli "$ROOT" "$CLI")
[ -f "$DATA/big-stored.asice" ] || { echo "no fsbench data in $DATA (fsbench.py gen)" >&2; exit 1; }
python3 - "$CLI" "$DATA" "$ROUNDS" <<'PY'
import os, statistics, subprocess, sys, tempfile, time
cli, data, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
plain, container = os.path.join(data, "plain/big-stored.bin"), os.path.join(data, "big-stored.asice")

def cold():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")

def read_all(path, size=1 << 20):
    buf = bytearray(size)
    t0 = time.perf_counter()
    total = 0
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(buf):
            total += n
    return total / 1e6 / (time.perf_counter() - t0)

def cat(path):
    t0 = time.perf_counter()
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)
    return os.path.getsize(path) / 1e6 / (time.perf_counter() - t0)

mnt = os.path.realpath(tempfile.mkdtemp(prefix="asicfs-w2-"))
cats, same, mounts = [], [], []
try:
    for _ in range(rounds):
        cold()
        cats.append(cat(plain))
        cold()
        same.append(cat(container))
        cold()
        subprocess.run([cli, "mount", container, mnt], check=True)
        try:
            mounts.append(read_all(os.path.join(mnt, "big-stored.bin")))
        finally:
            subprocess.run([cli, "umount", mnt], check=True)
finally:
    os.rmdir(mnt)
def row(label, values):
    print(f"{label:<22}" + " ".join(f"{x:5.0f}" for x in values) + f"  (median {statistics.median(values):.0f})")

def ratios(label, values):
    print(f"{label:<22}" + " ".join(f"{x:5.2f}" for x in values) + f"  (median {statistics.median(values):.2f}; goal >= 0.9)")

print(f"load {os.getloadavg()[0]:.2f}; {rounds} rounds, cold, MB/s")
row("cat plain file:", cats)
row("cat container:", same)
row("asicfs:", mounts)
ratios("asicfs / cat plain:", [m / c for m, c in zip(mounts, cats)])
ratios("asicfs / cat container:", [m / c for m, c in zip(mounts, same)])
PY
