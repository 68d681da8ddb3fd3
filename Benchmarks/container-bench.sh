#!/usr/bin/env bash
# Container-core benchmark: asicfs against cat, openssl, unzip -p and Python's zipfile, on the
# same machine in the same run. Run by `make bench` (never by CI). See Benchmarks/README.md.
#
#   Benchmarks/container-bench.sh [--work DIR] [--size-mib N] [--runs N] [--count N] [--quick]
#
#   --work DIR      test data folder (default $ASICFS_BENCH_DIR or /tmp/asicfs-bench); reused
#                   when its files are already there
#   --size-mib N    size of the data file (default 1024 = 1 GiB)
#   --runs N        runs of each throughput measurement; the best is kept (default 2)
#   --count N       random reads (default 2000)
#   --quick         --size-mib 64 --runs 1 (a smoke run of the harness itself)
#
# The page cache is left warm on purpose (no root-only drop_caches): every input is read once
# before timing, every tool runs --runs times, and the fastest run counts. So the numbers are
# CPU cost of each tool on cached data, not disk speed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${ASICFS_BENCH_DIR:-/tmp/asicfs-bench}
SIZE_MIB=1024
RUNS=2
COUNT=2000
while (($#)); do
  case "$1" in
    --work) WORK=$2; shift 2 ;;
    --size-mib) SIZE_MIB=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --count) COUNT=$2; shift 2 ;;
    --quick) SIZE_MIB=64; RUNS=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

export PATH="/opt/swift/usr/bin:$PATH"
SCRATCH="$ROOT/.build/release-bench"
BENCH="$SCRATCH/release/asicfs-bench"
CLI="$SCRATCH/release/asicfs"
OUT_DIR="$ROOT/Benchmarks/out"
STAMP=$(date +%Y%m%d-%H%M%S)
mkdir -p "$WORK" "$OUT_DIR"
LOG="$OUT_DIR/container-bench-$STAMP.log"     # raw RESULT lines and tool output
TSV="$OUT_DIR/container-bench-$STAMP.tsv"     # one row per measurement
REPORT="$OUT_DIR/container-bench-$STAMP.md"
: >"$LOG"; : >"$TSV"
say() { echo "== $*" >&2; }

