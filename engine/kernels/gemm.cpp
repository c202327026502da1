// The GEMM ladder's registry, deterministic inputs, the double-precision reference check and the
// timing harness. Built with the engine's portable flags; the kernels themselves are in
// gemm_loops.cpp and gemm_simd.cpp.
#include "tally/gemm.h"

#include "tally/base/error.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <string_view>
#include <vector>

#ifndef __EMSCRIPTEN__
#include <thread>
#else
#include <cstdlib>
#include "gemm_relaxed_tiling.h"

// Imports of the wasm build, defined in engine/bindings/relaxed_library.js: they forward to the
// relaxed-SIMD module (engine/kernels/relaxed/) when the host attached it, which shares this engine's memory.
extern "C" {
int tally_relaxed_available();
void tally_relaxed_gemm(int m, int n, int k, const float* A, const float* B, float* C, float* workspace);
int tally_relaxed_workspace_floats(int m, int n, int k);
double tally_relaxed_peak_loop(double iters);
double tally_relaxed_peak_flops_per_iter();
}
#endif

namespace tally::gemm {

namespace {

#ifndef __EMSCRIPTEN__
// The SIMD kernel on every core: C's rows split into stripes (multiples of the register tile's mr),
// one std::thread each; every thread packs its own copy of B (kn extra floats per thread). Native
// only: wasm threads need SharedArrayBuffer, which a page gets only when served cross-origin
// isolated (COOP/COEP headers), and the explainer must work from any static host.
void simd_threads(int m, int n, int k, const float* A, const float* B, float* C) {
    const int mr = impl::simd_tiling().mr;
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = std::min({cores, 16, std::max(1, m / (4 * mr))});  // >= 4 row tiles each
    if (threads <= 1) {
        impl::simd(m, n, k, A, B, C);
        return;
    }
    const int stripe = ((m + threads - 1) / threads + mr - 1) / mr * mr;
    std::vector<std::thread> pool;
    for (int r0 = stripe; r0 < m; r0 += stripe)
        pool.emplace_back(impl::simd, std::min(stripe, m - r0), n, k, A + static_cast<std::int64_t>(r0) * k, B,
                          C + static_cast<std::int64_t>(r0) * n);
    impl::simd(std::min(stripe, m), n, k, A, B, C);
    for (std::thread& thread : pool) thread.join();
}
#else
bool relaxed_available() { return tally_relaxed_available() != 0; }

// Kernel 5's loop nest with an f32x4.relaxed_madd tile, run by the relaxed-SIMD module in this
// engine's memory; the workspace (packed panels and an edge tile) is allocated here, as kernel 5 does.
void simd_relaxed(int m, int n, int k, const float* A, const float* B, float* C) {
    if (!relaxed_available())
        throw InputError("kernel",
                         "simd-relaxed needs the relaxed-SIMD module, which "
                         "this engine instance was not given");
    const auto floats = static_cast<std::size_t>(tally_relaxed_workspace_floats(m, n, k));
    float* workspace = static_cast<float*>(std::aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64));
    tally_relaxed_gemm(m, n, k, A, B, C, workspace);
    std::free(workspace);
}
#endif
constexpr std::size_t kKernelCount = 6;

std::array<Kernel, kKernelCount> make_kernels() {
    return {{
        {1,
         "naive",
         "the textbook i-j-k triple loop: the inner loop walks a column of B (stride n)",
         impl::naive,
         Traffic::Unblocked,
         {}},
        {2,
         "ikj",
         "loop order i-k-j: unit-stride inner loop over rows of B and C (vectorizable, whole cache lines)",
         impl::ikj,
         Traffic::Unblocked,
         {}},
        {3, "blocked", "cache blocking: a kc x nc block of B stays in L2 while mc rows of A sweep it", impl::blocked,
         Traffic::Blocked, impl::blocked_tiling()},
        {4, "packed",
         "packing A and B into contiguous micro-panels, and an mr x nr tile of C accumulated in plain C++ "
         "(left to the compiler's auto-vectorizer)",
         impl::packed, Traffic::Blocked, impl::packed_tiling()},
        {5, "simd", "the same register tile in explicit SIMD intrinsics (FMA where the ISA has it)", impl::simd,
         Traffic::Blocked, impl::simd_tiling()},
#ifndef __EMSCRIPTEN__
        {6, "simd-mt",
         "kernel 5 on every core: row stripes of C in std::threads (native only: wasm threads need a "
         "cross-origin isolated page)",
         simd_threads, Traffic::Blocked, impl::simd_tiling()},
#else
        {6,
         "simd-relaxed",
         "kernel 5's loop nest with a 6 x 8 tile of fused multiply-adds (f32x4.relaxed_madd), where the "
         "browser validates relaxed SIMD",
         simd_relaxed,
         Traffic::Blocked,
         {relaxed::kMR, relaxed::kNR, relaxed::kMC, relaxed::kKC, relaxed::kNC},
         relaxed_available},
#endif
    }};
}

const std::array<Kernel, kKernelCount>& registry() {
    static const std::array<Kernel, kKernelCount> table = make_kernels();
    return table;
}

std::uint64_t xorshift64(std::uint64_t& state) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

}  // namespace

