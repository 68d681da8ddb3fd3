#!/usr/bin/env bash
# Signature benchmarks (not a test; CI never runs it): how fast a signing hashes a large data file
# compared with `openssl dgst -sha256` (target >= 0.9x), what a whole signing costs, and how long
# `asicfs verify` takes per signature. Uses the loopback test PKI, TSA and OCSP (contrib/testpki).
#
#   Benchmarks/signature-bench.sh [--size MIB] [--runs N] [--signatures N] [--work DIR]
#
# Prints a markdown report and keeps it in Benchmarks/out/signature-bench-STAMP.md.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PATH=/opt/swift/usr/bin:$PATH
SIZE_MIB=1024
RUNS=3
SIGNATURES=20
WORK=${ASICFS_BENCH_DIR:-/tmp/asicfs-sigbench}
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE_MIB=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --signatures) SIGNATURES=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    *) echo "usage: $0 [--size MIB] [--runs N] [--signatures N] [--work DIR]" >&2; exit 2 ;;
  esac
done
SCRATCH="$ROOT/.build/release-bench"
OUT="$ROOT/Benchmarks/out"
STAMP=$(date -u +%Y%m%d-%H%M%S)
REPORT="$OUT/signature-bench-$STAMP.md"
mkdir -p "$WORK" "$OUT"
say() { printf '%s\n' "$*" >&2; }
now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.3f}')"; }

say "building asicfs and asicfs-bench (release, $SCRATCH)"
(cd "$ROOT" && swift build -c release --scratch-path "$SCRATCH" --product asicfs-bench >/dev/null \
  && swift build -c release --scratch-path "$SCRATCH" --product asicfs >/dev/null)
BIN="$SCRATCH/release"

