#!/usr/bin/env bash
# tally's native GEMM against OpenBLAS: first as the library is installed (OPENBLAS_CORETYPE unset, so OpenBLAS
# picks its own kernel: the headline), then once per forced core type (extra rows only), one thread each.
# usage: engine/bench/gemm_vs_openblas_coretypes.sh [bin] [n list] [runs] [forced core types...]
#   e.g. engine/bench/gemm_vs_openblas_coretypes.sh build/native/tally_gemm_vs_openblas 1024,2048 7 SkylakeX Haswell
# Prints `uptime` before and after each program run and the core OpenBLAS reports (OPENBLAS_VERBOSE=2).
set -euo pipefail
bin=${1:-build/native/tally_gemm_vs_openblas}
sizes=${2:-1024,2048}
runs=${3:-7}
shift $(($# < 3 ? $# : 3))
forced=("$@")
[ ${#forced[@]} -gt 0 ] || forced=(SkylakeX Cooperlake Haswell)
run() {
  echo "== OPENBLAS_CORETYPE=${1:-(unset)}"
  uptime
  if [ -n "$1" ]; then
    env OPENBLAS_CORETYPE="$1" OPENBLAS_NUM_THREADS=1 OPENBLAS_VERBOSE=2 "$bin" --n "$sizes" --runs "$runs"
  else
    env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS=1 OPENBLAS_VERBOSE=2 "$bin" --n "$sizes" --runs "$runs"
  fi
  uptime
}
run ""
for core in "${forced[@]}"; do run "$core"; done
