#include "tally/hardware/hardware.h"
#include "tally/compute/roofline.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "tally/base/error.h"
#include "tally/base/json_members.h"
#include "tally/base/presets.h"

namespace tally {

namespace {

using json = nlohmann::json;

double positive_field(const json& o, const char* key, const std::string& where) {
    auto it = o.find(key);
    if (it == o.end() || !it->is_number()) throw InputError(key, where + ": " + key + " is required (a number > 0)");
    return require_positive(key, it->get<double>());
}

std::int64_t json_integer_field(const json& value, const char* field) {
    if (!value.is_number_integer() || value.get<std::int64_t>() < 1 ||
        value.get<std::int64_t>() > (std::int64_t{1} << 60))
        throw InputError(field, std::string(field) + " must be a whole number of bytes in [1, 2^60]");
    return value.get<std::int64_t>();
}

// An optional text field of a hardware object (a preset, a calibration file, a caller's object).
std::string text_field(const json& o, const char* key, const std::string& fallback) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return fallback;
    if (!it->is_string() || it->get<std::string>().size() > 2000)
        throw InputError(key, std::string("hardware.") + key + " must be text of at most 2000 characters");
    return it->get<std::string>();
}

// The optional "interconnect" object: GB/s and microseconds as spec sheets quote them.
Interconnect interconnect_from_json(const json& o, const std::string& where) {
    if (!o.is_object()) throw InputError("interconnect", where + ": interconnect must be an object");
    Interconnect ic;
    ic.present = true;
    const double per_node = positive_field(o, "gpus_per_node", where);
    ic.gpus_per_node = require_integer("gpus_per_node", per_node, 1, 1'000'000);
    ic.intra_node_bytes_per_s = positive_field(o, "intra_node_gb_s", where) * 1e9;
    ic.network_bytes_per_s = positive_field(o, "network_gb_s", where) * 1e9;
    ic.intra_node_latency_s = positive_field(o, "intra_node_latency_us", where) * 1e-6;
    ic.network_latency_s = positive_field(o, "network_latency_us", where) * 1e-6;
    ic.source = text_field(o, "source", std::string());
    return ic;
}

}  // namespace

UsableCapacity usable_capacity(std::uint64_t capacity, std::uint64_t context_bytes, double fraction) {
    require_in("fragmentation_fraction", fraction, 0, 0.5);
    UsableCapacity u;
    u.capacity = capacity;
    u.context_bytes = context_bytes;
    u.fragmentation_fraction = fraction;
    // Rounded up so the usable figure never overstates.
    u.fragmentation_bytes = static_cast<std::uint64_t>(std::ceil(fraction * static_cast<double>(capacity)));
    u.allowance_bytes = context_bytes + u.fragmentation_bytes;
    if (context_bytes >= capacity || u.allowance_bytes >= capacity)
        throw InputError("cuda_context_bytes", "the allowance (cuda_context_bytes " + std::to_string(context_bytes) +
                                                   " + fragmentation) must be below the capacity " +
                                                   std::to_string(capacity) + " bytes");
    u.usable_bytes = capacity - u.allowance_bytes;
    return u;
}

UsableCapacity preset_usable_capacity(const Hardware& hw, std::optional<std::uint64_t> context_bytes,
                                      std::optional<double> fragmentation_fraction) {
    return usable_capacity(hw.memory_reported_bytes, context_bytes.value_or(kDefaultCudaContextBytes),
                           fragmentation_fraction.value_or(kDefaultFragmentationFraction));
}

namespace {
// The preset field of each peak dtype; nullptr for dtypes without a peak role.
double Hardware::*peak_member(DType dtype) {
    switch (dtype) {
        case DType::FP32: return &Hardware::peak_fp32;
        case DType::TF32: return &Hardware::peak_tf32;
        case DType::BF16: return &Hardware::peak_bf16;
        case DType::FP16: return &Hardware::peak_fp16;
        case DType::FP8: return &Hardware::peak_fp8;
        case DType::FP4: return &Hardware::peak_fp4;
        default: return nullptr;
    }
}
}  // namespace

double Hardware::peak(DType dtype) const {
    double Hardware::*member = peak_member(dtype);
    if (member == nullptr)
        throw InputError("dtype",
                         "dtype must be one of " + dtype_ids(kPeakDType) + ", got \"" + to_string(dtype) + "\"");
    if (this->*member == 0)
        throw InputError("dtype",
                         name + " has no dense " + to_string(dtype) + " peak (unsupported); pick another dtype");
    return this->*member;
}

double Hardware::peak(const std::string& dtype) const { return peak(dtype_from_string(dtype, "dtype", kPeakDType)); }

