/*
GEMM and the roofline, measured on the device.

C (M, N) = A (M, K) @ B (K, N), all row-major, square sizes M = N = K = n from 256 to 8192.
Kernels, each checked against a CPU reference before it is timed:
  version 1: naive fp32, one thread per output element (no data reuse beyond the caches)
  version 2: shared-memory tiled fp32, 64x64 block tile, 4x4 outputs per thread
  version 3: tensor cores through WMMA, bf16 inputs, fp32 accumulation, 128x128 block tile
  cuBLAS sgemm (fp32) and cuBLAS GemmEx (bf16 in, fp32 compute): the speed anchors
and one memory-bound kernel (vector add, fp32) for the other side of the roofline.
For every point it prints TFLOP/s, the ratio to cuBLAS of the same input type, MFU against the
hardware preset's dense peak for that type, and the arithmetic intensity; --json writes the
report the roofline widget loads as "measured on <GPU name>".

Build: part of the normal CMake build when nvcc is found (targets for sm_80 and sm_90), or
  scripts/bench/verify-gpu.sh            (builds, runs every device check, writes build/gpu-report/)
Run:
  ./gemm_roofline                           all sizes, all kernels, table on stdout
  ./gemm_roofline --sizes 1024,4096 --json gemm.json
  ./gemm_roofline --quick                   sizes 256 and 512 only (what ctest runs)
  ./gemm_roofline --self-test               host only: reference, checker, tile geometry
  ./gemm_roofline --hardware h100-sxm       pick the preset when the device name does not match
Without a CUDA device it prints "no CUDA device: skipped" and exits 0.
*/
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <cinttypes>
#include <string>
#include <vector>

#include "common.cuh"
#include "engine_bridge.h"

#include "cublas_check.cuh"

// unit roundoffs (half an ulp of 1.0): IEEE 754 binary32 has a 24-bit significand, bfloat16 8 bits
constexpr double kU_fp32 = 0x1p-24;
constexpr double kU_bf16 = 0x1p-8;
// Tensor cores accumulate fp32 with truncation and align each small block of products to the
// largest exponent before adding (Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA
// tensor cores", PeerJ Comput. Sci. 7:e330, 2021): allow four times fp32's unit roundoff.
constexpr double kU_tensor_core = 0x1p-22;

// ----------------------------------------------------------------------------
// CPU code reference

// One entry of C = A @ B in double, from inputs already rounded to what the kernel reads, plus
// S = sum_p |a_ip * b_pj| which scales the accumulation error bound. Products of two fp32 (or
// bf16) values are exact in double, and the double sum's own error (k * 2^-53 * S) is far below
// any fp32 tolerance, so `value` is the exact answer to the precision that matters here.
struct RefEntry {
    double value;
    double abs_sum;
};
static RefEntry gemm_reference_entry(const float* A, const float* B, int K, int N, int i, int j) {
    double acc = 0.0, abs_sum = 0.0;
    for (int p = 0; p < K; p++) {
        double prod = (double)A[(size_t)i * K + p] * (double)B[(size_t)p * N + j];
        acc += prod;
        abs_sum += std::fabs(prod);
    }
    return {acc, abs_sum};
}

// Tolerance of one output entry. The kernel's inputs are the reference's inputs (fp32 kernels
// read the fp32 data, bf16 kernels the bf16-rounded data the reference also uses), so what is
// left is the accumulation error of a k-term dot product: |c - ref| <= gamma_k(u_acc) * S
// (Higham eq. 3.8, see common.cuh). u_acc is 2^-24 for fp32 FMA chains and kU_tensor_core for
// tensor cores (truncating, block-aligned adds).
// `input_u` adds the input-rounding term 2u + u^2 per product for comparisons against the
// unrounded fp32 data (used to show what bf16 inputs cost; zero for the tight check).
static double gemm_tolerance(int K, double abs_sum, double acc_u, double input_u) {
    double input_term = 2.0 * input_u + input_u * input_u;
    return (input_term + gamma_k(K, acc_u)) * abs_sum + 1e-30;
}

// The output entries a check looks at: all of them for n <= full_max, otherwise a deterministic
// sample (random entries plus the whole last row and last column, where tiling bugs show).
static std::vector<size_t> check_indices(int M, int N, int full_max, uint64_t seed) {
    std::vector<size_t> idx;
    if ((long long)M * N <= (long long)full_max * full_max) {
        idx.resize((size_t)M * N);
        for (size_t i = 0; i < idx.size(); i++) idx[i] = i;
        return idx;
    }
    Rng rng(seed);
    for (int s = 0; s < 1024; s++) idx.push_back(rng.below((uint64_t)M * N));
    for (int j = 0; j < N; j++) idx.push_back((size_t)(M - 1) * N + j);
    for (int i = 0; i < M; i++) idx.push_back((size_t)i * N + (N - 1));
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    return idx;
}

struct RefSet {
    std::vector<size_t> idx;
    std::vector<RefEntry> ref;
};
static RefSet make_refs(const float* A, const float* B, int M, int N, int K, const std::vector<size_t>& idx) {
    RefSet r;
    r.idx = idx;
    r.ref.resize(idx.size());
    for (size_t s = 0; s < idx.size(); s++)
        r.ref[s] = gemm_reference_entry(A, B, K, N, (int)(idx[s] / N), (int)(idx[s] % N));
    return r;
}

// Checks C (host copy) at the reference entries; returns true when all are within tolerance.
static bool check_gemm(const char* name, const float* C, const RefSet& refs, int K, double acc_u, double input_u,
                       Checker* out, bool quiet = false) {
    Checker chk(name, quiet);
    for (size_t s = 0; s < refs.idx.size(); s++)
        chk.check(refs.idx[s], C[refs.idx[s]], refs.ref[s].value,
                  gemm_tolerance(K, refs.ref[s].abs_sum, acc_u, input_u));
    if (out) *out = chk;
    return chk.ok();
}

// Rounds fp32 data to bf16 on the host with the same intrinsic the device uses
// (cuda_bf16.h's __float2bfloat16_rn is __host__ __device__), and widens back to fp32 for the
// reference, which must see exactly the values the kernel reads.
static void round_to_bf16(const std::vector<float>& x, std::vector<__nv_bfloat16>* h16, std::vector<float>* widened) {
    h16->resize(x.size());
    widened->resize(x.size());
    for (size_t i = 0; i < x.size(); i++) {
        (*h16)[i] = __float2bfloat16_rn(x[i]);
        (*widened)[i] = __bfloat162float((*h16)[i]);
    }
}

// ----------------------------------------------------------------------------
// tile geometry (shared by the kernels and the host self-test, so the self-test checks the very
// index arithmetic the device runs)

// version 2: 64x64 block tile, K step 16, 256 threads, each thread owns 4x4 outputs strided by 16
constexpr int T2_BM = 64, T2_BN = 64, T2_BK = 16, T2_THREADS = 256, T2_TM = 4, T2_TN = 4;
// version 3: 128x128 block tile, K step 32, 8 warps in a 2 (m) x 4 (n) grid, each warp 64x32
// = 4x2 WMMA fragments of 16x16; shared rows padded by 8 bf16 to spread banks (ldm stays a
// multiple of 8 as WMMA requires for 16-bit types, and rows stay 16-byte aligned).
constexpr int T3_BM = 128, T3_BN = 128, T3_BK = 32, T3_THREADS = 256, T3_WARPS_M = 2, T3_WARPS_N = 4;
constexpr int T3_WM = T3_BM / T3_WARPS_M, T3_WN = T3_BN / T3_WARPS_N;  // 64 x 32 per warp
constexpr int T3_FM = T3_WM / 16, T3_FN = T3_WN / 16;                  // 4 x 2 fragments
constexpr int T3_APAD = T3_BK + 8, T3_BPAD = T3_BN + 8;
constexpr int T3_VEC = 8;  // bf16 per 16-byte vector load

