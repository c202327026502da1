// API of the presets (presets.h): models, hardware, recipes, optimizers, dtypes; a model resolved on
// its own; and the assumptions audit of every preset. Shapes in docs/API.md ("Accounting").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/hardware/hardware.h"
#include "tally/base/input.h"
#include "tally/memory/kvcache.h"
#include "tally/memory/memory.h"
#include "tally/model/model.h"
#include "tally/model/params.h"
#include "tally/base/presets.h"

namespace tally::api {

namespace {

using u64 = std::uint64_t;

json presets(const json&) {
    json models = json::array();
    for (const auto& m : presets_json().at("models")) {
        ModelConfig c = model_from_json(m.at("config"));
        const ParamCount p = count_params(c);
        models.push_back({{"id", m.at("id")},
                          {"name", m.value("name", m.at("id").get<std::string>())},
                          {"source", m.value("source", "")},
                          {"assumption_sources", m.value("assumption_sources", json::object())},
                          {"config", model_to_json(c)},
                          {"params_total", p.total},
                          {"params_active", p.active}});
    }
    json hardware = json::array();
    for (const auto& h : presets_json().at("hardware")) hardware.push_back(hardware_to_json(hardware_from_json(h)));
    json optimizers = json::array();
    for (Optimizer o : {Optimizer::AdamW, Optimizer::AdamW8bit, Optimizer::SgdMomentum, Optimizer::Sgd, Optimizer::Lion,
                        Optimizer::Adafactor})
        optimizers.push_back(
            {{"id", to_string(o)}, {"states", optimizer_states(o)}, {"description", optimizer_description(o)}});
    json dtypes = json::array();
    for (const DTypeInfo& d : tally::dtypes()) {
        json roles = json::array();
        if (d.roles & kStorageDType) roles.push_back("storage");
        if (d.roles & kPeakDType) roles.push_back("peak");
        if (d.roles & kTensorDType) roles.push_back("tensor");
        json row = TALLY_MEMBERS(d, id, name, bits, note);
        row["roles"] = roles;
        // Bytes per element with the block scale's share: packed sub-byte and block-scaled types are fractional.
        if (dtype_bytes_256(d.type) % 256 == 0)
            row["bytes"] = dtype_bytes_256(d.type) / 256;
        else
            row["bytes"] = dtype_element_bytes(d.type);
        if (d.block != 0) {
            row["block"] = d.block;
            row["scale_bits"] = d.scale_bits;
        }
        dtypes.push_back(row);
    }
    return json{{"models", models},
                {"hardware", hardware},
                {"recipes", recipes_json()},
                {"optimizers", optimizers},
                {"dtypes", dtypes}};
}

// ---------------------------------------------------------------- model (resolve only)
json model_method(const json& args) {
    const ModelConfig c = resolve_model(args);
    const ParamCount p = count_params(c);
    return json{{"model", model_to_json(c)}, {"params_total", p.total}, {"params_active", p.active}};
}

// ---------------------------------------------------------------- assumptions audit
// Every assumption the memory budget and the FLOP count make for each preset, with the value the engine
// uses and the source the preset cites (empty when a preset cites none: tests reject that).
std::string dropout_text(const ModelConfig& c) {
    if (!c.has_dropout()) return "none: no dropout masks stored";
    return "attention " + format_number(c.attention_dropout) + ", residual " + format_number(c.residual_dropout) +
           ", embedding " + format_number(c.embedding_dropout) + ": 1-byte masks stored";
}

std::string attention_kind_text(const ModelConfig& c) {
    if (c.is_mla())
        return "MLA (" + std::to_string(c.num_heads) + " heads rebuilt from a " + std::to_string(c.kv_lora_rank) +
               "-wide latent plus a " + std::to_string(c.qk_rope_head_dim) +
               "-wide RoPE key, the only K/V values cached per layer)";
    const std::string heads =
        std::to_string(c.num_kv_heads) + " K/V heads for " + std::to_string(c.num_heads) + " query heads";
    if (c.num_kv_heads == c.num_heads) return "MHA (" + heads + ")";
    if (c.num_kv_heads == 1) return "MQA (" + heads + ")";
    return "GQA (" + heads + ")";
}

std::string attention_text(const ModelConfig& c) {
    std::string text = attention_kind_text(c);
    if (c.sliding_window > 0)
        text += "; sliding window of " + std::to_string(c.sliding_window) + " tokens on " +
                std::to_string(c.num_sliding_layers) + " of " + std::to_string(c.num_layers) + " layers";
    if (c.has_indexer())
        text += "; DeepSeek Sparse Attention: a lightning indexer of " + std::to_string(c.index_n_heads) +
                " heads of " + std::to_string(c.index_head_dim) + " picks the " + std::to_string(c.index_topk) +
                " keys each query attends to, and caches its own FP8 key per layer";
    if (c.attention_sinks) text += "; a learned sink logit per head";
    if (c.qk_norm) text += "; RMSNorm on Q and K heads";
    // A hybrid's recurrent layers: what they hold instead of a KV cache (kvcache.h's state formulas).
    const std::string of = " of " + std::to_string(c.num_layers) + " layers";
    if (c.num_mamba_layers > 0 && c.is_mamba1())
        text += "; " + std::to_string(c.num_mamba_layers) + of + " are Mamba-1 mixers (d_inner " +
                std::to_string(c.mamba_d_inner()) + ", Δ of rank " + std::to_string(c.mamba_dt_rank) + ", state " +
                std::to_string(c.mamba_d_state) + " per channel" + (c.mamba_dt_norms ? ", Jamba's Δ/B/C norms" : "") +
                "): no KV cache, a fixed state of " + std::to_string(mamba_state_values(c)) +
                " values per sequence (conv window and SSM state) in the weights' dtype";
    else if (c.num_mamba_layers > 0 && !c.parallel_hybrid)
        text += "; " + std::to_string(c.num_mamba_layers) + of + " are Mamba-2 mixers: no KV cache, a fixed state of " +
                std::to_string(mamba_state_values(c)) + " values per sequence in the weights' dtype";
    if (c.num_linear_layers > 0)
        text += "; " + std::to_string(c.num_linear_layers) + of + " are " +
                (c.linear_kind == LinearKind::Kda ? "Kimi Delta Attention" : "gated DeltaNet") + " (" +
                std::to_string(c.linear_value_heads) + " heads, a " + std::to_string(c.linear_key_head_dim) + " x " +
                std::to_string(c.linear_value_head_dim) + " state each): no KV cache, a fixed state of " +
                std::to_string(linear_state_values(c)) + " values per sequence in the weights' dtype";
    return text;
}

std::string bytes_text(u64 bytes) {
    char text[96];
    std::snprintf(text, sizeof text, "%llu bytes (%.3f GB, %.2f MiB)", static_cast<unsigned long long>(bytes),
                  static_cast<double>(bytes) / 1e9, static_cast<double>(bytes) / (1 << 20));
    return text;
}

json assumptions(const json&) {
    auto row = [](const char* id, const char* name, const json& value, const std::string& source) {
        return json{{"id", id}, {"name", name}, {"value", value}, {"source", source}};
    };
    auto cited = [](const json& preset, const char* key) {
        const auto sources = preset.find("assumption_sources");
        if (sources == preset.end() || !sources->is_object()) return std::string();
        return sources->value(key, std::string());
    };
    json models = json::array();
    for (const auto& m : presets_json().at("models")) {
        const ModelConfig c = model_from_json(m.at("config"));
        const ParamCount p = count_params(c);
        const std::string count_source =
            "counted by the engine from the preset's config (" + m.value("source", "") + ")";
        json rows = json::array();
        rows.push_back(row("dropout", "dropout", dropout_text(c), cited(m, "dropout")));
        rows.push_back(row("tied_embeddings", "tied embeddings",
                           c.tied_embeddings ? "tied: the LM head is the embedding matrix" : "untied: separate LM head",
                           cited(m, "tied_embeddings")));
        rows.push_back(row("attention", "attention type", attention_text(c), cited(m, "attention")));
        rows.push_back(row("activation_dtype", "activation dtype", "2 bytes per stored value (bf16/fp16)",
                           cited(m, "activation_dtype")));
        rows.push_back(row("params_compute", "parameters for compute (6ND, days)",
                           std::to_string(p.active) +
                               (c.is_moe() ? " active of " + std::to_string(p.total) +
                                                 " (MoE: "
                                                 "each token visits " +
                                                 std::to_string(c.experts_per_token) +
                                                 (c.num_shared_experts > 0
                                                      ? " routed + " + std::to_string(c.num_shared_experts) + " shared"
                                                      : std::string()) +
                                                 " experts)"
                                           : " (dense: all parameters)"),
                           count_source));
        rows.push_back(row("params_memory", "parameters for memory",
                           std::to_string(p.total) + (c.is_moe() ? " (every expert is stored)" : " (all parameters)"),
                           count_source));
        if (c.mtp_modules > 0)
            rows.push_back(row("mtp", "multi-token prediction modules",
                               std::to_string(c.mtp_modules) + " module(s), " + std::to_string(p.mtp) +
                                   " parameters of their own, counted apart: not in the total, the active count "
                                   "or the FLOPs per token",
                               cited(m, "mtp")));
        models.push_back({{"id", m.at("id")}, {"name", m.value("name", "")}, {"assumptions", rows}});
    }
    const std::string allowance_source =
        "tally default allowance (engine/include/tally/hardware/hardware.h): " +
        std::to_string(kDefaultCudaContextBytes >> 20) + " MiB CUDA context (order of PyTorch issue #34323) + " +
        format_number(kDefaultFragmentationFraction * 100) +
        " % fragmentation (a stated assumption; ZeRO, Rajbhandari et al. 2020 sec. 3.2); both are arguments";
    json hardware = json::array();
    for (const auto& h : presets_json().at("hardware")) {
        const Hardware hw = hardware_from_json(h);
        const UsableCapacity u = preset_usable_capacity(hw);
        json rows = json::array();
        rows.push_back(row("capacity_marketing", "capacity on the datasheet", bytes_text(hw.memory_bytes), hw.source));
        rows.push_back(row("capacity_reported",
                           hw.memory_reported_by == "device" ? "capacity the device reports"
                                                             : "capacity (no device report found: datasheet)",
                           bytes_text(hw.memory_reported_bytes), hw.memory_reported_source));
        rows.push_back(row("usable_capacity", "usable capacity (reported − allowance)", bytes_text(u.usable_bytes),
                           allowance_source));
        // bf16 on every preset; fp8 and fp4 where the chip has them (dense: sparse headlines are halved).
        struct Peak {
            const char *id, *name;
            double value;
        };
        for (const Peak& p : {Peak{"dense_peak_bf16", "dense bf16 peak", hw.peak_bf16},
                              Peak{"dense_peak_fp8", "dense fp8 peak", hw.peak_fp8},
                              Peak{"dense_peak_fp4", "dense fp4 peak (NVFP4, MXFP4)", hw.peak_fp4}}) {
            if (p.value <= 0 && std::string(p.id) != "dense_peak_bf16") continue;
            char peak[48];
            std::snprintf(peak, sizeof peak, "%.6g TFLOP/s", p.value / 1e12);
            rows.push_back(row(p.id, p.name, peak, p.value > 0 ? hw.source : std::string()));
        }
        if (hw.interconnect.present) {
            char link[96];
            std::snprintf(link, sizeof link, "%lld GPUs, %.6g GB/s each way inside, %.6g GB/s each way out",
                          static_cast<long long>(hw.interconnect.gpus_per_node),
                          hw.interconnect.intra_node_bytes_per_s / 1e9, hw.interconnect.network_bytes_per_s / 1e9);
            rows.push_back(
                row("interconnect", "GPUs per NVLink/fabric domain, bandwidth per GPU", link, hw.interconnect.source));
        }
        rows.push_back(row("memory_bandwidth", "memory bandwidth",
                           format_number(hw.memory_bandwidth_bytes_per_s / 1e12) + " TB/s", hw.source));
        hardware.push_back({{"id", h.at("id")}, {"name", hw.name}, {"assumptions", rows}});
    }
    return json{{"models", models}, {"hardware", hardware}};
}

constexpr std::array kAssumptionsResult = std::to_array<Field>({
    {"models", "", "per model preset: {id, name, assumptions: [{id, name, value, source}]}"},
    {"hardware", "", "per hardware preset: {id, name, assumptions: [{id, name, value, source}]}"},
});
constexpr std::array kPresetsResult = std::to_array<Field>({
    {"models", "", "model presets: {id, name, source, assumption_sources, config, params_total, params_active}"},
    {"hardware", "", "hardware presets with peaks, capacity, bandwidth and interconnect"},
    {"recipes", "", "training recipes with bytes per parameter"},
    {"optimizers", "", "{id, states, description}"},
    {"dtypes", "", "{id, name, bits, bytes, roles, note, block?, scale_bits?}"},
});
constexpr std::array kModelResult = std::to_array<Field>({
    {"model", "", "the resolved tally config"},
    {"params_total", "parameters", "every parameter"},
    {"params_active", "parameters", "parameters a token visits (MoE: the routed share)"},
});

constexpr Method kMethods[] = {
    {"assumptions",
     assumptions,
     "every assumption behind each preset's budget and FLOP count, with its source",
     {},
     kAssumptionsResult,
     true},
    {"presets", presets, "model and hardware presets, recipes, optimizers and dtypes", {}, kPresetsResult, true},
    {"model", model_method, "resolve a preset id, config object or HF config.json into a tally config", arg::kModelArgs,
     kModelResult, true},
};

}  // namespace

std::span<const Method> presets_methods() { return kMethods; }

}  // namespace tally::api
