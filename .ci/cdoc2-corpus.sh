#!/usr/bin/env bash
# CI-only check (not part of `make test`): the public CDOC2 samples beside the clone in
# ../shared/corpus/cdoc (other projects' files and test keys, read in place, never copied).
# Every sample its keys open must decrypt (through the CDOC module, Benchmarks/cdoc-check) to
# the plaintext sizes of spec §4, byte for byte the same as the independent Python reader
# (contrib/testpki/cdoc2.py) gives; the negative samples must fail with the expected error.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${CDOC_CORPUS_DIR:-../shared/corpus/cdoc}
if [ ! -d "$dir/files" ]; then
  echo "cdoc2-corpus: $dir is not there; nothing to check" >&2
  exit 0
fi
export PATH=/opt/swift/usr/bin:$PATH
swift build --product cdoc-check >/dev/null || { echo "cdoc2-corpus: cdoc-check does not build" >&2; exit 1; }
bin=$(swift build --show-bin-path)/cdoc-check
py=contrib/testpki/cdoc2.py
keys=$dir/keys/cdoc2-java-ref-impl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The samples' published secrets (keys/README.md), in files: never in argv.
umask 077
printf '%s' 'HHeUrHfo+bCZd//gGmEOU2nA5cgQolQ/m18UO/dN1tE=' | base64 -d > "$work/secret"
printf '%s\n' 'myPlainTextPassword' > "$work/password"
secret_hex=$(od -An -tx1 "$work/secret" | tr -d " \n")

failures=0
check() { # SAMPLE KIND(ec|rsa|secret|password) EXPECTED-SIZES…
  local sample=$1 kind=$2; shift 2
  local file=$dir/files/$sample opener pyopener
  case $kind in
    ec) opener=(--key "$keys/cdoc2client_expired_priv.key"); pyopener=(--key "$keys/cdoc2client_expired_priv.key") ;;
    rsa) opener=(--key "$keys/rsa_priv.pem"); pyopener=(--key "$keys/rsa_priv.pem") ;;
    secret) opener=(--secret-file "$work/secret"); pyopener=(--secret "$secret_hex") ;;
    password) opener=(--password-file "$work/password"); pyopener=(--password myPlainTextPassword) ;;
  esac
  local out
  if ! out=$("$bin" decrypt "$file" "${opener[@]}" 2>&1); then
    echo "FAIL $sample: $out"; failures=$((failures + 1)); return
  fi
  local size name digest
  IFS=$'\t' read -r name size digest <<<"$out"
  if [ "$(printf '%s\n' "$out" | wc -l)" != 1 ] || ! printf '%s\n' "$@" | grep -qx "$size"; then
    echo "FAIL $sample: got '$out', expected one file of ${*} bytes"; failures=$((failures + 1)); return
  fi
  rm -rf "$work/py" && python3 "$py" decrypt "$file" "$work/py" "${pyopener[@]}" >/dev/null
  local expected
  expected=$(sha256sum "$work/py/$name" 2>/dev/null | cut -d' ' -f1)
  if [ "$expected" != "$digest" ]; then
    echo "FAIL $sample: asicfs and the independent reader differ"; failures=$((failures + 1)); return
  fi
  echo "ok   $sample: $name, $size bytes"
}

refused() { # SAMPLE OPENER… -- EXPECTED-MESSAGE-PART
  local sample=$1; shift
  local args=() expect
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  expect=$2
  local out
  if out=$("$bin" decrypt "$dir/files/$sample" "${args[@]}" 2>&1); then
    echo "FAIL $sample: decrypted but must not"; failures=$((failures + 1)); return
  fi
  if ! grep -q -- "$expect" <<<"$out" || [ "$(printf '%s\n' "$out" | wc -l)" != 1 ]; then
    echo "FAIL $sample: '$out' is not one line with '$expect'"; failures=$((failures + 1)); return
  fi
  echo "ok   $sample: refused ($out)"
}

readme="9291 10905 11921 13529"
check c2_01_java_ec_simple.cdoc2 ec $readme
check c2_02_java_ec_simple_with_formatted_key_label.cdoc ec $readme
check c2_03_java_rsa_simple.cdoc2 rsa $readme
check c2_04_java_rsa_simple_with_formatted_key_label.cdoc rsa $readme
check c2_05_java_symmetric.cdoc2 secret $readme
check c2_06_java_symmetric_longfilename.cdoc2 secret 43
check c2_07_java_symmetric_with_formatted_key_label.cdoc secret $readme
check c2_08_java_password_v2024-05.cdoc2 password $readme
check c2_09_java_password_with_formatted_key_label.cdoc password $readme
refused c2_10_java_password_nonconforming_CDOC2labels.cdoc2 --password-file "$work/password" -- "wrong key or password"
refused c2_11_java_symmetric_broken_2024.cdoc2 --secret-file "$work/secret" -- "wrong key or password"
for sample in c2_12_java_ec_server_ria_dev_pkcs12.cdoc2 c2_13_java_rsa_server_ria_dev_pkcs12.cdoc2; do
  if "$bin" list "$dir/files/$sample" | grep -q '^key-server'; then echo "ok   $sample: lists a key-server recipient"
  else echo "FAIL $sample: no key-server recipient listed"; failures=$((failures + 1)); fi
done

if [ "$failures" -gt 0 ]; then
  echo "cdoc2-corpus: $failures failure(s)"
  exit 1
fi
echo "cdoc2-corpus: all CDOC2 samples as expected"