# --- data: random bytes (stored in the container) and log-like text (deflated) --------------
plain="$WORK/random-$SIZE_MIB.bin"
text="$WORK/text-$SIZE_MIB.txt"
[ -s "$plain" ] || { say "generating $plain"; head -c "$((SIZE_MIB << 20))" /dev/urandom > "$plain"; }
[ -s "$text" ] || { say "generating $text"; python3 - "$text" "$SIZE_MIB" <<'PY'
import sys, random
random.seed(42)
words = "signature container the of and digital document Tallinn ASiC manifest data file time stamp OCSP".split()
line = lambda: " ".join(random.choice(words) for _ in range(12)) + "\n"
block = "".join(line() for _ in range(20000)).encode()
with open(sys.argv[1], "wb") as f:
    left = int(sys.argv[2]) << 20
    while left > 0:
        f.write(block[:left]); left -= len(block)
PY
}
for f in stored:"$plain" deflated:"$text"; do
  kind=${f%%:*}; src=${f#*:}
  [ -s "$WORK/$kind.asice" ] || "$BIN/asicfs" create "$WORK/$kind.asice" "$src" -q
done
cat "$plain" "$text" > /dev/null   # warm the page cache: this measures CPU cost, not the disk

# --- services: test PKI, TSA and OCSP on loopback ----------------------------------------------
rm -rf "$WORK/pki" && mkdir -p "$WORK/pki"
python3 "$ROOT/contrib/testpki/tsa_ocsp_server.py" --pki "$WORK/pki" --port 0 --exit-with-parent > "$WORK/server.out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '^PORT ' "$WORK/server.out" 2>/dev/null && break; sleep 0.05; done
port=$(sed -n 's/^PORT //p' "$WORK/server.out")
"$ROOT/contrib/testpki/mkpki.sh" "$WORK/pki" "http://127.0.0.1:$port/ocsp" > /dev/null
printf 'test1234\n' > "$WORK/pki/passphrase"
settings=(-o "tsa-url=http://127.0.0.1:$port/tsa" -o tsl=none -o "trust-anchors=$WORK/pki/root.pem" -o "cache-dir=$WORK/cache")
sign() { "$BIN/asicfs" sign "$1" --method pkcs12 "file=$WORK/pki/signer.p12" "passphrase-file=$WORK/pki/passphrase" "${settings[@]}" "${@:2}" > /dev/null; }

best() { sort -n | head -n 1; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

# --- 1. digest throughput --------------------------------------------------------------------
say "digest: openssl dgst -sha256 vs the signing's digest (asicfs-bench digest), best of $RUNS"
openssl_s=$(for _ in $(seq "$RUNS"); do t0=$(now); openssl dgst -sha256 "$plain" > /dev/null; elapsed "$t0" "$(now)"; done | best)
stored_s=$(for _ in $(seq "$RUNS"); do "$BIN/asicfs-bench" digest "$WORK/stored.asice" "$(basename "$plain")" | field seconds; done | best)
openssl_text_s=$(for _ in $(seq "$RUNS"); do t0=$(now); openssl dgst -sha256 "$text" > /dev/null; elapsed "$t0" "$(now)"; done | best)
deflated_s=$(for _ in $(seq "$RUNS"); do "$BIN/asicfs-bench" digest "$WORK/deflated.asice" "$(basename "$text")" | field seconds; done | best)
# The same text added by this process (what a mount does when a copied-in file closes): the
# save hashes the bytes it deflates, so the signing's digest needs no inflate.
printf 'contract\n' > "$WORK/contract.txt"
rm -f "$WORK/base.asice" && "$BIN/asicfs" create "$WORK/base.asice" "$WORK/contract.txt" -q
after_add=$("$BIN/asicfs-bench" digest "$WORK/base.asice" "$(basename "$text")" --after-add "$text")
after_add_s=$(echo "$after_add" | field seconds)
after_add_save_s=$(echo "$after_add" | field add_seconds)
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
mibs() { python3 -c "print(f'{$SIZE_MIB / $1:.0f}')"; }

# --- 2. whole signings -----------------------------------------------------------------------
say "signing the $SIZE_MIB MiB stored container: profile B and LT"
# Each run starts from a fresh copy with no dirty pages waiting (writeback would be timed too).
timed_sign() { cp "$WORK/stored.asice" "$WORK/$1.asice"; sync; t0=$(now); sign "$WORK/$1.asice" "${@:2}"; elapsed "$t0" "$(now)"; }
sign_b_s=$(for _ in $(seq "$RUNS"); do timed_sign sign-b -o profile=B; done | best)
sign_lt_s=$(for _ in $(seq "$RUNS"); do timed_sign sign-lt; done | best)
copy_s=$(for _ in $(seq "$RUNS"); do rm -f "$WORK/copy.asice"; sync; t0=$(now); cp "$WORK/stored.asice" "$WORK/copy.asice"; sync "$WORK/copy.asice"; elapsed "$t0" "$(now)"; done | best)
rm -f "$WORK/copy.asice" "$WORK/sign-b.asice"

# --- 2b. deflated: signing in the mount right after the copy vs asicfs sign -----------------
say "deflated $SIZE_MIB MiB: copy into a mount and sign there (profile B), vs asicfs sign of the same container"
mnt="$WORK/mnt"; mkdir -p "$mnt"
cp "$WORK/base.asice" "$WORK/mounted.asice"
"$BIN/asicfs" mount "$WORK/mounted.asice" "$mnt" "${settings[@]}" -o profile=B
trap '"$BIN/asicfs" umount "$mnt" 2>/dev/null; kill $server 2>/dev/null || true' EXIT
t0=$(now); cp "$text" "$mnt/"; sync "$mnt/$(basename "$text")"; copy_in_s=$(elapsed "$t0" "$(now)")
cp "$WORK/mounted.asice" "$WORK/unsigned-deflated.asice"
t0=$(now)
echo "file=$WORK/pki/signer.p12 passphrase-file=$WORK/pki/passphrase" > "$mnt/.asicfs/sign/pkcs12"
outcome=$(cat "$mnt/.asicfs/status/wait")
mount_sign_s=$(elapsed "$t0" "$(now)")
"$BIN/asicfs" umount "$mnt"
trap 'kill $server 2>/dev/null || true' EXIT
case "$outcome" in done*) ;; *) say "signing in the mount failed: $outcome"; exit 1 ;; esac
cli_sign_s=$(for _ in $(seq "$RUNS"); do cp "$WORK/unsigned-deflated.asice" "$WORK/cli-deflated.asice"; sync; t0=$(now); sign "$WORK/cli-deflated.asice" -o profile=B; elapsed "$t0" "$(now)"; done | best)
rm -f "$WORK/cli-deflated.asice" "$WORK/unsigned-deflated.asice" "$WORK/mounted.asice"

