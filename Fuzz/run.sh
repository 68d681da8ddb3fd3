#!/usr/bin/env bash
# Builds the libFuzzer targets and fuzzes them for a while.
#
#   Fuzz/run.sh [zip|manifest|signature|cdoc1|all] [SECONDS]      (defaults: all, 60 seconds per target)
#
# Each target is built with libFuzzer and AddressSanitizer into .build/fuzz (its own scratch
# path, so it never disturbs the normal .build), fuzzed from a temporary copy of
# Fuzz/corpus/<target>/ (the seeds, written afresh by Fuzz/make-corpus.py at every run and not
# tracked by git; libFuzzer's additions never go back there), and any crash, timeout or
# out-of-memory input is written to Fuzz/artifacts/ (gitignored) with the full log beside it.
# The exit status is non-zero when the build failed or libFuzzer found something.
#
# Reproduce an artifact:   .build/fuzz/debug/fuzz-zip Fuzz/artifacts/crash-...
# or without libFuzzer:    swift run fuzz-zip -v Fuzz/artifacts/crash-...
# Environment: FUZZ_SANITIZE (default "fuzzer,address"; "fuzzer" alone runs faster),
#              FUZZ_TIMEOUT (seconds one input may take, default 30), FUZZ_ARGS (extra libFuzzer flags).
set -euo pipefail

usage() { echo "usage: $0 [zip|manifest|signature|cdoc1|all] [SECONDS]" >&2; exit 2; }
which_targets=${1:-all}
duration=${2:-60}
case $which_targets in
    zip) targets=(zip) ;;
    manifest) targets=(manifest) ;;
    signature) targets=(signature) ;;
    cdoc1) targets=(cdoc1) ;;
    all) targets=(zip manifest signature cdoc1) ;;
    *) usage ;;
esac
[[ $duration =~ ^[0-9]+$ ]] && (( duration > 0 )) || usage

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scratch=.build/fuzz
artifacts=$root/Fuzz/artifacts
mkdir -p "$artifacts"
# One -sanitize flag: swiftc keeps only the last of several, so "-sanitize=fuzzer -sanitize=address"
# would silently drop the coverage instrumentation libFuzzer needs.
sanitize=${FUZZ_SANITIZE:-fuzzer,address}
timeout_per_input=${FUZZ_TIMEOUT:-30}
# Swift's own crash backtracer reads the stack in a way AddressSanitizer reports as a bug of its
# own, hiding the real one; libFuzzer and ASan print the (symbolized) stack instead.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}

# Working corpora and build logs. (fuzz-zip writes each input to an already unlinked file in
# $ASICFS_FUZZ_TMPDIR, default /dev/shm, so it leaves nothing behind.)
work=$(mktemp -d "${TMPDIR:-/tmp}/asicfs-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

max_len() { case $1 in zip) echo 65536 ;; manifest) echo 16384 ;; signature) echo 32768 ;; cdoc1) echo 16384 ;; esac; }

build() {
    local product=fuzz-$1 log=$work/build-$1.log start=$SECONDS
    echo "== building $product (-sanitize=$sanitize) in $scratch"
    if ! swift build -c debug --scratch-path "$scratch" --product "$product" \
            -Xswiftc -DFUZZING -Xswiftc "-sanitize=$sanitize" >"$log" 2>&1; then
        # ld.gold prints thousands of harmless "Cannot export local symbol" warnings with ASan.
        grep -v "Cannot export local symbol" "$log" | tail -40 >&2
        echo "== build of $product failed" >&2
        return 1
    fi
    echo "   built in $((SECONDS - start)) s"
}

fuzz() {
    local target=$1 product=fuzz-$1
    local binary=$scratch/debug/$product corpus=$work/corpus-$1 log=$artifacts/$product.log
    mkdir -p "$corpus"
    cp -R "$root/Fuzz/corpus/$target/." "$corpus/"
    echo "== fuzzing $product for $duration s ($(ls "$corpus" | wc -l) seeds, -max_len=$(max_len "$target"))"
    local status=0
    # shellcheck disable=SC2086
    "$binary" "$corpus" \
        -max_total_time="$duration" -max_len="$(max_len "$target")" -rss_limit_mb=2048 \
        -timeout="$timeout_per_input" -dict="$root/Fuzz/$target.dict" \
        -artifact_prefix="$artifacts/" -print_final_stats=1 ${FUZZ_ARGS:-} >"$log" 2>&1 || status=$?
    local runs rate
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    if (( status != 0 )); then
        echo "!! $product: libFuzzer stopped with status $status; log: $log" >&2
        grep -E "Fatal error|check failed|runtime failure|ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|^SUMMARY|Test unit written" "$log" \
            | head -8 | sed 's/^/   /' >&2 || true
        # The frames in our own code, demangled.
        grep -E "^ +#[0-9]+ .*($root/(Sources|Fuzz)/)" "$log" | head -12 \
            | { if command -v swift-demangle >/dev/null; then swift-demangle --simplified; else cat; fi; } \
            | sed -E 's/^ +#[0-9]+ 0x[0-9a-f]+ in /   at /' >&2 || true
        return 1
    fi
    echo "   ok: ${runs:-?} runs, ${rate:-?} exec/s, corpus grew to $(ls "$corpus" | wc -l) inputs; log: $log"
}

# The seeds are generated, not committed: a fresh clone has none until now.
python3 "$root/Fuzz/make-corpus.py" "$root/Fuzz/corpus" | sed 's/^/== /'

failed=0
for target in "${targets[@]}"; do
    build "$target" || { failed=1; continue; }
done
(( failed == 0 )) || exit 1
for target in "${targets[@]}"; do
    fuzz "$target" || failed=1
done
if (( failed )); then
    echo "== FAILED: see Fuzz/artifacts/" >&2
    exit 1
fi
echo "== no crashes"
