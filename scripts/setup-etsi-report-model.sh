#!/usr/bin/env bash
# Makes the Python virtualenv the validation-report test checks `asicfs verify --report` with:
# pyHanko (PyPI) ships a Python model of ETSI TS 119 102-2 generated from ETSI's XSD (the XSD
# itself is in no Debian or PyPI package), and xsdata parses a report into it, refusing any
# element or attribute the schema does not have. Only that model is used, so no dependencies
# beyond xsdata are installed. Idempotent; prints the venv's path.
set -euo pipefail
venv="${ASICFS_ETSI_MODEL_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/asicfs/etsi-report-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import xsdata, pyhanko.generated.etsi.ts_11910202' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps 'xsdata==26.10' 'pyhanko==0.38.0'
fi
"$venv/bin/python" -c 'import xsdata, pyhanko.generated.etsi.ts_11910202' && echo "$venv"