struct RowCol {
    int row, col;
};
// version 2 loads: element `e = tid + THREADS * r` of the A tile (BM x BK) and the B tile (BK x BN)
__host__ __device__ inline RowCol t2_a_load(int tid, int r) {
    int e = tid + T2_THREADS * r;
    return {e / T2_BK, e % T2_BK};
}
__host__ __device__ inline RowCol t2_b_load(int tid, int r) {
    int e = tid + T2_THREADS * r;
    return {e / T2_BN, e % T2_BN};
}
// version 2 outputs: thread tid owns rows ty + 16*i and columns tx + 16*j of the block tile
__host__ __device__ inline RowCol t2_out(int tid, int i, int j) {
    int ty = tid / (T2_BN / T2_TN), tx = tid % (T2_BN / T2_TN);
    return {ty + (T2_BM / T2_TM) * i, tx + (T2_BN / T2_TN) * j};
}
constexpr int T2_A_LOADS = T2_BM * T2_BK / T2_THREADS;  // 4
constexpr int T2_B_LOADS = T2_BK * T2_BN / T2_THREADS;  // 4

// version 3 loads: 16-byte chunk `c = tid + THREADS * r` of the A tile (BM x BK) / B tile (BK x BN)
__host__ __device__ inline RowCol t3_a_load(int tid, int r) {
    int c = tid + T3_THREADS * r;
    return {c / (T3_BK / T3_VEC), (c % (T3_BK / T3_VEC)) * T3_VEC};
}
__host__ __device__ inline RowCol t3_b_load(int tid, int r) {
    int c = tid + T3_THREADS * r;
    return {c / (T3_BN / T3_VEC), (c % (T3_BN / T3_VEC)) * T3_VEC};
}
constexpr int T3_A_LOADS = T3_BM * T3_BK / T3_VEC / T3_THREADS;  // 2
constexpr int T3_B_LOADS = T3_BK * T3_BN / T3_VEC / T3_THREADS;  // 2
// version 3 outputs: the top-left corner of fragment (fi, fj) of warp w within the block tile
__host__ __device__ inline RowCol t3_frag(int warp, int fi, int fj) {
    int wm = warp / T3_WARPS_N, wn = warp % T3_WARPS_N;
    return {wm * T3_WM + fi * 16, wn * T3_WN + fj * 16};
}

// ----------------------------------------------------------------------------
// GPU kernels

// version 1: naive. Consecutive threads take consecutive columns, so the B and C accesses of a
// warp coalesce; A[row, p] is one broadcast per warp.
__global__ void gemm_kernel1(float* C, const float* A, const float* B, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.f;
    for (int p = 0; p < K; p++) acc += A[(size_t)row * K + p] * B[(size_t)p * N + col];
    C[(size_t)row * N + col] = acc;
}

