#!/usr/bin/env bash
# Installs libdigidocpp's digidoc-tool (contrib/tools/, see its README) at /opt/libdigidocpp for
# the interop tests, with its runtime libraries; does nothing when that version is there already.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=/opt/libdigidocpp
tarball=contrib/tools/libdigidocpp-4.5.0-debian12-amd64.tar.xz
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
for p in libxmlsec1-openssl libxslt1.1 xmlsec1; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# (Not `digidoc-tool version`: unconfigured, it first tries to download the EU LOTL.)
stamp="$prefix/.asicfs-tarball-sha256"
want=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ ! -x "$prefix/bin/digidoc-tool" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  $sudo rm -rf "$prefix"
  $sudo tar -xJf "$tarball" -C /opt
  echo "$want" | $sudo tee "$stamp" >/dev/null
fi
echo "digidoc-tool at $prefix/bin/digidoc-tool"