# --- 3. verify time per signature ------------------------------------------------------------
say "verify: one small container with 1 and with $SIGNATURES LT signatures"
rm -f "$WORK/one.asice" "$WORK/many.asice"
"$BIN/asicfs" create "$WORK/one.asice" "$WORK/contract.txt" -q
sign "$WORK/one.asice"
cp "$WORK/one.asice" "$WORK/many.asice"
for _ in $(seq 2 "$SIGNATURES"); do sign "$WORK/many.asice"; done
verify_one_s=$(for _ in $(seq "$RUNS"); do t0=$(now); "$BIN/asicfs" verify "$WORK/one.asice" "${settings[@]}" > /dev/null; elapsed "$t0" "$(now)"; done | best)
verify_many_s=$(for _ in $(seq "$RUNS"); do t0=$(now); "$BIN/asicfs" verify "$WORK/many.asice" "${settings[@]}" > /dev/null; elapsed "$t0" "$(now)"; done | best)
per_signature_ms=$(python3 -c "print(f'{($verify_many_s - $verify_one_s) / ($SIGNATURES - 1) * 1000:.1f}')")
verify_big_s=$(for _ in $(seq "$RUNS"); do t0=$(now); "$BIN/asicfs" verify "$WORK/sign-lt.asice" "${settings[@]}" > /dev/null; elapsed "$t0" "$(now)"; done | best)

{
  echo "# Signature benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Data: $SIZE_MIB MiB, page cache warm, best of $RUNS runs. Release build."
  echo
  echo "## Digest throughput while signing (target >= 0.9x openssl dgst -sha256)"
  echo
  echo "| input | openssl dgst -sha256 | asicfs signing digest | ratio |"
  echo "|---|---|---|---|"
  echo "| random bytes, stored entry | ${openssl_s} s ($(mibs "$openssl_s") MiB/s) | ${stored_s} s ($(mibs "$stored_s") MiB/s) | $(ratio "$openssl_s" "$stored_s")x |"
  echo "| text, deflated entry (inflate + CRC + SHA-256) | ${openssl_text_s} s ($(mibs "$openssl_text_s") MiB/s) | ${deflated_s} s ($(mibs "$deflated_s") MiB/s) | $(ratio "$openssl_text_s" "$deflated_s")x |"
  echo "| text, deflated entry this process saved (a mount's copy-in; the save took ${after_add_save_s} s) | ${openssl_text_s} s | ${after_add_s} s (known from the save) | - |"
  echo
  echo "## Deflated $SIZE_MIB MiB text: signing in the mount right after the copy, vs asicfs sign (profile B)"
  echo
  echo "| what | seconds |"
  echo "|---|---|"
  echo "| cp into the mount + fsync (the save deflates and hashes) | $copy_in_s |"
  echo "| echo request > .asicfs/sign/pkcs12; cat .asicfs/status/wait | $mount_sign_s |"
  echo "| asicfs sign of the same unsigned container (inflates to hash) | $cli_sign_s |"
  echo
  echo "## Whole signings of the $SIZE_MIB MiB stored container (PKCS#12, loopback services)"
  echo
  echo "| what | seconds |"
  echo "|---|---|"
  echo "| asicfs sign, profile B (digest, sign, self-check, atomic save) | $sign_b_s |"
  echo "| asicfs sign, profile LT (+ time-stamp + OCSP) | $sign_lt_s |"
  echo "| for scale: cp + sync of the container (the copy an atomic save needs without reflinks) | $copy_s |"
  echo
  echo "## asicfs verify"
  echo
  echo "| what | seconds |"
  echo "|---|---|"
  echo "| small container, 1 LT signature (process start included) | $verify_one_s |"
  echo "| small container, $SIGNATURES LT signatures | $verify_many_s |"
  echo "| per additional signature | ${per_signature_ms} ms |"
  echo "| $SIZE_MIB MiB stored container, 1 LT signature (digest included) | $verify_big_s |"
} | tee "$REPORT"
say "report: $REPORT"
