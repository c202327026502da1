// GEMM ladder, rungs 4-5, and the inner loops of the peak and bandwidth probes.
// C = A·B, fp32, row-major, C overwritten.
//
//   4 packed   A and B blocks copied into contiguous micro-panels (Goto/BLIS loop nest), and an
//              mr x nr tile of C accumulated in a local array across the whole kc loop: plain C++,
//              which the compiler may keep in registers and auto-vectorize (no FMA: the engine is
//              built with -ffp-contract=off)
//   5 simd     the same packing and tile written in vector intrinsics, sized to the register file:
//              AVX-512F 12 x 32 (24 zmm accumulators, FMA), AVX2+FMA 6 x 16 (12 ymm), wasm simd128
//              5 x 8 (mul + add: wasm SIMD has no FMA), GCC vector extensions elsewhere. It does
//              not depend on what the auto-vectorizer decides.
//
// The GEMM files are the only engine files built with the machine's vector ISA (engine/kernels/gemm.cmake
// adds -march=native natively; the wasm build compiles everything with -msimd128). They use no
// standard-library templates and keeps its helpers in anonymous namespaces, so no inline function
// compiled here for AVX-512 can be chosen by the linker for code built without it.
#include "gemm_driver.h"
#include "tally/gemm.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#define TALLY_ISA_AVX512 1
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define TALLY_ISA_AVX2 1
#elif defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define TALLY_ISA_WASM 1
#else
#define TALLY_ISA_GENERIC 1
#endif

