#!/usr/bin/env bash
# Installs the peers fsbench compares asicfs with (never run by CI): fuse-zip and archivemount
# from Debian, ratarmount from PyPI into a virtual environment (Debian 12 has no package of it).
#
#   Benchmarks/install-peers.sh [VENV]      # VENV default: /var/tmp/asicfs-fsbench/venv-ratarmount
#
# Prints the ratarmount command to use.
set -euo pipefail
VENV=${1:-/var/tmp/asicfs-fsbench/venv-ratarmount}
need=()
for p in fuse-zip archivemount fuse3 python3-venv unzip zip time openssl; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  echo "installing ${need[*]}" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ ! -x "$VENV/bin/ratarmount" ]; then
  echo "installing ratarmount into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q ratarmount
fi
echo "$VENV/bin/ratarmount"
