// API of the probes (probe.h): this core's peak FLOP/s and main-memory bandwidth, measured.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/error.h"
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
    Arg{.name = "variant", .type = Enum, .fallback = "simd", .doc = "the multiply-add timed", .values = "simd|relaxed"},
};
constexpr std::array kBandwidthArgs{
    Arg{"mib", Int, "MiB", 1, static_cast<double>(kMaxProbeMiB), "128", "buffer size"},
    kSamples,
};
constexpr std::array kPeakResult = std::to_array<Field>({
    {"flops_per_s", "FLOP/s", "median of the samples on one core"},
    {"flops_per_s_min", "FLOP/s", "slowest sample"},
    {"flops_per_s_max", "FLOP/s", "fastest sample"},
    {"samples", "", "samples taken"},
    {"isa", "", "the instruction set timed"},
});
constexpr std::array kBandwidthResult = std::to_array<Field>({
    {"read_bytes_per_s", "bytes/s", "read stream"},
    {"triad_bytes_per_s", "bytes/s", "triad stream"},
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
    return {{"variant", variant},
            {"flops_per_s", r.flops_per_s},
            {"flops_per_s_min", r.flops_per_s_min},
            {"flops_per_s_max", r.flops_per_s_max},
            {"samples", r.samples},
            {"seconds_per_sample", r.seconds_per_sample},
            {"isa", r.isa},
            {"lanes", r.lanes},
            {"fma", r.fma},
            {"threads", 1}};
}

json probe_bandwidth(const json& args) {
    const auto mib = arg_int(args, kBandwidthArgs[0]);
    const int samples = static_cast<int>(arg_int(args, kSamples));
    const probe::BandwidthResult r = probe::bandwidth(mib << 20, samples);
    return {{"read_bytes_per_s", r.read_bytes_per_s},
            {"read_bytes_per_s_min", r.read_bytes_per_s_min},
            {"read_bytes_per_s_max", r.read_bytes_per_s_max},
            {"triad_bytes_per_s", r.triad_bytes_per_s},
            {"triad_bytes_per_s_min", r.triad_bytes_per_s_min},
            {"triad_bytes_per_s_max", r.triad_bytes_per_s_max},
            {"bytes", r.bytes},
            {"samples", r.samples},
            {"threads", 1}};
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
