// JSON API of the accounting engine: models, parameters, FLOPs, training time and cost, the
// training memory budget, solvers and the KV cache. Shapes are documented in docs/API.md
// ("Accounting").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/error.h"
#include "tally/fit.h"
#include "tally/flops.h"
#include "tally/hardware.h"
#include "tally/input.h"
#include "tally/kvcache.h"
#include "tally/memory.h"
#include "tally/moe.h"
#include "tally/model.h"
#include "tally/params.h"
#include "tally/presets.h"
#include "tally/tensor.h"
#include "tally/training.h"

namespace tally::api {

namespace {

using u64 = std::uint64_t;

// ---------------------------------------------------------------- argument helpers
std::int64_t int_or(const json& args, const char* field, std::int64_t fallback, std::int64_t low, std::int64_t high) {
    return optional_integer_arg(args, field, low, high).value_or(fallback);
}

std::string string_or(const json& args, const char* field, const char* fallback) {
    return optional_string_arg(args, field).value_or(fallback);
}

Precision precision_from_args(const json& args, json* recipe_out) {
    const Recipe& recipe = find_recipe(string_or(args, "recipe", kDefaultRecipe));
    Precision p = recipe.precision;
    bool overridden = false;
    if (auto v = optional_string_arg(args, "weights")) { p.weights = dtype_from_string(*v, "weights"); overridden = true; }
    if (auto v = optional_string_arg(args, "gradients")) { p.gradients = dtype_from_string(*v, "gradients"); overridden = true; }
    if (auto v = optional_string_arg(args, "master_weights")) {
        p.master_weights = dtype_from_string(*v, "master_weights");
        overridden = true;
    }
    if (auto v = optional_string_arg(args, "optimizer")) { p.optimizer = optimizer_from_string(*v); overridden = true; }
    if (auto v = optional_string_arg(args, "optimizer_state")) {
        p.optimizer_state = dtype_from_string(*v, "optimizer_state");
        overridden = true;
    }
    if (auto v = optional_string_arg(args, "grad_accum")) {
        p.grad_accum = dtype_from_string(*v, "grad_accum");
        overridden = overridden || p.grad_accum != DType::None;
    }
    if (p.optimizer == Optimizer::AdamW8bit) p.optimizer_state = DType::INT8;
    if (p.optimizer == Optimizer::Sgd) p.optimizer_state = DType::None;
    validate(p);
    if (recipe_out != nullptr) {
        *recipe_out = json{{"id", overridden ? std::string("custom") : std::string(recipe.id)},
                           {"base", recipe.id},
                           {"name", overridden ? std::string("custom (from ") + recipe.name + ")" : std::string(recipe.name)},
                           {"description", overridden ? std::string("per-class settings below") : std::string(recipe.description)},
                           {"weights", to_string(p.weights)},
                           {"gradients", to_string(p.gradients)},
                           {"master_weights", to_string(p.master_weights)},
                           {"optimizer", to_string(p.optimizer)},
                           {"optimizer_state", to_string(p.optimizer_state)}};
        if (p.grad_accum != DType::None) (*recipe_out)["grad_accum"] = to_string(p.grad_accum);
    }
    return p;
}

}  // namespace

// Shared with api_step.cpp through api_args.h.
TrainingSetup setup_from_args(const json& args, json* recipe_out) {
    TrainingSetup st;
    st.seq = int_or(args, "seq", 2048, 1, std::int64_t{1} << 30);
    st.micro_batch = int_or(args, "micro_batch", 1, 1, 1'000'000'000);
    st.global_batch = int_or(args, "global_batch", 0, 0, std::int64_t{1} << 50);
    st.gpus = int_or(args, "gpus", 1, 1, 100'000'000);
    st.zero = static_cast<int>(int_or(args, "zero", 0, 0, 3));
    st.tp = int_or(args, "tp", 1, 1, 1'000'000);
    st.pp = int_or(args, "pp", 1, 1, 1'000'000);
    st.sequence_parallel = bool_arg(args, "sequence_parallel", false);
    st.recompute = recompute_from_string(string_or(args, "recompute", "none"));
    st.recompute_ops = recompute_ops_from_string(string_or(args, "recompute_ops", ""));
    st.recompute_layers = int_or(args, "recompute_layers", 0, 0, kMaxLayers);
    st.flash_attention = bool_arg(args, "flash_attention", false);
    // Absent (or null): the model's own dropouts decide which masks are stored.
    if (args.contains("dropout") && !args["dropout"].is_null()) st.dropout = bool_arg(args, "dropout", false);
    st.activation_bytes = int_or(args, "activation_bytes", 2, 1, 4);
    const std::string gather = string_or(args, "zero3_gather", "none");
    if (gather == "module") st.zero3_gather = TrainingSetup::Zero3Gather::Module;
    else if (gather == "layer") st.zero3_gather = TrainingSetup::Zero3Gather::Layer;
    else if (gather != "none")
        throw InputError("zero3_gather", "zero3_gather must be none, module or layer, got \"" + gather + "\"");
    st.zero3_prefetch = int_or(args, "zero3_prefetch", 0, 0, 1'000'000);
    st.virtual_stages = int_or(args, "virtual_stages", 1, 1, kMaxLayers);
    st.keep_stage_outputs = bool_arg(args, "keep_stage_outputs", false);
    st.precision = precision_from_args(args, recipe_out);
    st.ep = int_or(args, "ep", 1, 1, kMaxExperts);
    st.capacity_factor = optional_number_arg(args, "capacity_factor").value_or(0);
    return st;
}

namespace {

// Capacity from capacity_bytes (taken as given: no allowance unless one is asked for, so a stated figure
// such as "80 GB" stays reproducible) or a hardware preset (the capacity the device reports, less the
// default allowance for the CUDA context and fragmentation); nullopt when neither is given.
std::optional<UsableCapacity> capacity_from_args(const json& args, json* hardware_out) {
    u64 capacity = 0;
    u64 context = 0;
    double fraction = 0;
    if (auto v = optional_number_arg(args, "capacity_bytes")) {
        capacity = static_cast<u64>(require_integer("capacity_bytes", *v, 1, std::int64_t{1} << 62));
    } else if (auto id = optional_string_arg(args, "hardware")) {
        const Hardware hw = find_hardware(*id);
        if (hardware_out != nullptr) *hardware_out = hardware_to_json(hw);
        capacity = hw.memory_reported_bytes;
        context = kDefaultCudaContextBytes;
        fraction = kDefaultFragmentationFraction;
    } else {
        return std::nullopt;
    }
    if (auto v = optional_number_arg(args, "cuda_context_bytes"))
        context = static_cast<u64>(require_integer("cuda_context_bytes", *v, 0, std::int64_t{1} << 62));
    if (auto v = optional_number_arg(args, "fragmentation_fraction")) fraction = *v;
    return usable_capacity(capacity, context, fraction);
}

// The capacity fields every method with a capacity reports.
void add_capacity(json& out, const UsableCapacity& u, const json& hardware) {
    out["capacity_bytes"] = u.capacity;
    out["cuda_context_bytes"] = u.context_bytes;
    out["fragmentation_fraction"] = u.fragmentation_fraction;
    out["fragmentation_bytes"] = u.fragmentation_bytes;
    out["allowance_bytes"] = u.allowance_bytes;
    out["usable_bytes"] = u.usable_bytes;
    if (!hardware.is_null()) out["hardware"] = hardware;
}

// ---------------------------------------------------------------- presets
json recipes_json() {
    json out = json::array();
    for (const Recipe& r : recipes()) {
        const BytesPerParam256 b = bytes_per_param_256(r.precision);
        out.push_back({{"id", r.id},
                       {"name", r.name},
                       {"description", r.description},
                       {"weights", to_string(r.precision.weights)},
                       {"gradients", to_string(r.precision.gradients)},
                       {"master_weights", to_string(r.precision.master_weights)},
                       {"optimizer", to_string(r.precision.optimizer)},
                       {"optimizer_state", to_string(r.precision.optimizer_state)},
                       {"bytes_per_param", static_cast<double>(b.total()) / 256}});
    }
    return out;
}

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
        optimizers.push_back({{"id", to_string(o)}, {"states", optimizer_states(o)}, {"description", optimizer_description(o)}});
    json dtypes = json::array();
    for (DType t : {DType::FP32, DType::BF16, DType::FP16, DType::FP8, DType::INT8, DType::None})
        dtypes.push_back({{"id", to_string(t)}, {"bytes", dtype_bytes(t)}});
    return json{{"models", models}, {"hardware", hardware}, {"recipes", recipes_json()}, {"optimizers", optimizers},
                {"dtypes", dtypes}};
}

json recipes_method(const json&) { return json{{"recipes", recipes_json()}}; }

// ---------------------------------------------------------------- params
const char* component_formula(Component c, const ModelConfig& m) {
    switch (c) {
        case Component::Embedding: return "V·h";
        case Component::PositionEmbedding: return "max_positions·h";
        case Component::Attention:
            return m.qkv_bias || m.attn_out_bias ? "L·(h·(a+2n_kv)·d + a·d·h + biases)" : "L·(h·(a+2n_kv)·d + a·d·h)";
        case Component::Mlp:
            if (m.is_moe()) return m.mlp == MlpKind::Gelu ? "L·(E·2·h·f + E·h)" : "L·(E·3·h·f + E·h)";
            return m.mlp == MlpKind::Gelu ? (m.mlp_bias ? "L·(2·h·f + f + h)" : "L·2·h·f")
                                          : (m.mlp_bias ? "L·(3·h·f + 2f + h)" : "L·3·h·f");
        case Component::Norms: return m.norm == NormKind::LayerNorm ? "L·2·2h (weight + bias)" : "L·2·h";
        case Component::FinalNorm: return m.norm == NormKind::LayerNorm ? "2h" : "h";
        case Component::LmHead: return m.tied_embeddings ? "0 (tied to the embedding)" : "V·h";
        case Component::EmbeddingExtras: return "type_vocab·h + embedding norm + stacks·buckets·a";
        case Component::CrossAttention: return "L_dec·(h·(a+2n_kv)·d + a·d·h + norm)";
        case Component::Pooler: return "h·h + h";
    }
    return "";
}

json params_result(const ModelConfig& c) {
    const ParamCount p = count_params(c);
    json components = json::array();
    const std::pair<Component, u64> parts[] = {{Component::Embedding, p.embedding},
                                               {Component::PositionEmbedding, p.position_embedding},
                                               {Component::Attention, p.attention},
                                               {Component::Mlp, p.mlp},
                                               {Component::Norms, p.norms},
                                               {Component::FinalNorm, p.final_norm},
                                               {Component::LmHead, p.lm_head},
                                               {Component::EmbeddingExtras, p.embedding_extras},
                                               {Component::CrossAttention, p.cross_attention},
                                               {Component::Pooler, p.pooler}};
    for (const auto& [component, count] : parts)
        // Encoder and encoder-decoder parts are listed only when the model has them.
        if (count > 0 || static_cast<int>(component) <= static_cast<int>(Component::LmHead))
        components.push_back({{"id", component_id(component)},
                              {"name", component_name(component)},
                              {"count", count},
                              {"formula", component_formula(component, c)}});
    json tensors = json::array();
    for (const Tensor& t : model_tensors(c)) {
        tensors.push_back({{"name", t.name},
                           {"rows", t.rows},
                           {"cols", t.cols},
                           {"count", t.count()},
                           {"per_layer", t.per_layer},
                           {"instances_per_layer", t.expert ? c.num_experts : (t.per_layer ? 1 : 0)}});
        if (t.cross) tensors.back()["layers"] = c.num_decoder_layers;  // decoder layers only
    }
    return json{{"model", model_to_json(c)},
                {"total", p.total},
                {"active", p.active},
                {"components", components},
                {"per_layer",
                 {{"attention", p.per_layer_attention},
                  {"mlp", p.per_layer_mlp},
                  {"mlp_active", p.per_layer_mlp_active},
                  {"norms", p.per_layer_norms},
                  {"total", p.per_layer}}},
                {"tensors", tensors}};
}

json params(const json& args) { return params_result(resolve_model(args)); }

// ---------------------------------------------------------------- Chinchilla reference
// Compute-optimal training tokens: about 20 tokens per parameter (Hoffmann et al. 2022, "Training
// Compute-Optimal Large Language Models": Chinchilla, 70B parameters on 1.4T tokens, Table 3 gives ~20
// tokens per parameter across compute budgets). Hoffmann et al. count all parameters, embeddings included,
// so dense models use params_total. The rule was fitted on dense models only; for a mixture of experts we
// use the ACTIVE parameters (the ones whose FLOPs each token pays, the N of the six_nd the cost uses), and
// say so in `chinchilla_params`. 20 · N is exact in a double for any N below 4.5e14.
constexpr double kChinchillaTokensPerParam = 20;

void add_chinchilla(json& out, double params, double tokens, const char* basis) {
    out["chinchilla_tokens_per_param"] = kChinchillaTokensPerParam;
    out["chinchilla_params"] = basis;
    out["chinchilla_tokens"] = kChinchillaTokensPerParam * params;
    out["tokens_per_param"] = tokens / params;
}

// ---------------------------------------------------------------- flops
// A percentage with one decimal for prose ("14.0").
std::string percent(double fraction) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", fraction * 100);
    return buffer;
}

FlopsInput flops_input(const json& args, const ModelConfig& c) {
    FlopsInput in;
    in.seq = int_or(args, "seq", std::min<std::int64_t>(c.max_positions > 0 ? c.max_positions : 2048, 2048), 1,
                    std::int64_t{1} << 30);
    in.attention = attention_flops_from_string(string_or(args, "attention_flops", "full"));
    in.recompute = recompute_from_string(string_or(args, "recompute", "none"));
    in.flash_attention = bool_arg(args, "flash_attention", false);
    in.recompute_ops = recompute_ops_from_string(string_or(args, "recompute_ops", ""));
    in.recompute_layers = int_or(args, "recompute_layers", 0, 0, kMaxLayers);
    if (in.recompute_layers > 0) {
        // recompute_layers counts layers per pipeline stage (ceil(L/pp) of them).
        const std::int64_t pp = int_or(args, "pp", 1, 1, c.num_layers);
        in.layers_per_stage = (c.num_layers + pp - 1) / pp;
    }
    in.capacity_factor = optional_number_arg(args, "capacity_factor").value_or(0);
    return in;
}

json flops(const json& args) {
    const ModelConfig c = resolve_model(args);
    const FlopsInput in = flops_input(args, c);
    const FlopsResult r = count_flops(c, in);
    const auto tokens_arg = optional_number_arg(args, "tokens");
    const double tokens = tokens_arg ? require_positive("tokens", *tokens_arg) : 1.0;
    const double s = static_cast<double>(in.seq);
    json terms = json::array();
    double attention = 0, lm_head = 0;
    for (const FlopsTerm& t : r.terms) {
        terms.push_back({{"id", t.id},
                         {"name", t.name},
                         {"formula", t.formula},
                         {"formula_per_token", t.formula_per_token},
                         {"forward_per_sequence", t.forward_per_sequence},
                         {"forward_per_token", t.forward_per_sequence / s},
                         {"share", t.forward_per_sequence / r.forward_per_sequence}});
        const std::string_view id = t.id;
        if (id == "attn_scores" || id == "attn_values") attention += t.forward_per_sequence;
        if (id == "lm_head") lm_head = t.forward_per_sequence;
    }
    const ParamCount p = count_params(c);
    const double embedding_share = static_cast<double>(c.tied_embeddings ? 0 : p.embedding + p.position_embedding) /
                                   static_cast<double>(p.total);
    json notes = json::array();
    notes.push_back("attention scores and attention·V are " + percent(attention / r.forward_per_sequence) +
                    "% of the forward FLOPs at seq " + std::to_string(in.seq) +
                    " (6ND ignores them; they grow with seq)");
    notes.push_back("the LM head is " + percent(lm_head / r.forward_per_sequence) +
                    "% of the forward FLOPs (6ND counts it through N)");
    if (embedding_share > 0)
        notes.push_back("embedding tables are " + percent(embedding_share) +
                        "% of N but do no matmul FLOPs (a lookup), so 6ND overcounts them");
    const double six_nd = r.six_n * tokens;
    const double model = r.model_per_token * tokens;
    const double recompute = r.recompute_per_token * tokens;
    json out{{"model", model_to_json(c)},
             {"seq", in.seq},
             {"attention_flops", to_string(in.attention)},
             {"recompute", to_string(in.recompute)},
             {"recompute_ops", recompute_ops_to_string(in.recompute_ops)},
             {"recompute_layers", in.recompute_layers},
             {"flash_attention", in.flash_attention},
             {"params_total", p.total},
             {"params_active", p.active},
             {"components", terms},
             {"forward_per_sequence", r.forward_per_sequence},
             {"forward_per_token", r.forward_per_token},
             {"per_token",
              {{"forward", r.forward_per_token},
               {"model", r.model_per_token},
               {"recompute", r.recompute_per_token},
               {"capacity", r.capacity_per_token},
               {"training", r.training_per_token},
               {"six_n", r.six_n},
               {"six_n_active", r.six_n_active}}},
             {"tokens", tokens},
             {"six_nd", six_nd},
             {"six_nd_active", r.six_n_active * tokens},
             {"model_flops", model},
             {"recompute_flops", recompute},
             {"exact", model + recompute},
             {"ratio_exact_to_six_nd", model / six_nd},
             {"notes", notes}};
    if (c.is_moe()) out["ratio_exact_to_six_nd_active"] = model / (r.six_n_active * tokens);
    if (tokens_arg)
        add_chinchilla(out, static_cast<double>(c.is_moe() ? p.active : p.total), tokens, c.is_moe() ? "active" : "total");
    return out;
}

// ---------------------------------------------------------------- training time, cost, MFU
// Above these an input is legal but likely a mistake: the result carries a warning.
// The best published large-scale MFU is PaLM 540B's 46.2 % (Chowdhery et al. 2022, Table 3);
// 75 % leaves room for smaller, well-tuned runs.
constexpr double kImplausibleMfu = 0.75;
// AWS p5.48xlarge (8x H100) lists at $98.32 per hour on demand (2023): $12.29 per GPU-hour; 100 is 8x that.
constexpr double kImplausibleDollarsPerGpuHour = 100;

struct Peak {
    double flops_per_s = 0;
    std::string dtype;
    json hardware;
};

Peak peak_from_args(const json& args) {
    Peak p;
    p.dtype = string_or(args, "dtype", "bf16");
    // Checked even when a peak is given, so a result never echoes an unknown dtype.
    if (p.dtype != "fp32" && p.dtype != "tf32" && p.dtype != "bf16" && p.dtype != "fp16" && p.dtype != "fp8")
        throw InputError("dtype", "dtype must be one of fp32, tf32, bf16, fp16, fp8, got \"" + printable(p.dtype, 40) + "\"");
    if (auto v = optional_number_arg(args, "peak_flops_per_s")) {
        p.flops_per_s = require_positive("peak_flops_per_s", *v);
    } else if (auto t = optional_number_arg(args, "peak_tflops")) {
        p.flops_per_s = require_positive("peak_tflops", *t) * 1e12;
    } else if (auto id = optional_string_arg(args, "hardware")) {
        const Hardware hw = find_hardware(*id);
        p.flops_per_s = hw.peak(p.dtype);
        p.hardware = hardware_to_json(hw);
    } else {
        throw InputError("hardware", "give hardware (a preset id) or peak_flops_per_s");
    }
    return p;
}

// Training FLOPs per token and the basis used, from a model (exact by default) or params (6ND).
struct PerToken {
    double training = 0;  // FLOPs the hardware executes per token
    double model = 0;     // MFU numerator per token (no recomputation)
    double six_n = 0;
    double params = 0;             // N of the Chinchilla reference (active for MoE, else total)
    const char* params_kind = "total";
    std::string basis;
    json model_json;
};

PerToken per_token_from_args(const json& args) {
    PerToken t;
    const bool has_model = (args.contains("model") && !args["model"].is_null()) ||
                           (args.contains("hf_config") && !args["hf_config"].is_null());
    if (has_model) {
        const ModelConfig c = resolve_model(args);
        const FlopsResult r = count_flops(c, flops_input(args, c));
        t.basis = string_or(args, "flops_basis", "exact");
        t.six_n = c.is_moe() ? r.six_n_active : r.six_n;
        t.model_json = model_to_json(c);
        const ParamCount p = count_params(c);
        t.params = static_cast<double>(c.is_moe() ? p.active : p.total);
        t.params_kind = c.is_moe() ? "active" : "total";
        if (t.basis == "exact") {
            t.training = r.training_per_token;
            t.model = r.model_per_token;
        } else if (t.basis == "six_nd") {
            t.training = t.model = t.six_n;
        } else {
            throw InputError("flops_basis", "flops_basis must be exact or six_nd, got \"" + t.basis + "\"");
        }
        return t;
    }
    const double params = number_arg(args, "params");
    require_positive("params", params);
    t.basis = string_or(args, "flops_basis", "six_nd");
    if (t.basis != "six_nd")
        throw InputError("flops_basis", "flops_basis exact needs a model (preset or config), not just params");
    t.training = t.model = t.six_n = 6 * params;
    // Without a model only full recomputation has a size: one more forward pass, 2N per token
    // (Korthikanti et al. 2022, sec. 5: hardware FLOPs 8N against model FLOPs 6N).
    const Recompute recompute = recompute_from_string(string_or(args, "recompute", "none"));
    if (recompute == Recompute::Full) t.training = 8 * params;
    if (recompute == Recompute::Selective)
        throw InputError("recompute", "recompute selective needs a model (its attention shape), not just params");
    if (!string_or(args, "recompute_ops", "").empty() || int_or(args, "recompute_layers", 0, 0, kMaxLayers) != 0)
        throw InputError("recompute_ops", "recompute_ops and recompute_layers need a model, not just params");
    if (bool_arg(args, "flash_attention", false))
        throw InputError("flash_attention", "flash_attention's recomputed Q·Kᵀ needs a model, not just params");
    if (optional_string_arg(args, "attention_flops"))
        throw InputError("attention_flops", "attention_flops needs a model: 6ND counts no attention scores");
    t.params = params;
    t.params_kind = "given";
    return t;
}

json training_cost(const json& args) {
    const PerToken per = per_token_from_args(args);
    const double tokens = require_positive("tokens", number_arg(args, "tokens"));
    const Peak peak = peak_from_args(args);
    TrainingTimeInput in;
    in.total_flops = per.training * tokens;
    if (!std::isfinite(in.total_flops))
        throw InputError("tokens", "tokens must be below " + format_number(std::numeric_limits<double>::max() / per.training) +
                                       " (the training FLOPs, " + format_number(per.training) +
                                       " per token, overflow a double), got " + format_number(tokens));
    in.gpus = integer_arg(args, "gpus", 1, 100'000'000);
    in.peak_flops_per_s = peak.flops_per_s;
    // mfu "predicted": the step-time model's MFU for the layout in the same arguments (tp, pp, ...),
    // scaled to the FLOPs basis in use so that the time equals tokens / predicted tokens per second.
    const auto mfu_text = args.contains("mfu") && args["mfu"].is_string() ? args["mfu"].get<std::string>() : std::string();
    json predicted;
    if (mfu_text == "predicted") {
        predicted = invoke("step_time", args);
        in.mfu = std::min(1.0, predicted["mfu"].get<double>() * per.training / per.model);
    } else {
        in.mfu = number_arg(args, "mfu");
    }
    const TrainingTime t = estimate_training_time(in);
    json out{{"flops_basis", per.basis},
             {"tokens", tokens},
             {"total_flops", t.total_flops},
             {"six_nd", per.six_n * tokens},
             {"dtype", peak.dtype},
             {"peak_flops_per_s", peak.flops_per_s},
             {"gpus", in.gpus},
             {"mfu", in.mfu},
             {"cluster_flops_per_s", t.cluster_flops_per_s},
             {"seconds", t.seconds},
             {"days", t.days},
             {"gpu_hours", t.gpu_hours}};
    add_chinchilla(out, per.params, tokens, per.params_kind);
    if (!per.model_json.is_null()) out["model"] = per.model_json;
    if (!peak.hardware.is_null()) out["hardware"] = peak.hardware;
    if (!predicted.is_null()) {
        out["mfu_source"] = "predicted";
        out["predicted_mfu"] = predicted["mfu"];
        out["step_seconds"] = predicted["step_seconds"];
    }
    if (auto price = optional_number_arg(args, "dollars_per_gpu_hour")) {
        require_positive("dollars_per_gpu_hour", *price);
        out["dollars_per_gpu_hour"] = *price;
        out["cost_dollars"] = t.gpu_hours * *price;
        if (!std::isfinite(t.gpu_hours * *price))
            throw InputError("dollars_per_gpu_hour", "dollars_per_gpu_hour = " + format_number(*price) + " times " +
                                                         format_number(t.gpu_hours) + " GPU-hours overflows a double");
        if (*price > kImplausibleDollarsPerGpuHour)
            add_warning(out, "dollars_per_gpu_hour",
                        "dollars_per_gpu_hour is " + format_number(*price) +
                            ": far above cloud prices (an on-demand H100 is about $12 per GPU-hour); is it the price of "
                            "a whole node, or per GPU-day?");
    }
    if (in.mfu > kImplausibleMfu)
        add_warning(out, "mfu", "mfu " + percent(in.mfu) + " % is above any published large-scale training run "
                                "(PaLM 540B: 46.2 %); the time is likely optimistic");
    return out;
}

json mfu(const json& args) {
    const PerToken per = per_token_from_args(args);
    const double tokens_per_s = require_positive("tokens_per_second", number_arg(args, "tokens_per_second"));
    const Peak peak = peak_from_args(args);
    const std::int64_t gpus = integer_arg(args, "gpus", 1, 100'000'000);
    const double cluster_peak = static_cast<double>(gpus) * peak.flops_per_s;
    // MFU (Chowdhery et al. 2022, PaLM, App. B): model FLOPs per token (no recomputation) times
    // observed tokens/s over the cluster's peak. HFU counts the recomputed FLOPs too.
    const double achieved = per.model * tokens_per_s;
    json out{{"flops_basis", per.basis},
             {"model_flops_per_token", per.model},
             {"hardware_flops_per_token", per.training},
             {"tokens_per_second", tokens_per_s},
             {"gpus", gpus},
             {"dtype", peak.dtype},
             {"peak_flops_per_s", peak.flops_per_s},
             {"peak_cluster_flops_per_s", cluster_peak},
             {"achieved_flops_per_s", achieved},
             {"mfu", achieved / cluster_peak},
             {"hfu", per.training * tokens_per_s / cluster_peak},
             {"six_n_mfu", per.six_n * tokens_per_s / cluster_peak}};
    if (!peak.hardware.is_null()) out["hardware"] = peak.hardware;
    if (achieved / cluster_peak > 1)
        add_warning(out, "tokens_per_second",
                    "mfu is " + percent(achieved / cluster_peak) +
                        " %: the GPUs cannot exceed 100 % of their peak, so tokens_per_second, gpus or the peak is wrong");
    else if (per.training * tokens_per_s / cluster_peak > 1)
        add_warning(out, "tokens_per_second",
                    "hfu is " + percent(per.training * tokens_per_s / cluster_peak) +
                        " % (recomputed FLOPs included): above 100 % of peak, so an input is wrong");
    return out;
}

// ---------------------------------------------------------------- memory budget
std::string bytes_formula(const char* count, u64 bytes256) {
    // bytes per parameter as a short decimal ("2", "4", "2.0039")
    return std::string(count) + " · " + format_number(static_cast<double>(bytes256) / 256) + " B";
}

json budget_json(const ModelConfig& c, const TrainingSetup& st, const MemoryBudget& m, const json& recipe) {
    const BytesPerParam256 bpp = bytes_per_param_256(st.precision);
    json classes = json::array();
    const std::string zero_text = "ZeRO stage " + std::to_string(st.zero);
    classes.push_back({{"id", "weights"},
                       {"name", "working weights"},
                       {"bytes", m.bytes.weights},
                       {"params", m.params_weights},
                       {"bytes_per_param", static_cast<double>(bpp.weights) / 256},
                       {"description", std::string("The ") + to_string(st.precision.weights) +
                                           " weights the forward and backward passes read; split by TP and PP, and "
                                           "by data parallelism only at ZeRO stage 3 (" + zero_text + ")."},
                       {"formula", bytes_formula("N_w", bpp.weights)},
                       {"sharded_by", "tp, pp, zero 3"}});
    classes.push_back({{"id", "gradients"},
                       {"name", "gradients"},
                       {"bytes", m.bytes.gradients},
                       {"params", m.params_gradients},
                       {"bytes_per_param", static_cast<double>(bpp.gradients) / 256},
                       {"description", std::string("One ") + to_string(st.precision.gradients) +
                                           " gradient per parameter; sharded across data-parallel ranks from ZeRO stage 2."},
                       {"formula", bytes_formula("N_g", bpp.gradients)},
                       {"sharded_by", "tp, pp, zero >= 2"}});
    classes.push_back({{"id", "master_weights"},
                       {"name", "master weights"},
                       {"bytes", m.bytes.master_weights},
                       {"params", m.params_optimizer},
                       {"bytes_per_param", static_cast<double>(bpp.master_weights) / 256},
                       {"description", st.precision.master_weights == DType::None
                                           ? std::string("None: the optimizer updates the working weights directly.")
                                           : std::string("A ") + to_string(st.precision.master_weights) +
                                                 " copy the optimizer updates, so small updates are not lost to "
                                                 "rounding in the narrower weights; part of the optimizer state ZeRO "
                                                 "stage 1 shards."},
                       {"formula", bytes_formula("N_o", bpp.master_weights)},
                       {"sharded_by", "tp, pp, zero >= 1"}});
    std::string opt_formula;
    switch (st.precision.optimizer) {
        case Optimizer::AdamW: opt_formula = bytes_formula("2 · N_o", bpp.optimizer_states / 2); break;
        case Optimizer::AdamW8bit: opt_formula = "2 · N_o · 1 B + 2 · 4 B · ceil(N_o / 2048)"; break;
        case Optimizer::SgdMomentum:
        case Optimizer::Lion: opt_formula = bytes_formula("N_o", bpp.optimizer_states); break;
        case Optimizer::Sgd: opt_formula = "0"; break;
        case Optimizer::Adafactor:
            opt_formula = std::string("Σ_matrices (rows + cols) · ") +
                          format_number(static_cast<double>(dtype_bytes(st.precision.optimizer_state))) + " B";
            break;
    }
    // The optimizer's state tensors one by one (Adam's m and v are the same size).
    json parts = json::array();
    switch (st.precision.optimizer) {
        case Optimizer::AdamW:
        case Optimizer::AdamW8bit:
            parts.push_back({{"id", "m"}, {"name", "first moment m"}, {"bytes", m.bytes.optimizer_states / 2}});
            parts.push_back({{"id", "v"}, {"name", "second moment v"}, {"bytes", m.bytes.optimizer_states / 2}});
            break;
        case Optimizer::SgdMomentum:
        case Optimizer::Lion:
            parts.push_back({{"id", "momentum"}, {"name", "momentum"}, {"bytes", m.bytes.optimizer_states}});
            break;
        case Optimizer::Adafactor:
            parts.push_back({{"id", "v_factored"}, {"name", "factored second moment (row + column statistics)"},
                             {"bytes", m.bytes.optimizer_states}});
            break;
        case Optimizer::Sgd: break;
    }
    classes.push_back({{"id", "optimizer_states"},
                       {"parts", parts},
                       {"name", "optimizer states"},
                       {"bytes", m.bytes.optimizer_states},
                       {"params", m.params_optimizer},
                       {"bytes_per_param",
                        m.params_optimizer == 0 ? 0.0
                                                : static_cast<double>(m.bytes.optimizer_states) /
                                                      static_cast<double>(m.params_optimizer)},
                       {"description", std::string(to_string(st.precision.optimizer)) + ": " +
                                           optimizer_description(st.precision.optimizer) + "."},
                       {"formula", opt_formula},
                       {"sharded_by", "tp, pp, zero >= 1"}});
    classes.push_back({{"id", "activations"},
                       {"name", "activations"},
                       {"bytes", m.bytes.activations},
                       {"description",
                        "Tensors the forward pass keeps for the backward pass (Korthikanti et al. 2022), for " +
                            std::to_string(m.activations.layers) + " layers × " +
                            std::to_string(m.activations.in_flight) + " micro-batch(es) in flight, plus the terms "
                            "outside the layers."},
                       {"formula", "per_layer · layers · in_flight + outside"},
                       {"sharded_by", "tp (and sequence parallel), pp"}});
    if (m.bytes.grad_accum != 0)
        classes.push_back({{"id", "grad_accum"},
                           {"name", "gradient accumulation buffer"},
                           {"bytes", m.bytes.grad_accum},
                           {"params", m.params_optimizer},
                           {"bytes_per_param", static_cast<double>(bpp.grad_accum) / 256},
                           {"description", std::string("A ") + to_string(st.precision.grad_accum) +
                                               " buffer the gradients of each micro-batch are added into, beside the " +
                                               to_string(st.precision.gradients) +
                                               " gradients; sharded like the optimizer states from ZeRO stage 1."},
                           {"formula", bytes_formula("N_o", bpp.grad_accum)},
                           {"sharded_by", "tp, pp, zero >= 1"}});
    if (m.bytes.zero3_buffer != 0) {
        const char* unit = st.zero3_gather == TrainingSetup::Zero3Gather::Module ? "largest module" : "one layer";
        classes.push_back({{"id", "zero3_buffer"},
                           {"name", "ZeRO-3 gathered parameters"},
                           {"bytes", m.bytes.zero3_buffer},
                           {"params", m.zero3_gathered_params},
                           {"description", std::string("ZeRO stage 3 all-gathers the parameters of the ") + unit +
                                               " being computed (and " + std::to_string(st.zero3_prefetch) +
                                               " prefetched ahead) and holds its full gradient until the "
                                               "reduce-scatter."},
                           {"formula", "N_unit · (1 + prefetch + 1) · " +
                                           format_number(static_cast<double>(dtype_bytes(st.precision.weights))) + " B"},
                           {"sharded_by", "tp, pp"}});
    }
    json terms = json::array();
    for (const ActivationTerm& t : m.activations.terms)
        terms.push_back({{"id", t.id},
                         {"name", t.name},
                         {"scope", t.per_layer ? "per_layer" : "outside"},
                         {"bytes", t.bytes},
                         {"description", t.description},
                         {"formula", t.formula}});
    json per_gpu{{"weights", m.bytes.weights},
                 {"gradients", m.bytes.gradients},
                 {"master_weights", m.bytes.master_weights},
                 {"optimizer_states", m.bytes.optimizer_states},
                 {"activations", m.bytes.activations},
                 {"total", m.bytes.total}};
    if (m.bytes.grad_accum != 0) per_gpu["grad_accum"] = m.bytes.grad_accum;
    if (m.bytes.zero3_buffer != 0) per_gpu["zero3_buffer"] = m.bytes.zero3_buffer;
    json setup{{"gpus", st.gpus},
               {"dp", m.dp},
               {"tp", st.tp},
               {"pp", st.pp},
               {"virtual_stages", st.virtual_stages},
               {"keep_stage_outputs", st.keep_stage_outputs},
               {"zero", st.zero},
               {"zero3_gather", st.zero3_gather == TrainingSetup::Zero3Gather::None
                                    ? "none"
                                    : (st.zero3_gather == TrainingSetup::Zero3Gather::Module ? "module" : "layer")},
               {"zero3_prefetch", st.zero3_prefetch},
               {"sequence_parallel", st.sequence_parallel},
               {"recompute", to_string(st.recompute)},
               {"recompute_ops", recompute_ops_to_string(st.recompute_ops)},
               {"recompute_layers", st.recompute_layers},
               {"flash_attention", st.flash_attention},
               {"dropout", m.activations.attention_dropout || m.activations.residual_dropout ||
                               m.activations.embedding_dropout},
               {"dropout_from", st.dropout.has_value() ? "argument" : "model"},
               {"dropout_masks",
                {{"attention", m.activations.attention_dropout},
                 {"residual", m.activations.residual_dropout},
                 {"embedding", m.activations.embedding_dropout}}},
               {"activation_bytes", st.activation_bytes},
               {"seq", st.seq},
               {"micro_batch", st.micro_batch},
               {"global_batch", st.global_batch == 0 ? st.micro_batch * m.dp : st.global_batch},
               {"grad_accum_steps", m.grad_accum_steps},
               {"microbatches_in_flight", m.activations.in_flight},
               {"layers_per_stage", m.layers_per_stage},
               {"stage", m.stage}};
    if (c.is_moe()) {
        // Expert parallelism and capacity (moe.h): what each GPU holds, sees and sends per layer.
        const MoeLayer moe = moe_layer(c, {st.seq, st.micro_batch, st.tp, st.ep, st.capacity_factor, st.activation_bytes});
        setup["ep"] = st.ep;
        setup["expert_dp"] = m.expert_dp;
        setup["capacity_factor"] = st.capacity_factor;
        setup["moe"] = {{"local_experts", moe.local_experts},
                        {"expert_params_on_gpu", m.expert_params_on_gpu},
                        {"tokens_per_expert", moe.tokens_per_expert},
                        {"expert_capacity", moe.expert_capacity},
                        {"expert_slots_per_gpu", moe.expert_slots_per_gpu},
                        {"dropped_fraction_balanced", moe.dropped_fraction_balanced},
                        {"all_to_all_bytes_per_layer_forward", moe.all_to_all_bytes_forward},
                        {"all_to_all_bytes_per_layer_step", moe.all_to_all_bytes_per_step_layer},
                        {"router_params_per_layer", moe.router_params_per_layer},
                        {"router_flops_per_token_forward", moe.router_flops_per_token_forward},
                        {"router_activation_bytes", moe.router_activation_bytes}};
    }
    json activations{{"per_layer_bytes", m.activations.per_layer_bytes},
                     {"layers", m.activations.layers},
                     {"microbatches_in_flight", m.activations.in_flight},
                     {"full_recompute_layers", m.activations.full_recompute_layers},
                     {"interleave_factor", m.activations.interleave_factor},
                     {"outside_bytes", m.activations.outside_bytes},
                     {"total_bytes", m.activations.total_bytes},
                     {"terms", terms},
                     {"korthikanti_formula", m.activations.korthikanti_formula}};
    json out{{"model", model_to_json(c)},
                {"params_total", m.params_total},
                {"params_on_gpu", m.params_on_gpu},
                {"setup", setup},
                {"recipe", recipe},
                {"bytes_per_param",
                 {{"weights", static_cast<double>(bpp.weights) / 256},
                  {"gradients", static_cast<double>(bpp.gradients) / 256},
                  {"master_weights", static_cast<double>(bpp.master_weights) / 256},
                  {"optimizer_states", static_cast<double>(bpp.optimizer_states) / 256},
                  {"total", static_cast<double>(bpp.total()) / 256}}},
                {"params_per_gpu",
                 {{"weights", m.params_weights}, {"gradients", m.params_gradients}, {"optimizer", m.params_optimizer}}},
                {"per_gpu_bytes", per_gpu},
                {"classes", classes},
                {"activations", activations}};
    if (bpp.grad_accum != 0) out["bytes_per_param"]["grad_accum"] = static_cast<double>(bpp.grad_accum) / 256;
    return out;
}

constexpr std::int64_t kMaxSearchGpus = std::int64_t{1} << 20;

json memory_budget_method(const json& args) {
    const ModelConfig c = resolve_model(args);
    json recipe;
    const TrainingSetup st = setup_from_args(args, &recipe);
    const MemoryBudget m = memory_budget(c, st);
    json out = budget_json(c, st, m, recipe);
    // A figure to compare with (e.g. a number printed in course notes): the ratios are the engine's.
    if (auto reference = optional_number_arg(args, "reference_bytes")) {
        require_positive("reference_bytes", *reference);
        out["reference"] = {{"bytes", *reference},
                            {"activations_ratio", static_cast<double>(m.bytes.activations) / *reference},
                            {"total_ratio", static_cast<double>(m.bytes.total) / *reference}};
    }
    json hardware;
    if (auto cap = capacity_from_args(args, &hardware)) {
        add_capacity(out, *cap, hardware);
        const u64 usable = cap->usable_bytes;
        out["fits"] = m.bytes.total <= usable;
        // Signed headroom against the usable capacity; a deficit beyond 2^62 bytes is clamped.
        out["headroom_bytes"] = m.bytes.total <= usable
                                    ? json(static_cast<std::int64_t>(usable - m.bytes.total))
                                    : json(-static_cast<std::int64_t>(std::min<u64>(m.bytes.total - usable,
                                                                                    u64{1} << 62)));
        const std::int64_t n = min_gpus(c, st, usable, kMaxSearchGpus);
        out["min_gpus"] = n == 0 ? json(nullptr) : json(n);
    } else {
        out["capacity_bytes"] = nullptr;
        out["fits"] = nullptr;
        out["min_gpus"] = nullptr;
    }
    return out;
}

// ---------------------------------------------------------------- fit
json fit(const json& args) {
    const std::string mode = string_or(args, "mode", "largest_model");
    json hardware;
    if (mode == "largest_model") {
        json recipe;
        const Precision p = precision_from_args(args, &recipe);
        const std::int64_t gpus = integer_arg(args, "gpus", 1, 100'000'000);
        const auto cap = capacity_from_args(args, &hardware);
        if (!cap) throw InputError("hardware", "give hardware (a preset id) or capacity_bytes");
        const double reserve = optional_number_arg(args, "reserve_fraction").value_or(0.0);
        if (!(reserve >= 0 && reserve < 1))
            throw InputError("reserve_fraction", "reserve_fraction must be in [0, 1), got " + format_number(reserve));
        const u64 total = checked_mul("gpus", cap->usable_bytes, static_cast<u64>(gpus));
        // Usable bytes: the reserve is rounded up so the answer never overstates.
        const u64 reserved = reserve == 0 ? 0 : static_cast<u64>(static_cast<double>(total) * reserve) + 1;
        const u64 usable = total - std::min(total, reserved);
        // ZeRO stage 3 (FSDP full shard) unless told otherwise: the bound of the ZeRO paper's last column.
        const int zero = static_cast<int>(int_or(args, "zero", 3, 0, 3));
        const std::int64_t tp = int_or(args, "tp", 1, 1, 1'000'000);
        const std::int64_t pp = int_or(args, "pp", 1, 1, 1'000'000);
        const u64 n = largest_model_params_sharded(usable, gpus, zero, tp, pp, p);
        const BytesPerParam256 b = bytes_per_param_256(p);
        static const char* const kZeroAssumes[] = {
            "no ZeRO: every data-parallel rank holds all weights, gradients, master weights and optimizer states of its "
            "tp·pp share",
            "ZeRO stage 1: optimizer states and master weights sharded across data-parallel ranks",
            "ZeRO stage 2: gradients, optimizer states and master weights sharded across data-parallel ranks",
            "weights, gradients, master weights and optimizer states fully sharded across all GPUs (ZeRO stage 3 / FSDP)"};
        json out{{"mode", mode},
                 {"gpus", gpus},
                 {"zero", zero},
                 {"tp", tp},
                 {"pp", pp},
                 {"dp", gpus / (tp * pp)},
                 {"usable_bytes_total", total},
                 {"usable_bytes", usable},
                 {"reserve_fraction", reserve},
                 {"recipe", recipe},
                 {"bytes_per_param", static_cast<double>(b.total()) / 256},
                 {"max_params", n},
                 {"assumes", std::string(kZeroAssumes[zero]) +
                                 "; activations excluded unless reserve_fraction sets memory aside or a model is given"}};
        add_capacity(out, *cap, hardware);
        out["usable_bytes"] = usable;  // after the reserve, all GPUs together
        out["usable_bytes_per_gpu"] = cap->usable_bytes;
        out["capacity_bytes_total"] = checked_mul("gpus", cap->capacity, static_cast<u64>(gpus));
        // With a model: keep its width, grow its depth, count everything (activations included).
        const bool has_model = (args.contains("model") && !args["model"].is_null()) ||
                               (args.contains("hf_config") && !args["hf_config"].is_null());
        if (has_model) {
            ModelConfig c = resolve_model(args);
            json model_recipe;
            json setup_args = args;
            setup_args["zero"] = zero;
            TrainingSetup st = setup_from_args(setup_args, &model_recipe);
            st.gpus = gpus;
            const u64 per_gpu = cap->usable_bytes - std::min(cap->usable_bytes, reserve == 0 ? u64{0}
                                                                   : static_cast<u64>(static_cast<double>(cap->usable_bytes) * reserve) + 1);
            const std::int64_t layers = largest_model_layers(c, st, per_gpu);
            out["layers"] = layers == 0 ? json(nullptr) : json(layers);
            if (layers == 0) {
                out["max_params_with_activations"] = nullptr;
                out["reason"] = "not even one layer per pipeline stage fits: raise the ZeRO stage, tp or pp, recompute, "
                                "or shrink seq/micro_batch";
            } else {
                c.num_layers = layers;
                const MemoryBudget m = memory_budget(c, st);
                out["max_params_with_activations"] = m.params_total;
                out["model"] = model_to_json(c);
                out["budget"] = budget_json(c, st, m, model_recipe);
            }
            out["assumes_with_model"] = "the model's width, heads and vocabulary kept; num_layers is the largest depth "
                                        "whose whole budget (activations at seq and micro_batch included) fits one GPU";
        }
        return out;
    }
    if (mode == "min_gpus") {
        const ModelConfig c = resolve_model(args);
        json recipe;
        TrainingSetup st = setup_from_args(args, &recipe);
        const auto cap = capacity_from_args(args, &hardware);
        if (!cap) throw InputError("hardware", "give hardware (a preset id) or capacity_bytes");
        const std::int64_t max_gpus = int_or(args, "max_gpus", kMaxSearchGpus, 1, kMaxSearchGpus);
        st.global_batch = 0;
        const std::int64_t n = min_gpus(c, st, cap->usable_bytes, max_gpus);
        json out{{"mode", mode}, {"tp", st.tp}, {"pp", st.pp}, {"zero", st.zero}};
        add_capacity(out, *cap, hardware);
        if (n == 0) {
            out["min_gpus"] = nullptr;
            out["reason"] = "no data-parallel degree up to " + std::to_string(max_gpus) +
                            " GPUs fits: raise the ZeRO stage, tp or pp, recompute activations, or shrink seq/micro_batch";
            return out;
        }
        st.gpus = n;
        out["min_gpus"] = n;
        out["dp"] = n / (st.tp * st.pp);
        out["budget"] = budget_json(c, st, memory_budget(c, st), recipe);
        return out;
    }
    throw InputError("mode", "mode must be largest_model or min_gpus, got \"" + mode + "\"");
}

// ---------------------------------------------------------------- KV cache
json kv_cache_method(const json& args) {
    const ModelConfig c = resolve_model(args);
    const std::int64_t context = integer_arg(args, "context", 1, std::int64_t{1} << 40);
    const std::int64_t batch = int_or(args, "batch", 1, 1, 1'000'000'000);
    const DType kv = dtype_from_string(string_or(args, "kv_dtype", "bf16"), "kv_dtype");
    const DType w = dtype_from_string(string_or(args, "weights_dtype", "bf16"), "weights_dtype");
    const KvCache k = kv_cache(c, context, batch, kv, w);
    json out{{"model", model_to_json(c)},
             {"context", context},
             {"batch", batch},
             {"kv_dtype", to_string(kv)},
             {"weights_dtype", to_string(w)},
             {"bytes_per_token", k.bytes_per_token},
             {"kv_cache_bytes", k.kv_cache_bytes},
             {"weights_bytes", k.weights_bytes},
             {"total_bytes", k.total_bytes},
             {"formula", "2 · L · n_kv · d · bytes · tokens · batch"},
             {"mha_kv_cache_bytes",  // the same cache without GQA, for comparison
              checked_mul("kv_cache", k.kv_cache_bytes / static_cast<u64>(c.num_kv_heads), static_cast<u64>(c.num_heads))}};
    json hardware;
    if (auto cap = capacity_from_args(args, &hardware)) {
        add_capacity(out, *cap, hardware);
        const u64* capacity = &cap->usable_bytes;  // every verdict below is against the usable bytes
        out["fits"] = k.total_bytes <= *capacity;
        const u64 per_sequence = k.bytes_per_token * static_cast<u64>(context);
        out["max_batch"] = k.weights_bytes >= *capacity ? 0 : (*capacity - k.weights_bytes) / per_sequence;
        out["max_context"] =
            k.weights_bytes >= *capacity ? 0 : (*capacity - k.weights_bytes) / (k.bytes_per_token * static_cast<u64>(batch));
    }
    // Decoding speed limit from memory bandwidth (needs a hardware preset: capacity_bytes carries no
    // bandwidth). One decoding step multiplies every weight matrix by the batch's vectors and reads every
    // sequence's KV cache, so it streams weights + KV cache from memory at least once and yields one token
    // per sequence: steps/s <= bandwidth / (weights + KV cache). The KV cache is the full `context`
    // (the last, slowest step); compute, activations and caching are ignored, so this is an upper bound.
    if (auto id = optional_string_arg(args, "hardware")) {
        const Hardware hw = find_hardware(*id);
        const double step_bytes = static_cast<double>(k.total_bytes);
        const double steps_per_s = hw.memory_bandwidth_bytes_per_s / step_bytes;
        out["memory_bandwidth_bytes_per_s"] = hw.memory_bandwidth_bytes_per_s;
        out["decode_bytes_per_step"] = k.total_bytes;
        out["decode_tokens_per_s_bound"] = steps_per_s;                                   // per sequence
        out["decode_batch_tokens_per_s_bound"] = steps_per_s * static_cast<double>(batch);  // whole batch
    }
    return out;
}

// ---------------------------------------------------------------- tensor bytes
// One dimension of `shape`: a JSON number that is a whole number in [1, 2^63).
u64 shape_dim(const json& value, std::size_t index) {
    const std::string name = "shape[" + std::to_string(index) + "]";
    const std::string range = " must be a whole number in [1, 2^63), got ";
    if (value.is_number_unsigned()) {
        const u64 v = value.get<u64>();
        if (v == 0 || v >= (u64{1} << 63)) throw InputError("shape", name + range + std::to_string(v));
        return v;
    }
    if (value.is_number_integer()) {
        const std::int64_t v = value.get<std::int64_t>();
        if (v < 1) throw InputError("shape", name + range + std::to_string(v));
        return static_cast<u64>(v);
    }
    if (value.is_number_float()) {
        const double v = value.get<double>();
        // 9223372036854775808.0 = 2^63, exactly representable.
        if (!(v >= 1 && v < 9223372036854775808.0) || v != static_cast<double>(static_cast<u64>(v)))
            throw InputError("shape", name + range + format_number(v));
        return static_cast<u64>(v);
    }
    throw InputError("shape", name + " must be a number, got " + value.dump());
}

json tensor_bytes_method(const json& args) {
    if (!args.contains("shape") || !args["shape"].is_array())
        throw InputError("shape", "shape must be an array of dimension sizes, e.g. [49152, 12288]");
    const json& shape_json = args["shape"];
    if (shape_json.empty() || shape_json.size() > kMaxTensorDims)
        throw InputError("shape", "shape must list 1 to " + std::to_string(kMaxTensorDims) + " dimensions, got " +
                                      std::to_string(shape_json.size()));
    std::vector<u64> shape;
    for (std::size_t i = 0; i < shape_json.size(); ++i) shape.push_back(shape_dim(shape_json[i], i));
    const std::string dtype = string_arg(args, "dtype");
    const TensorBytes t = tensor_bytes(shape, dtype_bits(dtype, "dtype"));
    return json{{"shape", shape},
                {"dtype", dtype},
                {"elements", t.elements},
                {"bits_per_element", t.bits_per_element},
                {"bytes", t.bytes},
                {"formula", "ceil(elements · bits / 8)"}};
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

std::string attention_text(const ModelConfig& c) {
    const std::string heads = std::to_string(c.num_kv_heads) + " K/V heads for " + std::to_string(c.num_heads) +
                              " query heads";
    if (c.num_kv_heads == c.num_heads) return "MHA (" + heads + ")";
    if (c.num_kv_heads == 1) return "MQA (" + heads + ")";
    return "GQA (" + heads + ")";
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
        const std::string count_source = "counted by the engine from the preset's config (" + m.value("source", "") + ")";
        json rows = json::array();
        rows.push_back(row("dropout", "dropout", dropout_text(c), cited(m, "dropout")));
        rows.push_back(row("tied_embeddings", "tied embeddings", c.tied_embeddings ? "tied: the LM head is the embedding matrix"
                                                                                  : "untied: separate LM head",
                           cited(m, "tied_embeddings")));
        rows.push_back(row("attention", "attention type", attention_text(c), cited(m, "attention")));
        rows.push_back(row("activation_dtype", "activation dtype", "2 bytes per stored value (bf16/fp16)",
                           cited(m, "activation_dtype")));
        rows.push_back(row("params_compute", "parameters for compute (6ND, days)",
                           std::to_string(p.active) + (c.is_moe() ? " active of " + std::to_string(p.total) + " (MoE: "
                                                                        "each token visits " +
                                                                        std::to_string(c.experts_per_token) + " experts)"
                                                                  : " (dense: all parameters)"),
                           count_source));
        rows.push_back(row("params_memory", "parameters for memory",
                           std::to_string(p.total) + (c.is_moe() ? " (every expert is stored)" : " (all parameters)"),
                           count_source));
        models.push_back({{"id", m.at("id")}, {"name", m.value("name", "")}, {"assumptions", rows}});
    }
    const std::string allowance_source =
        "tally default allowance (engine/include/tally/hardware.h): " + std::to_string(kDefaultCudaContextBytes >> 20) +
        " MiB CUDA context (order of PyTorch issue #34323) + " + format_number(kDefaultFragmentationFraction * 100) +
        " % fragmentation (a stated assumption; ZeRO, Rajbhandari et al. 2020 sec. 3.2); both are arguments";
    json hardware = json::array();
    for (const auto& h : presets_json().at("hardware")) {
        const Hardware hw = hardware_from_json(h);
        const UsableCapacity u = usable_capacity(hw.memory_reported_bytes, kDefaultCudaContextBytes, kDefaultFragmentationFraction);
        json rows = json::array();
        rows.push_back(row("capacity_marketing", "capacity on the datasheet", bytes_text(hw.memory_bytes), hw.source));
        rows.push_back(row("capacity_reported", hw.memory_reported_by == "device" ? "capacity the device reports"
                                                                                  : "capacity (no device report found: datasheet)",
                           bytes_text(hw.memory_reported_bytes), hw.memory_reported_source));
        rows.push_back(row("usable_capacity", "usable capacity (reported − allowance)", bytes_text(u.usable_bytes),
                           allowance_source));
        char peak[48];
        std::snprintf(peak, sizeof peak, "%.6g TFLOP/s", hw.peak_bf16 / 1e12);
        rows.push_back(row("dense_peak_bf16", "dense bf16 peak", peak,
                           hw.peak_bf16 > 0 ? hw.source : std::string()));
        rows.push_back(row("memory_bandwidth", "memory bandwidth",
                           format_number(hw.memory_bandwidth_bytes_per_s / 1e12) + " TB/s", hw.source));
        hardware.push_back({{"id", h.at("id")}, {"name", hw.name}, {"assumptions", rows}});
    }
    return json{{"models", models}, {"hardware", hardware}};
}

constexpr Method kMethods[] = {
    {"assumptions", assumptions, "every assumption behind each preset's budget and FLOP count, with its source"},
    {"presets", presets, "model and hardware presets, recipes, optimizers and dtypes"},
    {"recipes", recipes_method, "named precision/optimizer recipes with bytes per parameter"},
    {"model", model_method, "resolve a preset id, config object or HF config.json into a tally config"},
    {"params", params, "exact parameter count by component and tensor"},
    {"flops", flops, "forward and training FLOPs by component, beside 6ND"},
    {"training_cost", training_cost, "training time, GPU-hours and cost from a model or params"},
    {"mfu", mfu, "model FLOPs utilization from measured tokens per second"},
    {"memory_budget", memory_budget_method, "training memory per GPU, term by term"},
    {"fit", fit, "largest model on N GPUs, or fewest GPUs for a model and setup"},
    {"kv_cache", kv_cache_method, "inference weights plus KV cache"},
    {"tensor_bytes", tensor_bytes_method, "elements, bits per element and exact bytes of one tensor"},
};

}  // namespace

std::span<const Method> accounting_methods() { return kMethods; }

}  // namespace tally::api
