#!/usr/bin/env bash
# THE test command: installs what is missing, builds native + wasm + site, runs every suite
# (Catch2, ctest tools/CUDA host checks, node tests of the wasm build, browser tests in headless Chromium),
# counts each from its runner's JUnit XML report and ends with one summary line. Exit status is non-zero if anything failed.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$TALLY_ROOT"
start=$(date +%s)

ensure_apt_packages "${TALLY_APT_PACKAGES[@]}"
ensure_node_modules
build_native
build_wasm
build_site

declare -A passed failed
total_passed=0 total_failed=0
record() {  # suite passed failed
  passed[$1]=$2; failed[$1]=$3
  total_passed=$((total_passed + $2)); total_failed=$((total_failed + $3))
}
logs="$TALLY_ROOT/build/test-logs"; mkdir -p "$logs"

# Each suite writes its runner's JUnit XML report; scripts/dev/junit-summary.mjs counts them. The console
# output stays the runner's own (kept under build/test-logs).
record_junit() {  # suite exit-status report.xml...
  local suite=$1 status=$2; shift 2
  local counts pass fail
  counts=$(node "$TALLY_ROOT/scripts/dev/junit-summary.mjs" "$@")
  read -r pass fail _ <<<"$counts"
  # A runner that exits non-zero with no failed test in its report (a crash, a cancelled file) still fails.
  if ((status != 0 && fail == 0)); then fail=1; fi
  record "$suite" "$pass" "$fail"
}

log "Catch2 (engine)"
set +e
./build/native/tally_tests --order rand --rng-seed 1 -r junit -o "$logs/catch2.xml"
status=$?
set -e
record_junit catch2 "$status" "$logs/catch2.xml"

log "ctest (float checker, CUDA host checks, tools)"
set +e
(cd build/native && ctest --output-on-failure -E '^catch2$' --output-junit "$logs/ctest.xml" 2>&1) | tee "$logs/ctest.log"
status=${PIPESTATUS[0]}
set -e
record_junit ctest "$status" "$logs/ctest.xml"

node_suite() {  # name dir
  local name=$1 dir=$2
  log "$name ($dir)"
  if ! compgen -G "$dir/*.test.mjs" >/dev/null; then record "$name" 0 0; return; fi
  set +e
  node --test --test-concurrency=1 --test-timeout=600000 \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=junit --test-reporter-destination="$logs/$name.xml" \
    "$dir"/*.test.mjs 2>&1 | tee "$logs/$name.log"
  local status=${PIPESTATUS[0]}
  set -e
  record_junit "$name" "$status" "$logs/$name.xml"
}
node_suite node tests/node
node_suite browser tests/browser

elapsed=$(( $(date +%s) - start ))
log "summary (${elapsed}s)"
for suite in catch2 ctest node browser; do
  printf '  %-8s %4d passed, %d failed\n' "$suite" "${passed[$suite]:-0}" "${failed[$suite]:-0}"
done
echo "summary: ${total_passed} passed, ${total_failed} failed"
((total_failed == 0))