std::span<const Kernel> kernels() { return registry(); }

const Kernel* find_kernel(std::string_view name) {
    for (const Kernel& kernel : registry())
        if (name == kernel.name || name == std::to_string(kernel.number)) return &kernel;
    return nullptr;
}

std::string kernel_names() {
    std::string out;
    for (const Kernel& kernel : registry()) {
        if (!out.empty()) out += ", ";
        out += kernel.name;
    }
    return out;
}

const char* simd_isa() { return impl::isa_name(); }
int simd_lanes() { return impl::isa_lanes(); }
bool simd_has_fma() { return impl::isa_fma(); }
bool kernel_available(const Kernel& kernel) { return kernel.available == nullptr || kernel.available(); }

#ifdef __EMSCRIPTEN__
bool relaxed_simd_available() { return relaxed_available(); }
double relaxed_peak_loop(long long iters) { return tally_relaxed_peak_loop(static_cast<double>(iters)); }
double relaxed_peak_flops_per_iter() { return tally_relaxed_peak_flops_per_iter(); }
#else
bool relaxed_simd_available() { return false; }
double relaxed_peak_loop(long long) { throw InputError("variant", "relaxed SIMD exists only in the wasm build"); }
double relaxed_peak_flops_per_iter() { return 0; }
#endif

void fill_uniform(std::span<float> out, std::uint64_t seed) {
    std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (state == 0) state = 1;
    for (float& value : out) {
        // 24 random bits -> an exact float in [-1, 1): (bits - 2^23) * 2^-23
        const auto bits = static_cast<std::int64_t>(xorshift64(state) >> 40);
        value = static_cast<float>(std::ldexp(static_cast<double>(bits - (1 << 23)), -23));
    }
}

CheckResult check_against_reference(int m, int n, int k, const float* A, const float* B, const float* C,
                                    std::int64_t max_entries) {
    constexpr double kUnit = 0x1p-24;  // unit roundoff of fp32 (round to nearest)
    CheckResult result;
    const std::int64_t total = static_cast<std::int64_t>(m) * n;
    auto check_entry = [&](int i, int j) {
        double dot = 0, magnitude = 0;
        for (int p = 0; p < k; ++p) {
            const double product =
                static_cast<double>(A[static_cast<std::int64_t>(i) * k + p]) * B[static_cast<std::int64_t>(p) * n + j];
            dot += product;
            magnitude += std::fabs(product);
        }
        const double error = std::fabs(static_cast<double>(C[static_cast<std::int64_t>(i) * n + j]) - dot);
        const double tolerance = 2.0 * k * kUnit * magnitude + 1e-30;
        const double ratio = std::isfinite(error) ? error / tolerance : INFINITY;
        result.max_abs_err = std::isfinite(error) ? std::max(result.max_abs_err, error) : INFINITY;
        if (ratio > result.worst_ratio || result.checked == 0) {
            result.worst_ratio = ratio;
            result.max_tolerance = tolerance;
        }
        ++result.checked;
    };
    if (total <= max_entries) {
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) check_entry(i, j);
    } else {
        check_entry(0, 0);
        check_entry(0, n - 1);
        check_entry(m - 1, 0);
        check_entry(m - 1, n - 1);
        std::uint64_t state = 0x5DEECE66Dull;
        while (result.checked < max_entries) {
            const auto r = xorshift64(state);
            check_entry(static_cast<int>((r >> 32) % static_cast<std::uint64_t>(m)),
                        static_cast<int>((r & 0xffffffffu) % static_cast<std::uint64_t>(n)));
        }
    }
    result.ok = std::isfinite(result.max_abs_err) && result.worst_ratio <= 1.0;
    return result;
}

// In wasm steady_clock is performance.now() (~100 us resolution in pages that are not cross-origin
// isolated), so each timed sample must last milliseconds; the engine needs no Emscripten header for it.
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

