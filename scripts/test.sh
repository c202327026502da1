#!/usr/bin/env bash
# THE test command: installs what is missing, builds native + wasm + site, runs every suite
# (Catch2, ctest tools/CUDA host checks, node tests of the wasm build, browser tests in headless Chromium),
# counts each from its runner's JUnit XML report and ends with one summary line. Exit status is non-zero if anything failed.
#   bash scripts/test.sh              everything (what CI runs)
#   bash scripts/test.sh --engine     native build, Catch2 and ctest only
#   bash scripts/test.sh --node       native + wasm + site, the node suite only
#   bash scripts/test.sh --browser    native + wasm + site, the browser suite only
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$TALLY_ROOT"
start=$(date +%s)
only=all
case "${1:-}" in
  "") ;;
  --engine) only=engine ;;
  --node) only=node ;;
  --browser) only=browser ;;
  *) echo "usage: bash scripts/test.sh [--engine | --node | --browser]" >&2; exit 2 ;;
esac

ensure_apt_packages "${TALLY_APT_PACKAGES[@]}"
ensure_node_modules
build_native
if [[ $only != engine ]]; then
  build_wasm
  build_site
fi

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

if [[ $only == all || $only == engine ]]; then
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
fi

node_suite() {  # name dir concurrency [files...]: the files (default: every test in dir), concurrency at a time
  local name=$1 dir=$2 concurrency=$3; shift 3
  local files=("$@")
  ((${#files[@]})) || files=("$dir"/*.test.mjs)
  log "$name ($dir, ${#files[@]} files, $concurrency at a time)"
  if ((${#files[@]} == 0)) || [[ ! -e ${files[0]} ]]; then record "$name" 0 0; return; fi
  set +e
  node --test --test-concurrency="$concurrency" --test-timeout=600000 \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=junit --test-reporter-destination="$logs/$name.xml" \
    "${files[@]}" 2>&1 | tee "$logs/$name.log"
  local status=${PIPESTATUS[0]}
  set -e
  record_junit "$name" "$status" "$logs/$name.xml"
}
# Node files are independent (each loads its own engine; none times anything against a deadline): two at a time.
if [[ $only == all || $only == node ]]; then node_suite node tests/node 2; fi
if [[ $only == all || $only == browser ]]; then
  # Each browser file starts its own server and browser, so two run at once on this 2-core machine. These stay
  # alone: roofline measures the main thread's responsiveness while its GEMM workers run, hosts runs GEMM workers
  # with deadlines, load measures first paint; a second browser beside them would starve what they wait for.
  serial=(tests/browser/roofline.test.mjs tests/browser/hosts.test.mjs tests/browser/load.test.mjs)
  parallel=()
  for f in tests/browser/*.test.mjs; do
    [[ " ${serial[*]} " == *" $f "* ]] || parallel+=("$f")
  done
  node_suite browser tests/browser 2 "${parallel[@]}"
  node_suite browser-serial tests/browser 1 "${serial[@]}"
fi

elapsed=$(( $(date +%s) - start ))
log "summary (${elapsed}s)"
for suite in catch2 ctest node browser browser-serial; do
  printf '  %-8s %4d passed, %d failed\n' "$suite" "${passed[$suite]:-0}" "${failed[$suite]:-0}"
done
echo "summary: ${total_passed} passed, ${total_failed} failed"
((total_failed == 0))