Hardware hardware_from_json(const json& o) {
    if (!o.is_object()) throw InputError("hardware", "hardware must be a preset id or an object");
    Hardware hw;
    hw.id = text_field(o, "id", std::string("custom"));
    hw.name = text_field(o, "name", hw.id);
    hw.source = text_field(o, "source", std::string());
    if (auto a = o.find("architecture"); a != o.end() && !a->is_null()) {
        static const char* const kArchitectures[] = {"ampere", "ada", "hopper", "blackwell", "cdna3", "cdna4"};
        const bool known = a->is_string() && std::find(std::begin(kArchitectures), std::end(kArchitectures),
                                                       a->get<std::string>()) != std::end(kArchitectures);
        if (!known)
            throw InputError("architecture",
                             hw.name + ": architecture must be one of ampere, ada, hopper, blackwell, cdna3, cdna4");
        hw.architecture = a->get<std::string>();
    }
    // Spec sheets quote decimal gigabytes and terabytes per second.
    const double gb = positive_field(o, "memory_gb", hw.name);
    const double bytes = gb * 1e9;
    if (bytes != std::floor(bytes) || bytes > 1e18)
        throw InputError("memory_gb", hw.name + ": memory_gb must give a whole number of bytes below 1e18");
    hw.memory_bytes = static_cast<std::uint64_t>(bytes);
    // What the device reports; presets without a device report repeat the datasheet figure and say so.
    auto reported = o.find("memory_reported_bytes");
    if (reported == o.end() || reported->is_null()) {
        hw.memory_reported_bytes = hw.memory_bytes;
        hw.memory_reported_by = "datasheet";
    } else {
        hw.memory_reported_bytes = static_cast<std::uint64_t>(json_integer_field(*reported, "memory_reported_bytes"));
        hw.memory_reported_by = text_field(o, "memory_reported_by", std::string("device"));
        if (hw.memory_reported_by != "device" && hw.memory_reported_by != "datasheet")
            throw InputError("memory_reported_by", hw.name + ": memory_reported_by must be device or datasheet");
    }
    hw.memory_reported_source = text_field(o, "memory_reported_source", std::string());
    hw.memory_bandwidth_bytes_per_s = positive_field(o, "memory_bandwidth_tb_s", hw.name) * 1e12;
    auto peaks = o.find("peak_tflops");
    if (peaks == o.end() || !peaks->is_object())
        throw InputError("peak_tflops", hw.name + ": peak_tflops must be an object of dense TFLOP/s per dtype");
    auto read = [&](const char* key) {
        auto it = peaks->find(key);
        if (it == peaks->end() || it->is_null()) return 0.0;
        if (!it->is_number()) throw InputError("peak_tflops", hw.name + ": peak_tflops." + key + " must be a number");
        return require_positive(key, it->get<double>()) * 1e12;
    };
    for (const DTypeInfo& d : dtypes())
        if (d.roles & kPeakDType) hw.*peak_member(d.type) = read(d.id);
    if (auto ic = o.find("interconnect"); ic != o.end()) hw.interconnect = interconnect_from_json(*ic, hw.name);
    if (auto f = o.find("matmul_peak_fraction"); f != o.end() && !f->is_null()) {
        if (!f->is_number() || !(f->get<double>() > 0 && f->get<double>() <= 1))
            throw InputError("matmul_peak_fraction",
                             hw.name +
                                 ": matmul_peak_fraction must be a number in (0, 1]: the share of peak_tflops "
                                 "large GEMMs reach, measured");
        hw.matmul_peak_fraction = f->get<double>();
    }
    hw.measured_by = text_field(o, "measured_by", std::string());
    return hw;
}

Hardware find_hardware(const std::string& id) {
    const json* preset = find_preset("hardware", id);
    if (preset == nullptr) {
        std::string ids;
        for (const auto& h : presets_json().at("hardware"))
            ids += (ids.empty() ? "" : ", ") + h.at("id").get<std::string>();
        throw InputError("hardware", "unknown hardware preset \"" + id + "\"; known: " + ids);
    }
    return hardware_from_json(*preset);
}

double Hardware::ridge(const std::string& dtype) const {
    return roofline::ridge(peak(dtype), memory_bandwidth_bytes_per_s);
}

json hardware_to_json(const Hardware& hw) {
    json peaks = json::object(), ridge = json::object();
    for (const DTypeInfo& d : dtypes()) {
        if (!(d.roles & kPeakDType)) continue;
        const char* key = d.id;
        const double value = hw.*peak_member(d.type);
        if (value <= 0) continue;
        peaks[key] = value;
        ridge[key] = roofline::ridge(value, hw.memory_bandwidth_bytes_per_s);
    }
    json out = TALLY_MEMBERS(hw, id, name, source, architecture, memory_bytes, memory_reported_bytes,
                             memory_reported_by, memory_reported_source, memory_bandwidth_bytes_per_s);
    if (hw.matmul_peak_fraction > 0) out["matmul_peak_fraction"] = hw.matmul_peak_fraction;
    if (!hw.measured_by.empty()) out["measured_by"] = hw.measured_by;
    out["peak_flops"] = peaks;
    out["ridge_flops_per_byte"] = ridge;
    if (hw.interconnect.present)
        out["interconnect"] = TALLY_MEMBERS(hw.interconnect, gpus_per_node, intra_node_bytes_per_s, network_bytes_per_s,
                                            intra_node_latency_s, network_latency_s, source);
    return out;
}

}  // namespace tally