Timing time_kernel(const Kernel& kernel, int m, int n, int k, const float* A, const float* B, float* C, int samples,
                   int warmup, double min_sample_s) {
    // Warm up: at least `warmup` calls, then keep going while calls still get faster (V8 swaps in its
    // optimized tier only between calls, after a background compile that a busy machine delays), at
    // most 40 calls or 2 s.
    double previous = INFINITY;
    const double warm_start = now_s();
    for (int w = 0; w < 40; ++w) {
        const double start = now_s();
        kernel.fn(m, n, k, A, B, C);
        const double elapsed = now_s() - start;
        const bool faster = elapsed < 0.9 * previous;
        previous = std::min(previous, elapsed);
        if ((w + 1 >= warmup && !faster) || now_s() - warm_start > 2.0) break;
    }
    // Calibrate: how many calls make one sample last at least min_sample_s.
    int calls = 1;
    for (;;) {
        const double start = now_s();
        for (int c = 0; c < calls; ++c) kernel.fn(m, n, k, A, B, C);
        const double elapsed = now_s() - start;
        if (elapsed >= min_sample_s || calls >= (1 << 20)) break;
        const double scale = elapsed > 0 ? min_sample_s / elapsed * 1.2 : 16.0;
        calls = static_cast<int>(std::min<double>(1 << 20, std::ceil(calls * std::clamp(scale, 1.5, 16.0))));
    }
    std::vector<double> per_call;
    per_call.reserve(static_cast<std::size_t>(samples));
    // A calibration slowed by a busy machine can leave `calls` too small for a coarse clock; each
    // sample still lasts at least min_sample_s (and 2 ms, 20 steps of a 100 us clock).
    const double sample_floor_s = std::max(min_sample_s, 2e-3);
    for (int s = 0; s < samples; ++s)
        per_call.push_back(seconds_per_call(
            [&](long long n_calls) {
                for (long long c = 0; c < n_calls; ++c) kernel.fn(m, n, k, A, B, C);
            },
            calls, sample_floor_s));
    std::sort(per_call.begin(), per_call.end());
    Timing timing;
    const std::size_t mid = per_call.size() / 2;
    timing.median_s = per_call.size() % 2 ? per_call[mid] : 0.5 * (per_call[mid - 1] + per_call[mid]);
    timing.min_s = per_call.front();
    timing.max_s = per_call.back();
    timing.samples = samples;
    timing.calls_per_sample = calls;
    return timing;
}

BenchRow bench(const Kernel& kernel, int m, int n, int k, int samples, int warmup, double min_sample_s,
               std::uint64_t seed) {
    std::vector<float> A(static_cast<std::size_t>(m) * k), B(static_cast<std::size_t>(k) * n),
        C(static_cast<std::size_t>(m) * n);
    fill_uniform(A, seed);
    fill_uniform(B, seed + 1);
    kernel.fn(m, n, k, A.data(), B.data(), C.data());
    BenchRow row;
    row.kernel = kernel.name;
    row.number = kernel.number;
    row.m = m;
    row.n = n;
    row.k = k;
    row.check = check_against_reference(m, n, k, A.data(), B.data(), C.data());
    const Timing timing = time_kernel(kernel, m, n, k, A.data(), B.data(), C.data(), samples, warmup, min_sample_s);
    const double flops = 2.0 * m * static_cast<double>(n) * k;
    row.median_s = timing.median_s;
    row.samples = timing.samples;
    row.flops_per_s = flops / timing.median_s;
    row.flops_per_s_min = flops / timing.max_s;
    row.flops_per_s_max = flops / timing.min_s;
    return row;
}

namespace {

// Slowest GFLOP/s of each rung in BENCHMARKS.md's native ladder (n = 256..2048), rounded down.
double slowest_gflops_of(const Kernel& kernel) {
    const std::string_view name = kernel.name;
    if (name == "naive") return 0.4;
    if (name == "ikj") return 29;
    if (name == "blocked") return 35;
    return 160;  // packed, simd, simd-mt
}

}  // namespace

double modelled_call_seconds(const Kernel& kernel, double m, double n, double k) {
    return 2 * m * n * k / (slowest_gflops_of(kernel) * 1e9);
}

// Given one call's seconds c and a sample's target s: the checked call (c); warm-up, which stops after 40 calls
// or 2 s (at most min(40c, 2 s + c)); calibration, whose last round lasts under 1.5 max(s, c) and each earlier
// round under 1/1.5 of the next (under 4.5 max(s, c) in all); and reps samples as long as that last round.
double modelled_bench_seconds(double c, int reps, double min_sample_ms) {
    const double sample = std::max(std::max(min_sample_ms * 1e-3, 2e-3), c);
    return c + std::min(40 * c, 2 + c) + 4.5 * sample + reps * 1.5 * sample;
}

}  // namespace tally::gemm