# --- tools -----------------------------------------------------------------------------------
need=()
[ -x /usr/bin/time ] || need+=(time)
command -v unzip >/dev/null || need+=(unzip)
command -v openssl >/dev/null || need+=(openssl)
command -v python3 >/dev/null || need+=(python3)
if ((${#need[@]})); then
  say "installing ${need[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# The interpreter itself, not a version-manager shim (pyenv's costs ~0.25 s per start).
PY=$(python3 -c 'import sys; print(sys.executable)')

# --- build (own scratch path: never contends with other builds in .build/) ---------------------
say "building asicfs-bench (release, $SCRATCH)"
(cd "$ROOT" && swift build -c release --scratch-path "$SCRATCH" --product asicfs-bench 2>&1 \
  | { grep -v "^warning: '[^']*': " || true; } >&2)   # hide SwiftPM's package-layout warnings
# The CLI is an extra row when it builds; the harness does not depend on it.
if (cd "$ROOT" && swift build -c release --scratch-path "$SCRATCH" --product asicfs >>"$LOG" 2>&1); then
  say "built asicfs CLI too"
else
  say "asicfs CLI did not build (see $LOG); its row is skipped"
  CLI=""
fi
[ -n "$CLI" ] && [ -x "$CLI" ] || CLI=""

# --- test data ---------------------------------------------------------------------------------
SIZE=$((SIZE_MIB << 20))
PLAIN="$WORK/plain-${SIZE_MIB}M.txt"
STORED="$WORK/stored-${SIZE_MIB}M.asice"
DEFLATED="$WORK/deflated-${SIZE_MIB}M.asice"
ADDED="$WORK/added-1M.txt"
NAME=data.txt

if [ ! -f "$PLAIN" ] || [ "$(stat -c %s "$PLAIN")" -ne "$SIZE" ]; then
  say "generating $PLAIN ($SIZE_MIB MiB of log-like text)"
  "$PY" - "$PLAIN.tmp" "$SIZE" <<'PY'
# Log lines and prose from a Zipf-distributed 4,000-word vocabulary with letter frequencies of
# English: deflate level 6 makes it about 3x smaller, like real logs or XML. Lines are drawn
# from a pool of 150,000 so generation runs at ~60 MB/s (repeats are farther apart than
# deflate's 32 KiB window, so they do not inflate the ratio).
import itertools, random, sys
path, size = sys.argv[1], int(sys.argv[2])
rng = random.Random(20240501)
letters = "etaoinshrdlcumwfgypbvkjxqz"
freq = [12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8, 2.4, 2.4, 2.2, 2.0, 2.0, 1.9,
        1.5, 1.0, 0.8, 0.15, 0.15, 0.1, 0.07]
vocab = set()
while len(vocab) < 4000:
    n = min(14, max(1, int(rng.expovariate(1 / 5.5)) + 1))
    vocab.add("".join(rng.choices(letters, freq, k=n)))
vocab = sorted(vocab)
rng.shuffle(vocab)
cum = list(itertools.accumulate(1 / (i + 1) ** 1.1 for i in range(len(vocab))))
levels = ["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"]
pool, t = [], 1_700_000_000
for _ in range(150_000):
    t += rng.randint(0, 3)
    words = " ".join(rng.choices(vocab, cum_weights=cum, k=rng.randint(4, 14)))
    if rng.random() < 0.8:
        pool.append("%d.%03d %s worker-%d %s id=%06x n=%d\n" % (
            t, rng.randint(0, 999), rng.choice(levels), rng.randint(1, 32), words,
            rng.getrandbits(20), rng.randint(0, 9999)))
    else:
        pool.append(words.capitalize() + ".\n")
with open(path, "wb") as out:
    written = 0
    while written < size:
        chunk = "".join(rng.choices(pool, k=12000)).encode()[: size - written]
        out.write(chunk)
        written += len(chunk)
PY
  mv "$PLAIN.tmp" "$PLAIN"
  rm -f "$STORED" "$DEFLATED" "$ADDED"
fi

make_container() { # OUT METHOD(stored|deflated)
  say "creating $1 with Python zipfile ($2)"
  "$PY" - "$1.tmp" "$PLAIN" "$NAME" "$2" <<'PY'
# ASiC-E rules: `mimetype` first, stored, no extra field; then the data; then the manifest.
import sys, zipfile
out, plain, name, method = sys.argv[1:5]
manifest = f"""<?xml version="1.0" encoding="UTF-8" standalone="no" ?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">
  <manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/>
  <manifest:file-entry manifest:full-path="{name}" manifest:media-type="text/plain"/>
</manifest:manifest>
"""
with zipfile.ZipFile(out, "w") as z:
    info = zipfile.ZipInfo("mimetype", date_time=(2024, 5, 1, 12, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    z.writestr(info, "application/vnd.etsi.asic-e+zip")
    if method == "stored":
        z.write(plain, name, compress_type=zipfile.ZIP_STORED)
    else:
        z.write(plain, name, compress_type=zipfile.ZIP_DEFLATED, compresslevel=6)
    z.writestr("META-INF/manifest.xml", manifest, compress_type=zipfile.ZIP_DEFLATED)
PY
  mv "$1.tmp" "$1"
}
[ -f "$STORED" ] && [ "$STORED" -nt "$PLAIN" ] || make_container "$STORED" stored
[ -f "$DEFLATED" ] && [ "$DEFLATED" -nt "$PLAIN" ] || make_container "$DEFLATED" deflated
[ -f "$ADDED" ] || head -c $((1 << 20)) "$PLAIN" | tr 'a-z' 'b-za' >"$ADDED"

say "checking asicfs-bench reads both containers back byte for byte"
for c in "$STORED" "$DEFLATED"; do
  "$BENCH" extract "$c" "$NAME" 2>>"$LOG" | cmp -s - "$PLAIN" || { echo "extract of $c differs from $PLAIN" >&2; exit 1; }
done
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
if [ -n "$CLI" ] && ! "$CLI" extract "$STORED" "$NAME" -p 2>>"$LOG" | cmp -s - "$PLAIN"; then
  say "asicfs extract -p did not reproduce the data file; its row is skipped"
  CLI=""
fi
say "warming the page cache (load average $LOAD_BEFORE)"
cat "$PLAIN" "$STORED" "$DEFLATED" >/dev/null

# --- measuring ---------------------------------------------------------------------------------
# measure KIND TOOL BYTES CMD... : runs CMD $RUNS times (stdout to /dev/null), keeps the fastest
# wall time, the smallest CPU time (user + sys) and the largest peak RSS (all from /usr/bin/time -v
# except wall time, taken with \$EPOCHREALTIME); appends a TSV row.
measure() {
  local kind=$1 tool=$2 bytes=$3; shift 3
  local best="" cpu="" rss=0 i t0 t1 wall r c tfile="$WORK/.time.$$"
  for ((i = 0; i < RUNS; i++)); do
    t0=$EPOCHREALTIME
    /usr/bin/time -v -o "$tfile" "$@" >/dev/null 2>>"$LOG"
    t1=$EPOCHREALTIME
    wall=$("$PY" -c "print(f'{$t1 - $t0:.4f}')")
    r=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tfile")
    c=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$tfile")
    if [ -z "$best" ] || "$PY" -c "import sys; sys.exit(0 if $wall < $best else 1)"; then best=$wall; fi
    if [ -z "$cpu" ] || "$PY" -c "import sys; sys.exit(0 if $c < $cpu else 1)"; then cpu=$c; fi
    if ((r > rss)); then rss=$r; fi
  done
  rm -f "$tfile"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$tool" "$bytes" "$best" "$rss" "$cpu" >>"$TSV"
  say "$(printf '%-9s %-36s %8.3f s  (cpu %6.2f s)  %6.1f MiB RSS' "$kind" "$tool" "$best" "$cpu" "$("$PY" -c "print($rss/1024)")")"
}

PYREAD="$WORK/zipfile_read.py"
cat >"$PYREAD" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as f:
    out = sys.stdout.buffer
    while b := f.read(1 << 20):
        out.write(b)
PY
PYSEEK="$WORK/zipfile_seek.py"
cat >"$PYSEEK" <<'PY'
# Random 4 KiB reads with ZipExtFile.seek: the only random access Python's zipfile has.
import random, sys, time, zipfile
path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(7)
with zipfile.ZipFile(path) as z, z.open(name) as f:
    size = z.getinfo(name).file_size
    lat = []
    for _ in range(count):
        off = rng.randrange(size - 4096)
        t = time.perf_counter(); f.seek(off); f.read(4096); lat.append((time.perf_counter() - t) * 1000)
s = sorted(lat)
pick = lambda p: s[max(0, min(len(s) - 1, -(-int(p * len(s) * 1000) // 1000) - 1))]
print(f"RESULT pyseek count={count} first_ms={lat[0]:.3f} p50_ms={pick(0.5):.3f} p99_ms={pick(0.99):.3f} max_ms={s[-1]:.3f}")
PY

for variant in stored deflated; do
  c=$STORED; [ $variant = deflated ] && c=$DEFLATED
  measure $variant "unzip -p" "$SIZE" unzip -p "$c" "$NAME"
  measure $variant "python3 zipfile (1 MiB reads)" "$SIZE" "$PY" "$PYREAD" "$c" "$NAME"
  measure $variant "asicfs-bench extract" "$SIZE" "$BENCH" extract "$c" "$NAME"
  measure $variant "asicfs-bench extract --via content" "$SIZE" "$BENCH" extract "$c" "$NAME" --via content
  if [ -n "$CLI" ]; then measure $variant "asicfs extract -p" "$SIZE" "$CLI" extract "$c" "$NAME" -p; fi
done
measure plain "cat" "$SIZE" cat "$PLAIN"
measure plain "openssl dgst -sha256" "$SIZE" openssl dgst -sha256 "$PLAIN"

# --- random reads ------------------------------------------------------------------------------
say "random reads: $COUNT x 4 KiB (cold index, then warm)"
for variant in deflated stored; do
  c=$STORED; [ $variant = deflated ] && c=$DEFLATED
  tfile="$WORK/.time.$$"
  /usr/bin/time -v -o "$tfile" "$BENCH" random "$c" "$NAME" --count "$COUNT" --size 4096 --seed 42 --warm \
    --verify "$PLAIN" | sed "s/^RESULT /RESULT $variant /" | tee -a "$LOG" >&2
  printf 'rss\trandom %s\t0\t0\t%s\t0\n' "$variant" "$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tfile")" >>"$TSV"
  rm -f "$tfile"
done
PYSEEK_COUNT=$((COUNT < 10 ? COUNT : 10))
say "python3 zipfile seek+read: $PYSEEK_COUNT reads (it inflates from the start for each)"
"$PY" "$PYSEEK" "$DEFLATED" "$NAME" "$PYSEEK_COUNT" | tee -a "$LOG" >&2

# --- adding a 1 MiB file -----------------------------------------------------------------------
# Every run works on a fresh copy (not timed); `sync` first so no earlier writeback is charged.
say "adding 1 MiB to the ${SIZE_MIB} MiB stored container"
ADDC="$WORK/add-test.asice"
add_run() { # LABEL CMD... (CMD sees the copy as $ADDC)
  local label=$1 best="" i t0 t1 wall; shift
  for ((i = 0; i < RUNS; i++)); do
    rm -f "$ADDC"; cp "$STORED" "$ADDC"; sync
    t0=$EPOCHREALTIME
    "$@" >>"$LOG" 2>&1
    t1=$EPOCHREALTIME
    wall=$("$PY" -c "print(f'{$t1 - $t0:.4f}')")
    if [ -z "$best" ] || "$PY" -c "import sys; sys.exit(0 if $wall < $best else 1)"; then best=$wall; fi
  done
  rm -f "$ADDC"
  printf 'add\t%s\t%s\t%s\t0\t0\n' "$label" "$(stat -c %s "$STORED")" "$best" >>"$TSV"
  say "$(printf 'add       %-44s %8.3f s' "$label" "$best")"
}
py_append() {
  "$PY" - "$ADDC" "$ADDED" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "a") as z:
    z.write(sys.argv[2], "added-1M.txt", compress_type=zipfile.ZIP_DEFLATED)
fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.close(fd)
PY
}
copy_sync() { cp --reflink=never "$ADDC" "$ADDC.copy" && sync "$ADDC.copy" && rm -f "$ADDC.copy"; }
add_run "asicfs-bench add (append path)" "$BENCH" add "$ADDC" "$ADDED"
add_run "asicfs-bench add --rewrite (full rewrite)" "$BENCH" add "$ADDC" "$ADDED" --rewrite
add_run "cp + fsync of the container (copy floor)" copy_sync
add_run "python3 zipfile 'a' + fsync (in place)" py_append

# --- report ------------------------------------------------------------------------------------
if [ -e "$ROOT/.git" ]; then
  commit=$(git -C "$ROOT" rev-parse --short HEAD)
  [ -z "$(git -C "$ROOT" status --porcelain -- Sources Package.swift)" ] || commit="$commit + uncommitted changes in Sources"
else
  commit="$(head -c 7 "$ROOT/.snapshot-commit" 2>/dev/null || echo "unknown commit") (source snapshot)"
fi
export B_LOAD="$LOAD_BEFORE before, $(cut -d' ' -f1-3 /proc/loadavg) after" B_TSV=$TSV B_LOG=$LOG B_REPORT=$REPORT B_SIZE=$SIZE B_RUNS=$RUNS B_COUNT=$COUNT B_STAMP=$STAMP \
  B_COMMIT=$commit B_DEFLATED_BYTES=$(stat -c %s "$DEFLATED") \
  B_CPU="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM, kernel $(uname -r)" \
  B_SWIFT="$(swift --version 2>&1 | grep -m1 -o 'Swift version [^ ]*')" \
  B_TOOLS="$(unzip -v | head -1 | cut -d, -f1); Python $("$PY" -c 'import platform, zlib; print(platform.python_version(), "with zlib", zlib.ZLIB_RUNTIME_VERSION)'); $(openssl version | cut -d' ' -f1-2); $(cat --version | head -1)"
"$PY" - <<'PY'
import os, re
E = os.environ
rows = [l.rstrip("\n").split("\t") for l in open(E["B_TSV"])]
res = [l for l in open(E["B_LOG"]) if l.startswith("RESULT ")]
kv = lambda line: dict(re.findall(r"(\w+)=(\S+)", line))
size, count = int(E["B_SIZE"]), E["B_COUNT"]
tp = {(r[0], r[1]): (int(r[2]), float(r[3]), int(r[4]), float(r[5])) for r in rows if r[0] in ("stored", "deflated", "plain")}
mbps = lambda k: tp[k][0] / 1e6 / tp[k][1] if k in tp else None
out = []
P = out.append
P(f"# asicfs container benchmark ({E['B_STAMP']})\n")
P(f"- machine: {E['B_CPU']}; load average (1, 5, 15 min) {E['B_LOAD']}")
P(f"- asicfs {E['B_COMMIT']}; {E['B_SWIFT']}; peers: {E['B_TOOLS']}")
P(f"- data: {size >> 20} MiB of log-like text, one entry `data.txt`; deflated entry {int(E['B_DEFLATED_BYTES']):,} bytes "
  f"(ratio {size / int(E['B_DEFLATED_BYTES']):.2f}x, Python zipfile, zlib level 6)")
P(f"- warm page cache, best of {E['B_RUNS']} runs, output to /dev/null; MB/s = 10^6 bytes of uncompressed data per second, "
  "process start included; cpu s = user + system time of the run that used least; "
  "peak RSS from `/usr/bin/time -v` (largest over the runs)\n")
P("## Extract throughput\n")
P("| tool | stored MB/s | stored s (cpu s) | stored peak RSS | deflated MB/s | deflated s (cpu s) | deflated peak RSS |")
P("|---|---:|---:|---:|---:|---:|---:|")
def cell(k):
    if k not in tp: return "–", "–", "–"
    b, s, r, c = tp[k]
    return f"{b / 1e6 / s:,.0f}", f"{s:.3f} ({c:.2f})", f"{r / 1024:.1f} MiB"
for tool in ["cat", "openssl dgst -sha256"]:
    a = cell(("plain", tool))
    P(f"| `{tool}` of the plain file | {a[0]} | {a[1]} | {a[2]} | | | |")
tools = []
for r in rows:
    if r[0] in ("stored", "deflated") and r[1] not in tools: tools.append(r[1])
for tool in tools:
    a, b = cell(("stored", tool)), cell(("deflated", tool))
    P(f"| `{tool}` | {a[0]} | {a[1]} | {a[2]} | {b[0]} | {b[1]} | {b[2]} |")

rnd = {}
for l in res:
    m = re.match(r"RESULT (stored|deflated) random pass=(\w+)", l)
    if m: rnd[(m.group(1), m.group(2))] = kv(l)
rss = {r[1]: int(r[4]) for r in rows if r[0] == "rss"}
py = next((kv(l) for l in res if l.startswith("RESULT pyseek")), None)
P(f"\n## Random 4 KiB reads ({count} per pass, uniform offsets, seed 42, each checked against the plain file)\n")
P("| entry | pass | first read ms | p50 ms | p90 ms | p99 ms | max ms | reads > 5 ms | CPU p50 / p99 ms | peak RSS |")
P("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for v in ("deflated", "stored"):
    for p in ("cold", "warm"):
        d = rnd.get((v, p))
        if d:
            P(f"| {v} | {p} | {d['first_ms']} | {d['p50_ms']} | {d['p90_ms']} | {d['p99_ms']} | {d['max_ms']} | "
              f"{d['over_5ms']} | {d['cpu_p50_ms']} / {d['cpu_p99_ms']} | {rss.get('random ' + v, 0) / 1024:.1f} MiB |")
if py:
    P(f"| deflated | `python3 zipfile` seek+read ({py['count']} reads) | {py['first_ms']} | {py['p50_ms']} | | "
      f"{py['p99_ms']} | {py['max_ms']} | | | |")
P("\ncold: a fresh open, so the seek index is built by these reads themselves; "
  "warm: after one more read completed the index, new offsets. Latencies are wall time; "
  "CPU p50 / p99 is the reading thread's own CPU time per read (what the read costs on an idle machine).")
for l in res:
    if "random-index" in l:
        P(f"Completing the index after the cold pass ({l.split()[1]}): {kv(l)['complete_index_ms']} ms.")

P(f"\n## Adding a 1 MiB file to the {size >> 20} MiB stored container\n")
P("| operation | seconds |")
P("|---|---:|")
for r in rows:
    if r[0] == "add": P(f"| {r[1]} | {float(r[3]):.3f} |")

P("\n## Targets\n")
P("| target | measured | limit | result |")
P("|---|---:|---:|---|")
def target(label, value, limit, ok):
    P(f"| {label} | {value if value is not None else 'n/a'} | {limit} | "
      f"{'not measured' if value is None else ('PASS' if ok else '**MISS**')} |")
s, c = mbps(("stored", "asicfs-bench extract")), mbps(("plain", "cat"))
target("stored extract vs `cat`", s and f"{s / c:.2f}x", "≥ 0.90x", s and s / c >= 0.9)
d, p = mbps(("deflated", "asicfs-bench extract")), mbps(("deflated", "python3 zipfile (1 MiB reads)"))
target("deflated extract vs Python zipfile", d and f"{d / p:.2f}x", "≥ 1.00x", d and d / p >= 1.0)
for k in ("cold", "warm"):
    x = rnd.get(("deflated", k))
    target(f"random-read p99, deflated, {k} index", x and f"{x['p99_ms']} ms", "≤ 5 ms", x and float(x["p99_ms"]) <= 5)
x = rnd.get(("deflated", "warm"))
target("(same, warm, counting only the thread's CPU time)", x and f"{x['cpu_p99_ms']} ms", "≤ 5 ms", x and float(x["cpu_p99_ms"]) <= 5)
peaks = [v[2] for (_, t), v in tp.items() if t.startswith("asicfs")] + list(rss.values())
peak = max(peaks or [0])
target("peak RSS, every asicfs run above", f"{peak / 1024:.1f} MiB", "≤ 64 MiB", peak <= 64 * 1024)
open(E["B_REPORT"], "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
cp "$REPORT" "$OUT_DIR/latest.md"
say "report: $REPORT (also $OUT_DIR/latest.md); raw lines: $LOG"
