#!/usr/bin/env bash
# CI's check of the package: builds the .deb, installs it with dpkg -i, and uses the installed
# binary only (not the toolchain's libraries): --version, a mount through mount(8) as an fstab
# line would do it, then removes the package. Ends with "package: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0 failed=0
check() { if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $*" >&2; fi; }
deb=$(scripts/make-deb.sh) || { echo "package: 0 passed, 1 failed"; exit 1; }
echo "built $deb: $(dpkg-deb -f "$deb" Depends)"
check dpkg -i "$deb"
work=$(mktemp -d)
trap 'fusermount3 -u -z "$work/mnt" 2>/dev/null; dpkg -r asicfs >/dev/null 2>&1; rm -rf "$work"' EXIT
# The installed binary needs no Swift toolchain: nothing it links comes from /opt/swift.
check test -x /usr/bin/asicfs
check sh -c '! ldd /usr/bin/asicfs | grep -q -e "/opt/swift" -e "not found"'
check sh -c 'env -i PATH=/usr/bin:/bin /usr/bin/asicfs --version | grep -q "^asicfs "'
printf 'installed\n' > "$work/a.txt"
mkdir "$work/mnt"
check env -i PATH=/usr/bin:/bin /usr/bin/asicfs create "$work/c.asice" "$work/a.txt"
check mount -t fuse.asicfs "$work/c.asice" "$work/mnt" -o ro,noauto,nofail
check grep -qx installed "$work/mnt/a.txt"
check /usr/bin/asicfs umount "$work/mnt"
check test -f /usr/share/mime/packages/asicfs.xml
check test -f /usr/lib/systemd/user/asicfs@.service
check grep -q "ExecStart=/usr/bin/asicfs open" /usr/lib/systemd/user/asicfs@.service
check dpkg -r asicfs
check test ! -e /usr/bin/asicfs
echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
