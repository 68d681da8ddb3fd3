#!/usr/bin/env bash
# Where fsbench's W6 (`cp` of 1,000 small files into a mounted container) spends its time, per
# FUSE request, for asicfs and fuse-zip: the kernel's fuse_request_send/fuse_request_end
# tracepoints give how long the daemon took to answer each request (by opcode) and how long
# the copying program took to send the next one after an answer (by pair of opcodes: the
# wake-up of `cp` plus its own work between the two calls); sched_switch tells on which CPUs
# `cp` and the daemon ran. The page cache is dropped before each mount, as fsbench does.
# Needs root (tracefs, drop_caches). Not run by CI.
#
#   Benchmarks/fuse-request-trace.sh [--runs N] [--cli PATH] [--data DIR]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATA=/var/tmp/asicfs-fsbench/data
RUNS=3
CLI=
while (($#)); do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --cli) CLI=$(realpath "$2"); shift 2 ;;
    --data) DATA=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
source "$ROOT/Benchmarks/common.sh"
CLI=$(bench_cli "$ROOT" "$CLI")
SOURCES="$DATA/src/w6"
BASE="$DATA/small5.asice"
[ -d "$SOURCES" ] && [ -f "$BASE" ] || { echo "no fsbench data in $DATA (python3 ../shared/bench/fsbench.py gen)" >&2; exit 1; }
command -v fuse-zip >/dev/null || { echo "fuse-zip is missing (Benchmarks/install-peers.sh)" >&2; exit 1; }
TRACING=/sys/kernel/tracing
[ -d "$TRACING/events/fuse" ] || mount -t tracefs nodev "$TRACING"

WORK=$(mktemp -d /var/tmp/asicfs-trace.XXXXXX)
trap 'echo 0 > "$TRACING/tracing_on"; rm -rf "$WORK"' EXIT

trace_once() {  # system run
  local dir="$WORK/$1-$2"
  mkdir -p "$dir/m"
  cp "$BASE" "$dir/c.asice"
  sync; echo 3 > /proc/sys/vm/drop_caches
  case "$1" in
    asicfs) "$CLI" mount "$dir/c.asice" "$dir/m" ;;
    fuse-zip) fuse-zip "$dir/c.asice" "$dir/m" ;;
  esac
  echo > "$TRACING/trace"
  echo 1 > "$TRACING/events/fuse/enable"
  echo 1 > "$TRACING/events/sched/sched_switch/enable"
  echo 1 > "$TRACING/tracing_on"
  cp "$SOURCES"/* "$dir/m/"
  echo 0 > "$TRACING/tracing_on"
  echo 0 > "$TRACING/events/fuse/enable"
  echo 0 > "$TRACING/events/sched/sched_switch/enable"
  cp "$TRACING/trace" "$WORK/trace-$1-$2.txt"
  case "$1" in
    asicfs) "$CLI" umount "$dir/m" ;;
    fuse-zip) fusermount3 -u "$dir/m"; while pgrep -f "fuse-zip $dir/c.asice" >/dev/null; do sleep 0.05; done ;;
  esac
}

for run in $(seq 1 "$RUNS"); do
  for system in asicfs fuse-zip; do trace_once "$system" "$run"; done
done

python3 - "$WORK" "$RUNS" <<'EOF'
import collections, re, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
line_re = re.compile(r'^\s*(\S+)-(\d+)\s+\[(\d+)\]\s.*?\s(\d+\.\d+): (fuse_request_send|fuse_request_end|sched_switch): (.*)$')
def analyse(path):
    answer = collections.defaultdict(list)   # opcode -> daemon's answer times (µs)
    gap = collections.defaultdict(list)      # (answered opcode, next opcode) -> µs
    cpus = collections.Counter()             # (program, cpu) of every request event
    sent, last_end, first, last = {}, None, None, None
    for line in open(path):
        m = line_re.match(line)
        if not m or m.group(5) == 'sched_switch':
            continue
        comm, cpu, t, kind, rest = m.group(1), m.group(3), float(m.group(4)), m.group(5), m.group(6)
        first = first if first is not None else t
        last = t
        unique = re.search(r'req (\d+)', rest).group(1)
        if kind == 'fuse_request_send':
            op = re.search(r'\((\w+)\)', rest).group(1).replace('FUSE_', '')
            sent[unique] = (t, op)
            cpus[('client', cpu)] += 1
            if last_end:
                gap[(last_end[1], op)].append((t - last_end[0]) * 1e6)
        elif unique in sent:
            t0, op = sent.pop(unique)
            answer[op].append((t - t0) * 1e6)
            last_end = (t, op)
            cpus[('daemon', cpu)] += 1
    return answer, gap, cpus, (last - first) * 1e3
for system in ('asicfs', 'fuse-zip'):
    print(f"\n## {system} ({runs} runs)\n")
    spans, answers, gaps, same = [], collections.defaultdict(list), collections.defaultdict(list), []
    for run in range(1, runs + 1):
        answer, gap, cpus, span = analyse(f"{work}/trace-{system}-{run}.txt")
        spans.append(span)
        for op, values in answer.items(): answers[op].append(sum(values) / 1e3)
        for pair, values in gap.items(): gaps[pair].append((sum(values) / 1e3, statistics.median(values), len(values)))
        client = max((c for c in cpus if c[0] == 'client'), key=cpus.get)[1]
        daemon = max((c for c in cpus if c[0] == 'daemon'), key=cpus.get)[1]
        same.append('same CPU' if client == daemon else 'two CPUs')
    print(f"cp from first to last request: {', '.join(f'{s:.0f}' for s in spans)} ms; mostly on: {', '.join(same)}")
    total_answer = [sum(v[i] for v in answers.values()) for i in range(runs)]
    total_gap = [sum(v[i][0] for v in gaps.values() if len(v) > i) for i in range(runs)]
    print(f"in the daemon (send to answer): {', '.join(f'{x:.0f}' for x in total_answer)} ms; "
          f"between an answer and the next request: {', '.join(f'{x:.0f}' for x in total_gap)} ms\n")
    print("| after -> next request | count (median of runs) | median gap (µs) | total (ms), per run |")
    print("|---|---|---|---|")
    for pair, values in sorted(gaps.items(), key=lambda kv: -statistics.median(v[0] for v in kv[1])):
        print(f"| {pair[0]} -> {pair[1]} | {statistics.median(v[2] for v in values):.0f} | {statistics.median(v[1] for v in values):.0f} | "
              f"{', '.join(f'{v[0]:.1f}' for v in values)} |")
EOF
