#!/usr/bin/env bash
# Fails when a file tracked by git is byte-identical to a file under ../shared/ (read-only
# reference material beside the checkout): other projects' files may be read from there, never
# copied into the repository. Empty files do not count. Without ../shared/ there is nothing to compare.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=../shared
if [ ! -d "$shared" ]; then
  echo "no-shared-copies: no $shared beside the checkout, nothing to compare"
  exit 0
fi

# Size first (cheap), hash only where a size matches.
declare -A shared_sizes=()
while IFS= read -r -d '' size; do
  shared_sizes[$size]=1
done < <(find "$shared" -type f -size +0 -printf '%s\0')

declare -A shared_hashes=()
hashed=0
hash_shared() {
  while IFS= read -r line; do
    shared_hashes[${line%% *}]="${line#*  }"
  done < <(find "$shared" -type f -size +0 -print0 | xargs -0 -r sha256sum)
  hashed=1
}

copies=0
while IFS= read -r -d '' file; do
  [ -f "$file" ] && [ ! -L "$file" ] || continue
  size=$(stat -c %s -- "$file")
  [ "$size" -gt 0 ] && [ -n "${shared_sizes[$size]:-}" ] || continue
  [ "$hashed" = 1 ] || hash_shared
  sum=$(sha256sum -- "$file" | cut -d' ' -f1)
  if [ -n "${shared_hashes[$sum]:-}" ]; then
    # %q: a name with control characters is shown quoted, never raw.
    printf 'copied from %s: %q (same bytes as %q)\n' "$shared" "$file" "${shared_hashes[$sum]}"
    copies=$((copies + 1))
  fi
done < <(git ls-files -z)

if [ "$copies" -gt 0 ]; then
  echo "no-shared-copies: $copies tracked file(s) are copies of files under $shared" >&2
  exit 1
fi
echo "no-shared-copies: no tracked file is a copy of a file under $shared"
