#!/usr/bin/env bash
# CI-only check (not part of `make test`): decrypts every sample, CDOC 1.x and CDOC2, in
# ../shared/corpus/cdoc/files (other projects' files and their published test keys, read in place,
# never copied) with `asicfs decrypt` and compares the result with .ci/cdoc-corpus.tsv: the files' names, sizes and
# SHA-256, or the JSON error code of a failure, after which the output folder must be empty.
# A sample without a row is listed as unchecked (rows are added as formats are implemented).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${ASICFS:-.build/debug/asicfs}
corpus=${CDOC_CORPUS_DIR:-../shared/corpus/cdoc}
table=.ci/cdoc-corpus.tsv

if [ ! -d "$corpus/files" ]; then
  echo "cdoc-corpus: $corpus is not there; nothing to compare" >&2
  exit 0
fi
KEYS=$(cd "$corpus/keys" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The cdoc4j PKCS#12 password, as its tests publish it; a file so that it never is an argument.
PASS_TEST=$scratch/pass-test
printf 'test\n' > "$PASS_TEST"
# The CDOC2 samples' password and secret (cdoc.md §4), for the rows that need them.
PASS_CDOC2=$scratch/pass-cdoc2
printf 'myPlainTextPassword\n' > "$PASS_CDOC2"
SECRET_CDOC2=$scratch/secret-cdoc2
printf 'HHeUrHfo+bCZd//gGmEOU2nA5cgQolQ/m18UO/dN1tE=\n' > "$SECRET_CDOC2"
export KEYS PASS_TEST PASS_CDOC2 SECRET_CDOC2

# name:size:sha256 of every file in a folder, sorted by name, space-separated.
listing() {
  local file out=()
  while IFS= read -r -d '' file; do
    out+=("$(basename "$file"):$(stat -c %s "$file"):$(sha256sum < "$file" | cut -d' ' -f1)")
  done < <(find "$1" -mindepth 1 -maxdepth 1 -print0 | sort -z)
  printf '%s' "${out[*]:-}"
}

failures=0 checked=0 row=0
declare -A covered=()
while IFS=$'\t' read -r sample method parameters expected; do
  case $sample in ''|'#'*|sample) continue ;; esac
  row=$((row + 1))
  covered[$sample]=1
  out=$scratch/out-$row
  mkdir "$out"
  IFS='|' read -r -a params <<< "$(envsubst '$KEYS $PASS_TEST $PASS_CDOC2 $SECRET_CDOC2' <<< "$parameters")"
  json=$("$bin" decrypt "$corpus/files/$sample" -d "$out" --json --method "$method" "${params[@]}" 2>"$scratch/stderr")
  status=$?
  if [ $status -eq 0 ]; then
    got="ok $(listing "$out")"
  else
    code=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["error"]["code"])' <<< "$json" 2>/dev/null || echo "exit-$status")
    got="fail:$code"
    left=$(listing "$out")
    [ -n "$left" ] && got="$got (left behind: $left)"
    [ "$(wc -l < "$scratch/stderr")" -eq 1 ] || got="$got (not one line on stderr)"
  fi
  checked=$((checked + 1))
  if [ "$got" != "$expected" ]; then
    failures=$((failures + 1))
    echo "cdoc-corpus: $sample ($method): expected '$expected', got '$got' $(tr '\n' ' ' < "$scratch/stderr")" >&2
  fi
done < "$table"

unchecked=()
for file in "$corpus"/files/*; do
  name=$(basename "$file")
  [ -n "${covered[$name]:-}" ] || unchecked+=("$name")
done
[ ${#unchecked[@]} -gt 0 ] && echo "cdoc-corpus: no expectation yet for ${unchecked[*]}" >&2
echo "cdoc-corpus: $checked decryptions checked, $failures differ"
[ $failures -eq 0 ]
