#!/usr/bin/env bash
# Opt-in screenshots (the test suite takes none): builds the site, then runs the browser tests that call
# screenshot() with TALLY_SCREENSHOTS set, so they write PNGs to build/screenshots (or --out DIR outside the tree).
# The committed docs/screenshots are refreshed by copying a file from there by hand.
# usage: bash scripts/dev/screenshots.sh [--out DIR] [tests/browser/x.test.mjs ...]
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$TALLY_ROOT"
out="$TALLY_ROOT/build/screenshots"
if [[ ${1:-} == --out ]]; then out=$(realpath -m "$2"); shift 2; fi
case "$out/" in
  "$TALLY_ROOT/build/"*) ;;
  "$TALLY_ROOT/"*) echo "screenshots.sh: --out $out is inside the tree; use build/ or a folder outside it" >&2; exit 2 ;;
esac
files=("$@")
((${#files[@]})) || mapfile -t files < <(grep -l 'await screenshot(' tests/browser/*.test.mjs)
ensure_node_modules
build_native
build_wasm
build_site
mkdir -p "$out"
log "screenshots (${#files[@]} test files) -> $out"
TALLY_SCREENSHOTS="$out" node --test --test-concurrency=1 "${files[@]}"
ls "$out"
