#!/usr/bin/env bash
# Installs the Debian packages asicfs needs to build, test and run its demo, only those missing.
# Uses sudo when not root. The Swift 6 toolchain itself is not a Debian package: it must be on
# PATH (or in /opt/swift) already.
set -euo pipefail

packages=(
  # build: the C libraries behind the shim modules
  pkg-config libfuse3-dev fuse3 libssl-dev libxml2-dev libcurl4-openssl-dev zlib1g-dev libpcsclite-dev
  # Smart-ID v3 QR codes (libqrencode); zbarimg reads them back in the tests and the demo
  libqrencode-dev libqrencode4 zbar-tools
  # run: the system CA store SK's services are verified by (it holds DigiCert Global Root G2,
  # under the built-in key pins)
  ca-certificates
  # ISA-L (igzip inflate/deflate, CRC-32)
  libisal-dev libisal2
  # tests and demo: peer ZIP tools, mount helpers, Python's zipfile
  unzip zip python3 util-linux mount time rsync vim fuse3 e2fsprogs xfsprogs openssl curl
  # signing tests: the test PKI's services (openssl), pyasice as a peer validator (venv + pip),
  # xmlsec1 (with its OpenSSL backend) to sign the test trusted lists and, as an independent
  # validator, to verify the XML-DSig layer of asicfs signatures
  python3-venv python3-pip xmlsec1 libxmlsec1-openssl
  # the ID-card: pcscd with vsmartcard's virtual reader driver, the card emulator's Python
  # (Debian's python3 with cryptography), a C compiler for the test PIN-pad reader driver,
  # OpenSC and pcsc-tools as independent PC/SC clients; python3-cryptography is also the
  # independent CDOC2 reader/writer of the CDOC tests (contrib/testpki/cdoc2.py)
  pcscd vsmartcard-vpcd pcsc-tools opensc python3-cryptography gcc libc6-dev procps iproute2
  # PKCS#11: p11-kit (build: libp11-kit-dev; it finds registered modules), SoftHSM tokens for the
  # tests and the demo, OpenSC's module and pkcs11-tool
  softhsm2 p11-kit libp11-kit-dev opensc
  # desktop and system integration tests: getfattr, strace (what `ls -l` asks), xdg-mime, gio,
  # desktop-file-validate, xmllint,
  # notify-send (faked in the tests), dpkg-deb and dpkg-shlibdeps for `make deb`
  attr strace xdg-utils libglib2.0-bin desktop-file-utils shared-mime-info libxml2-utils libnotify-bin dpkg-dev
  # encrypted containers: Debian's libdigidoc (cdigidoc) as an independent CDOC 1.0 reader and
  # writer, python3-cryptography for the independent CDOC 1.1 peer (above), envsubst for
  # .ci/cdoc-corpus.sh
  libdigidoc-tools gettext-base
  # readelf: how the packaged binary is linked (scripts/test-package.sh)
  binutils
  # fincore: how much of a container the page cache holds after a read through the mount
  util-linux-extra
  # a second, unprivileged user for the browse mode security tests (useradd; setpriv is util-linux)
  passwd
  # a loopback TSA whose clock runs ahead (content time-stamp order tests)
  faketime
  # the --json schema test: python3-jsonschema checks every command's output against docs/json-schema.json
  python3-jsonschema
  # the shell completion test: completions/asicfs.{bash,zsh,fish} loaded into each shell
  zsh fish
  # fuzzing: clang's runtime for -sanitize=fuzzer comes with the Swift toolchain; nothing more needed
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1 && [ ! -x /opt/swift/usr/bin/swift ]; then
  echo "error: the Swift 6 toolchain is not installed (see https://www.swift.org/install/linux/)" >&2
  exit 1
fi
