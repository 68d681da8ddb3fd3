#!/usr/bin/env bash
# CI-only check (not part of `make test`): validates the reference conformance containers that
# sit beside the clone in ../shared/conformance/libdigidocpp (other projects' files, read in place,
# never copied) and compares each verdict with .ci/conformance-verdicts.tsv. With --record it
# prints the table instead. Every container is checked with the corpus's own test LOTL (TSL.xml),
# and tsl.asice once more with each trust-list scenario (EE_T-*.xml) loaded alone.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${ASICFS:-.build/debug/asicfs}
dir=${CONFORMANCE_DIR:-../shared/conformance/libdigidocpp}
expected=.ci/conformance-verdicts.tsv
record=false
[ "${1:-}" = --record ] && record=true

if [ ! -d "$dir" ]; then
  echo "conformance: $dir is not there; nothing to compare" >&2
  exit 0
fi

verdict() { # CONTAINER LIST -> the "Result:" word, or "error:EXIT" when it could not be read
  local out rc
  out=$("$bin" verify -q -o tsl="$2" -o tsl-cert="$dir/TSL.crt" "$1" 2>/dev/null); rc=$?
  local word
  word=$(printf '%s\n' "$out" | sed -n 's/^Result: \([A-Z_]*\).*/\1/p' | tail -1)
  if [ -n "$word" ]; then echo "$word"; else echo "error:$rc"; fi
}

rows=()
for f in "$dir"/*.asice "$dir"/*.asics "$dir"/*.ddoc; do
  [ -e "$f" ] || continue
  rows+=("$(basename "$f")	TSL.xml	$(verdict "$f" "$dir/TSL.xml")")
done
for l in "$dir"/EE_T-*.xml; do
  rows+=("tsl.asice	$(basename "$l")	$(verdict "$dir/tsl.asice" "$l")")
done

if $record; then
  printf 'container\ttrust list\tverdict\n'
  printf '%s\n' "${rows[@]}"
  exit 0
fi

failed=0 passed=0
while IFS=$'\t' read -r container list want; do
  [ "$container" = container ] && continue
  got=$(printf '%s\n' "${rows[@]}" | awk -F'\t' -v c="$container" -v l="$list" '$1==c && $2==l {print $3}')
  if [ "$got" = "$want" ]; then passed=$((passed + 1))
  else failed=$((failed + 1)); echo "conformance: $container with $list: expected $want, got ${got:-nothing}" >&2
  fi
done < "$expected"
echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
