// The reference GEMM ladder: C = A·B in fp32, from the textbook triple loop to a packed,
// register-tiled SIMD kernel, plus the correctness check and the timing harness that measures them.
//
// Shapes (row-major, no transposes, leading dimension = row length):
//   A: (m, k)   B: (k, n)   C: (m, n), overwritten (C = A·B, not C += A·B).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tally/compute/gemm_tiling.h"

namespace tally::gemm {

using KernelFn = void (*)(int m, int n, int k, const float* A, const float* B, float* C);

struct Kernel {
    int number;        // position on the ladder, 1 = naive
    const char* name;  // "naive", "ikj", "blocked", "packed", "simd" (+ "simd-mt" natively)
    const char* adds;  // what this version adds over the previous one
    KernelFn fn;
    Traffic traffic;
    Tiling tiling;
    bool (*available)() = nullptr;  // nullptr: always; else whether this engine instance can run it now
};

// The ladder, in order (numbers 1-5), then a 6th entry: natively "simd-mt" (kernel 5 on every core;
// not in wasm, whose threads need a cross-origin isolated page), in wasm "simd-relaxed" (kernel 5's
// loop nest around a 6 x 8 f32x4.relaxed_madd tile, available only when the host handed the engine the
// relaxed-SIMD module, see engine/kernels/relaxed/). Every entry has the same signature and computes the same C
// (within the reference tolerance: FMA rounds once per step, mul + add twice).
std::span<const Kernel> kernels();
// By name ("simd") or by number ("5"); nullptr if unknown.
const Kernel* find_kernel(std::string_view name);
// Names joined for error messages: "naive, ikj, blocked, packed, simd".
std::string kernel_names();

// The vector instruction set the SIMD kernel and the peak probe were compiled for:
// "avx512f+fma", "avx2+fma", "wasm-simd128" or "generic (gcc vector extensions)".
const char* simd_isa();
// fp32 lanes per vector register of that ISA, and FLOPs per lane per vector arithmetic instruction
// pair the probe issues (2 for an FMA; wasm simd128 has no FMA, so a mul and an add: also 2 FLOPs
// but two instructions).
int simd_lanes();
bool simd_has_fma();
// Whether a kernel can run in this engine instance (simd-relaxed needs the relaxed-SIMD module).
bool kernel_available(const Kernel& kernel);
// The relaxed-SIMD module's peak loop (wasm with the module only; relaxed_simd_available() first):
// 12 independent f32x4.relaxed_madd chains; FLOPs = iters * relaxed_peak_flops_per_iter().
bool relaxed_simd_available();
double relaxed_peak_loop(long long iters);
double relaxed_peak_flops_per_iter();

// ---------------------------------------------------------------- inputs and checking
// Deterministic inputs in [-1, 1): the same bits natively and in wasm for the same seed
// (integer xorshift, converted exactly by ldexp).
void fill_uniform(std::span<float> out, std::uint64_t seed);

struct CheckResult {
    double max_abs_err = 0;    // max |C - C_ref| over the checked entries
    double max_tolerance = 0;  // the tolerance at the entry with the largest error/tolerance ratio
    double worst_ratio = 0;    // max |C - C_ref| / tol; <= 1 passes
    std::int64_t checked = 0;  // entries compared
    bool ok = false;
};

// Compares C against a double-accumulated dot product per entry. Tolerance per entry scales with k:
// tol = 2 k u sum_p |a_ip b_pj| + tiny, u = 2^-24 (the classical gamma_k bound for a length-k fp32
// dot product, Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 3.5, with a
// factor 2 of slack). Checks every entry when m*n <= max_entries, else a deterministic sample of
// max_entries entries that always includes the four corners.
CheckResult check_against_reference(int m, int n, int k, const float* A, const float* B, const float* C,
                                    std::int64_t max_entries = 1 << 16);

// ---------------------------------------------------------------- timing
struct Timing {
    double median_s = 0, min_s = 0, max_s = 0;  // per kernel call
    int samples = 0;                            // timed samples (each is `calls_per_sample` calls)
    int calls_per_sample = 0;
};

// Times fn: `warmup` untimed calls (V8 tiers a wasm function up only after it has run a few times),
// then `samples` samples, each lasting at least min_sample_s (performance.now() in a page that is
// not cross-origin isolated has ~100 us resolution) by repeating the call.
Timing time_kernel(const Kernel& kernel, int m, int n, int k, const float* A, const float* B, float* C, int samples,
                   int warmup, double min_sample_s);

// Monotonic clock in seconds (steady_clock natively, performance.now() in wasm).
double now_s();

// Seconds per call of `run(calls)`, which makes `calls` calls: starts at `calls` and doubles until one
// timed interval lasts at least min_seconds and is non-zero, so a clock in 100 us steps (a page that
// is not cross-origin isolated) or a descheduled calibration never yields a zero time.
template <typename Run>
double seconds_per_call(Run&& run, long long calls, double min_seconds) {
    for (;; calls *= 2) {
        const double start = now_s();
        run(calls);
        const double elapsed = now_s() - start;
        if (elapsed > 0 && (elapsed >= min_seconds || calls >= (1LL << 40)))
            return elapsed / static_cast<double>(calls);
    }
}

struct BenchRow {
    std::string kernel;
    int number = 0;
    int m = 0, n = 0, k = 0;     // C is m x n (a stripe of rows when m < n), k deep
    double flops_per_s = 0;      // 2 m n k / median time
    double flops_per_s_min = 0;  // from the slowest sample
    double flops_per_s_max = 0;  // from the fastest sample
    double median_s = 0;
    int samples = 0;
    CheckResult check;
};

// m x n x k: fills A and B from seed, runs the kernel, checks it, times it.
BenchRow bench(const Kernel& kernel, int m, int n, int k, int samples, int warmup, double min_sample_s,
               std::uint64_t seed = 1);

// The timing model gemm_bench uses to refuse a call that would run for minutes: seconds one kernel call on
// m x n x k takes at the kernel's slowest measured speed (BENCHMARKS.md's native ladder, n = 256..2048)...
double modelled_call_seconds(const Kernel& kernel, double m, double n, double k);
// ...and an upper bound on what bench() does for one (kernel, size), given one call's seconds and reps samples
// of at least min_sample_ms (time_kernel's warm-up, calibration and timed loops).
double modelled_bench_seconds(double call_seconds, int reps, double min_sample_ms);

}  // namespace tally::gemm

