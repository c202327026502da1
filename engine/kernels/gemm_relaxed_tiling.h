// Tiling of the relaxed-SIMD kernel (wasm only), shared by the engine (traffic model, gemm_kernels) and the
// freestanding module that runs it (engine/kernels/relaxed/gemm_relaxed.cpp), so the two cannot disagree.
#pragma once

namespace tally::gemm::relaxed {

// 6 x 8 register tile: 12 f32x4 accumulators + 2 B vectors + 1 splat = 15, the xmm registers V8 lets wasm
// use on x86-64 (an FMA needs no product temporary, so one row more than kernel 5's 5 x 8). Cache blocks
// as kernel 5 in wasm (engine/kernels/gemm_simd.cpp).
constexpr int kMR = 6, kNR = 8, kMC = 120, kKC = 256, kNC = 2048;

}  // namespace tally::gemm::relaxed
