#!/usr/bin/env bash
# CDOC decryption benchmark (issue 33): decrypt a 1 GiB CDOC2 file through the CDOC module
# (Benchmarks/cdoc-check, release build: ChaCha20-Poly1305 → zlib → tar, every byte hashed or
# counted) and compare with `openssl enc -chacha20` over the same number of bytes. Not a test;
# CI never runs it. Prints a Markdown report.
#
#   Benchmarks/cdoc-bench.sh [--work DIR] [--size-mib N] [--runs N]
#
#   --work DIR     where the plaintext and containers are made (default $ASICFS_BENCH_DIR or
#                  /tmp/asicfs-bench, subfolder cdoc); reused when complete
#   --size-mib N   plaintext size (default 1024 = 1 GiB; random, so zlib stores it)
#   --runs N       runs of each measurement; the median is reported (default 3)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE=${ASICFS_BENCH_DIR:-/tmp/asicfs-bench}
SIZE_MIB=1024
RUNS=3
while (($#)); do
  case "$1" in
    --work) BASE=$2; shift 2 ;;
    --size-mib) SIZE_MIB=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
WORK=$BASE/cdoc
mkdir -p "$WORK"
PATH="/opt/swift/usr/bin:$PATH" swift build -c release --product cdoc-check --scratch-path "$ROOT/.build/release-bench" >/dev/null
CHECK=$ROOT/.build/release-bench/release/cdoc-check

plain=$WORK/plain-$SIZE_MIB.bin
key=$WORK/key.bin
container=$WORK/plain-$SIZE_MIB.cdoc2
if [ ! -s "$plain" ] || [ "$(stat -c %s "$plain")" != $((SIZE_MIB << 20)) ]; then
  head -c $((SIZE_MIB << 20)) /dev/urandom > "$plain"
fi
[ -s "$key" ] || head -c 32 /dev/urandom > "$key"
bytes=$(stat -c %s "$plain")

# "SECONDS PEAK-KIB" of one command (GNU time).
measure() { /usr/bin/time -f '%e %M' -o "$WORK/time" "$@" >/dev/null; cat "$WORK/time"; }
# Once, untimed: the decryption gives back the plaintext byte for byte.
"$CHECK" encrypt "$container" --secret-file "$key" "$plain"
got=$("$CHECK" decrypt "$container" --secret-file "$key" | cut -f3)
[ "$got" = "$(sha256sum "$plain" | cut -d' ' -f1)" ] || { echo "cdoc-bench: the decrypted file differs" >&2; exit 1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mbps() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.0f", b / 1048576 / s }'; }

enc_times=(); dec_times=(); dec_rss=(); ossl_times=()
for ((run = 0; run < RUNS; run++)); do
  # A failing command stops the script (set -e on the assignments).
  out=$(measure "$CHECK" encrypt "$container" --secret-file "$key" "$plain"); read -r t _ <<<"$out"; enc_times+=("$t")
  out=$(measure "$CHECK" decrypt "$container" --secret-file "$key" --discard); read -r t rss <<<"$out"; dec_times+=("$t"); dec_rss+=("$rss")
  out=$(measure openssl enc -chacha20 -d -K "$(od -An -tx1 "$key" | tr -d ' \n')" -iv 00000000000000000000000000000000 \
    -in "$plain" -out /dev/null); read -r t _ <<<"$out"; ossl_times+=("$t")
done
enc=$(printf '%s\n' "${enc_times[@]}" | median)
dec=$(printf '%s\n' "${dec_times[@]}" | median)
ossl=$(printf '%s\n' "${ossl_times[@]}" | median)
rss=$(printf '%s\n' "${dec_rss[@]}" | sort -n | tail -1)

cat <<REPORT
# CDOC decryption benchmark — $(date -u +%Y-%m-%d)

Plaintext: $SIZE_MIB MiB of random bytes (one file); container $(stat -c %s "$container") bytes.
Median of $RUNS runs; page cache warm. Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')),
shared with other builds and benchmarks while this ran, so the figures are indicative only.

| what | seconds | MiB/s | peak RSS |
|---|---|---|---|
| asicfs CDOC2 decrypt (ChaCha20-Poly1305 + inflate + tar, bytes counted) | $dec | $(mbps "$dec") | $((rss / 1024)) MiB |
| \`openssl enc -chacha20 -d\` over the same bytes (no Poly1305, no zlib) | $ossl | $(mbps "$ossl") | — |
| asicfs CDOC2 encrypt (tar + deflate + ChaCha20-Poly1305) | $enc | $(mbps "$enc") | — |
| CDOC 1.1 (AES-256-GCM) decrypt vs \`openssl enc -aes-256-ctr\` | **slot: not measured** — the CDOC 1.x reader is on the cdoc1 branch | | |

Ratio asicfs decrypt / openssl enc: $(awk -v a="$dec" -v b="$ossl" 'BEGIN { printf "%.2f", a / b }')×.
REPORT
