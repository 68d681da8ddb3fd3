#!/usr/bin/env bash
# CI-only check (not part of `make test`): the built-in trust facts against the certificates they
# were taken from, in ../shared/trust (other projects' files, read in place, never copied into
# the tree). Checks, from what `asicfs --version --verbose` prints:
#   - the EU LOTL signers' SHA-256 fingerprints equal those of ../shared/trust/eu-lotl-signers/*.pem,
#     and the test LOTL signer's that of test-tl/trusted-test-tsl.pem;
#   - the SK TLS key pins equal the SPKI SHA-256 of the DigiCert CA and root in sk-tls/ (and the
#     demo hosts' leaf keys);
#   - the real test LOTL test-tl/tl-mp-test-EE.xml (with EE_T.xml) is accepted with `tsl = test`
#     by the built-in fingerprint alone, offline (a copy in a fresh cache-dir, downloads sent to a
#     dead proxy), and refused when another signer is configured instead (so the check can fail).
# Exits non-zero on any difference.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${ASICFS:-.build/debug/asicfs}
shared=${TRUST_DIR:-../shared/trust}
container=${TRUST_CONTAINER:-../shared/conformance/libdigidocpp/tsl.asice}

if [ ! -d "$shared" ]; then
  echo "builtin-trust: $shared is not there; nothing to compare" >&2
  exit 0
fi

failed=0
fail() { echo "builtin-trust: $*" >&2; failed=1; }

report=$("$bin" --version --verbose) || { echo "builtin-trust: $bin --version --verbose failed" >&2; exit 1; }

# The "SHA-256 ..." (or "key SHA-256 (base64) ...") lines of one group of the report, sorted.
group() { # TITLE-PREFIX LINE-PREFIX
  printf '%s\n' "$report" | awk -v title="  $1" -v prefix="      $2 " '
    /^  [^ ]/ { inside = index($0, title) == 1 }
    inside && index($0, prefix) == 1 { print substr($0, length(prefix) + 1) }' | sort
}
fingerprints() { for f in "$@"; do openssl x509 -in "$f" -noout -fingerprint -sha256 | cut -d= -f2; done | sort; }
spki() { for f in "$@"; do openssl x509 -in "$f" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64; done | sort; }
same() { # WHAT BUILT-IN EXPECTED
  if [ "$2" = "$3" ] && [ -n "$2" ]; then echo "builtin-trust: $1: $(printf '%s\n' "$2" | wc -l) equal"
  else fail "$1 differ:"; diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") | sed 's/^/  /' >&2
  fi
}

same "EU LOTL signers" "$(group "EU list of trusted lists" "SHA-256")" "$(fingerprints "$shared"/eu-lotl-signers/*.pem)"
same "test LOTL signer" "$(group "Estonian test list" "SHA-256")" "$(fingerprints "$shared"/test-tl/trusted-test-tsl.pem)"
same "SK TLS key pins" "$(group "Mobile-ID and Smart-ID TLS" "key SHA-256 (base64)")" \
  "$(spki "$shared"/sk-tls/DigiCert_Global_G2_TLS_RSA_SHA256_2020_CA1.pem "$shared"/sk-tls/DigiCert_Global_Root_G2.pem \
       "$shared"/sk-tls/tsp.demo.sk.ee-2026.pem "$shared"/sk-tls/sid.demo.sk.ee-2025.pem)"

# The real test LOTL, loaded as `tsl = test` would from the cache. A validation reports
# "no trust is configured: REASON" on each signature when the list was refused.
if [ -f "$container" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cp "$shared"/test-tl/tl-mp-test-EE.xml "$shared"/test-tl/EE_T.xml "$work"/
  offline=(-o tsl=test -o cache-dir="$work" -o proxy=http://127.0.0.1:9)
  out=$("$bin" verify "${offline[@]}" "$container" 2>&1)
  if printf '%s\n' "$out" | grep -q 'no trust is configured' || ! printf '%s\n' "$out" | grep -q '^Result: '; then
    fail "the test LOTL was not accepted by the built-in fingerprint:"; printf '%s\n' "$out" | sed 's/^/  /' >&2
  else
    echo "builtin-trust: the test LOTL tl-mp-test-EE.xml is accepted by the built-in fingerprint"
  fi
  out=$("$bin" verify "${offline[@]}" -o tsl-cert="$shared"/sk-tls/DigiCert_Global_Root_G2.pem "$container" 2>&1)
  # (The cached copy is refused, the download then fails at the dead proxy; both are said.)
  if ! printf '%s\n' "$out" | grep -q 'the cached copy is not used: .* which is not an allowed signer'; then
    fail "the test LOTL was not refused with another signer configured:"; printf '%s\n' "$out" | sed 's/^/  /' >&2
  fi
else
  fail "$container (a signed container to validate with the test LOTL) is not there"
fi

[ "$failed" -eq 0 ] && echo "builtin-trust: all built-in facts match $shared"
exit "$failed"
