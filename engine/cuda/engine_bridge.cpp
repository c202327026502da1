// engine_bridge.cpp: answers the CUDA programs' questions from the tally engine, through the same
// JSON API the CLI and the page use (docs/API.md: `presets`, `memory_budget`), so a number the
// GPU run compares against is exactly the number a reader sees.
#include "engine_bridge.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include <nlohmann/json.hpp>

#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/hardware/hardware.h"
#include "tally/compute/roofline.h"

namespace tally_cuda {
namespace {

using json = nlohmann::json;

// Calls an engine method; returns the result object, or sets *error to the engine's message.
json call_engine(const char* method, const json& args, std::string* error) {
    json answer = json::parse(tally::api::call(method, args.dump()));
    if (answer.value("ok", false)) return answer["result"];
    if (error) {
        const json& e = answer["error"];
        *error = e.value("field", std::string("?")) + ": " + e.value("message", std::string("unknown error"));
    }
    return json();
}

double number_or_zero(const json& obj, const char* key) {
    auto it = obj.find(key);
    return (it != obj.end() && it->is_number()) ? it->get<double>() : 0.0;
}

// Each peak HardwarePeaks carries beside the tally::Hardware member it mirrors (copied both ways below).
constexpr std::pair<double HardwarePeaks::*, double tally::Hardware::*> kPeakMembers[] = {
    {&HardwarePeaks::fp32_flops, &tally::Hardware::peak_fp32},
    {&HardwarePeaks::tf32_flops, &tally::Hardware::peak_tf32},
    {&HardwarePeaks::bf16_flops, &tally::Hardware::peak_bf16},
    {&HardwarePeaks::fp16_flops, &tally::Hardware::peak_fp16},
    {&HardwarePeaks::fp8_flops, &tally::Hardware::peak_fp8}};

// A preset by id through the engine's hardware lookup; found == false when there is none.
HardwarePeaks peaks_of(const std::string& preset_id) {
    tally::Hardware hw;
    try {
        hw = tally::find_hardware(preset_id);
    } catch (const tally::InputError&) {
        return {};
    }
    HardwarePeaks p;
    p.found = true;
    p.preset_id = hw.id;
    p.preset_name = hw.name;
    p.source = hw.source;
    p.memory_bytes = static_cast<double>(hw.memory_bytes);
    p.memory_bandwidth_bytes_per_s = hw.memory_bandwidth_bytes_per_s;
    for (const auto& [mine, engine] : kPeakMembers) p.*mine = hw.*engine;
    return p;
}

json preset_list(const char* kind) {
    std::string error;
    json presets = call_engine("presets", json::object(), &error);
    if (!presets.is_object() || !presets.contains(kind)) return json::array();
    return presets[kind];
}
json hardware_list() { return preset_list("hardware"); }

std::vector<std::string> ids_of(const json& list) {
    std::vector<std::string> ids;
    for (const json& item : list) ids.push_back(item.value("id", std::string()));
    return ids;
}

}  // namespace

double peak_flops_per_s(const HardwarePeaks& p, tally::DType dtype) {
    tally::Hardware hw;
    hw.name = p.preset_name;
    for (const auto& [mine, engine] : kPeakMembers) hw.*engine = p.*mine;
    try {
        return hw.peak(dtype);
    } catch (const tally::InputError&) {
        return 0;  // not a peak dtype, or this hardware has no such mode: no MFU for it
    }
}

GemmTraffic gemm_traffic(double m, double n, double k, double in_bytes, double out_bytes) {
    const tally::roofline::Traffic t = tally::roofline::matmul_min_traffic(m, n, k, in_bytes, out_bytes);
    return {t.flops, t.bytes};
}

std::vector<std::string> tokens_of(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : s) {
        if (std::isalnum((unsigned char)ch)) {
            cur += (char)std::tolower((unsigned char)ch);
        } else if (!cur.empty()) {
            out.push_back(cur);
            cur.clear();
        }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

int match_score(const PresetName& preset, const std::string& device_name, double device_memory_bytes) {
    std::vector<std::string> dev = tokens_of(device_name);
    std::string dev_joined;
    for (auto& t : dev) dev_joined += t + " ";
    auto dev_has = [&](const std::string& tok) { return dev_joined.find(tok) != std::string::npos; };
    std::vector<std::string> pre = tokens_of(preset.id + " " + preset.name);
    // The family token (the first containing a digit: h100, a100, b200, mi300x, 4090) must appear.
    std::string family;
    for (auto& t : pre)
        if (std::any_of(t.begin(), t.end(), [](char c) { return std::isdigit((unsigned char)c); }) &&
            t.find("gb") == std::string::npos) {
            family = t;
            break;
        }
    if (family.empty() || std::find(dev.begin(), dev.end(), family) == dev.end()) {
        // also accept the family glued to other text in the device name, e.g. "a100-sxm4-80gb"
        if (family.empty() || !dev_has(family)) return -1;
    }
    int score = 100;
    const bool dev_pcie = dev_has("pcie"), pre_pcie = std::find(pre.begin(), pre.end(), "pcie") != pre.end();
    const bool pre_sxm =
        std::find(pre.begin(), pre.end(), "sxm") != pre.end() ||
        std::any_of(pre.begin(), pre.end(), [](const std::string& t) { return t.rfind("sxm", 0) == 0; });
    if (dev_pcie && pre_pcie) score += 20;
    if (dev_pcie && pre_sxm) score -= 20;
    if (!dev_pcie && pre_pcie) score -= 20;  // SXM parts do not say "SXM" in their CUDA name (H100: "80GB HBM3")
    // Memory: the runtime reports usable GiB-ish bytes, the preset the spec sheet's decimal GB; the
    // closest capacity wins among the family (A100 40 GB vs 80 GB).
    if (preset.memory_bytes > 0 && device_memory_bytes > 0) {
        double ratio = device_memory_bytes / preset.memory_bytes;
        score -= (int)std::lround(std::fabs(std::log(ratio)) * 50);
    }
    return score;
}

std::vector<std::string> hardware_preset_ids() {
    std::vector<std::string> ids = ids_of(hardware_list());
    std::sort(ids.begin(), ids.end());
    return ids;
}
std::vector<std::string> recipe_ids() { return ids_of(preset_list("recipes")); }
std::vector<std::string> model_preset_ids() { return ids_of(preset_list("models")); }

HardwarePeaks hardware_peaks(const std::string& preset_id) { return peaks_of(preset_id); }

HardwarePeaks match_device(const std::string& device_name, double total_memory_bytes) {
    const json list = hardware_list();
    int best = -1;
    const json* best_hw = nullptr;
    for (const json& hw : list) {
        PresetName p{hw.value("id", std::string()), hw.value("name", std::string()),
                     number_or_zero(hw, "memory_bytes")};
        int s = match_score(p, device_name, total_memory_bytes);
        // On a tie the shorter id wins: a variant preset (b200-power-limited, a benchmark's host) is the base part's
        // id plus qualifiers a CUDA device name never carries.
        if (s > best || (s == best && best_hw != nullptr && p.id.size() < best_hw->value("id", std::string()).size()))
            best = s, best_hw = &hw;
    }
    if (best_hw == nullptr || best < 50) return {};
    return peaks_of(best_hw->value("id", std::string()));
}

BudgetPrediction predict_budget(const BudgetRequest& request) {
    BudgetPrediction out;
    json args = {{"model", request.model}, {"gpus", 1}, {"zero", 0}};
    if (!request.recipe.empty()) args["recipe"] = request.recipe;
    json r = call_engine("memory_budget", args, &out.error);
    if (r.is_null()) return out;
    out.engine_json = r.dump();
    const json& per = r["per_gpu_bytes"];
    for (const char* name : {"weights", "gradients", "master_weights", "optimizer_states"}) {
        auto it = per.find(name);
        if (it == per.end() || !it->is_number_integer()) {
            out.error = std::string("engine result lacks per_gpu_bytes.") + name;
            return out;
        }
        uint64_t bytes = it->get<uint64_t>();
        if (bytes > 0) out.buffers.push_back({name, bytes});
        out.static_total_bytes += bytes;
    }
    out.activation_bytes = per.value("activations", (uint64_t)0);
    out.ok = true;
    return out;
}

LayerActivations predict_layer_activations(const std::string& model, int seq, int micro_batch, int activation_bytes,
                                           bool dropout) {
    LayerActivations out;
    json args = {{"model", model},
                 {"seq", seq},
                 {"micro_batch", micro_batch},
                 {"activation_bytes", activation_bytes},
                 {"dropout", dropout},
                 {"recompute", "none"},
                 {"flash_attention", false},
                 {"gpus", 1}};
    json r = call_engine("memory_budget", args, &out.error);
    if (r.is_null()) return out;
    const json& a = r["activations"];
    out.per_layer_bytes = a.value("per_layer_bytes", (std::uint64_t)0);
    for (const json& t : a.value("terms", json::array()))
        if (t.value("scope", std::string()) == "per_layer")
            out.terms.push_back({t.value("id", std::string()), t.value("bytes", (std::uint64_t)0)});
    out.ok = out.per_layer_bytes > 0;
    if (!out.ok && out.error.empty()) out.error = "engine result lacks activations.per_layer_bytes";
    return out;
}

std::string json_at(const std::string& text, const std::string& pointer, std::string* error) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        if (error) *error = e.what();
        return "";
    }
    try {
        const json::json_pointer ptr(pointer);
        if (!doc.contains(ptr)) return "";
        return doc.at(ptr).dump();
    } catch (const json::exception& e) {
        if (error) *error = e.what();
        return "";
    }
}

}  // namespace tally_cuda
