#!/usr/bin/env bash
# Verify tally's claims on an NVIDIA GPU: builds the CUDA programs in engine/cuda for the GPU it
# finds, runs their host self-tests and then the device checks, and writes
#   build/gpu-report/report.md     the verdict and every table, for people
#   build/gpu-report/report.json   all results, for tools
#   build/gpu-report/roofline.json the GEMM/vector-add points the roofline widget loads
#                                  ("measured on <GPU name>")
# Usage: scripts/bench/verify-gpu.sh [--quick] [--out DIR]
#   --quick   small sizes and a 2^24-pattern conversion sample (a minute instead of several)
# Environment: TALLY_CUDA_ARCHS overrides the architecture list (e.g. "90" or "100a");
#              TALLY_CUDA_DEVICE picks the device index (default 0).
# Exit status: 0 when every check that ran matched (or when there is no GPU: the report then says
# "no CUDA device: skipped"); 1 when a check found a mismatch or a program failed; 2 when the
# build failed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$root/build/gpu-report"
quick=()
while (($#)); do
  case "$1" in
    --quick) quick=(--quick) ;;
    --out) out="$(mkdir -p "$2" && cd "$2" && pwd)"; shift ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "verify-gpu.sh: unknown argument '$1' (allowed: --quick, --out DIR)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"

nvcc="${CUDACXX:-}"
[[ -n "$nvcc" ]] || nvcc="$(command -v nvcc || true)"
[[ -n "$nvcc" ]] || { [[ -x /usr/local/cuda/bin/nvcc ]] && nvcc=/usr/local/cuda/bin/nvcc; }
if [[ -z "$nvcc" ]]; then
  echo "verify-gpu.sh: nvcc not found (install the CUDA toolkit or set CUDACXX)" >&2
  exit 2
fi

