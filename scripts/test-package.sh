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
# Linked for a quick cold start (Makefile: STATIC_LINK_FLAGS): relative relocations packed, and
# ICU's data (tens of MB) in a section of its own after .bss, past everything a start touches.
linked_for_cold_start() {
  readelf -SW "$1" | python3 -c '
import re, sys
sections = {m.group(1): (int(m.group(2), 16), int(m.group(3), 16))
            for m in re.finditer(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", sys.stdin.read())}
icu = sections.get(".rodata.icudata")
sys.exit(0 if ".relr.dyn" in sections and icu and icu[1] > 30_000_000 and icu[0] > sections[".bss"][0] else 1)'
}
check linked_for_cold_start /usr/bin/asicfs
check sh -c 'dpkg-deb -f "$0" Depends | grep -q "libc6 (>= 2.36)"' "$deb"
printf 'installed\n' > "$work/a.txt"
mkdir "$work/mnt"
check env -i PATH=/usr/bin:/bin /usr/bin/asicfs create "$work/c.asice" "$work/a.txt"
check mount -t fuse.asicfs "$work/c.asice" "$work/mnt" -o ro,noauto,nofail
check grep -qx installed "$work/mnt/a.txt"
check /usr/bin/asicfs umount "$work/mnt"
check test -f /usr/share/mime/packages/asicfs.xml
# Encrypted containers too (DigiDoc4's type names): a double-click on a .cdoc/.cdoc2 runs asicfs open.
check grep -q 'type="application/x-cdoc2"' /usr/share/mime/packages/asicfs.xml
check grep -q '^MimeType=.*application/x-cdoc;application/x-cdoc2;' /usr/share/applications/asicfs.desktop
check test -f /usr/lib/systemd/user/asicfs@.service
check grep -q "ExecStart=/usr/bin/asicfs open" /usr/lib/systemd/user/asicfs@.service
# The systemd user unit's commands, as systemd would run them for this container (%f).
unit=/usr/lib/systemd/user/asicfs@.service
start=$(sed -n 's/^ExecStart=//p' "$unit" | sed "s#%f#$work/c.asice#")
stop=$(sed -n 's/^ExecStop=//p' "$unit" | sed "s#%f#$work/c.asice#")
XDG_RUNTIME_DIR="$work/run" $start > "$work/unit.out" 2>&1 &
unit_pid=$!
for _ in $(seq 100); do grep -q "$work/run/asicfs/c.asice" /proc/mounts && break; sleep 0.05; done
check grep -qx installed "$work/run/asicfs/c.asice/a.txt"
check env XDG_RUNTIME_DIR="$work/run" $stop
wait "$unit_pid"; check test $? -eq 0
check dpkg -r asicfs
check test ! -e /usr/bin/asicfs
# make uninstall takes away what make install put (into a staging folder here).
make --no-print-directory install DESTDIR="$work/stage" PREFIX=/usr STATIC_BUILD="${STATIC_BUILD:-.build/static}" > /dev/null
check test -x "$work/stage/usr/bin/asicfs"
make --no-print-directory uninstall DESTDIR="$work/stage" PREFIX=/usr > /dev/null
check test -z "$(find "$work/stage" -type f)"
echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
