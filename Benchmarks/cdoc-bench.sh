#!/usr/bin/env bash
# CDOC decryption benchmark (issue 33): `asicfs encrypt` a 1 GiB file for an EC P-384
# certificate as CDOC2 and as CDOC 1.1, then time `asicfs decrypt --method key --stdout NAME`
# (release build; the output is discarded) against OpenSSL doing the same cipher over the same
# bytes: `openssl enc -chacha20 -d` for CDOC2 (ChaCha20 without Poly1305) and a one-shot
# AES-256-GCM decryption in Python's `cryptography` (OpenSSL's EVP underneath; `openssl enc` has
# no GCM) for CDOC 1.1. Not a test; CI never runs it. Prints a Markdown report.
#
#   Benchmarks/cdoc-bench.sh [--work DIR] [--size-mib N] [--runs N] [--asicfs PATH]
#
#   --work DIR     where the plaintext and containers are made (default $ASICFS_BENCH_DIR or
#                  /tmp/asicfs-bench, subfolder cdoc); the plaintext is reused when complete
#   --size-mib N   plaintext size (default 1024 = 1 GiB; random, so zlib stores it)
#   --runs N       runs of each measurement; the median is reported (default 3)
#   --asicfs PATH  the binary to measure (default: a release build in .build/release-bench)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$ROOT/Benchmarks/common.sh"
BASE=${ASICFS_BENCH_DIR:-/tmp/asicfs-bench}
SIZE_MIB=1024
RUNS=3
CLI=
while (($#)); do
  case "$1" in
    --work) BASE=$2; shift 2 ;;
    --size-mib) SIZE_MIB=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --asicfs) CLI=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
WORK=$BASE/cdoc
mkdir -p "$WORK"
CLI=$(bench_cli "$ROOT" "$CLI")

plain=$WORK/plain-$SIZE_MIB.bin
name=$(basename "$plain")
if [ ! -s "$plain" ] || [ "$(stat -c %s "$plain")" != $((SIZE_MIB << 20)) ]; then
  head -c $((SIZE_MIB << 20)) /dev/urandom > "$plain"
fi
bytes=$(stat -c %s "$plain")
key=$WORK/recipient.key cert=$WORK/recipient.pem
[ -s "$cert" ] || openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-384 -nodes -keyout "$key" -out "$cert" \
  -subj /CN=cdoc-bench -days 3650 -addext keyUsage=critical,keyAgreement 2>/dev/null

