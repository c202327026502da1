#!/usr/bin/env bash
# Measure this machine's NVIDIA GPU and write a device file tally accepts wherever it takes hardware:
#   build/calibration/device.json   the hardware preset format plus matmul_peak_fraction and the measured table
#   build/calibration/gemm_roofline.json   the raw measurement (engine/cuda/gemm_roofline --json)
# Usage: scripts/bench/calibrate-gpu.sh [--sizes 1024,2048,4096,8192] [--out DIR]
# Then:  build/native/tally step --hardware build/calibration/device.json ...   (or the API's hardware object)
# Without a GPU (no nvidia-smi, or it lists none) it prints why and exits 0; 2 when the build fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$root/build/calibration"
sizes="1024,2048,4096,8192"
while (($#)); do
  case "$1" in
    --sizes) sizes="$2"; shift ;;
    --out) out="$2"; shift ;;
    -h|--help) sed -n '2,8p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "calibrate-gpu.sh: unknown argument '$1' (allowed: --sizes LIST, --out DIR)" >&2; exit 2 ;;
  esac
  shift
done

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "calibrate-gpu.sh: no NVIDIA GPU on this machine (nvidia-smi lists none): nothing to measure, skipped"
  exit 0
fi
nvcc="${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
[[ -x "$nvcc" ]] || { echo "calibrate-gpu.sh: nvcc not found (install the CUDA toolkit or set CUDACXX)" >&2; exit 2; }
mkdir -p "$out"

cc="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i "${TALLY_CUDA_DEVICE:-0}" | head -1 | tr -d ' ')"
archs="${TALLY_CUDA_ARCHS:-${cc/./}}"
build="$root/build/gpu"
if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTALLY_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" \
      "-DCMAKE_CUDA_ARCHITECTURES=$archs" -DTALLY_TESTS=OFF -DTALLY_TOOLS=OFF -DTALLY_BENCH=OFF >"$out/build.log" 2>&1 ||
   ! cmake --build "$build" -j"$(nproc)" --target gemm_roofline >>"$out/build.log" 2>&1; then
  tail -30 "$out/build.log"
  echo "calibrate-gpu.sh: build failed, see $out/build.log" >&2
  exit 2
fi

# The GEMM sweep (cuBLAS fp32 and bf16 beside tally's own kernels, each checked) and the HBM stream (vector add).
"$build/cuda/gemm_roofline" --sizes "$sizes" --json "$out/gemm_roofline.json"
node "$root/scripts/bench/calibration-file.mjs" "$out/gemm_roofline.json" >"$out/device.json"
echo "calibrate-gpu.sh: wrote $out/device.json"
