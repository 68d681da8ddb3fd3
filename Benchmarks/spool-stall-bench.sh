#!/usr/bin/env bash
# Stall benchmark (issue 29, item 10): how long `ls -l MOUNT` and `cat MOUNT/small.txt` take
# while `echo x >> MOUNT/big.bin` makes its first change to a large stored entry (which copies
# the entry into a spool first). Not a test; CI never runs it. Goal: every sample < 50 ms.
#
#   Benchmarks/spool-stall-bench.sh [--size MiB] [--rounds N] [--work DIR] [--asicfs PATH]
#
#   --size MiB     the stored entry (default 1536, the size the stall was reported with)
#   --rounds N     appends measured, each on a fresh mount of a fresh copy (default 3)
#   --work DIR     where the container is made (default $ASICFS_BENCH_DIR or /tmp/asicfs-bench)
#   --asicfs PATH  the binary (default: a release build in .build/release-bench)
#
# While the append runs, `ls -l` and `cat` are run one after the other (each timed as a whole
# process, spawn included) until it ends, and the same two in-process (scandir + lstat of each
# entry; open + read), which leaves out the cost of starting a process on a busy machine; a
# baseline with no append comes first. The page cache is warm (the container is read before
# each round): this measures waiting, not the disk.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE=${ASICFS_BENCH_DIR:-/tmp/asicfs-bench}
SIZE=1536
ROUNDS=3
ASICFS=""
while (($#)); do
  case "$1" in
    --size) SIZE=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --work) BASE=$2; shift 2 ;;
    --asicfs) ASICFS=$(realpath "$2"); shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
source "$ROOT/Benchmarks/common.sh"
ASICFS=$(bench_cli "$ROOT" "$ASICFS")
WORK="$BASE/spool-stall-$SIZE"
mkdir -p "$WORK"

/usr/bin/python3 - "$ASICFS" "$WORK" "$SIZE" "$ROUNDS" <<'PY'
import os, shutil, statistics, subprocess, sys, time, zipfile

asicfs, work, size_mib, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
template = os.path.join(work, "template.asice")
if not os.path.exists(template):
    # mimetype first and stored, a manifest, big.bin stored (random bytes), small.txt.
    manifest = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">\n'
                ' <manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/>\n'
                ' <manifest:file-entry manifest:full-path="big.bin" manifest:media-type="application/octet-stream"/>\n'
                ' <manifest:file-entry manifest:full-path="small.txt" manifest:media-type="text/plain"/>\n'
                '</manifest:manifest>\n')
    with zipfile.ZipFile(template + ".tmp", "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.etsi.asic-e+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/manifest.xml", manifest, compress_type=zipfile.ZIP_DEFLATED)
        with z.open(zipfile.ZipInfo("big.bin"), "w", force_zip64=size_mib >= 2048) as f:
            chunk = os.urandom(1 << 20)
            for _ in range(size_mib):
                f.write(chunk)
        z.writestr("small.txt", "small\n", compress_type=zipfile.ZIP_STORED)
    os.rename(template + ".tmp", template)

container, mnt = os.path.join(work, "c.asice"), os.path.join(work, "mnt")
os.makedirs(mnt, exist_ok=True)

def timed(argv):
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000

def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass

def listed():
    start = time.perf_counter()
    for entry in os.scandir(mnt):
        entry.stat(follow_symlinks=False)
    return (time.perf_counter() - start) * 1000

def read_small():
    start = time.perf_counter()
    with open(os.path.join(mnt, "small.txt"), "rb") as f:
        f.read()
    return (time.perf_counter() - start) * 1000

baseline_ls, baseline_cat, during_ls, during_cat, appends = [], [], [], [], []
inner_ls, inner_cat = [], []
for _ in range(rounds):
    shutil.copyfile(template, container)
    warm(container)
    subprocess.run([asicfs, "mount", container, mnt], check=True)
    try:
        for _ in range(10):
            baseline_ls.append(timed(["ls", "-l", mnt]))
            baseline_cat.append(timed(["cat", os.path.join(mnt, "small.txt")]))
        start = time.perf_counter()
        appender = subprocess.Popen(["sh", "-c", 'echo x >> "$1"', "sh", os.path.join(mnt, "big.bin")])
        while appender.poll() is None:
            during_ls.append(timed(["ls", "-l", mnt]))
            during_cat.append(timed(["cat", os.path.join(mnt, "small.txt")]))
            inner_ls.append(listed())
            inner_cat.append(read_small())
        appends.append((time.perf_counter() - start) * 1000)
        if appender.returncode != 0:
            sys.exit("the append failed")
    finally:
        subprocess.run([asicfs, "umount", mnt], check=True)
os.unlink(container)

def row(label, values):
    values = sorted(values)
    p90 = values[max(0, -(-len(values) * 9 // 10) - 1)]
    print(f"| {label} | {len(values)} | {statistics.median(values):.1f} | {p90:.1f} | {values[-1]:.1f} |")

print(f"{size_mib} MiB stored entry, {rounds} rounds, load {os.getloadavg()[0]:.2f}, binary {asicfs}")
print(f"append (echo x >> big.bin): median {statistics.median(appends):.0f} ms, max {max(appends):.0f} ms\n")
print("| ms | samples | median | p90 | max |\n|---|---|---|---|---|")
row("ls -l, idle", baseline_ls)
row("cat small.txt, idle", baseline_cat)
row("ls -l, during the append", during_ls)
row("cat small.txt, during the append", during_cat)
row("scandir + lstat (in-process), during the append", inner_ls)
row("open + read small.txt (in-process), during the append", inner_cat)
worst = max(during_ls + during_cat)
print(f"\ngoal: every sample during the append < 50 ms: {'PASS' if worst < 50 else 'MISS'} (worst {worst:.1f} ms)")
PY
