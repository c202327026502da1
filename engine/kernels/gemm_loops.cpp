// GEMM ladder, rungs 1-3: loop order and cache blocking. C = A·B, fp32, row-major, C overwritten.
//
//   1 naive    i-j-k triple loop; the inner loop walks a column of B (stride n floats), so every
//              load touches a new cache line and nothing can be vectorized
//   2 ikj      i-k-j order: the inner loop walks a row of B and a row of C with unit stride, so
//              whole cache lines are used and the compiler vectorizes it; but B is re-read from
//              L3/DRAM for every row of C once B no longer fits in L2
//   3 blocked  loop tiling: a kc x nc block of B (512 KiB) stays in L2 while mc rows of A sweep it
//
// Built with the same flags as rungs 4-5 (engine/kernels/gemm.cmake: -march=native natively), so the
// rungs differ only in their code. Rungs 4-5 are in gemm_simd.cpp.
#include "gemm_driver.h"
#include "tally/gemm.h"

namespace tally::gemm::impl {

namespace {

constexpr int kBlockedMC = 64, kBlockedKC = 256, kBlockedNC = 512;
}  // namespace

// ---------------------------------------------------------------- 1: naive i-j-k
void naive(int m, int n, int k, const float* A, const float* B, float* C) {
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            float sum = 0.0f;
            for (int p = 0; p < k; ++p) sum += A[static_cast<long>(i) * k + p] * B[static_cast<long>(p) * n + j];
            C[static_cast<long>(i) * n + j] = sum;
        }
}

// ---------------------------------------------------------------- 2: i-k-j
void ikj(int m, int n, int k, const float* A, const float* B, float* C) {
    for (int i = 0; i < m; ++i) {
        float* c = C + static_cast<long>(i) * n;
        for (int j = 0; j < n; ++j) c[j] = 0.0f;
        for (int p = 0; p < k; ++p) {
            const float a = A[static_cast<long>(i) * k + p];
            const float* b = B + static_cast<long>(p) * n;
            for (int j = 0; j < n; ++j) c[j] += a * b[j];
        }
    }
}

// ---------------------------------------------------------------- 3: cache blocking
// The i-k-j loops of kernel 2 inside jc/pc/ic blocks: the kc x nc block of B (512 KiB) stays in
// L2 while mc rows of A sweep over it, and a row segment of C (nc floats, 2 KiB) stays in L1.
void blocked(int m, int n, int k, const float* A, const float* B, float* C) {
    if (m <= 0 || n <= 0) return;
    zero(m, n, C);
    for (int jc = 0; jc < n; jc += kBlockedNC) {
        const int nc = min_int(kBlockedNC, n - jc);
        for (int pc = 0; pc < k; pc += kBlockedKC) {
            const int kc = min_int(kBlockedKC, k - pc);
            for (int ic = 0; ic < m; ic += kBlockedMC) {
                const int mc = min_int(kBlockedMC, m - ic);
                for (int i = ic; i < ic + mc; ++i) {
                    float* c = C + static_cast<long>(i) * n + jc;
                    for (int p = pc; p < pc + kc; ++p) {
                        const float a = A[static_cast<long>(i) * k + p];
                        const float* b = B + static_cast<long>(p) * n + jc;
                        for (int j = 0; j < nc; ++j) c[j] += a * b[j];
                    }
                }
            }
        }
    }
}

Tiling blocked_tiling() { return {0, 0, kBlockedMC, kBlockedKC, kBlockedNC}; }

}  // namespace tally::gemm::impl
