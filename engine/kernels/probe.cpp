// Peak and bandwidth probes. The inner loops live in gemm_simd.cpp so they are compiled with the
// same vector ISA as the GEMM kernels; this file only times them.
#include "tally/probe.h"

#include <algorithm>
#include <string>
#include <vector>

#include "tally/base/error.h"
#include "tally/gemm.h"

namespace tally::probe {

namespace {

struct Stats {
    double median = 0, min = 0, max = 0;
};

Stats stats(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return {values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]), values.front(), values.back()};
}

// A result's median, slowest and fastest fields from the samples' stats.
void put_stats(const Stats& st, double& median, double& min, double& max) {
    median = st.median;
    min = st.min;
    max = st.max;
}

volatile double g_sink = 0;  // keeps the probe results observable

// A page that is not cross-origin isolated reads performance.now() in 100 us steps, so a stream that
// fits in cache can time as 0 s: each sample lasts at least 2 ms (20 steps; gemm::seconds_per_call).
constexpr double kMinSampleSeconds = 2e-3;

// Units per second of `stream` (which moves `units` per call), never from a zero interval.
template <typename Stream>
double timed_rate(double units, Stream&& stream) {
    return units / gemm::seconds_per_call(
                       [&](long long calls) {
                           for (long long c = 0; c < calls; ++c) stream();
                       },
                       1, kMinSampleSeconds);
}

}  // namespace

PeakResult peak(int samples, double min_sample_s, bool relaxed) {
    require_integer("samples", samples, 1, 50);
    require_in_left_open("min_sample_s", min_sample_s, 0.0009, 5.0);
    if (relaxed && !gemm::relaxed_simd_available())
        throw InputError("variant",
                         "variant relaxed needs the relaxed-SIMD module (wasm, in a browser that validates "
                         "f32x4.relaxed_madd); use variant simd");
    auto loop = [relaxed](long long iters) {
        return relaxed ? gemm::relaxed_peak_loop(iters) : gemm::impl::peak_loop(iters);
    };
    // Warm up (and let V8 tier the wasm loop up), then find an iteration count lasting min_sample_s.
    // Many short calls first: V8 runs a wasm function in its baseline tier until a call starts after
    // the optimizing compile finished (no on-stack replacement for wasm).
    long long iters = 1 << 12;
    for (int w = 0; w < 20; ++w) g_sink = g_sink + loop(iters);
    for (;;) {
        const double start = gemm::now_s();
        g_sink = g_sink + loop(iters);
        const double elapsed = gemm::now_s() - start;
        if (elapsed >= min_sample_s || iters > (1LL << 40)) break;
        const double scale = elapsed > 0 ? min_sample_s / elapsed * 1.2 : 16.0;
        iters = static_cast<long long>(static_cast<double>(iters) * std::clamp(scale, 1.5, 16.0));
    }
    const double flops = static_cast<double>(iters) *
                         (relaxed ? gemm::relaxed_peak_flops_per_iter() : gemm::impl::peak_flops_per_iter());
    std::vector<double> rates;
    for (int s = 0; s < samples; ++s) rates.push_back(timed_rate(flops, [&] { g_sink = g_sink + loop(iters); }));
    const Stats st = stats(rates);
    PeakResult out;
    put_stats(st, out.flops_per_s, out.flops_per_s_min, out.flops_per_s_max);
    out.samples = samples;
    out.seconds_per_sample = flops / st.median;
    out.isa = relaxed ? "wasm-simd128+relaxed-madd" : gemm::simd_isa();
    out.lanes = gemm::simd_lanes();
    out.fma = relaxed || gemm::simd_has_fma();
    return out;
}

BandwidthResult bandwidth(std::int64_t bytes, int samples) {
    require_integer("bytes", static_cast<double>(bytes), 1 << 20, std::int64_t{1} << 30);
    require_integer("samples", samples, 1, 50);
    const long count = static_cast<long>(bytes / 4);
    std::vector<float> buffer(static_cast<std::size_t>(count));
    gemm::fill_uniform(buffer, 7);
    std::vector<double> read_rates, triad_rates;
    g_sink = g_sink + gemm::impl::read_sum(buffer.data(), count);  // warm-up: page faults, tier-up
    for (int s = 0; s < samples; ++s)
        read_rates.push_back(timed_rate(static_cast<double>(count) * 4,
                                        [&] { g_sink = g_sink + gemm::impl::read_sum(buffer.data(), count); }));
    // Triad over three thirds of the same allocation (each third is still larger than a 32 MiB L3
    // for the default 128 MiB).
    const long third = count / 3;
    float* a = buffer.data();
    const float* b = a + third;
    const float* c = a + 2 * third;
    gemm::impl::triad(a, b, c, 0.5f, third);
    for (int s = 0; s < samples; ++s)
        triad_rates.push_back(
            timed_rate(static_cast<double>(third) * 12, [&] { gemm::impl::triad(a, b, c, 0.5f, third); }));
    g_sink = g_sink + a[third / 2];
    const Stats r = stats(read_rates), t = stats(triad_rates);
    BandwidthResult out;
    put_stats(r, out.read_bytes_per_s, out.read_bytes_per_s_min, out.read_bytes_per_s_max);
    put_stats(t, out.triad_bytes_per_s, out.triad_bytes_per_s_min, out.triad_bytes_per_s_max);
    out.bytes = bytes;
    out.samples = samples;
    return out;
}

}  // namespace tally::probe
