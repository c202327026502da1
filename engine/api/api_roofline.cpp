// API of the roofline (roofline.h): named operations with FLOPs, bytes and intensity, and their bound
// on a hardware preset or on raw peaks (see docs/API.md, "GEMM and roofline").
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/numerics/dtype.h"
#include "tally/base/error.h"
#include "tally/hardware/hardware.h"
#include "tally/compute/roofline.h"

namespace tally::api {

namespace {

using namespace arg;
constexpr Arg kIntensity{
    "intensity", Arr, "FLOP/byte", -kNo, kNo, "[]", "up to 4096 positive intensities: the bound at each (points)"};
constexpr std::array kRooflineArgs{
    text("hardware", "none", "a hardware preset id: the bound of each op on its roof"),
    text("dtype", "bf16", "dtype of the operands and the peak"),
    integer("seq", "tokens", 1, roofline::kMaxOpsSeq, "2048", "sequence length of the ops"),
    integer("d_model", "", 1, 1 << 20, "4096", "model width of the ops"),
    integer("heads", "", 1, 1 << 20, "32", "attention heads of the ops"),
    kIntensity,
};
constexpr std::array kRooflineCustomArgs{
    Arg{"peak_flops_per_s", Num, "FLOP/s", 0, kNo, "required", "the peak", nullptr, nullptr, true},
    Arg{"bandwidth_bytes_per_s", Num, "bytes/s", 0, kNo, "required", "the memory bandwidth", nullptr, nullptr, true},
    kIntensity,
};
constexpr std::array kRooflineResult = std::to_array<Field>({
    {"ops", "", "{id, name, group, flops, bytes, intensity, model, attainable_flops_per_s?, bound?} per op"},
    {"peak_flops_per_s", "FLOP/s", "with hardware: the peak at dtype"},
    {"bandwidth_bytes_per_s", "bytes/s", "with hardware: memory bandwidth"},
    {"ridge_flops_per_byte", "FLOP/byte", "with hardware: peak / bandwidth"},
    {"points", "", "with hardware: the bound at each intensity"},
    {"hardware", "", "with hardware: {id, name, peak_flops_per_s, bandwidth_bytes_per_s, ...}"},
    {"dtype", "", "the dtype of the ops and the peak"},
    {"element_bytes", "bytes", "bytes per element at dtype"},
    {"seq", "tokens", "sequence length of the ops"},
    {"d_model", "", "hidden size of the ops"},
    {"heads", "", "attention heads of the ops"},
});
constexpr std::array kRooflineCustomResult = std::to_array<Field>({
    {"ridge_flops_per_byte", "FLOP/byte", "peak / bandwidth"},
    {"points", "", "{intensity, attainable_flops_per_s, bound} per intensity"},
    {"peak_flops_per_s", "FLOP/s", "the peak given"},
    {"bandwidth_bytes_per_s", "bytes/s", "the bandwidth given"},
});

// The bound at each of args.intensity (an optional array of positive FLOP/byte values) on one roof.
json bounds_at(const json& args, double peak, double bandwidth) {
    json points = json::array();
    if (args.contains("intensity")) {
        const json& list = args.at("intensity");
        if (!list.is_array() || list.size() > 4096)
            throw InputError("intensity", "intensity must be an array of at most 4096 positive numbers");
        for (const json& item : list) {
            if (!item.is_number()) throw InputError("intensity", "intensity must be an array of positive numbers");
            const double intensity = require_positive("intensity", item.get<double>());
            const double bound = roofline::attainable(intensity, peak, bandwidth);
            points.push_back({{"intensity", intensity},
                              {"attainable_flops_per_s", bound},
                              {"bound", roofline::to_string(roofline::bound(intensity, peak, bandwidth))}});
        }
    }
    return points;
}

// {hardware?: preset id, dtype: "bf16", seq: 2048, d_model: 4096, heads: 32, intensity?: [FLOP/byte]}
// With a hardware preset, `points` holds the bound at each intensity (as roofline_custom), so a chart
// needs one call per roof.
json roofline(const json& args) {
    const std::string dtype = arg_string(args, kRooflineArgs[1]);
    roofline::OpsConfig config;
    const DType type = dtype_from_string(dtype, "dtype", kPeakDType);
    config.element_bytes = dtype_element_bytes(type);
    config.seq = static_cast<int>(arg_int(args, kRooflineArgs[2], config.seq));
    config.d_model = static_cast<int>(arg_int(args, kRooflineArgs[3], config.d_model));
    config.heads = static_cast<int>(arg_int(args, kRooflineArgs[4], config.heads));
    const auto ops = roofline::named_ops(config);

    json out = TALLY_MEMBERS(config, element_bytes, seq, d_model, heads);
    out["dtype"] = dtype;
    double peak = 0, bandwidth = 0;
    if (const auto id = optional_string_arg(args, "hardware")) {
        const Hardware hw = find_hardware(*id);
        peak = hw.peak(type);
        bandwidth = hw.memory_bandwidth_bytes_per_s;
        out["hardware"] = {{"id", *id},
                           {"name", hw.name},
                           {"source", hw.source},
                           {"peak_flops_per_s", peak},
                           {"bandwidth_bytes_per_s", bandwidth}};
        out["peak_flops_per_s"] = peak;
        out["bandwidth_bytes_per_s"] = bandwidth;
        out["ridge_flops_per_byte"] = roofline::ridge(peak, bandwidth);
        out["points"] = bounds_at(args, peak, bandwidth);
    }
    json list = json::array();
    for (const roofline::Op& op : ops) {
        json item = TALLY_MEMBERS(op, id, name, group, flops, bytes, intensity, model);
        if (peak > 0) {
            const double bound = roofline::attainable(op.intensity, peak, bandwidth);
            item["attainable_flops_per_s"] = bound;
            item["bound"] = roofline::to_string(roofline::bound(op.intensity, peak, bandwidth));
            item["fraction_of_peak"] = bound / peak;
        }
        list.push_back(std::move(item));
    }
    out["ops"] = std::move(list);
    return out;
}

// A roofline from raw numbers (this machine's probes): {peak_flops_per_s, bandwidth_bytes_per_s,
// intensity?: [FLOP/byte]} -> the ridge point and the bound at each intensity.
json roofline_custom(const json& args) {
    const double peak = require_positive("peak_flops_per_s", number_arg(args, "peak_flops_per_s"));
    const double bandwidth = require_positive("bandwidth_bytes_per_s", number_arg(args, "bandwidth_bytes_per_s"));
    return {{"peak_flops_per_s", peak},
            {"bandwidth_bytes_per_s", bandwidth},
            {"ridge_flops_per_byte", roofline::ridge(peak, bandwidth)},
            {"points", bounds_at(args, peak, bandwidth)}};
}

constexpr Method kMethods[] = {
    {"roofline", roofline,
     "named operations with FLOPs, bytes, arithmetic intensity, and their roofline bound on a hardware preset",
     kRooflineArgs, kRooflineResult, true},
    {"roofline_custom", roofline_custom,
     "ridge point and bounds of a roofline given raw peak FLOP/s and bandwidth (e.g. this machine's probes)",
     kRooflineCustomArgs, kRooflineCustomResult, true},
};

}  // namespace

std::span<const Method> roofline_methods() { return kMethods; }

}  // namespace tally::api