# "SECONDS PEAK-KIB" of one command (GNU time); a failing command prints "failed" and its
# last line of stderr, and returns 1.
measure() {
  if /usr/bin/time -f '%e %M' -o "$WORK/time" "$@" >/dev/null 2>"$WORK/stderr"; then cat "$WORK/time"
  else echo "failed: $(tail -n1 "$WORK/stderr" | tr -d '\n')"; return 1; fi
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mbps() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.0f", b / 1048576 / s }'; }
expected=$(sha256sum < "$plain" | cut -d' ' -f1)

# A row's cells: "seconds | MiB/s | peak RSS" of the median run, or the failure in the first cell.
declare -A enc dec size
for format in cdoc2 cdoc; do
  container=$WORK/plain-$SIZE_MIB.$format
  enc_times=(); dec_times=(); dec_rss=(); failure=
  for ((run = 0; run < RUNS; run++)); do
    rm -f "$container"
    if ! out=$(measure "$CLI" encrypt "$container" "$plain" --recipient "$cert" --format "$format"); then failure="encrypt $out"; break; fi
    read -r t _ <<<"$out"; enc_times+=("$t")
    if ! out=$(measure "$CLI" decrypt "$container" --stdout "$name" --method key "key-file=$key"); then failure="decrypt $out"; break; fi
    read -r t r <<<"$out"; dec_times+=("$t"); dec_rss+=("$r")
  done
  size[$format]=$(stat -c %s "$container" 2>/dev/null || echo "no")
  if [ -n "$failure" ]; then
    enc[$format]="${failure//|/\\|} | | "; dec[$format]=${enc[$format]}
    [ ${#enc_times[@]} -gt 0 ] && enc[$format]="$(printf '%s\n' "${enc_times[@]}" | median) | $(mbps "$(printf '%s\n' "${enc_times[@]}" | median)") | —"
    continue
  fi
  # Once, untimed: the decryption gives back the plaintext byte for byte.
  got=$("$CLI" decrypt "$container" --stdout "$name" --method key "key-file=$key" | sha256sum | cut -d' ' -f1)
  [ "$got" = "$expected" ] || { echo "cdoc-bench: the decrypted $format file differs" >&2; exit 1; }
  t=$(printf '%s\n' "${enc_times[@]}" | median); enc[$format]="$t | $(mbps "$t") | —"
  t=$(printf '%s\n' "${dec_times[@]}" | median)
  dec[$format]="$t | $(mbps "$t") | $(( $(printf '%s\n' "${dec_rss[@]}" | sort -n | tail -1) / 1024 )) MiB"
done

chacha=(); gcm=()
hexkey=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
head -c 12 /dev/urandom > "$WORK/gcm.iv"
python3 - "$plain" "$WORK/gcm.ct" "$hexkey" "$WORK/gcm.iv" <<'PY'
import sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(AESGCM(bytes.fromhex(sys.argv[3])).encrypt(open(sys.argv[4], "rb").read(), data, None))
PY
for ((run = 0; run < RUNS; run++)); do
  out=$(measure openssl enc -chacha20 -d -K "$hexkey" -iv 00000000000000000000000000000000 -in "$plain" -out /dev/null)
  read -r t _ <<<"$out"; chacha+=("$t")
  # The decryption alone, timed inside Python (reading the file is not counted).
  t=$(python3 - "$WORK/gcm.ct" "$hexkey" "$WORK/gcm.iv" <<'PY'
import sys, time
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
data = open(sys.argv[1], "rb").read()
aead, iv = AESGCM(bytes.fromhex(sys.argv[2])), open(sys.argv[3], "rb").read()
start = time.monotonic(); aead.decrypt(iv, data, None); print(f"{time.monotonic() - start:.2f}")
PY
  ); gcm+=("$t")
done
rm -f "$WORK/gcm.ct"
ossl_chacha=$(printf '%s\n' "${chacha[@]}" | median)
ossl_gcm=$(printf '%s\n' "${gcm[@]}" | median)

cat <<REPORT
# CDOC decryption benchmark — $(date -u +%Y-%m-%d)

Plaintext: $SIZE_MIB MiB of random bytes (one file), encrypted by \`asicfs encrypt\` for one EC P-384
certificate: CDOC2 ${size[cdoc2]} bytes, CDOC 1.1 ${size[cdoc]} bytes. Decryption: \`asicfs decrypt
--method key --stdout NAME\` (release build), output discarded. Median of $RUNS runs; page cache warm.
Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')),
load average when done: $(cut -d' ' -f1-3 /proc/loadavg) (a shared machine makes the figures indicative only).

| what | seconds | MiB/s | peak RSS |
|---|---|---|---|
| asicfs CDOC2 decrypt (ChaCha20-Poly1305 + inflate + tar) | ${dec[cdoc2]} |
| \`openssl enc -chacha20 -d\` over the same bytes (no Poly1305, no zlib) | $ossl_chacha | $(mbps "$ossl_chacha") | — |
| asicfs CDOC 1.1 decrypt (XML, base64, AES-256-GCM) | ${dec[cdoc]} |
| AES-256-GCM one-shot decrypt of the same bytes (Python \`cryptography\`, OpenSSL EVP) | $ossl_gcm | $(mbps "$ossl_gcm") | — |
| asicfs CDOC2 encrypt (tar + deflate + ChaCha20-Poly1305) | ${enc[cdoc2]} |
| asicfs CDOC 1.1 encrypt | ${enc[cdoc]} |
REPORT
