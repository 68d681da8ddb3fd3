#!/usr/bin/env bash
# Builds asicfs_VERSION_ARCH.deb from `make install` (PREFIX=/usr, the static Swift runtime):
# Depends are the Debian packages of the libraries the binary links (dpkg-shlibdeps), plus libcurl4,
# libxml2 and libp11-kit0 (loaded on first use, so dpkg-shlibdeps cannot see them), fuse3 for
# fusermount3 and mount.fuse3, and ca-certificates (the CA store SK's services are verified by,
# under the built-in key pins). shared-mime-info and desktop-file-utils pick up the MIME and
# desktop files through their own dpkg triggers.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^public let asicfsVersion = "\(.*\)"$/\1/p' Sources/Configuration/Configuration.swift)
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
make --no-print-directory install DESTDIR="$stage/root" PREFIX=/usr STATIC_BUILD="${STATIC_BUILD:-.build/static}" > /dev/null
# dpkg-shlibdeps wants a debian/control beside what it inspects.
mkdir -p "$stage/debian"
printf 'Source: asicfs\n\nPackage: asicfs\nArchitecture: any\n' > "$stage/debian/control"
libraries=$(cd "$stage" && dpkg-shlibdeps -O root/usr/bin/asicfs 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$libraries" ] || { echo "make-deb.sh: dpkg-shlibdeps found no libraries" >&2; exit 1; }
# libqrencode4 (Smart-ID QR codes) is linked, so dpkg-shlibdeps names it; said here in case a build links it otherwise.
case "$libraries" in *libqrencode4*) ;; *) libraries="$libraries, libqrencode4" ;; esac
# Packed relative relocations (the Makefile's STATIC_LINK_FLAGS) need glibc 2.36, a version with
# no symbols of its own (GLIBC_ABI_DT_RELR), which dpkg-shlibdeps does not count.
if readelf -V "$stage/root/usr/bin/asicfs" | grep -q GLIBC_ABI_DT_RELR; then
  libraries=$(echo "$libraries" | sed -E 's/libc6 \(>= 2\.(3[0-5]|[0-2][0-9])[^)]*\)/libc6 (>= 2.36)/')
fi
size=$(du -sk "$stage/root" | cut -f1)
mkdir -p "$stage/root/DEBIAN"
cat > "$stage/root/DEBIAN/control" <<CONTROL
Package: asicfs
Version: $version
Architecture: $arch
Maintainer: asicfs developers <asicfs@localhost>
Installed-Size: $size
Depends: $libraries, libcurl4, libxml2, libp11-kit0, fuse3, ca-certificates
Recommends: pcscd, p11-kit, pinentry-gnome3 | pinentry, xdg-utils
Section: utils
Priority: optional
Homepage: https://github.com/asicfs/asicfs
Description: ASiC-E (DigiDoc) signature containers as folders
 asicfs mounts ASiC-E containers (.asice, .sce, .bdoc: Estonia's DigiDoc
 format, ETSI EN 319 162) as ordinary folders with FUSE, and signs (PKCS#12,
 PKCS#11 tokens, the Estonian ID-card, Mobile-ID, Smart-ID, remote signing
 over the CSC API) and validates them the way the reference implementation
 does.
CONTROL
out="asicfs_${version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$stage/root" "$out" > /dev/null
echo "$out"
