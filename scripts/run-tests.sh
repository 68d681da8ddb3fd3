#!/usr/bin/env bash
# Runs every XCTest suite and ends with one plain summary line ("N passed, N failed").
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift test --disable-swift-testing 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -cE "^Test Case '.*' passed" "$log")
failed=$(grep -cE "^Test Case '.*' failed" "$log")
echo "tests: $passed passed, $failed failed"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then exit 1; fi
