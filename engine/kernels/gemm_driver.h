// Internal to the GEMM kernels (gemm_scalar.cpp, gemm_simd.cpp): packing and the Goto/BLIS loop
// nest shared by the packed kernels. Everything is in an anonymous namespace, so each kernel file
// gets its own copy compiled with its own ISA flags and the linker can never mix them up (an inline
// function compiled for AVX-512 must not be picked for code built without it). No standard-library
// templates for the same reason. With TALLY_GEMM_FREESTANDING defined (the relaxed-SIMD module,
// engine/kernels/relaxed/, built by clang-16 without a C library) only the workspace-taking driver exists.
#pragma once

#ifndef TALLY_GEMM_FREESTANDING
#include <cstdlib>
#include <cstring>
#endif

namespace tally::gemm::impl {
namespace {

inline int min_int(int a, int b) { return a < b ? a : b; }
inline int round_up(int value, int multiple) { return (value + multiple - 1) / multiple * multiple; }

inline long round_up_long(long value, long multiple) { return (value + multiple - 1) / multiple * multiple; }

// ---------------------------------------------------------------- packing
// B block (kc x nc, row stride ldb) -> ceil(nc/NR) slivers, each kc rows of NR contiguous floats,
// zero-padded on the right so the micro-kernel never needs an edge case in its inner loop.
template <int NR>
void pack_b(int kc, int nc, const float* B, int ldb, float* out) {
    for (int j0 = 0; j0 < nc; j0 += NR) {
        const int w = min_int(NR, nc - j0);
        for (int p = 0; p < kc; ++p) {
            const float* row = B + static_cast<long>(p) * ldb + j0;
            int j = 0;
            for (; j < w; ++j) out[j] = row[j];
            for (; j < NR; ++j) out[j] = 0.0f;
            out += NR;
        }
    }
}

// A block (mc x kc, row stride lda) -> ceil(mc/MR) slivers, each kc columns of MR contiguous
// floats (column-major within the sliver), zero-padded at the bottom.
template <int MR>
void pack_a(int mc, int kc, const float* A, int lda, float* out) {
    for (int i0 = 0; i0 < mc; i0 += MR) {
        const int h = min_int(MR, mc - i0);
        for (int p = 0; p < kc; ++p) {
            int i = 0;
            for (; i < h; ++i) out[i] = A[static_cast<long>(i0 + i) * lda + p];
            for (; i < MR; ++i) out[i] = 0.0f;
            out += MR;
        }
    }
}

// ---------------------------------------------------------------- the blocked, packed driver
// Floats of workspace packed_driver_in needs: the packed B panel, the packed A block and one edge
// tile, each starting on a 64-byte boundary (the workspace itself must be 64-byte aligned).
template <int MR, int NR>
long packed_workspace_floats(int m, int n, int k, int MC, int KC, int NC) {
    const long kc_max = min_int(KC, k < 1 ? 1 : k);
    const long b_floats = round_up_long(kc_max * round_up(min_int(NC, n < 1 ? 1 : n), NR), 16);
    const long a_floats = round_up_long(kc_max * round_up(min_int(MC, m < 1 ? 1 : m), MR), 16);
    return b_floats + a_floats + round_up_long(MR * NR, 16);
}

// Goto/BLIS loop nest: jc (nc columns of B) -> pc (kc deep) -> pack B panel -> ic (mc rows of A)
// -> pack A block -> jr (nr-wide B sliver, stays in L1) -> ir (mr-tall A sliver) -> micro-kernel.
// Micro: void(int kc, const float* a_sliver, const float* b_sliver, float* c, int ldc, bool accumulate)
// workspace: packed_workspace_floats<MR, NR>(...) floats, 64-byte aligned.
template <int MR, int NR, typename Micro>
void packed_driver_in(float* workspace, int m, int n, int k, const float* A, const float* B, float* C, int MC, int KC,
                      int NC, Micro micro) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        for (long i = 0; i < static_cast<long>(m) * n; ++i) C[i] = 0.0f;
        return;
    }
    const int kc_max = min_int(KC, k);
    float* const bpack = workspace;
    float* const apack = bpack + round_up_long(static_cast<long>(kc_max) * round_up(min_int(NC, n), NR), 16);
    float* const edge = apack + round_up_long(static_cast<long>(kc_max) * round_up(min_int(MC, m), MR), 16);
    for (int jc = 0; jc < n; jc += NC) {
        const int nc = min_int(NC, n - jc);
        for (int pc = 0; pc < k; pc += KC) {
            const int kc = min_int(KC, k - pc);
            const bool accumulate = pc > 0;
            pack_b<NR>(kc, nc, B + static_cast<long>(pc) * n + jc, n, bpack);
            for (int ic = 0; ic < m; ic += MC) {
                const int mc = min_int(MC, m - ic);
                pack_a<MR>(mc, kc, A + static_cast<long>(ic) * k + pc, k, apack);
                for (int jr = 0; jr < nc; jr += NR) {
                    const int w = min_int(NR, nc - jr);
                    const float* b = bpack + static_cast<long>(jr) * kc;
                    for (int ir = 0; ir < mc; ir += MR) {
                        const int h = min_int(MR, mc - ir);
                        const float* a = apack + static_cast<long>(ir) * kc;
                        float* c = C + static_cast<long>(ic + ir) * n + jc + jr;
                        if (w == NR && h == MR) {
                            micro(kc, a, b, c, n, accumulate);
                        } else {  // partial tile: full tile into a buffer, copy the valid part
                            micro(kc, a, b, edge, NR, false);
                            for (int i = 0; i < h; ++i)
                                for (int j = 0; j < w; ++j)
                                    c[static_cast<long>(i) * n + j] =
                                        accumulate ? c[static_cast<long>(i) * n + j] + edge[i * NR + j]
                                                   : edge[i * NR + j];
                        }
                    }
                }
            }
        }
    }
}

#ifndef TALLY_GEMM_FREESTANDING
// 64-byte aligned scratch, freed at scope exit.
struct Scratch {
    float* data = nullptr;
    explicit Scratch(long count) {
        const std::size_t bytes = (static_cast<std::size_t>(count) * sizeof(float) + 63) / 64 * 64;
        data = static_cast<float*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes));
    }
    ~Scratch() { std::free(data); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
};

inline void zero(int m, int n, float* C) { std::memset(C, 0, sizeof(float) * static_cast<std::size_t>(m) * n); }

template <int MR, int NR, typename Micro>
void packed_driver(int m, int n, int k, const float* A, const float* B, float* C, int MC, int KC, int NC, Micro micro) {
    Scratch workspace(packed_workspace_floats<MR, NR>(m, n, k, MC, KC, NC));
    packed_driver_in<MR, NR>(workspace.data, m, n, k, A, B, C, MC, KC, NC, micro);
}
#endif

}  // namespace
}  // namespace tally::gemm::impl
