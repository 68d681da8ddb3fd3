# Sourced by benchmark scripts.

# The asicfs binary to measure: the one given (--cli), or a release build in .build/release-bench.
#   CLI=$(bench_cli "$ROOT" "$CLI")
bench_cli() {
  if [ -n "${2:-}" ]; then echo "$2"; return; fi
  PATH="/opt/swift/usr/bin:$PATH" swift build -c release --product asicfs --scratch-path "$1/.build/release-bench" >/dev/null
  echo "$1/.build/release-bench/release/asicfs"
}
