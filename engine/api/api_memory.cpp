// API of the training memory budget (memory.h): bytes per GPU class by class and term by term, the
// recipes, and the verdict against a capacity.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/memory/fit.h"
#include "tally/hardware/hardware.h"
#include "tally/memory/memory.h"
#include "tally/model/model.h"
#include "tally/parallel/moe.h"

namespace tally::api {

using u64 = std::uint64_t;

// Shared with api_fit.cpp through api_args.h.
json budget_json(const ModelConfig& c, const TrainingSetup& st, const MemoryBudget& m, const json& recipe) {
    const BytesPerParam256 bpp = bytes_per_param_256(st.recipe);
    json classes = json::array();
    // A class held per parameter: its parameters, and its bytes per parameter and formula from the recipe.
    const auto per_param = [&](const char* id, const char* name, auto bytes, auto params, auto bpp256, MemoryClass kind,
                               const char* symbol, const char* sharded_by) {
        return json{{"id", id},
                    {"name", name},
                    {"bytes", bytes},
                    {"params", params},
                    {"bytes_per_param", static_cast<double>(bpp256) / 256},
                    {"description", memory_class_description(kind, st, m)},
                    {"formula", bytes_per_param_formula(symbol, bpp256)},
                    {"sharded_by", sharded_by}};
    };
    classes.push_back(per_param("weights", "working weights", m.bytes.weights, m.params_weights, bpp.weights,
                                MemoryClass::Weights, "N_w", "tp, pp, zero 3"));
    classes.push_back(per_param("gradients", "gradients", m.bytes.gradients, m.params_gradients, bpp.gradients,
                                MemoryClass::Gradients, "N_g", "tp, pp, zero >= 2"));
    classes.push_back(per_param("master_weights", "master weights", m.bytes.master_weights, m.params_optimizer,
                                bpp.master_weights, MemoryClass::MasterWeights, "N_o", "tp, pp, zero >= 1"));
    json parts = json::array();
    for (const OptimizerPart& part : optimizer_parts(st.recipe.optimizer, m.bytes.optimizer_states))
        parts.push_back(TALLY_MEMBERS(part, id, name, bytes));
    classes.push_back({{"id", "optimizer_states"},
                       {"parts", parts},
                       {"name", "optimizer states"},
                       {"bytes", m.bytes.optimizer_states},
                       {"params", m.params_optimizer},
                       {"bytes_per_param", m.params_optimizer == 0 ? 0.0
                                                                   : static_cast<double>(m.bytes.optimizer_states) /
                                                                         static_cast<double>(m.params_optimizer)},
                       {"description", memory_class_description(MemoryClass::OptimizerStates, st, m)},
                       {"formula", optimizer_states_formula(st.recipe)},
                       {"sharded_by", "tp, pp, zero >= 1"}});
    classes.push_back({{"id", "activations"},
                       {"name", "activations"},
                       {"bytes", m.bytes.activations},
                       {"description", memory_class_description(MemoryClass::Activations, st, m)},
                       {"formula", "per_layer · layers · in_flight + outside"},
                       {"sharded_by", "tp (and sequence parallel), pp"}});
    if (m.bytes.grad_accum != 0)
        classes.push_back(per_param("grad_accum", "gradient accumulation buffer", m.bytes.grad_accum,
                                    st.grad_accum_full ? m.params_weights : m.params_optimizer, bpp.grad_accum,
                                    MemoryClass::GradAccum, st.grad_accum_full ? "N_w" : "N_o",
                                    st.grad_accum_full ? "tp, pp, zero 3" : "tp, pp, zero >= 1"));
    if (m.bytes.zero3_buffer != 0)
        classes.push_back({{"id", "zero3_buffer"},
                           {"name", "ZeRO-3 gathered parameters"},
                           {"bytes", m.bytes.zero3_buffer},
                           {"params", m.zero3_gathered_params},
                           {"description", memory_class_description(MemoryClass::Zero3Buffer, st, m)},
                           {"formula", zero3_buffer_formula(st)},
                           {"sharded_by", "tp, pp"}});
    json terms = json::array();
    for (const ActivationTerm& t : m.activations.terms) {
        terms.push_back(TALLY_MEMBERS(t, id, name, bytes, description, formula));
        terms.back()["scope"] = t.per_layer ? "per_layer" : "outside";
    }
    json per_gpu = TALLY_MEMBERS(m.bytes, weights, gradients, master_weights, optimizer_states, activations, total);
    if (m.bytes.grad_accum != 0) per_gpu["grad_accum"] = m.bytes.grad_accum;
    if (m.bytes.zero3_buffer != 0) per_gpu["zero3_buffer"] = m.bytes.zero3_buffer;
    json setup{{"zero3_gather", st.zero3_gather == TrainingSetup::Zero3Gather::None
                                    ? "none"
                                    : (st.zero3_gather == TrainingSetup::Zero3Gather::Module ? "module" : "layer")},
               {"recompute", to_string(st.recompute)},
               {"recompute_ops", recompute_ops_to_string(st.recompute_ops)},
               {"dropout",
                m.activations.attention_dropout || m.activations.residual_dropout || m.activations.embedding_dropout},
               {"dropout_from", st.dropout.has_value() ? "argument" : "model"},
               {"dropout_masks",
                {{"attention", m.activations.attention_dropout},
                 {"residual", m.activations.residual_dropout},
                 {"embedding", m.activations.embedding_dropout}}},
               {"global_batch", st.global_batch == 0 ? st.micro_batch * m.dp : st.global_batch},
               {"microbatches_in_flight", m.activations.in_flight}};
    setup.update(TALLY_MEMBERS(st, gpus, tp, pp, virtual_stages, keep_stage_outputs, zero, zero3_prefetch,
                               sequence_parallel, recompute_layers, flash_attention, activation_bytes, seq,
                               micro_batch));
    setup.update(TALLY_MEMBERS(m, dp, grad_accum_steps, layers_per_stage, stage));
    if (c.is_encoder_decoder()) setup["decoder_seq"] = st.decoder_seq > 0 ? st.decoder_seq : st.seq;
    // Placement: context parallelism, the ZeRO shard group (HSDP when below dp·cp) and CPU offload.
    setup["cp"] = st.cp;
    setup["cp_load_balance"] = st.cp_load_balance;
    setup["shard_group"] = m.shard_group;
    setup["hsdp_replicas"] = m.dp * st.cp / m.shard_group;
    setup["offload"] = st.offload_optimizer ? (st.offload_params ? "optimizer_params" : "optimizer")
                                            : (st.offload_params ? "params" : "none");
    if (c.is_moe()) {
        // Expert parallelism and capacity (moe.h): what each GPU holds, sees and sends per layer.
        const MoeLayer moe =
            moe_layer(c, {st.seq, st.micro_batch, st.tp, st.ep, st.capacity_factor, st.activation_bytes});
        setup["ep"] = st.ep;
        setup["expert_dp"] = m.expert_dp;
        setup["etp"] = st.etp_or_tp();
        setup["expert_shard_group"] = m.expert_shard_group;
        setup["capacity_factor"] = st.capacity_factor;
        setup["moe"] = json{{"expert_params_on_gpu", m.expert_params_on_gpu},
                            {"all_to_all_bytes_per_layer_forward", moe.all_to_all_bytes_forward},
                            {"all_to_all_bytes_per_layer_step", moe.all_to_all_bytes_per_step_layer}};
        setup["moe"].update(TALLY_MEMBERS(moe, local_experts, tokens_per_expert, expert_capacity, expert_slots_per_gpu,
                                          dropped_fraction_balanced, router_params_per_layer,
                                          router_flops_per_token_forward, router_activation_bytes));
    }
    json activations = TALLY_MEMBERS(m.activations, per_layer_bytes, layers, full_recompute_layers, interleave_factor,
                                     interleave_extra_bytes, outside_bytes, total_bytes, korthikanti_formula);
    activations["microbatches_in_flight"] = m.activations.in_flight;
    activations["terms"] = terms;
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
    if (st.offload_optimizer || st.offload_params)
        out["host_bytes"] = {{"per_gpu",
                              {{"weights", m.host.weights},
                               {"gradients", m.host.gradients},
                               {"master_weights", m.host.master_weights},
                               {"optimizer_states", m.host.optimizer_states},
                               {"grad_accum", m.host.grad_accum},
                               {"total", m.host.total}}},
                             {"per_node", nullptr},
                             {"gpus_per_node", nullptr}};
    return out;
}

namespace {

json recipes_method(const json&) { return json{{"recipes", recipes_json()}}; }

using namespace arg;
constexpr Arg kReferenceBytes{"reference_bytes",
                              Num,
                              "bytes",
                              0,
                              kNo,
                              "none",
                              "a figure to compare with: the ratios of activations and total to it",
                              nullptr,
                              nullptr,
                              true};
// Host memory per node is reported with an offload only (host_bytes).
constexpr Arg kBudgetGpusPerNode =
    only(integer("gpus_per_node", "GPUs", 1, kMaxDegree, "depends: the hardware preset's interconnect",
                 "GPUs per node, for host memory per node"),
         one_of("offload", "optimizer|params|optimizer_params"));
constexpr auto kBudgetArgs =
    join_args(kModelArgs, kSetupArgs, kCapacityArgs, std::array{kReferenceBytes, kBudgetGpusPerNode});
constexpr std::array kRecipesResult = std::to_array<Field>({
    {"recipes", "",
     "{id, name, description, weights, gradients, master_weights, optimizer, optimizer_state, "
     "bytes_per_param}"},
});
constexpr std::array kBudgetOwnResult = std::to_array<Field>({
    {"model", "", "the resolved tally config"},
    {"recipe", "", "the recipe used, overrides applied"},
    {"per_gpu_bytes", "bytes", "weights, gradients, master weights, optimizer states, activations, other, total"},
    {"activations", "bytes", "activation memory term by term"},
    {"bytes_per_param", "bytes", "static bytes per parameter of the recipe"},
    {"host_bytes", "bytes", "with offload: host memory per GPU (and per node)"},
    {"capacity_bytes", "bytes", "with hardware or capacity_bytes: one GPU's memory, else null"},
    {"usable_bytes", "bytes", "capacity less the allowance"},
    {"fits", "", "total <= usable_bytes (null without a capacity)"},
    {"headroom_bytes", "bytes", "usable_bytes - total (negative: short by)"},
    {"min_gpus", "GPUs", "fewest GPUs whose budget fits (null: none up to 2^20, or no capacity)"},
    {"reference", "", "with reference_bytes: {bytes, activations_ratio, total_ratio}"},
    {"setup", "", "the training setup used (parallelism, ZeRO, batch, recompute, ...)"},
    {"params_total", "parameters", "every parameter"},
    {"params_on_gpu", "parameters", "parameters whose weights one GPU holds"},
    {"params_per_gpu", "parameters", "{weights, gradients, optimizer}: parameters one GPU holds each of"},
    {"classes", "bytes", "{bytes, bytes_per_param, description, ...} per memory class"},
});

json memory_budget_method(const json& args) {
    const ModelConfig c = resolve_model(args);
    json recipe;
    const TrainingSetup st = setup_from_args(args, &recipe);
    const MemoryBudget m = memory_budget(c, st);
    json out = budget_json(c, st, m, recipe);
    // A figure to compare with (e.g. a number printed in course notes): the ratios are the engine's.
    if (auto reference = optional_number_arg(args, kReferenceBytes.name)) {
        require_positive(kReferenceBytes.name, *reference);
        out["reference"] = {{"bytes", *reference},
                            {"activations_ratio", static_cast<double>(m.bytes.activations) / *reference},
                            {"total_ratio", static_cast<double>(m.bytes.total) / *reference}};
    }
    json hardware;
    const std::optional<UsableCapacity> cap = capacity_from_args(args, &hardware);
    // Checked even without offload, so a bad value is refused rather than ignored.
    std::optional<std::int64_t> per_node = optional_arg_int(args, kBudgetGpusPerNode);
    if (out.contains("host_bytes")) {
        // Host memory per node: the busiest GPU's host bytes times the GPUs on a node (the argument, else the
        // preset's interconnect), an upper bound when stages differ; unknown without either.
        if (!per_node && hardware.contains("interconnect"))
            per_node = hardware["interconnect"]["gpus_per_node"].get<std::int64_t>();
        if (per_node) {
            const std::int64_t on_node = std::min(*per_node, st.gpus);
            out["host_bytes"]["gpus_per_node"] = on_node;
            out["host_bytes"]["per_node"] = checked_mul("memory", m.host.total, static_cast<u64>(on_node));
        }
    }
    if (cap) {
        add_capacity(out, *cap, hardware);
        const u64 usable = cap->usable_bytes;
        out["fits"] = m.bytes.total <= usable;
        // Signed headroom against the usable capacity; a deficit beyond 2^62 bytes is clamped.
        out["headroom_bytes"] =
            m.bytes.total <= usable
                ? json(static_cast<std::int64_t>(usable - m.bytes.total))
                : json(-static_cast<std::int64_t>(std::min<u64>(m.bytes.total - usable, u64{1} << 62)));
        const std::int64_t n = min_gpus(c, st, usable, kMaxSearchGpus);
        out["min_gpus"] = n == 0 ? json(nullptr) : json(n);
    } else {
        out["capacity_bytes"] = nullptr;
        out["fits"] = nullptr;
        out["min_gpus"] = nullptr;
    }
    return out;
}

constexpr auto kBudgetResult = join_args(kBudgetOwnResult, arg::kCapacityFields);
constexpr Method kMethods[] = {
    {"recipes",
     recipes_method,
     "named training recipes (dtype per tensor class, optimizer) with bytes per parameter",
     {},
     kRecipesResult,
     true},
    {"memory_budget", memory_budget_method, "training memory per GPU, term by term", kBudgetArgs, kBudgetResult, true},
};

}  // namespace

std::span<const Method> memory_methods() { return kMethods; }

}  // namespace tally::api
