#!/usr/bin/env bash
# THE test command: installs what is missing, builds native + wasm + site, runs every suite
# (Catch2, ctest tools/CUDA host checks, node tests of the wasm build, browser tests in headless Chromium)
# and ends with one summary line. Exit status is non-zero if anything failed.
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

log "Catch2 (engine)"
set +e
./build/native/tally_tests --order rand --rng-seed 1 2>&1 | tee "$logs/catch2.log"
status=${PIPESTATUS[0]}
set -e
summary=$(grep -E "^(All tests passed|test cases:)" "$logs/catch2.log" | tail -1)
if [[ $summary =~ \(([0-9]+)\ assertions?\ in\ ([0-9]+)\ test\ cases?\) ]]; then
  record catch2 "${BASH_REMATCH[2]}" 0
elif [[ $summary =~ test\ cases:\ +([0-9]+)\ \|\ +([0-9]+)\ passed\ \|\ +([0-9]+)\ failed ]]; then
  record catch2 "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"
else
  record catch2 0 1
fi
((status == 0)) || ((failed[catch2] > 0)) || record catch2-exit 0 1

log "ctest (float checker, CUDA host checks, tools)"
set +e
(cd build/native && ctest --output-on-failure -E '^catch2$' 2>&1) | tee "$logs/ctest.log"
set -e
if grep -q "No tests were found" "$logs/ctest.log"; then
  record ctest 0 0
elif [[ $(grep -E "tests passed, [0-9]+ tests failed out of" "$logs/ctest.log" | tail -1) =~ ([0-9]+)%\ tests\ passed,\ ([0-9]+)\ tests\ failed\ out\ of\ ([0-9]+) ]]; then
  record ctest $((BASH_REMATCH[3] - BASH_REMATCH[2])) "${BASH_REMATCH[2]}"
else
  record ctest 0 1
fi

node_suite() {  # name dir
  local name=$1 dir=$2
  log "$name ($dir)"
  if ! compgen -G "$dir/*.test.mjs" >/dev/null; then record "$name" 0 0; return; fi
  set +e
  node --test --test-concurrency=1 --test-timeout=600000 "$dir"/*.test.mjs 2>&1 | tee "$logs/$name.log"
  set -e
  local pass fail
  pass=$(grep -E "^# pass [0-9]+" "$logs/$name.log" | tail -1 | awk '{print $3}')
  fail=$(grep -E "^# fail [0-9]+" "$logs/$name.log" | tail -1 | awk '{print $3}')
  local cancelled
  cancelled=$(grep -E "^# cancelled [0-9]+" "$logs/$name.log" | tail -1 | awk '{print $3}')
  record "$name" "${pass:-0}" $(( ${fail:-1} + ${cancelled:-0} ))
}
node_suite node tests/node
node_suite browser tests/browser

elapsed=$(( $(date +%s) - start ))
log "summary (${elapsed}s)"
for suite in catch2 ctest node browser; do
  printf '  %-8s %4d passed, %d failed\n' "$suite" "${passed[$suite]:-0}" "${failed[$suite]:-0}"
done
[[ -n "${failed[catch2-exit]:-}" ]] && echo "  catch2 exited non-zero"
echo "summary: ${total_passed} passed, ${total_failed} failed"
((total_failed == 0))
