#!/usr/bin/env bash
# Makes the Python virtualenv with pyasice (PyPI) that the interoperability test uses as an
# independent validator. Idempotent. oscrypto 1.3.0 cannot parse OpenSSL versions like
# "3.0.17" (one digit per part in its regex), so its version regex is widened in place.
set -euo pipefail
venv="${ASICFS_PYASICE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/asicfs/pyasice-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pyasice' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check 'pyasice==1.2.0'
fi
for f in "$venv"/lib/python3*/site-packages/oscrypto/_openssl/_libcrypto_c*.py; do
  sed -i 's/\\\\b(\\\\d\\\\.\\\\d\\\\.\\\\d\[a-z\]\*)\\\\b/\\\\b(\\\\d+\\\\.\\\\d+\\\\.\\\\d+[a-z]*)\\\\b/' "$f"
done
"$venv/bin/python" -c 'import oscrypto.asymmetric' && echo "$venv"