// ---------------------------------------------------------------- the kernels themselves
// Kernels 1-3 are in engine/kernels/gemm_loops.cpp, kernels 4-5 and the probe loops in
// engine/kernels/gemm_simd.cpp: the only engine files built with the machine's vector ISA (see
// engine/kernels/gemm.cmake). They use no standard-library templates, so no inline function compiled
// for AVX-512 can be picked by the linker for code built without it.
namespace tally::gemm::impl {

void naive(int m, int n, int k, const float* A, const float* B, float* C);    // 1: i-j-k
void ikj(int m, int n, int k, const float* A, const float* B, float* C);      // 2: i-k-j
void blocked(int m, int n, int k, const float* A, const float* B, float* C);  // 3: cache blocks
void packed(int m, int n, int k, const float* A, const float* B, float* C);   // 4: packing + C++ tile
void simd(int m, int n, int k, const float* A, const float* B, float* C);     // 5: SIMD register tile

// Tilings of the kernels above (so the traffic model and the docs use the real numbers).
Tiling blocked_tiling();
Tiling packed_tiling();
Tiling simd_tiling();
const char* isa_name();
int isa_lanes();
bool isa_fma();

// Probe loops (same file, same ISA). peak_loop runs `iters` iterations of `chains` independent
// multiply-add chains over full vector registers and returns a value that depends on all of them
// (so the compiler keeps the work); FLOPs done = iters * peak_flops_per_iter().
double peak_loop(long long iters);
double peak_flops_per_iter();
// Streaming kernels for the bandwidth probe: sum of all floats (read only), and the STREAM triad
// a[i] = b[i] + s * c[i].
double read_sum(const float* x, long count);
void triad(float* a, const float* b, const float* c, float s, long count);

}  // namespace tally::gemm::impl
