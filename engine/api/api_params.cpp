// API of the parameter count (params.h): total, by component with its formula, and tensor by tensor.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/model/model.h"
#include "tally/model/params.h"

namespace tally::api {

namespace {

using u64 = std::uint64_t;

// ---------------------------------------------------------------- params
json params_result(const ModelConfig& c) {
    const ParamCount p = count_params(c);
    json components = json::array();
    const std::pair<Component, u64> parts[] = {{Component::Embedding, p.embedding},
                                               {Component::PositionEmbedding, p.position_embedding},
                                               {Component::Attention, p.attention},
                                               {Component::LinearAttention, p.linear_attention},
                                               {Component::Mamba, p.mamba},
                                               {Component::Mlp, p.mlp},
                                               {Component::Norms, p.norms},
                                               {Component::FinalNorm, p.final_norm},
                                               {Component::LmHead, p.lm_head},
                                               {Component::EmbeddingExtras, p.embedding_extras},
                                               {Component::CrossAttention, p.cross_attention},
                                               {Component::Pooler, p.pooler},
                                               {Component::MlmHead, p.mlm_head},
                                               {Component::NspHead, p.nsp_head}};
    for (const auto& [component, count] : parts)
        // Encoder and encoder-decoder parts are listed only when the model has them.
        if (count > 0 || static_cast<int>(component) <= static_cast<int>(Component::LmHead))
            components.push_back({{"id", component_id(component)},
                                  {"name", component_name(component)},
                                  {"count", count},
                                  {"formula", component_formula(component, c)}});
    json tensors = json::array();
    for (const Tensor& t : model_tensors(c)) {
        tensors.push_back(TALLY_MEMBERS(t, name, rows, cols, per_layer));
        tensors.back()["count"] = t.count();
        tensors.back()["instances_per_layer"] = t.expert ? c.num_experts : (t.per_layer ? 1 : 0);
        // Decoder layers only, or the dense / MoE layers of a model with both.
        if (t.cross || t.layer_set != LayerSet::All) tensors.back()["layers"] = tensor_layers(c, t);
    }
    json out{{"model", model_to_json(c)},
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
    if (c.num_dense_layers > 0) out["per_layer"]["dense_layer_mlp"] = p.per_dense_layer_mlp;
    // A hybrid's mixers per layer of each kind (attention is then per softmax-attention layer).
    if (c.num_linear_layers > 0) out["per_layer"]["linear_attention"] = p.per_linear_layer;
    if (c.num_mamba_layers > 0) out["per_layer"]["mamba"] = p.per_mamba_layer;
    // Multi-token prediction modules: reported beside the total, never in it (DeepSeek-V3's 671B excludes them).
    if (c.mtp_modules > 0) out["mtp"] = {{"count", p.mtp}, {"formula", component_formula(Component::Mtp, c)}};
    // A multimodal model's vision tower and projector: beside the language model's total, never in it.
    if (c.vision_params > 0) out["vision"] = p.vision;
    return out;
}

json params(const json& args) { return params_result(resolve_model(args)); }

constexpr std::array kParamsResult = std::to_array<Field>({
    {"model", "", "the resolved tally config"},
    {"total", "parameters", "every parameter (MTP modules apart)"},
    {"active", "parameters", "parameters a token visits"},
    {"components", "", "{id, name, count, formula} per component"},
    {"per_layer", "parameters",
     "attention, mlp, mlp_active, norms, total (and dense_layer_mlp, linear_attention, mamba)"},
    {"tensors", "", "{name, rows, cols, count, per_layer, instances_per_layer, layers?} per tensor"},
    {"mtp", "parameters", "multi-token prediction modules: {count, formula}, when the model has them"},
    {"vision", "parameters", "a multimodal model's vision tower and projector, apart from total, when counted"},
});

constexpr Method kMethods[] = {
    {"params", params, "exact parameter count by component and tensor", arg::kModelArgs, kParamsResult, true},
};

}  // namespace

std::span<const Method> params_methods() { return kMethods; }

}  // namespace tally::api