namespace tally::gemm::impl {

namespace {

// ---------------------------------------------------------------- kernel 5's micro-kernels
#if TALLY_ISA_AVX512
// 12 x 32: 24 zmm accumulators + 2 for the B row + 1 broadcast = 27 of 32 registers. Each k step
// loads 2 vectors of B and broadcasts 12 values of A for 24 FMAs, so loads never limit the two
// 512-bit FMA pipes.
#ifndef TALLY_AVX512_MR
#define TALLY_AVX512_MR 12
#endif
constexpr int kSimdMR = TALLY_AVX512_MR, kSimdNR = 32;
// Blocks: the kc x 32 B sliver (32 KiB at kc = 256) stays in the 48 KiB L1 of Zen 5 while the
// mc x kc A block (96 KiB) streams from the 1 MiB L2. Chosen among 14x32/12x32/10x32 and
// kc 192-512, mc 48-192 by timing them interleaved with OpenBLAS on this machine.
#ifndef TALLY_AVX512_KC
#define TALLY_AVX512_KC 256
#endif
#ifndef TALLY_AVX512_MC
#define TALLY_AVX512_MC 96
#endif
constexpr int kSimdMC = TALLY_AVX512_MC, kSimdKC = TALLY_AVX512_KC, kSimdNC = 3072;
constexpr const char* kIsa = "avx512f+fma";
constexpr int kLanes = 16;
constexpr bool kFma = true;

void micro_simd(int kc, const float* a, const float* b, float* c, int ldc, bool accumulate) {
    __m512 acc0[kSimdMR], acc1[kSimdMR];
    for (int i = 0; i < kSimdMR; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
    // Ask for the C tile now: its rows are ldc floats apart (8 KiB at n = 2048), so the loads and
    // stores after the k loop would otherwise miss; +7% at n = 2048 on Zen 5.
    for (int i = 0; i < kSimdMR; ++i) {
        _mm_prefetch(reinterpret_cast<const char*>(c + static_cast<long>(i) * ldc), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(c + static_cast<long>(i) * ldc + 16), _MM_HINT_T0);
    }
    for (int p = 0; p < kc; ++p) {
        const __m512 b0 = _mm512_load_ps(b);
        const __m512 b1 = _mm512_load_ps(b + 16);
        for (int i = 0; i < kSimdMR; ++i) {
            const __m512 ai = _mm512_set1_ps(a[i]);
            acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
            acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
        }
        a += kSimdMR;
        b += kSimdNR;
    }
    for (int i = 0; i < kSimdMR; ++i) {
        float* row = c + static_cast<long>(i) * ldc;
        if (accumulate) {
            acc0[i] = _mm512_add_ps(acc0[i], _mm512_loadu_ps(row));
            acc1[i] = _mm512_add_ps(acc1[i], _mm512_loadu_ps(row + 16));
        }
        _mm512_storeu_ps(row, acc0[i]);
        _mm512_storeu_ps(row + 16, acc1[i]);
    }
}
#elif TALLY_ISA_AVX2
// 6 x 16: 12 ymm accumulators + 2 for B + 1 broadcast (the classic Haswell shape).
constexpr int kSimdMR = 6, kSimdNR = 16;
constexpr int kSimdMC = 144, kSimdKC = 256, kSimdNC = 3072;
constexpr const char* kIsa = "avx2+fma";
constexpr int kLanes = 8;
constexpr bool kFma = true;

void micro_simd(int kc, const float* a, const float* b, float* c, int ldc, bool accumulate) {
    __m256 acc0[kSimdMR], acc1[kSimdMR];
    for (int i = 0; i < kSimdMR; ++i) acc0[i] = acc1[i] = _mm256_setzero_ps();
    for (int i = 0; i < kSimdMR; ++i)  // the C tile, needed after the k loop (see the AVX-512 kernel)
        _mm_prefetch(reinterpret_cast<const char*>(c + static_cast<long>(i) * ldc), _MM_HINT_T0);
    for (int p = 0; p < kc; ++p) {
        const __m256 b0 = _mm256_load_ps(b);
        const __m256 b1 = _mm256_load_ps(b + 8);
        for (int i = 0; i < kSimdMR; ++i) {
            const __m256 ai = _mm256_broadcast_ss(a + i);
            acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);
            acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);
        }
        a += kSimdMR;
        b += kSimdNR;
    }
    for (int i = 0; i < kSimdMR; ++i) {
        float* row = c + static_cast<long>(i) * ldc;
        if (accumulate) {
            acc0[i] = _mm256_add_ps(acc0[i], _mm256_loadu_ps(row));
            acc1[i] = _mm256_add_ps(acc1[i], _mm256_loadu_ps(row + 8));
        }
        _mm256_storeu_ps(row, acc0[i]);
        _mm256_storeu_ps(row + 8, acc1[i]);
    }
}
#elif TALLY_ISA_WASM
// wasm simd128: 4 lanes and no FMA (relaxed-SIMD FMA is not usable with Emscripten 3.1.6), so each
// step is a mul and an add. V8 on x86-64 gives wasm 16 xmm registers and keeps one as scratch, so
// the tile is MR x (4 NV) with MR*NV accumulators + NV B vectors + 1 splat + 1 product <= 15.
#ifndef TALLY_WASM_MR
#define TALLY_WASM_MR 5
#endif
#ifndef TALLY_WASM_NV
#define TALLY_WASM_NV 2
#endif
constexpr int kSimdMR = TALLY_WASM_MR, kSimdNV = TALLY_WASM_NV, kSimdNR = 4 * TALLY_WASM_NV;
#ifndef TALLY_WASM_KC
#define TALLY_WASM_KC 256
#endif
#ifndef TALLY_WASM_MC
#define TALLY_WASM_MC 120
#endif
constexpr int kSimdMC = TALLY_WASM_MC, kSimdKC = TALLY_WASM_KC, kSimdNC = 2048;
constexpr const char* kIsa = "wasm-simd128";
constexpr int kLanes = 4;
constexpr bool kFma = false;

void micro_simd(int kc, const float* a, const float* b, float* c, int ldc, bool accumulate) {
    v128_t acc[kSimdMR][kSimdNV];
    for (int i = 0; i < kSimdMR; ++i)
        for (int v = 0; v < kSimdNV; ++v) acc[i][v] = wasm_f32x4_splat(0.0f);
    for (int p = 0; p < kc; ++p) {
        v128_t bv[kSimdNV];
        for (int v = 0; v < kSimdNV; ++v) bv[v] = wasm_v128_load(b + 4 * v);
        for (int i = 0; i < kSimdMR; ++i) {
            const v128_t ai = wasm_v128_load32_splat(a + i);
            for (int v = 0; v < kSimdNV; ++v) acc[i][v] = wasm_f32x4_add(acc[i][v], wasm_f32x4_mul(ai, bv[v]));
        }
        a += kSimdMR;
        b += kSimdNR;
    }
    for (int i = 0; i < kSimdMR; ++i) {
        float* row = c + static_cast<long>(i) * ldc;
        for (int v = 0; v < kSimdNV; ++v) {
            v128_t out = acc[i][v];
            if (accumulate) out = wasm_f32x4_add(out, wasm_v128_load(row + 4 * v));
            wasm_v128_store(row + 4 * v, out);
        }
    }
}
#else
// Portable fallback: GCC/Clang vector extensions, 4 x 16 with 4-lane vectors (SSE-sized, so any
// x86-64 or ARM compiler maps it to real registers).
typedef float v4f __attribute__((vector_size(16)));
constexpr int kSimdMR = 4, kSimdNR = 16;
constexpr int kSimdMC = 128, kSimdKC = 256, kSimdNC = 2048;
constexpr const char* kIsa = "generic (gcc vector extensions)";
constexpr int kLanes = 4;
constexpr bool kFma = false;

void micro_simd(int kc, const float* a, const float* b, float* c, int ldc, bool accumulate) {
    v4f acc[kSimdMR][4] = {};
    for (int p = 0; p < kc; ++p) {
        v4f bv[4];
        std::memcpy(bv, b, sizeof bv);
        for (int i = 0; i < kSimdMR; ++i) {
            const float s = a[i];
            const v4f ai = {s, s, s, s};
            for (int v = 0; v < 4; ++v) acc[i][v] += ai * bv[v];
        }
        a += kSimdMR;
        b += kSimdNR;
    }
    for (int i = 0; i < kSimdMR; ++i) {
        float* row = c + static_cast<long>(i) * ldc;
        for (int v = 0; v < 4; ++v) {
            v4f out = acc[i][v];
            if (accumulate) {
                v4f old;
                std::memcpy(&old, row + 4 * v, sizeof old);
                out += old;
            }
            std::memcpy(row + 4 * v, &out, sizeof out);
        }
    }
}
#endif

// ---------------------------------------------------------------- rung 4's micro-kernel
// Plain C++ over a local kSimdMR x kSimdNR accumulator array. Built with -ffp-contract=off like the
// rest of the engine, so the compiler may vectorize it but never fuses the multiply and the add.
void micro_plain(int kc, const float* a, const float* b, float* c, int ldc, bool accumulate) {
    float t[kSimdMR][kSimdNR] = {};
    for (int p = 0; p < kc; ++p) {
        for (int i = 0; i < kSimdMR; ++i) {
            const float ai = a[i];
            for (int j = 0; j < kSimdNR; ++j) t[i][j] += ai * b[j];
        }
        a += kSimdMR;
        b += kSimdNR;
    }
    for (int i = 0; i < kSimdMR; ++i)
        for (int j = 0; j < kSimdNR; ++j) {
            float& out = c[static_cast<long>(i) * ldc + j];
            out = accumulate ? out + t[i][j] : t[i][j];
        }
}

}  // namespace

