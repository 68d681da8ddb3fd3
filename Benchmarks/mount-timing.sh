#!/usr/bin/env bash
# How soon a container mount answers, and when `asicfs mount` returns (after the container
# check), medians of N mounts, against fuse-zip's ready time on the same container, the two
# taken in turns. With --cold the page cache is dropped before every mount (root; fsbench's W1
# measures that way), so the binaries and libraries are read from disk. Not run by CI.
#
#   Benchmarks/mount-timing.sh [--runs N] [--cold] [--cli PATH] [CONTAINER]
#
# CONTAINER defaults to fsbench's 10,000-file small10k.asice (see fsbench-peers.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=9
CLI=
COLD=0
CONTAINER=/var/tmp/asicfs-fsbench/data/small10k.asice
while (($#)); do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --cli) CLI=$(realpath "$2"); shift 2 ;;
    --cold) COLD=1; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) CONTAINER=$1; shift ;;
  esac
done
export PATH="/opt/swift/usr/bin:$PATH"
if [ -z "$CLI" ]; then
  swift build -c release --product asicfs --scratch-path "$ROOT/.build/release-bench" >/dev/null
  CLI="$ROOT/.build/release-bench/release/asicfs"
fi
command -v fuse-zip >/dev/null || "$ROOT/Benchmarks/install-peers.sh" >/dev/null
python3 - "$CLI" "$CONTAINER" "$RUNS" "$COLD" <<'PY'
import os, statistics, subprocess, sys, tempfile, time
cli, container, runs, cold = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"

def mounted(mnt):
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == mnt for line in f)

def once(command, mnt, unmount):
    if cold:
        subprocess.run(["sync"], check=True)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    t0 = time.perf_counter()
    proc = subprocess.Popen(command + [container, mnt], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while not mounted(mnt):
        if proc.poll() not in (None, 0):
            sys.exit(f"mount failed: {proc.stderr.read().decode()}")
        time.sleep(0.002)
    subprocess.run(["stat", "-c", "%i", mnt], check=True, stdout=subprocess.DEVNULL)
    ready = time.perf_counter() - t0
    proc.wait()
    returned = time.perf_counter() - t0
    subprocess.run(unmount + [mnt], check=True)
    time.sleep(0.2)
    return ready, returned

mnt = os.path.realpath(tempfile.mkdtemp(prefix="asicfs-mt-"))
try:
    ours, peer = [], []
    for _ in range(runs):
        ours.append(once([cli, "mount"], mnt, [cli, "umount"]))
        peer.append(once(["fuse-zip"], mnt, ["fusermount3", "-u"]))
finally:
    os.rmdir(mnt)
med = lambda xs: statistics.median(xs) * 1000
print(f"container: {container}, {runs} mounts each{', cold' if cold else ''}, load: {os.getloadavg()[0]:.2f}")
print(f"asicfs   ready {med([r for r, _ in ours]):.1f} ms (min {min(r for r, _ in ours)*1000:.1f}), "
      f"asicfs mount returned {med([d for _, d in ours]):.1f} ms")
print(f"fuse-zip ready {med([r for r, _ in peer]):.1f} ms (min {min(r for r, _ in peer)*1000:.1f})")
PY
