// API of the probes (probe.h): this core's peak FLOP/s and main-memory bandwidth, measured.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/probe.h"

namespace tally::api {

namespace {

// probe_peak: samples x min_sample_ms.
constexpr double kMaxProbeMs = 10000;
// probe_bandwidth's buffer: 8x a 32 MiB L3 is still a main-memory stream.
constexpr std::int64_t kMaxProbeMiB = 256;

using namespace arg;
constexpr Arg kSamples{"samples", Int, "", 1, 50, "5", "timed samples", "--reps"};
constexpr std::array kPeakArgs{
    kSamples,
    Arg{"min_sample_ms", Num, "ms", 0.9, 5000, "50", "shortest sample", nullptr, nullptr, true},
    choice("variant", "simd", "the multiply-add timed", "simd|relaxed"),
};
constexpr std::array kBandwidthArgs{
    integer("mib", "MiB", 1, kMaxProbeMiB, "128", "buffer size"),
    kSamples,
};
constexpr std::array kPeakResult = std::to_array<Field>({
    {"flops_per_s", "FLOP/s", "median of the samples on one core"},
    {"flops_per_s_min", "FLOP/s", "slowest sample"},
    {"flops_per_s_max", "FLOP/s", "fastest sample"},
    {"samples", "", "samples taken"},
    {"isa", "", "the instruction set timed"},
    {"variant", "", "the multiply-add timed (simd or relaxed)"},
    {"lanes", "", "float lanes per SIMD register"},
    {"fma", "", "whether the loop fuses multiply-add"},
    {"threads", "", "threads timed"},
    {"seconds_per_sample", "s", "length of one timed sample"},
});
constexpr std::array kBandwidthResult = std::to_array<Field>({
    {"read_bytes_per_s", "bytes/s", "read stream"},
    {"triad_bytes_per_s", "bytes/s", "triad stream"},
    {"bytes", "bytes", "size of each array streamed"},
    {"samples", "", "samples taken"},
    {"threads", "", "threads timed"},
    {"read_bytes_per_s_min", "bytes/s", "read stream, slowest sample"},
    {"read_bytes_per_s_max", "bytes/s", "read stream, fastest sample"},
    {"triad_bytes_per_s_min", "bytes/s", "triad stream, slowest sample"},
    {"triad_bytes_per_s_max", "bytes/s", "triad stream, fastest sample"},
});

json probe_peak(const json& args) {
    const int samples = static_cast<int>(arg_int(args, kSamples));
    const double min_sample_ms = arg_number(args, kPeakArgs[1]);
    require_in_left_open("min_sample_ms", min_sample_ms, 0.9, 5000.0);
    if (samples * min_sample_ms > kMaxProbeMs)
        throw InputError("samples", "samples x min_sample_ms must be at most " + format_number(kMaxProbeMs) +
                                        " ms, got " + format_number(samples * min_sample_ms));
    const std::string variant = optional_string_arg(args, "variant").value_or("simd");
    if (variant != "simd" && variant != "relaxed")
        throw InputError("variant",
                         "variant must be simd (the ISA's multiply-add) or relaxed (wasm relaxed-SIMD "
                         "f32x4.relaxed_madd), got \"" +
                             variant + "\"");
    const probe::PeakResult r = probe::peak(samples, min_sample_ms * 1e-3, variant == "relaxed");
    json out =
        TALLY_MEMBERS(r, flops_per_s, flops_per_s_min, flops_per_s_max, samples, seconds_per_sample, isa, lanes, fma);
    out["variant"] = variant;
    out["threads"] = 1;
    return out;
}

json probe_bandwidth(const json& args) {
    const auto mib = arg_int(args, kBandwidthArgs[0]);
    const int samples = static_cast<int>(arg_int(args, kSamples));
    const probe::BandwidthResult r = probe::bandwidth(mib << 20, samples);
    json out = TALLY_MEMBERS(r, read_bytes_per_s, read_bytes_per_s_min, read_bytes_per_s_max, triad_bytes_per_s,
                             triad_bytes_per_s_min, triad_bytes_per_s_max, bytes, samples);
    out["threads"] = 1;
    return out;
}

constexpr Method kMethods[] = {
    {"probe_peak", probe_peak,
     "measure this core's peak fp32 FLOP/s (independent vector multiply-add chains; variant relaxed: "
     "f32x4.relaxed_madd chains)",
     kPeakArgs, kPeakResult, true},
    {"probe_bandwidth", probe_bandwidth, "measure this core's main-memory bandwidth (read and triad streams)",
     kBandwidthArgs, kBandwidthResult, true},
};

}  // namespace

std::span<const Method> probe_methods() { return kMethods; }

}  // namespace tally::api