# ---------------------------------------------------------------- which architecture to build for
gpu_name="" cc=""
if command -v nvidia-smi >/dev/null 2>&1; then
  line="$(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader -i "${TALLY_CUDA_DEVICE:-0}" 2>/dev/null | head -1 || true)"
  if [[ "$line" == *,* ]]; then
    gpu_name="${line%,*}"
    cc="$(echo "${line##*,}" | tr -d ' ')"
  fi
fi
if [[ -n "${TALLY_CUDA_ARCHS:-}" ]]; then
  archs="$TALLY_CUDA_ARCHS"
elif [[ "$cc" =~ ^([0-9]+)\.([0-9])$ ]]; then
  archs="${BASH_REMATCH[1]}${BASH_REMATCH[2]}"
  # sm_100 and newer: the arch-specific target, so the fp6/fp4/E8M0 conversion instructions are used
  ((BASH_REMATCH[1] >= 10)) && archs="${archs}a"
else
  archs="80;90"  # no GPU visible: build what CI builds, the programs will report the skip
fi
echo "GPU: ${gpu_name:-none found}${cc:+ (compute capability $cc)}; building for CUDA architectures $archs"

# ---------------------------------------------------------------- build
build="$root/build/gpu"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if ! cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DTALLY_CUDA=ON \
      -DCMAKE_CUDA_COMPILER="$nvcc" "-DCMAKE_CUDA_ARCHITECTURES=$archs" \
      -DTALLY_TESTS=OFF -DTALLY_TOOLS=OFF -DTALLY_BENCH=OFF >"$out/build.log" 2>&1 ||
   ! cmake --build "$build" -j"$(nproc)" --target gemm_roofline convert_check memory_budget layer_activations >>"$out/build.log" 2>&1; then
  tail -30 "$out/build.log"
  echo "verify-gpu.sh: build failed, see $out/build.log" >&2
  exit 2
fi

# ---------------------------------------------------------------- run
programs=(convert_check gemm_roofline memory_budget layer_activations)
declare -A status verdict
overall=0 skipped=0
for p in "${programs[@]}"; do
  exe="$build/cuda/$p"
  echo "== $p --self-test"
  set +e
  "$exe" --self-test >"$out/$p.self-test.txt" 2>&1
  self=$?
  echo "== $p ${quick[*]}"
  "$exe" "${quick[@]}" --json "$out/$p.json" 2>&1 | tee "$out/$p.txt"
  run=${PIPESTATUS[0]}
  set -e
  if ((self != 0)); then
    verdict[$p]="host self-test FAILED"; status[$p]=fail; overall=1
  elif grep -q "^no CUDA device: skipped" "$out/$p.txt"; then
    verdict[$p]="$(grep -m1 "^no CUDA device: skipped" "$out/$p.txt")"; status[$p]=skipped; skipped=1
  elif ((run == 0)) && grep -q "^All results match" "$out/$p.txt"; then
    verdict[$p]="all results match"; status[$p]=pass
  elif ((run == 0)); then
    verdict[$p]="$(tail -1 "$out/$p.txt")"; status[$p]=skipped
  elif grep -qE "MISMATCH|DO NOT MATCH" "$out/$p.txt"; then
    verdict[$p]="MISMATCH (exit status $run)"; status[$p]=fail; overall=1
  else
    verdict[$p]="FAILED (exit status $run): see $p.txt"; status[$p]=fail; overall=1
  fi
  [[ -s "$out/$p.json" ]] || rm -f "$out/$p.json"
done

# ---------------------------------------------------------------- report.json (plain bash: no python/jq needed)
json_escape() { local s=$1; s=${s//\\/\\\\}; s=${s//\"/\\\"}; printf '%s' "$s"; }
{
  printf '{\n  "schema": "tally.gpu-report/1",\n'
  printf '  "generated_utc": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  printf '  "gpu": "%s",\n  "compute_capability": "%s",\n  "cuda_architectures": "%s",\n' \
    "$(json_escape "${gpu_name}")" "$cc" "$archs"
  printf '  "git_commit": "%s",\n' "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  printf '  "quick": %s,\n  "programs": {\n' "$([[ ${#quick[@]} -gt 0 ]] && echo true || echo false)"
  n=0
  for p in "${programs[@]}"; do
    n=$((n + 1))
    printf '    "%s": {"status": "%s", "verdict": "%s", "result": ' "$p" "${status[$p]}" "$(json_escape "${verdict[$p]}")"
    if [[ -f "$out/$p.json" ]]; then sed 's/^/      /' "$out/$p.json"; else printf 'null'; fi
    printf '}%s\n' "$([[ $n -lt ${#programs[@]} ]] && echo ,)"
  done
  printf '  }\n}\n'
} >"$out/report.json"
[[ -f "$out/gemm_roofline.json" ]] && cp "$out/gemm_roofline.json" "$out/roofline.json"

# ---------------------------------------------------------------- report.md
{
  echo "# tally GPU verification report"
  echo
  echo "- GPU: ${gpu_name:-none found}${cc:+ (compute capability $cc)}"
  echo "- built for CUDA architectures: $archs with $("$nvcc" --version | tail -1)"
  echo "- commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown); $(date -u +%Y-%m-%dT%H:%MZ)${quick:+; quick mode}"
  echo
  echo "| program | what it checks | verdict |"
  echo "|---|---|---|"
  echo "| convert_check | float -> bf16/fp16/tf32/fp8/fp6/fp4/E8M0 on the device: NVIDIA intrinsics vs tally's encoder | ${verdict[convert_check]} |"
  echo "| gemm_roofline | naive/tiled/WMMA GEMM vs CPU reference and cuBLAS; TFLOP/s, MFU, intensity; vector add | ${verdict[gemm_roofline]} |"
  echo "| memory_budget | cudaMalloc'd weights/grads/master/optimizer bytes vs the engine's budget | ${verdict[memory_budget]} |"
  echo "| layer_activations | one GPT-2 layer forward/backward: stored activation bytes vs the engine's per-layer formula | ${verdict[layer_activations]} |"
  for p in "${programs[@]}"; do
    echo
    echo "## $p"
    echo
    echo '```'
    cat "$out/$p.txt"
    echo '```'
    echo
    echo "Host self-test: $(grep -E "self-test: [0-9]+ passed" "$out/$p.self-test.txt" || echo "did not finish")"
  done
} >"$out/report.md"

echo
for p in "${programs[@]}"; do printf '  %-18s %s\n' "$p" "${verdict[$p]}"; done
echo "report: $out/report.md, $out/report.json"
if ((overall != 0)); then
  echo "verdict: MISMATCH or FAILURE: see the report"
elif ((skipped != 0)); then
  echo "verdict: no CUDA device: skipped (the host self-tests ran; nothing was measured)"
else
  echo "verdict: every check matched"
fi
exit "$overall"
