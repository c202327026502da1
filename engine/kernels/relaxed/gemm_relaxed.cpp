// Kernel 5 with fused multiply-add: the same packing and loop nest (engine/kernels/gemm_driver.h) around a
// 6 x 8 micro-kernel built on f32x4.relaxed_madd, in a small WebAssembly module of its own.
//
// Why a separate module: Emscripten 3.1.6 emits only the pre-standard relaxed-SIMD opcodes, which
// browsers reject, while Debian's clang-16 emits the final encoding (relaxed SIMD proposal, phase 4:
// f32x4.relaxed_madd = 0xfd 0x105); binaryen 108 (Emscripten's optimizer) rejects that encoding, so this
// file is compiled by clang-16 and linked by wasm-ld-16 alone (engine/kernels/relaxed/relaxed.cmake), freestanding.
//
// The module imports the engine's linear memory and touches only the memory it is handed: A, B, C and a
// workspace the engine allocates (gemm_workspace_floats). It has no data and no stack in linear memory
// (all values live in wasm locals), so it never writes to the engine's static data. The engine calls it
// through the imports in engine/bindings/relaxed_library.js; the page loads it only where
// WebAssembly.validate accepts it, and keeps kernel 5 otherwise.
#define TALLY_GEMM_FREESTANDING 1
#include "gemm_driver.h"
#include "gemm_relaxed_tiling.h"

#define TALLY_EXPORT(name) extern "C" __attribute__((export_name(name)))

namespace {

typedef float f32x4 __attribute__((vector_size(16)));
typedef float f32x4_unaligned __attribute__((vector_size(16), aligned(4)));

using tally::gemm::relaxed::kMR, tally::gemm::relaxed::kNR, tally::gemm::relaxed::kMC, tally::gemm::relaxed::kKC,
    tally::gemm::relaxed::kNC;
constexpr int kNV = kNR / 4;  // f32x4 vectors per row of the tile

inline f32x4 load(const float* p) { return *reinterpret_cast<const f32x4_unaligned*>(p); }
inline void store(float* p, f32x4 v) { *reinterpret_cast<f32x4_unaligned*>(p) = v; }
inline f32x4 madd(f32x4 a, f32x4 b, f32x4 c) { return __builtin_wasm_relaxed_madd_f32x4(a, b, c); }  // a*b+c

// Not inlined: its own small wasm function with 15 live vectors, as kernel 5's micro-kernel, instead of
// one huge function in which V8 allocates registers across every inlined copy.
__attribute__((noinline)) void micro_relaxed(int kc, const float* a, const float* b, float* c, int ldc,
                                             bool accumulate) {
    f32x4 acc[kMR][kNV];
    for (int i = 0; i < kMR; ++i)
        for (int v = 0; v < kNV; ++v) acc[i][v] = f32x4{0, 0, 0, 0};
    for (int p = 0; p < kc; ++p) {
        f32x4 bv[kNV];
        for (int v = 0; v < kNV; ++v) bv[v] = load(b + 4 * v);
        for (int i = 0; i < kMR; ++i) {
            const float s = a[i];
            const f32x4 ai = {s, s, s, s};
            for (int v = 0; v < kNV; ++v) acc[i][v] = madd(ai, bv[v], acc[i][v]);
        }
        a += kMR;
        b += kNR;
    }
    for (int i = 0; i < kMR; ++i) {
        float* row = c + static_cast<long>(i) * ldc;
        for (int v = 0; v < kNV; ++v) store(row + 4 * v, accumulate ? acc[i][v] + load(row + 4 * v) : acc[i][v]);
    }
}

}  // namespace

// C = A B (row-major, C overwritten), with `workspace` 64-byte aligned and gemm_workspace_floats long.
TALLY_EXPORT("gemm") void gemm(int m, int n, int k, const float* A, const float* B, float* C, float* workspace) {
    tally::gemm::impl::packed_driver_in<kMR, kNR>(workspace, m, n, k, A, B, C, kMC, kKC, kNC, micro_relaxed);
}

TALLY_EXPORT("gemm_workspace_floats") long gemm_workspace_floats(int m, int n, int k) {
    return tally::gemm::impl::packed_workspace_floats<kMR, kNR>(m, n, k, kMC, kKC, kNC);
}

// The relaxed-SIMD ceiling: 12 independent chains x = s * t + x through the addend (as a GEMM
// accumulator), 12 >= FMA latency 4 x 2 pipes; with s and t, 14 of V8's 15 usable registers.
// FLOPs = iters * 12 chains * 4 lanes * 2.
TALLY_EXPORT("peak_loop") double peak_loop(double iterations) {  // a double: no BigInt across JS
    const long long iters = static_cast<long long>(iterations);
    constexpr int kChains = 12;
    f32x4 x[kChains];
    for (int c = 0; c < kChains; ++c) {
        const float v = 1.0f + 0.01f * c;
        x[c] = f32x4{v, v, v, v};
    }
    const f32x4 s = {0.001f, 0.001f, 0.001f, 0.001f}, t = s;
    for (long long it = 0; it < iters; ++it)
        for (int c = 0; c < kChains; ++c) x[c] = madd(s, t, x[c]);
    f32x4 sum = x[0];
    for (int c = 1; c < kChains; ++c) sum = sum + x[c];
    return static_cast<double>(sum[0]) + sum[1] + sum[2] + sum[3];
}

TALLY_EXPORT("peak_flops_per_iter") double peak_flops_per_iter() { return 2.0 * 12 * 4; }