// version 2: shared-memory tiling. Each block stages a 64x16 slice of A and a 16x64 slice of B
// in shared memory and every staged value is used 64 times (4 rows/cols per thread x 16 threads),
// which is what lifts the kernel off the memory roof. Requires M, N % 64 == 0 and K % 16 == 0.
__global__ void __launch_bounds__(T2_THREADS)
    gemm_kernel2(float* C, const float* A, const float* B, int M, int N, int K) {
    __shared__ float As[T2_BM][T2_BK];
    __shared__ float Bs[T2_BK][T2_BN];
    const int tid = threadIdx.x;
    const int bm = blockIdx.y * T2_BM, bn = blockIdx.x * T2_BN;
    float acc[T2_TM][T2_TN] = {};
    for (int k0 = 0; k0 < K; k0 += T2_BK) {
#pragma unroll
        for (int r = 0; r < T2_A_LOADS; r++) {
            RowCol a = t2_a_load(tid, r);
            As[a.row][a.col] = A[(size_t)(bm + a.row) * K + k0 + a.col];
        }
#pragma unroll
        for (int r = 0; r < T2_B_LOADS; r++) {
            RowCol b = t2_b_load(tid, r);
            Bs[b.row][b.col] = B[(size_t)(k0 + b.row) * N + bn + b.col];
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < T2_BK; kk++) {
            float a[T2_TM], b[T2_TN];
#pragma unroll
            for (int i = 0; i < T2_TM; i++) a[i] = As[t2_out(tid, i, 0).row][kk];
#pragma unroll
            for (int j = 0; j < T2_TN; j++) b[j] = Bs[kk][t2_out(tid, 0, j).col];
#pragma unroll
            for (int i = 0; i < T2_TM; i++)
#pragma unroll
                for (int j = 0; j < T2_TN; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < T2_TM; i++)
#pragma unroll
        for (int j = 0; j < T2_TN; j++) {
            RowCol o = t2_out(tid, i, j);
            C[(size_t)(bm + o.row) * N + bn + o.col] = acc[i][j];
        }
}

// version 3: tensor cores via WMMA (bf16 x bf16 -> fp32, 16x16x16 fragments). Each block stages
// 128x32 of A and 32x128 of B with 16-byte loads; each warp multiplies its 4x2 fragments over the
// two 16-wide K steps of the stage. Requires M, N % 128 == 0 and K % 32 == 0.
__global__ void __launch_bounds__(T3_THREADS)
    gemm_kernel3(float* C, const __nv_bfloat16* A, const __nv_bfloat16* B, int M, int N, int K) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    using namespace nvcuda;
    // WMMA fragment pointers must be 256-bit aligned: rows are 80 and 272 bytes and every
    // fragment starts at a row multiple of 16 and a column multiple of 16, so 32-byte alignment
    // of the arrays suffices.
    __shared__ __align__(32) __nv_bfloat16 As[T3_BM][T3_APAD];
    __shared__ __align__(32) __nv_bfloat16 Bs[T3_BK][T3_BPAD];
    const int tid = threadIdx.x, warp = tid / 32;
    const int bm = blockIdx.y * T3_BM, bn = blockIdx.x * T3_BN;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[T3_FM][T3_FN];
#pragma unroll
    for (int i = 0; i < T3_FM; i++)
#pragma unroll
        for (int j = 0; j < T3_FN; j++) wmma::fill_fragment(acc[i][j], 0.f);
    for (int k0 = 0; k0 < K; k0 += T3_BK) {
#pragma unroll
        for (int r = 0; r < T3_A_LOADS; r++) {
            RowCol a = t3_a_load(tid, r);
            *reinterpret_cast<uint4*>(&As[a.row][a.col]) =
                *reinterpret_cast<const uint4*>(&A[(size_t)(bm + a.row) * K + k0 + a.col]);
        }
#pragma unroll
        for (int r = 0; r < T3_B_LOADS; r++) {
            RowCol b = t3_b_load(tid, r);
            *reinterpret_cast<uint4*>(&Bs[b.row][b.col]) =
                *reinterpret_cast<const uint4*>(&B[(size_t)(k0 + b.row) * N + bn + b.col]);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < T3_BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> af[T3_FM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> bf[T3_FN];
#pragma unroll
            for (int i = 0; i < T3_FM; i++) wmma::load_matrix_sync(af[i], &As[t3_frag(warp, i, 0).row][kk], T3_APAD);
#pragma unroll
            for (int j = 0; j < T3_FN; j++) wmma::load_matrix_sync(bf[j], &Bs[kk][t3_frag(warp, 0, j).col], T3_BPAD);
#pragma unroll
            for (int i = 0; i < T3_FM; i++)
#pragma unroll
                for (int j = 0; j < T3_FN; j++) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < T3_FM; i++)
#pragma unroll
        for (int j = 0; j < T3_FN; j++) {
            RowCol f = t3_frag(warp, i, j);
            wmma::store_matrix_sync(&C[(size_t)(bm + f.row) * N + bn + f.col], acc[i][j], N, wmma::mem_row_major);
        }
#else
    __trap();  // bf16 WMMA needs sm_80+; the build targets sm_80 and sm_90 only
#endif
}

// memory-bound: c = a + b, fp32, grid-stride loop; 1 FLOP per 12 bytes moved
__global__ void vector_add_kernel(float* c, const float* a, const float* b, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        c[i] = a[i] + b[i];
}

// ----------------------------------------------------------------------------
// kernel launchers

static void gemm1(float* C, const float* A, const float* B, int M, int N, int K) {
    dim3 block(32, 8);
    dim3 grid((N + 31) / 32, (M + 7) / 8);
    gemm_kernel1<<<grid, block>>>(C, A, B, M, N, K);
}
static void gemm2(float* C, const float* A, const float* B, int M, int N, int K) {
    dim3 grid(N / T2_BN, M / T2_BM);
    gemm_kernel2<<<grid, T2_THREADS>>>(C, A, B, M, N, K);
}
static void gemm3(float* C, const __nv_bfloat16* A, const __nv_bfloat16* B, int M, int N, int K) {
    dim3 grid(N / T3_BN, M / T3_BM);
    gemm_kernel3<<<grid, T3_THREADS>>>(C, A, B, M, N, K);
}
// cuBLAS is column-major: row-major C = A B is column-major C^T = B^T A^T, so pass B first.
static void gemm_cublas_fp32(cublasHandle_t h, float* C, const float* A, const float* B, int M, int N, int K) {
    const float one = 1.f, zero = 0.f;
    cublasCheck(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N));
}
static void gemm_cublas_bf16(cublasHandle_t h, float* C, const __nv_bfloat16* A, const __nv_bfloat16* B, int M, int N,
                             int K) {
    const float one = 1.f, zero = 0.f;
    cublasCheck(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, CUDA_R_16BF, N, A, CUDA_R_16BF, K, &zero, C,
                             CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// ----------------------------------------------------------------------------
// kernel version dispatch

enum class KernelId { naive = 1, tiled = 2, wmma = 3, cublas_fp32 = 10, cublas_bf16 = 11 };

struct KernelInfo {
    KernelId id;
    const char* name;       // stable name used in the JSON report
    tally::DType dtype;     // input type (the engine's dtype table): its bytes and which peak the MFU divides by
    double acc_u;           // accumulation unit roundoff for the tolerance
    double tile_intensity;  // FLOP per byte of global loads the kernel issues by design (0 = n/a)
    const char* anchor;     // cuBLAS kernel of the same input type
};

// Tile intensity: a block of BM x BN outputs loads (BM + BN) x K input elements for 2 BM BN K
// FLOPs, so 2 BM BN / ((BM + BN) * bytes). The naive kernel loads 2K elements per 2K FLOPs.
static const KernelInfo kKernels[] = {
    {KernelId::naive, "gemm1_naive_fp32", tally::DType::FP32, kU_fp32, 2.0 / (2 * 4), "cublas_sgemm_fp32"},
    {KernelId::tiled, "gemm2_tiled_fp32", tally::DType::FP32, kU_fp32, 2.0 * T2_BM* T2_BN / ((T2_BM + T2_BN) * 4.0),
     "cublas_sgemm_fp32"},
    {KernelId::wmma, "gemm3_wmma_bf16", tally::DType::BF16, kU_tensor_core,
     2.0 * T3_BM* T3_BN / ((T3_BM + T3_BN) * 2.0), "cublas_gemmex_bf16"},
    {KernelId::cublas_fp32, "cublas_sgemm_fp32", tally::DType::FP32, kU_fp32, 0, "cublas_sgemm_fp32"},
    {KernelId::cublas_bf16, "cublas_gemmex_bf16", tally::DType::BF16, kU_tensor_core, 0, "cublas_gemmex_bf16"},
};

// FLOPs and compulsory DRAM bytes of an M x N x K GEMM (read A and B once, write C in fp32 once), from the
// engine (tally::roofline::matmul_min_traffic through engine_bridge).
static double gemm_flops(double M, double N, double K) { return tally_cuda::gemm_traffic(M, N, K, 4, 4).flops; }
static double gemm_bytes(double M, double N, double K, int in_bytes) {
    return tally_cuda::gemm_traffic(M, N, K, in_bytes, 4.0).bytes;
}

// ----------------------------------------------------------------------------
// the report

struct Point {
    std::string kernel, dtype, anchor;
    long long m = 0, n = 0, k = 0;
    double flops = 0, bytes = 0, time_s = 0, tile_intensity = 0;
    bool checked = false, correct = false;
    double max_rel_err = 0;
    size_t entries_checked = 0, mismatches = 0;
    double vs_anchor = NAN, mfu = NAN;
    double max_rel_err_vs_fp32_inputs = NAN;
    double bandwidth_fraction = NAN;  // bytes/s over the preset's memory bandwidth (elementwise points)
};

struct GpuInfo {
    std::string name, compute_capability;
    int sm_count = 0, cuda_runtime = 0, cuda_driver = 0;
    long long memory_bytes = 0;
};

// The report the roofline widget loads (schema tally.gpu-measurement/1, fields in README.md).
static std::string report_json(const GpuInfo& g, const tally_cuda::HardwarePeaks& hw, const std::vector<Point>& points,
                               bool all_ok) {
    std::string j = "{\n";
    j += "  \"schema\": \"tally.gpu-measurement/1\",\n";
    j += "  \"program\": \"gemm_roofline\",\n";
    j += "  \"label\": " + json_str(std::string("measured on ") + g.name) + ",\n";
    j += "  \"gpu\": {\"name\": " + json_str(g.name) + ", \"compute_capability\": " + json_str(g.compute_capability) +
         ", \"sm_count\": " + json_int(g.sm_count) + ", \"memory_bytes\": " + json_int(g.memory_bytes) +
         ", \"cuda_runtime\": " + json_int(g.cuda_runtime) + ", \"cuda_driver\": " + json_int(g.cuda_driver) + "},\n";
    j += "  \"preset\": " + (hw.found ? json_str(hw.preset_id) : std::string("null")) + ",\n";
    j += "  \"peaks\": {\"fp32_flops_per_s\": " + json_num(hw.fp32_flops > 0 ? hw.fp32_flops : NAN) +
         ", \"bf16_dense_flops_per_s\": " + json_num(hw.bf16_flops > 0 ? hw.bf16_flops : NAN) +
         ", \"memory_bandwidth_bytes_per_s\": " +
         json_num(hw.memory_bandwidth_bytes_per_s > 0 ? hw.memory_bandwidth_bytes_per_s : NAN) + "},\n";
    j += "  \"all_correct\": " + json_bool(all_ok) + ",\n";
    j += "  \"points\": [\n";
    for (size_t i = 0; i < points.size(); i++) {
        const Point& p = points[i];
        bool is_gemm = p.kernel != "vector_add_fp32";
        j += "    {\"kernel\": " + json_str(p.kernel) + ", \"kind\": " + json_str(is_gemm ? "gemm" : "elementwise") +
             ", \"dtype\": " + json_str(p.dtype);
        if (is_gemm)
            j += ", \"m\": " + json_int(p.m) + ", \"n\": " + json_int(p.n) + ", \"k\": " + json_int(p.k);
        else
            j += ", \"elements\": " + json_int(p.m);
        j += ", \"flops\": " + json_num(p.flops) + ", \"bytes\": " + json_num(p.bytes) +
             ", \"intensity_flop_per_byte\": " + json_num(p.flops / p.bytes) + ", \"time_s\": " + json_num(p.time_s) +
             ", \"flops_per_s\": " + json_num(p.flops / p.time_s) +
             ", \"bytes_per_s\": " + json_num(p.bytes / p.time_s);
        if (is_gemm)
            j += ", \"tile_intensity_flop_per_byte\": " + json_num(p.tile_intensity > 0 ? p.tile_intensity : NAN) +
                 ", \"anchor\": " + json_str(p.anchor) + ", \"vs_anchor\": " + json_num(p.vs_anchor);
        j += ", \"mfu\": " + json_num(p.mfu) + ", \"correct\": " + json_bool(p.correct) +
             ", \"entries_checked\": " + json_int((long long)p.entries_checked) +
             ", \"mismatches\": " + json_int((long long)p.mismatches) + ", \"max_rel_err\": " + json_num(p.max_rel_err);
        if (!is_gemm) j += ", \"bandwidth_fraction\": " + json_num(p.bandwidth_fraction);
        if (std::isfinite(p.max_rel_err_vs_fp32_inputs))
            j += ", \"max_rel_err_vs_fp32_inputs\": " + json_num(p.max_rel_err_vs_fp32_inputs);
        j += std::string("}") + (i + 1 < points.size() ? ",\n" : "\n");
    }
    j += "  ]\n}\n";
    return j;
}

// ----------------------------------------------------------------------------
// host self-test (no device needed)

static int self_test() {
    SelfTest t;
    std::printf("gemm_roofline self-test (host only)\n");

    // 1. known answer: [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
    {
        const float A[] = {1, 2, 3, 4, 5, 6}, B[] = {7, 8, 9, 10, 11, 12};
        const double want[] = {58, 64, 139, 154};
        bool ok = true;
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) ok = ok && gemm_reference_entry(A, B, 3, 2, i, j).value == want[i * 2 + j];
        t.expect(ok, "reference: [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]] = [[58,64],[139,154]] exactly");
        RefEntry e = gemm_reference_entry(A, B, 3, 2, 0, 0);
        t.expect(e.abs_sum == 58.0, "reference: S = sum |a b| equals the sum for positive inputs");
        const float An[] = {1, -2}, Bn[] = {3, 4};
        RefEntry en = gemm_reference_entry(An, Bn, 2, 1, 0, 0);
        t.expect(en.value == -5.0 && en.abs_sum == 11.0, "reference: [1,-2].[3,4] = -5 with S = 11");
    }
    // 2. the tolerance grows with k and with the input unit roundoff
    {
        double g1k = gamma_k(1024, kU_fp32);
        t.expect(std::fabs(g1k - 1024 * 0x1p-24 / (1 - 1024 * 0x1p-24)) < 1e-18, "gamma_1024(2^-24) = 1024u/(1-1024u)");
        t.expect(gemm_tolerance(8192, 1.0, kU_fp32, 0) > gemm_tolerance(256, 1.0, kU_fp32, 0),
                 "tolerance grows with k");
        t.expect(gemm_tolerance(1024, 1.0, kU_fp32, kU_bf16) > 2 * kU_bf16,
                 "tolerance against unrounded inputs includes 2u of bf16 per product");
        t.expect(std::isinf(gamma_k(1 << 25, kU_fp32)), "gamma_k is infinite once k*u >= 1 (no bound)");
        // inputs uniform in [-1, 1): E|ab| = 1/4, so S ~ k/4, while an entry has standard deviation
        // sqrt(k)/3 (~30 at k = 8192); a kernel reading a wrong element moves it by about that much
        t.expect(gemm_tolerance(8192, 8192 / 4.0, kU_tensor_core, 0) < 5.0,
                 "tensor-core tolerance at k = 8192 (~4) stays well below a wrong element's typical error (~40)");
    }
    // 3. bf16 rounding on the host matches the round-to-nearest-even rule
    {
        // 1 + 2^-8 is halfway between bf16 1.0 and 1 + 2^-7: ties to even -> 1.0
        t.expect(__bfloat162float(__float2bfloat16_rn(1.00390625f)) == 1.0f,
                 "bf16: 1+2^-8 rounds to 1.0 (tie to even)");
        // 1 + 3*2^-8 is halfway between 1+2^-7 and 1+2^-6: ties to even -> 1+2^-6
        t.expect(__bfloat162float(__float2bfloat16_rn(1.01171875f)) == 1.015625f,
                 "bf16: 1+3*2^-8 rounds to 1+2^-6 (tie to even)");
    }
    // 4. an emulated device GEMM (bf16 inputs, fp32 sequential accumulation, n = 128) passes the
    //    checker; a perturbed entry, a transposed B and an unwritten (NaN) entry each fail it
    {
        const int n = 128;
        Rng rng(7);
        std::vector<float> A(n * n), B(n * n), A16f, B16f;
        std::vector<__nv_bfloat16> A16, B16;
        for (auto& x : A) x = rng.next_signed();
        for (auto& x : B) x = rng.next_signed();
        round_to_bf16(A, &A16, &A16f);
        round_to_bf16(B, &B16, &B16f);
        std::vector<float> C(n * n), Ct(n * n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                float acc = 0.f, acct = 0.f;
                for (int p = 0; p < n; p++) {
                    acc += A16f[i * n + p] * B16f[p * n + j];
                    acct += A16f[i * n + p] * B16f[j * n + p];
                }
                C[i * n + j] = acc;
                Ct[i * n + j] = acct;
            }
        RefSet refs = make_refs(A16f.data(), B16f.data(), n, n, n, check_indices(n, n, 512, 1));
        t.expect(refs.idx.size() == (size_t)n * n, "n <= 512 checks every entry");
        Checker c1("emulated");
        t.expect(check_gemm("emulated bf16 gemm", C.data(), refs, n, kU_fp32, 0, &c1, true),
                 "an fp32-accumulated GEMM of bf16 inputs is within the gamma_k tolerance");
        t.expect(c1.max_rel_err > 0, "the emulated GEMM is not bit-identical to the exact reference (check is real)");
        // the same C is far outside the tolerance if the reference used the unrounded inputs and
        // no input term, and inside once the bf16 input term is added
        RefSet refs32 = make_refs(A.data(), B.data(), n, n, n, refs.idx);
        t.expect(!check_gemm("vs fp32 inputs, no input term", C.data(), refs32, n, kU_fp32, 0, nullptr, true),
                 "bf16 input rounding is detected when the tolerance ignores it");
        t.expect(check_gemm("vs fp32 inputs", C.data(), refs32, n, kU_fp32, kU_bf16, nullptr, true),
                 "bf16 input rounding is within the 2u input term");
        std::vector<float> bad = C;
        bad[77 * n + 5] *= 1.01f;
        Checker c2("perturbed");
        t.expect(!check_gemm("perturbed", bad.data(), refs, n, kU_fp32, 0, &c2, true) && c2.failed == 1 &&
                     c2.first[0].index == (size_t)77 * n + 5,
                 "a 1% error in one entry is caught and located at (77, 5)");
        t.expect(!check_gemm("transposed B", Ct.data(), refs, n, kU_fp32, 0, nullptr, true), "A @ B^T is rejected");
        bad = C;
        bad[n * n - 1] = NAN;
        t.expect(!check_gemm("nan", bad.data(), refs, n, kU_fp32, 0, nullptr, true), "an unwritten (NaN) entry fails");
        std::vector<size_t> sample = check_indices(4096, 4096, 512, 3);
        bool has_corner = std::binary_search(sample.begin(), sample.end(), (size_t)4096 * 4096 - 1) &&
                          std::binary_search(sample.begin(), sample.end(), (size_t)4095);
        t.expect(sample.size() > 8000 && sample.size() < 9300 && has_corner,
                 "n = 4096 checks ~1024 random entries plus the last row and column");
    }
    // 5. tile geometry: every tile element is loaded exactly once and every output written once
    {
        std::vector<int> a2(T2_BM * T2_BK, 0), b2(T2_BK * T2_BN, 0), o2(T2_BM * T2_BN, 0);
        for (int tid = 0; tid < T2_THREADS; tid++) {
            for (int r = 0; r < T2_A_LOADS; r++) a2[t2_a_load(tid, r).row * T2_BK + t2_a_load(tid, r).col]++;
            for (int r = 0; r < T2_B_LOADS; r++) b2[t2_b_load(tid, r).row * T2_BN + t2_b_load(tid, r).col]++;
            for (int i = 0; i < T2_TM; i++)
                for (int j = 0; j < T2_TN; j++) o2[t2_out(tid, i, j).row * T2_BN + t2_out(tid, i, j).col]++;
        }
        auto all_one = [](const std::vector<int>& v) {
            return std::all_of(v.begin(), v.end(), [](int x) { return x == 1; });
        };
        t.expect(all_one(a2) && all_one(b2), "kernel 2: each A and B tile element is staged by exactly one thread");
        t.expect(all_one(o2), "kernel 2: each of the 64x64 outputs is owned by exactly one thread");

        std::vector<int> a3(T3_BM * T3_BK, 0), b3(T3_BK * T3_BN, 0), o3(T3_BM * T3_BN, 0);
        bool aligned = true;
        for (int tid = 0; tid < T3_THREADS; tid++) {
            for (int r = 0; r < T3_A_LOADS; r++) {
                RowCol a = t3_a_load(tid, r);
                aligned = aligned && (a.row * T3_APAD + a.col) * 2 % 16 == 0;
                for (int v = 0; v < T3_VEC; v++) a3[a.row * T3_BK + a.col + v]++;
            }
            for (int r = 0; r < T3_B_LOADS; r++) {
                RowCol b = t3_b_load(tid, r);
                aligned = aligned && (b.row * T3_BPAD + b.col) * 2 % 16 == 0;
                for (int v = 0; v < T3_VEC; v++) b3[b.row * T3_BN + b.col + v]++;
            }
        }
        bool frag_aligned = true;
        for (int w = 0; w < T3_THREADS / 32; w++)
            for (int i = 0; i < T3_FM; i++)
                for (int j = 0; j < T3_FN; j++) {
                    RowCol f = t3_frag(w, i, j);
                    for (int kk = 0; kk < T3_BK; kk += 16) {  // WMMA pointers must be 32-byte aligned
                        frag_aligned = frag_aligned && (f.row * T3_APAD + kk) * 2 % 32 == 0;
                        frag_aligned = frag_aligned && (kk * T3_BPAD + f.col) * 2 % 32 == 0;
                    }
                    for (int r = 0; r < 16; r++)
                        for (int c = 0; c < 16; c++) o3[(f.row + r) * T3_BN + f.col + c]++;
                }
        t.expect(all_one(a3) && all_one(b3),
                 "kernel 3: each A and B tile element is staged by exactly one 16-byte load");
        t.expect(aligned, "kernel 3: every 16-byte shared-memory store is 16-byte aligned");
        t.expect(frag_aligned, "kernel 3: every WMMA fragment pointer is 32-byte aligned");
        t.expect(all_one(o3), "kernel 3: the 8 warps' 4x2 fragments cover the 128x128 tile exactly once");
        t.expect(T3_APAD % 8 == 0 && T3_BPAD % 8 == 0, "kernel 3: WMMA leading dimensions are multiples of 8");
    }
    // 6. napkin math: intensity of a square GEMM with bf16 inputs and fp32 output is n/4
    {
        double n = 4096;
        t.expect(gemm_flops(n, n, n) / gemm_bytes(n, n, n, 2) == n / 4,
                 "bf16-in fp32-out square GEMM: 2n^3 / (2*2n^2 + 4n^2) = n/4 FLOP/byte");
        t.expect(gemm_flops(n, n, n) / gemm_bytes(n, n, n, 4) == n / 6,
                 "fp32 square GEMM: 2n^3 / 12n^2 = n/6 FLOP/byte");
        t.expect(kKernels[1].tile_intensity == 16.0 && kKernels[2].tile_intensity == 64.0,
                 "tile intensities: 64x64 fp32 -> 16, 128x128 bf16 -> 64 FLOP/byte");
    }
    // 7. matching the CUDA device name to a hardware preset (synthetic preset list: the rule, not the data)
    {
        using tally_cuda::PresetName;
        const PresetName presets[] = {{"h100-sxm", "NVIDIA H100 SXM5 80GB", 80e9},
                                      {"h100-pcie", "NVIDIA H100 PCIe 80GB", 80e9},
                                      {"a100-40gb", "NVIDIA A100 40GB SXM", 40e9},
                                      {"a100-80gb", "NVIDIA A100 80GB SXM", 80e9}};
        auto best = [&](const char* device, double mem) {
            int s = -1;
            std::string id;
            for (const auto& p : presets) {
                int v = tally_cuda::match_score(p, device, mem);
                if (v > s) s = v, id = p.id;
            }
            return s >= 50 ? id : std::string("none");
        };
        // device names and memory as cudaGetDeviceProperties reports them
        t.expect(best("NVIDIA H100 80GB HBM3", 85.0e9) == "h100-sxm", "'NVIDIA H100 80GB HBM3' is the H100 SXM preset");
        t.expect(best("NVIDIA H100 PCIe", 85.0e9) == "h100-pcie", "'NVIDIA H100 PCIe' is the H100 PCIe preset");
        t.expect(best("NVIDIA A100-SXM4-40GB", 42.4e9) == "a100-40gb",
                 "'NVIDIA A100-SXM4-40GB' is the A100 40 GB preset");
        t.expect(best("NVIDIA A100-SXM4-80GB", 85.0e9) == "a100-80gb",
                 "'NVIDIA A100-SXM4-80GB' is the A100 80 GB preset");
        t.expect(best("NVIDIA GeForce RTX 3090", 25.4e9) == "none", "an RTX 3090 matches no preset in this list");
    }
    // 8. the engine's own presets are reachable (non-empty once content/presets/hardware exists)
    {
        std::vector<std::string> ids = tally_cuda::hardware_preset_ids();
        std::printf("  engine hardware presets: %zu\n", ids.size());
        bool peaks_ok = !ids.empty();
        for (const auto& id : ids) {
            tally_cuda::HardwarePeaks p = tally_cuda::hardware_peaks(id);
            peaks_ok =
                peaks_ok && p.found && p.memory_bandwidth_bytes_per_s > 0 && (p.bf16_flops > 0 || p.fp32_flops > 0);
        }
        t.expect(peaks_ok, "every engine hardware preset has a memory bandwidth and a bf16 or fp32 peak");
        tally_cuda::HardwarePeaks h = tally_cuda::match_device("NVIDIA H100 80GB HBM3", 85.0e9);
        // H100 SXM5 dense bf16: 989.4 TFLOP/s (NVIDIA H100 datasheet; 1979 is the 2:4-sparse figure)
        t.expect(h.found && h.bf16_flops > 900e12 && h.bf16_flops < 1000e12,
                 "the H100 SXM device name maps to a preset with a dense bf16 peak near 989 TFLOP/s");
        // The MFU's peak comes from the engine's lookup by dtype: the preset's own figure, and none for a
        // dtype without a peak role (int8) or a kernel type the preset lacks.
        t.expect(tally_cuda::peak_flops_per_s(h, tally::DType::BF16) == h.bf16_flops &&
                     tally_cuda::peak_flops_per_s(h, tally::DType::FP32) == h.fp32_flops,
                 "the engine's peak lookup by dtype gives the preset's bf16 and fp32 peaks");
        t.expect(tally_cuda::peak_flops_per_s(h, tally::DType::INT8) == 0, "int8 has no peak role: no peak");
        tally_cuda::HardwarePeaks no_fp8 = h;
        no_fp8.fp8_flops = 0;
        t.expect(tally_cuda::peak_flops_per_s(no_fp8, tally::DType::FP8) == 0, "a peak the hardware lacks is 0");
        t.expect(tally::dtype_bytes(tally::DType::BF16) == 2 && tally::dtype_bytes(tally::DType::FP32) == 4,
                 "the kernels' input bytes come from the dtype table: bf16 2, fp32 4");
        // CUDA device names (cudaDeviceProp::name) and totalGlobalMem of real parts -> engine preset ids
        struct Case {
            const char* device;
            double mem;
            const char* id;
        };
        const Case cases[] = {{"NVIDIA H100 80GB HBM3", 85.0e9, "h100-sxm"},
                              {"NVIDIA H100 PCIe", 85.0e9, "h100-pcie"},
                              {"NVIDIA A100-SXM4-40GB", 42.4e9, "a100-40gb"},
                              {"NVIDIA A100-SXM4-80GB", 85.1e9, "a100-80gb"},
                              {"NVIDIA H200", 150.0e9, "h200"},
                              {"NVIDIA B200", 191.0e9, "b200"},
                              {"NVIDIA GeForce RTX 4090", 25.3e9, "rtx-4090"},
                              {"NVIDIA GeForce RTX 3060", 12.6e9, ""}};
        for (const Case& c : cases) {
            tally_cuda::HardwarePeaks m = tally_cuda::match_device(c.device, c.mem);
            std::string got = m.found ? m.preset_id : "";
            t.expect(got == c.id,
                     (std::string("engine presets: '") + c.device + "' -> '" + c.id + "' (got '" + got + "')").c_str());
        }
    }
    // 9. the report is valid JSON with the fields the roofline widget reads (synthetic points: the
    //    writer is checked, not a measurement)
    {
        GpuInfo g;
        g.name = "Test \"GPU\" \\ 1";  // quotes and a backslash must be escaped
        g.compute_capability = "9.0";
        g.sm_count = 132;
        g.memory_bytes = 85000000000ll;
        tally_cuda::HardwarePeaks hw;
        hw.found = true;
        hw.preset_id = "h100-sxm";
        hw.bf16_flops = 989.5e12;
        std::vector<Point> pts(2);
        pts[0].kernel = "gemm3_wmma_bf16", pts[0].dtype = "bf16", pts[0].anchor = "cublas_gemmex_bf16";
        pts[0].m = pts[0].n = pts[0].k = 4096;
        pts[0].flops = gemm_flops(4096, 4096, 4096), pts[0].bytes = gemm_bytes(4096, 4096, 4096, 2);
        pts[0].time_s = 0.5e-3, pts[0].mfu = 0.25, pts[0].vs_anchor = 0.5, pts[0].correct = true,
        pts[0].tile_intensity = 64;
        pts[1].kernel = "vector_add_fp32", pts[1].dtype = "fp32", pts[1].m = 1 << 26;
        pts[1].flops = 1 << 26, pts[1].bytes = 12.0 * (1 << 26), pts[1].time_s = 1e-3;  // mfu stays NaN
        std::string j = report_json(g, hw, pts, true), err;
        using tally_cuda::json_at;
        t.expect(json_at(j, "/schema", &err) == "\"tally.gpu-measurement/1\"",
                 ("report parses as JSON " + err).c_str());
        t.expect(json_at(j, "/label") == "\"measured on Test \\\"GPU\\\" \\\\ 1\"",
                 "label escapes quotes and backslashes");
        t.expect(json_at(j, "/points/0/intensity_flop_per_byte") == "1024", "point 0 intensity is 4096/4 = 1024");
        t.expect(json_at(j, "/points/0/n") == "4096" && json_at(j, "/points/0/kind") == "\"gemm\"",
                 "GEMM point has n and kind");
        t.expect(json_at(j, "/points/1/mfu") == "null", "a NaN MFU is written as null");
        t.expect(json_at(j, "/points/1/elements") == "67108864", "the vector-add point has its element count");
        t.expect(json_at(j, "/peaks/fp32_flops_per_s") == "null", "a peak the preset lacks is null");
        t.expect(json_at(j, "/points/2").empty(), "exactly two points");
    }
    return t.finish("gemm_roofline");
}

// ----------------------------------------------------------------------------
// device run

static std::vector<int> parse_sizes(const char* s) {
    std::vector<int> out;
    std::string cur;
    for (const char* p = s;; p++) {
        if (*p == ',' || *p == 0) {
            char* end = nullptr;
            long v = std::strtol(cur.c_str(), &end, 10);
            if (cur.empty() || *end != 0 || v < 128 || v > 16384 || v % 128 != 0) {
                std::fprintf(stderr, "--sizes: each size must be a multiple of 128 in [128, 16384], got '%s'\n",
                             cur.c_str());
                std::exit(2);
            }
            out.push_back((int)v);
            cur.clear();
            if (*p == 0) break;
        } else {
            cur += *p;
        }
    }
    return out;
}

static double parse_positive(const char* flag, const char* v) {
    char* end = nullptr;
    double x = std::strtod(v, &end);
    if (*end != 0 || !(x > 0) || !std::isfinite(x)) {
        std::fprintf(stderr, "%s must be a positive number, got '%s'\n", flag, v);
        std::exit(2);
    }
    return x;
}

int main(int argc, char** argv) {
    Args args{argc, argv};
    if (args.has("--help")) {
        std::printf(
            "usage: gemm_roofline [--self-test] [--quick] [--sizes 256,512,...] [--json PATH]\n"
            "                     [--hardware PRESET] [--peak-fp32-tflops X] [--peak-bf16-tflops X]\n"
            "                     [--bandwidth-gbs X]\n");
        return 0;
    }
    if (args.has("--self-test")) return self_test();

    std::vector<int> sizes = {256, 512, 1024, 2048, 4096, 8192};
    if (args.has("--quick")) sizes = {256, 512};
    if (const char* s = args.value("--sizes")) sizes = parse_sizes(s);

    DeviceProbe dev = probe_device();
    if (!dev.available) return skip_no_device(dev);
    if (dev.prop.major < 8) {
        std::printf("device %s is sm_%d%d; bf16 WMMA needs sm_80 or newer: skipped\n", dev.prop.name, dev.prop.major,
                    dev.prop.minor);
        return 0;
    }

    // hardware peaks: from the engine's presets (matched by name, or --hardware), overridable
    tally_cuda::HardwarePeaks hw;
    if (const char* id = args.value("--hardware")) {
        hw = tally_cuda::hardware_peaks(id);
        if (!hw.found) {
            std::fprintf(stderr, "--hardware: no hardware preset '%s'; known:", id);
            for (auto& p : tally_cuda::hardware_preset_ids()) std::fprintf(stderr, " %s", p.c_str());
            std::fprintf(stderr, "\n");
            return 2;
        }
    } else {
        hw = tally_cuda::match_device(dev.prop.name, (double)dev.prop.totalGlobalMem);
    }
    if (const char* v = args.value("--peak-fp32-tflops"))
        hw.fp32_flops = parse_positive("--peak-fp32-tflops", v) * 1e12;
    if (const char* v = args.value("--peak-bf16-tflops"))
        hw.bf16_flops = parse_positive("--peak-bf16-tflops", v) * 1e12;
    if (const char* v = args.value("--bandwidth-gbs"))
        hw.memory_bandwidth_bytes_per_s = parse_positive("--bandwidth-gbs", v) * 1e9;

    std::printf("device: %s (sm_%d%d, %d SMs, %.1f GiB)\n", dev.prop.name, dev.prop.major, dev.prop.minor,
                dev.prop.multiProcessorCount, dev.prop.totalGlobalMem / 1073741824.0);
    if (hw.found)
        std::printf("preset: %s (%s): fp32 %.1f, bf16 dense %.1f TFLOP/s, %.0f GB/s\n", hw.preset_id.c_str(),
                    hw.preset_name.c_str(), hw.fp32_flops / 1e12, hw.bf16_flops / 1e12,
                    hw.memory_bandwidth_bytes_per_s / 1e9);
    else
        std::printf("preset: none matches '%s'; MFU is reported only for peaks given by --hardware or --peak-*\n",
                    dev.prop.name);

    cublasHandle_t handle;
    cublasCheck(cublasCreate(&handle));
    // Default math: sgemm stays true fp32 (no TF32 tensor cores) unless NVIDIA_TF32_OVERRIDE says otherwise.
    cublasCheck(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));

    std::vector<Point> points;
    bool all_ok = true;
    int max_n = *std::max_element(sizes.begin(), sizes.end());
    size_t max_elems = (size_t)max_n * max_n;
    float *dA, *dB, *dC;
    __nv_bfloat16 *dA16, *dB16;
    cudaCheck(cudaMalloc(&dA, max_elems * sizeof(float)));
    cudaCheck(cudaMalloc(&dB, max_elems * sizeof(float)));
    cudaCheck(cudaMalloc(&dC, max_elems * sizeof(float)));
    cudaCheck(cudaMalloc(&dA16, max_elems * sizeof(__nv_bfloat16)));
    cudaCheck(cudaMalloc(&dB16, max_elems * sizeof(__nv_bfloat16)));

    std::printf("\n%6s  %-20s %10s %9s %9s %7s %10s %10s  %s\n", "n", "kernel", "time ms", "TFLOP/s", "vs cuBLAS",
                "MFU", "intensity", "tile int.", "check");
    for (int n : sizes) {
        const int M = n, N = n, K = n;
        size_t elems = (size_t)n * n;
        Rng rng(1000 + n);
        std::vector<float> A(elems), B(elems), A16f, B16f, C(elems);
        std::vector<__nv_bfloat16> A16, B16;
        for (auto& x : A) x = rng.next_signed();
        for (auto& x : B) x = rng.next_signed();
        round_to_bf16(A, &A16, &A16f);
        round_to_bf16(B, &B16, &B16f);
        cudaCheck(cudaMemcpy(dA, A.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
        cudaCheck(cudaMemcpy(dB, B.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
        cudaCheck(cudaMemcpy(dA16, A16.data(), elems * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
        cudaCheck(cudaMemcpy(dB16, B16.data(), elems * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
        std::vector<size_t> idx = check_indices(M, N, 512, 42 + n);
        RefSet ref32 = make_refs(A.data(), B.data(), M, N, K, idx);
        RefSet ref16 = make_refs(A16f.data(), B16f.data(), M, N, K, idx);

        double anchor_time[2] = {NAN, NAN};  // fp32, bf16 cuBLAS, measured first
        const KernelId order[] = {KernelId::cublas_fp32, KernelId::cublas_bf16, KernelId::naive, KernelId::tiled,
                                  KernelId::wmma};
        for (KernelId kid : order) {
            const KernelInfo* info = nullptr;
            for (const auto& k : kKernels)
                if (k.id == kid) info = &k;
            bool bf16 = info->dtype == tally::DType::BF16;
            auto run = [&] {
                switch (kid) {
                    case KernelId::naive: gemm1(dC, dA, dB, M, N, K); break;
                    case KernelId::tiled: gemm2(dC, dA, dB, M, N, K); break;
                    case KernelId::wmma: gemm3(dC, dA16, dB16, M, N, K); break;
                    case KernelId::cublas_fp32: gemm_cublas_fp32(handle, dC, dA, dB, M, N, K); break;
                    case KernelId::cublas_bf16: gemm_cublas_bf16(handle, dC, dA16, dB16, M, N, K); break;
                }
            };
            // correctness first: NaN-fill C so an entry the kernel never writes fails the check
            cudaCheck(cudaMemset(dC, 0xFF, elems * sizeof(float)));
            run();
            cudaCheck(cudaGetLastError());
            cudaCheck(cudaDeviceSynchronize());
            cudaCheck(cudaMemcpy(C.data(), dC, elems * sizeof(float), cudaMemcpyDeviceToHost));
            Point p;
            p.kernel = info->name;
            p.dtype = tally::to_string(info->dtype);
            p.anchor = info->anchor;
            p.m = M, p.n = N, p.k = K;
            Checker chk(info->name);
            p.correct = check_gemm(info->name, C.data(), bf16 ? ref16 : ref32, K, info->acc_u, 0, &chk);
            p.checked = true;
            p.entries_checked = chk.checked;
            p.mismatches = chk.failed;
            p.max_rel_err = chk.max_rel_err;
            if (bf16) {
                // and against the unrounded fp32 data, where the tolerance adds the bf16 input term
                // (2u + u^2 per product, u = 2^-8): the bound scales with k and the input precision
                Checker loose(info->name, true);
                bool loose_ok = check_gemm(info->name, C.data(), ref32, K, info->acc_u, kU_bf16, &loose, false);
                p.max_rel_err_vs_fp32_inputs = loose.max_rel_err;
                p.correct = p.correct && loose_ok;
                p.mismatches += loose.failed;
            }
            all_ok = all_ok && p.correct;

            // then speed: ~0.3 s of repeats, at least 3
            cudaEvent_t s, e;
            cudaCheck(cudaEventCreate(&s));
            cudaCheck(cudaEventCreate(&e));
            cudaCheck(cudaEventRecord(s));
            run();
            cudaCheck(cudaEventRecord(e));
            cudaCheck(cudaEventSynchronize(e));
            float once_ms = 0;
            cudaCheck(cudaEventElapsedTime(&once_ms, s, e));
            cudaCheck(cudaEventDestroy(s));
            cudaCheck(cudaEventDestroy(e));
            int repeats = std::max(3, std::min(50, (int)(300.0 / std::max(once_ms, 1e-3f))));
            p.time_s = time_median_s(run, repeats);
            p.flops = gemm_flops(M, N, K);
            p.bytes = gemm_bytes(M, N, K, static_cast<int>(tally::dtype_bytes(info->dtype)));
            p.tile_intensity = info->tile_intensity;
            if (kid == KernelId::cublas_fp32) anchor_time[0] = p.time_s;
            if (kid == KernelId::cublas_bf16) anchor_time[1] = p.time_s;
            p.vs_anchor = anchor_time[bf16 ? 1 : 0] / p.time_s;
            double peak = tally_cuda::peak_flops_per_s(hw, info->dtype);
            if (peak > 0) p.mfu = p.flops / p.time_s / peak;
            char mfu_text[16] = "-", tile_text[16] = "-";
            if (std::isfinite(p.mfu)) std::snprintf(mfu_text, sizeof mfu_text, "%.1f%%", p.mfu * 100);
            if (p.tile_intensity > 0) std::snprintf(tile_text, sizeof tile_text, "%.2f", p.tile_intensity);
            std::printf("%6d  %-20s %10.3f %9.2f %9.2f %7s %10.1f %10s  %s\n", n, p.kernel.c_str(), p.time_s * 1e3,
                        p.flops / p.time_s / 1e12, p.vs_anchor, mfu_text, p.flops / p.bytes, tile_text,
                        p.correct ? "ok" : "MISMATCH");
            points.push_back(p);
        }
    }
    cudaCheck(cudaFree(dA));
    cudaCheck(cudaFree(dB));
    cudaCheck(cudaFree(dC));
    cudaCheck(cudaFree(dA16));
    cudaCheck(cudaFree(dB16));
    cublasCheck(cublasDestroy(handle));

    // the memory-bound side: vector add, sizes well past any L2 at the top end
    std::printf("\n%12s  %-20s %10s %9s %9s %10s  %s\n", "elements", "kernel", "time ms", "GB/s", "of peak",
                "intensity", "check");
    std::vector<size_t> vec_sizes = {(size_t)1 << 20, (size_t)1 << 22, (size_t)1 << 24, (size_t)1 << 26};
    if (args.has("--quick")) vec_sizes = {(size_t)1 << 20, (size_t)1 << 22};
    size_t vmax = vec_sizes.back();
    float *va, *vb, *vc;
    cudaCheck(cudaMalloc(&va, vmax * sizeof(float)));
    cudaCheck(cudaMalloc(&vb, vmax * sizeof(float)));
    cudaCheck(cudaMalloc(&vc, vmax * sizeof(float)));
    for (size_t n : vec_sizes) {
        std::vector<float> a(n), b(n), c(n);
        Rng rng(n);
        for (size_t i = 0; i < n; i++) a[i] = rng.next_signed(), b[i] = rng.next_signed();
        cudaCheck(cudaMemcpy(va, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        cudaCheck(cudaMemcpy(vb, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        int blocks = dev.prop.multiProcessorCount * 8;
        auto run = [&] { vector_add_kernel<<<blocks, 256>>>(vc, va, vb, n); };
        cudaCheck(cudaMemset(vc, 0xFF, n * sizeof(float)));
        run();
        cudaCheck(cudaGetLastError());
        cudaCheck(cudaMemcpy(c.data(), vc, n * sizeof(float), cudaMemcpyDeviceToHost));
        Checker chk("vector_add");
        for (size_t i = 0; i < n; i++) chk.check(i, c[i], (double)(a[i] + b[i]), 0.0);  // fp32 add is exact-rounded
        Point p;
        p.kernel = "vector_add_fp32";
        p.dtype = tally::to_string(tally::DType::FP32);
        p.m = (long long)n;
        p.checked = true;
        p.correct = chk.ok();
        p.entries_checked = chk.checked;
        p.mismatches = chk.failed;
        all_ok = all_ok && p.correct;
        p.time_s = time_median_s(run, 20);
        p.flops = (double)n;
        p.bytes = 12.0 * n;
        double gbs = p.bytes / p.time_s / 1e9;
        double frac = hw.memory_bandwidth_bytes_per_s > 0 ? p.bytes / p.time_s / hw.memory_bandwidth_bytes_per_s : NAN;
        p.bandwidth_fraction = frac;
        const double fp32_peak = tally_cuda::peak_flops_per_s(hw, tally::DType::FP32);
        p.mfu = fp32_peak > 0 ? p.flops / p.time_s / fp32_peak : NAN;
        char frac_text[16] = "-";
        if (std::isfinite(frac)) std::snprintf(frac_text, sizeof frac_text, "%.1f%%", frac * 100);
        std::printf("%12zu  %-20s %10.3f %9.1f %9s %10.3f  %s\n", n, p.kernel.c_str(), p.time_s * 1e3, gbs, frac_text,
                    p.flops / p.bytes, p.correct ? "ok" : "MISMATCH");
        points.push_back(p);
    }
    cudaCheck(cudaFree(va));
    cudaCheck(cudaFree(vb));
    cudaCheck(cudaFree(vc));

    std::printf("\n%s\n", all_ok ? "All results match" : "SOME RESULTS DO NOT MATCH");

    if (const char* path = args.value("--json")) {
        GpuInfo g;
        g.name = dev.prop.name;
        g.compute_capability = std::to_string(dev.prop.major) + "." + std::to_string(dev.prop.minor);
        g.sm_count = dev.prop.multiProcessorCount;
        g.memory_bytes = (long long)dev.prop.totalGlobalMem;
        cudaRuntimeGetVersion(&g.cuda_runtime);
        cudaDriverGetVersion(&g.cuda_driver);
        std::string j = report_json(g, hw, points, all_ok);
        if (!write_text_file(path, j)) return 1;
        std::printf("wrote %s\n", path);
    }
    return all_ok ? 0 : 1;
}