// ---------------------------------------------------------------- 5: register-tiled SIMD
void simd(int m, int n, int k, const float* A, const float* B, float* C) {
    packed_driver<kSimdMR, kSimdNR>(m, n, k, A, B, C, kSimdMC, kSimdKC, kSimdNC, micro_simd);
}

// ---------------------------------------------------------------- 4: packing + register tile in C++
void packed(int m, int n, int k, const float* A, const float* B, float* C) {
    packed_driver<kSimdMR, kSimdNR>(m, n, k, A, B, C, kSimdMC, kSimdKC, kSimdNC, micro_plain);
}

Tiling packed_tiling() { return {kSimdMR, kSimdNR, kSimdMC, kSimdKC, kSimdNC}; }
Tiling simd_tiling() { return {kSimdMR, kSimdNR, kSimdMC, kSimdKC, kSimdNC}; }
const char* isa_name() { return kIsa; }
int isa_lanes() { return kLanes; }
bool isa_fma() { return kFma; }

// ---------------------------------------------------------------- probe loops
// Independent multiply-add chains in full-width registers, no memory traffic.
// FMA ISAs: x = s * t + x, the chain running through the addend as in a GEMM accumulator (on this
// Zen 5 that form measured ~1.2-1.5x faster than x = x * s + t, whose chain runs through a
// multiplier input); 12 chains >= latency 4 x 2 pipes. s * t = 1e-6 keeps x near 1 (no overflow, no
// denormals). wasm has no FMA and a chain through the addend alone would let the compiler hoist the
// loop-invariant multiply, so its chains are x = x * s + t (mul 3 + add 3 cycles of latency, 2 + 2
// pipes: 12 chains, which with s and t fill 14 of V8's 15 usable xmm registers); x stays near
// t / (1 - s) = 1.
#if TALLY_ISA_AVX512
constexpr int kChains = 12;
double peak_loop(long long iters) {
    __m512 x[kChains];
    for (int c = 0; c < kChains; ++c) x[c] = _mm512_set1_ps(1.0f + 0.01f * c);
    const __m512 s = _mm512_set1_ps(0.001f), t = _mm512_set1_ps(0.001f);
    for (long long it = 0; it < iters; ++it)
        for (int c = 0; c < kChains; ++c) x[c] = _mm512_fmadd_ps(s, t, x[c]);
    __m512 sum = x[0];
    for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, x[c]);
    alignas(64) float out[16];  // not _mm512_reduce_add_ps: GCC 12's header trips -Wuninitialized
    _mm512_store_ps(out, sum);
    double total = 0;
    for (float v : out) total += v;
    return total;
}
double peak_flops_per_iter() { return 2.0 * kChains * 16; }
#elif TALLY_ISA_AVX2
constexpr int kChains = 12;
double peak_loop(long long iters) {
    __m256 x[kChains];
    for (int c = 0; c < kChains; ++c) x[c] = _mm256_set1_ps(1.0f + 0.01f * c);
    const __m256 s = _mm256_set1_ps(0.001f), t = _mm256_set1_ps(0.001f);
    for (long long it = 0; it < iters; ++it)
        for (int c = 0; c < kChains; ++c) x[c] = _mm256_fmadd_ps(s, t, x[c]);
    alignas(32) float out[8];
    __m256 sum = x[0];
    for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, x[c]);
    _mm256_store_ps(out, sum);
    double total = 0;
    for (float v : out) total += v;
    return total;
}
double peak_flops_per_iter() { return 2.0 * kChains * 8; }
#elif TALLY_ISA_WASM
constexpr int kChains = 12;
double peak_loop(long long iters) {
    v128_t x[kChains];
    for (int c = 0; c < kChains; ++c) x[c] = wasm_f32x4_splat(1.0f + 0.01f * c);
    const v128_t s = wasm_f32x4_splat(0.999f), t = wasm_f32x4_splat(0.001f);
    for (long long it = 0; it < iters; ++it)
        for (int c = 0; c < kChains; ++c) x[c] = wasm_f32x4_add(wasm_f32x4_mul(x[c], s), t);
    v128_t sum = x[0];
    for (int c = 1; c < kChains; ++c) sum = wasm_f32x4_add(sum, x[c]);
    return static_cast<double>(wasm_f32x4_extract_lane(sum, 0)) + wasm_f32x4_extract_lane(sum, 1) +
           wasm_f32x4_extract_lane(sum, 2) + wasm_f32x4_extract_lane(sum, 3);
}
double peak_flops_per_iter() { return 2.0 * kChains * 4; }
#else
constexpr int kChains = 12;
double peak_loop(long long iters) {
    v4f x[kChains];
    for (int c = 0; c < kChains; ++c) {
        const float v = 1.0f + 0.01f * c;
        x[c] = v4f{v, v, v, v};
    }
    const v4f s = {0.999f, 0.999f, 0.999f, 0.999f}, t = {0.001f, 0.001f, 0.001f, 0.001f};
    for (long long it = 0; it < iters; ++it)
        for (int c = 0; c < kChains; ++c) x[c] = x[c] * s + t;
    double total = 0;
    for (int c = 0; c < kChains; ++c) total += x[c][0] + x[c][1] + x[c][2] + x[c][3];
    return total;
}
double peak_flops_per_iter() { return 2.0 * kChains * 4; }
#endif

double read_sum(const float* x, long count) {
    // 8 independent partial sums of 16 floats: enough to keep loads, not add latency, the limit.
    float part[8][16] = {};
    long i = 0;
    for (; i + 128 <= count; i += 128)
        for (int u = 0; u < 8; ++u)
            for (int l = 0; l < 16; ++l) part[u][l] += x[i + u * 16 + l];
    double total = 0;
    for (; i < count; ++i) total += x[i];
    for (int u = 0; u < 8; ++u)
        for (int l = 0; l < 16; ++l) total += part[u][l];
    return total;
}

void triad(float* a, const float* b, const float* c, float s, long count) {
    for (long i = 0; i < count; ++i) a[i] = b[i] + s * c[i];
}

}  // namespace tally::gemm::impl
