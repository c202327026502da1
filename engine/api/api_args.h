// Argument readers and result pieces shared by the API files (internal to engine/src; defined in
// api_args.cpp unless noted). Each maps JSON to an engine struct or back; none computes a formula.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tally/flops.h"
#include "tally/hardware.h"
#include "tally/kvcache.h"
#include "tally/memory.h"
#include "tally/model.h"
#include "tally/precision.h"

namespace tally::api {

using json = nlohmann::json;

// An optional integer or string argument with its default.
std::int64_t int_or(const json& args, const char* field, std::int64_t fallback, std::int64_t low, std::int64_t high);
std::string string_or(const json& args, const char* field, const char* fallback);

// The recipe and its per-class overrides (weights, gradients, master_weights, optimizer, ...);
// `recipe_out` (optional) receives the recipe as the results show it.
Recipe recipe_from_args(const json& args, json* recipe_out);
// The training setup of the memory budget (seq, micro_batch, global_batch, gpus, zero, tp, pp,
// sequence_parallel, recompute, flash_attention, dropout, activation_bytes and the recipe).
TrainingSetup setup_from_args(const json& args, json* recipe_out);

// Capacity from capacity_bytes or a hardware preset (less the default allowance); nullopt when neither
// is given. `hardware_out` (optional) receives the preset.
std::optional<UsableCapacity> capacity_from_args(const json& args, json* hardware_out);
// The capacity fields every method with a capacity reports.
void add_capacity(json& out, const UsableCapacity& u, const json& hardware);

// Every recipe with its bytes per parameter.
json recipes_json();

// The FLOP count's inputs (seq, attention_flops, recompute, ...) for model `c`.
FlopsInput flops_input(const json& args, const ModelConfig& c);
// The Chinchilla reference fields of a result.
void add_chinchilla(json& out, double params, double tokens, const char* basis);

// The flops method's result for a counted model (api_flops.cpp; shared with api_training.cpp); per-token
// totals when `tokens` is absent.
json flops_json(const ModelConfig& c, const FlopsInput& in, const FlopsResult& r, std::optional<double> tokens);
// The memory budget as the API returns it (api_memory.cpp; shared with api_fit.cpp).
json budget_json(const ModelConfig& c, const TrainingSetup& st, const MemoryBudget& m, const json& recipe);
// The KV cache by layer kind (api_kvcache.cpp; shared with api_inference.cpp).
json kv_layers_json(const std::vector<KvLayerGroup>& groups);
// The largest data-parallel degree the GPU-count searches try.
inline constexpr std::int64_t kMaxSearchGpus = std::int64_t{1} << 20;

// Float-format arguments (format, rounding, saturate, value, code or hex).
fp::Format format_arg(const json& args, const char* field = "format");
fp::Round round_arg(const json& args, fp::Format f);
bool saturate_arg(const json& args, fp::Format f);
struct ValueArg {
    double value;
    std::string text;
};
ValueArg value_arg(const json& args);
std::uint64_t code_arg(const json& args, fp::Format f);

}  // namespace tally::api
