// API of mixture-of-experts routing (moe.h): active against total parameters, expert capacity and the tokens
// it drops (balanced and random routing), the expert-parallel all-to-all per token and layer and its time on
// a hardware preset's links, and the rows each expert's GEMM gets (see docs/API.md, "Mixture of experts").
#include <algorithm>
#include <string>

#include "api_args.h"
#include "tally/api.h"
#include "tally/comm/collectives.h"
#include "tally/base/error.h"
#include "tally/hardware/hardware.h"
#include "tally/model/model.h"
#include "tally/parallel/moe.h"
#include "tally/model/params.h"

namespace tally::api {

namespace {

namespace co = collectives;

// {model, seq?, micro_batch?, ep?, capacity_factor?, hardware?}
json moe_routing(const json& args) {
    const ModelConfig c = resolve_model(args);
    if (!c.is_moe())
        throw InputError("model",
                         "moe_routing needs a mixture-of-experts model (num_experts > 0); " + c.name + " is dense");
    MoeSetup st;
    st.seq = int_or(args, "seq", 4096, 1, std::int64_t{1} << 20);
    st.micro_batch = int_or(args, "micro_batch", 1, 1, 65536);
    st.ep = int_or(args, "ep", std::min<std::int64_t>(c.num_experts, 8), 1, 65536);
    st.capacity_factor = optional_number_arg(args, "capacity_factor").value_or(0);
    const MoeLayer m = moe_layer(c, st);
    const ParamCount p = count_params(c);
    const Hardware hw = find_hardware(string_or(args, "hardware", "h100-sxm"));

    const double h = static_cast<double>(c.hidden_size), f = static_cast<double>(c.ffn_hidden_size);
    const double e = static_cast<double>(st.activation_bytes);
    json out{{"model", c.name},
             {"experts", c.num_experts},
             {"top_k", c.experts_per_token},
             {"shared_experts", c.num_shared_experts},
             {"moe_layers", c.num_moe_layers()},
             {"hidden_size", c.hidden_size},
             {"expert_ffn_hidden_size", c.ffn_hidden_size},
             {"params",
              {{"total", p.total},
               {"active", p.active},
               {"embedding", p.embedding},
               {"active_without_embedding", p.active - p.embedding},
               {"active_fraction", static_cast<double>(p.active) / static_cast<double>(p.total)}}}};
    out.update(TALLY_MEMBERS(st, seq, micro_batch, ep, capacity_factor));
    out.update(
        TALLY_MEMBERS(m, local_experts, tokens_per_gpu, tokens_per_expert, expert_capacity, dropped_fraction_balanced));
    if (st.capacity_factor > 0) {
        // An expert receives from the ep GPUs of its group: tokens_per_gpu x ep tokens choose among E experts.
        const RandomRouting r = random_routing(m.tokens_per_gpu * static_cast<double>(st.ep), c.num_experts,
                                               c.experts_per_token, st.capacity_factor);
        out["random_routing"] =
            TALLY_MEMBERS(r, mean_load, load_stddev, capacity, expected_dropped_fraction, overflow_probability);
    }
    // All-to-all per token and layer: dispatch and combine forward, their gradients backward.
    out["all_to_all_bytes_per_token_forward"] = m.all_to_all_bytes_forward / m.tokens_per_gpu;
    out["all_to_all_bytes_per_token_step"] = m.all_to_all_bytes_per_step_layer / m.tokens_per_gpu;
    out["all_to_all_bytes_per_layer_step"] = m.all_to_all_bytes_per_step_layer;
    if (st.ep >= 2 && hw.interconnect.present) {
        const co::Links links = co::links_of(hw, co::kDefaultLinkEfficiency);
        const co::Placement place = co::placement_of(st.ep, links);
        if (place.ranks_per_node * place.nodes != st.ep)
            throw InputError("ep", "ep must fill whole nodes of " + std::to_string(links.gpus_per_node) +
                                       " GPUs when it spans nodes, got " + std::to_string(st.ep));
        // The send buffer of one dispatch: every routed row's h-wide hidden state (padded slots included).
        const double rows = st.capacity_factor > 0 ? m.expert_slots_per_gpu : m.assignments_per_gpu;
        const co::Cost a2a = co::cost(co::Kind::AllToAll, co::Algorithm::Ring, rows * h * e, place, links);
        // The routed experts' matmuls (3 of h x f for SwiGLU, 2 for GELU) on those rows, forward, at peak.
        const double mats = c.mlp_matrices();
        const double expert_flops = 2 * mats * h * f * rows;
        out["all_to_all"] = {{"ranks_per_node", place.ranks_per_node},
                             {"nodes", place.nodes},
                             {"message_bytes", rows * h * e},
                             {"seconds", a2a.seconds},
                             {"per_layer_step_seconds", 4 * a2a.seconds},
                             {"bottleneck", a2a.bottleneck},
                             {"expert_forward_flops", expert_flops},
                             {"expert_forward_seconds_at_peak", expert_flops / hw.peak("bf16")},
                             {"per_layer_step_expert_seconds_at_peak", 3 * expert_flops / hw.peak("bf16")}};
    }
    return out;
}

using namespace arg;
constexpr std::array kMoeOwn{
    integer("seq", "tokens", 1, 1 << 20, "4096", "sequence length"),
    integer("micro_batch", "sequences", 1, 65536, "1", "sequences per micro-batch"),
    integer("ep", "GPUs", 1, 65536, "depends: min(experts, 8)", "expert-parallel degree"),
    number("capacity_factor", "", "0", "expert capacity over the mean load (0: none, nothing dropped)"),
    text("hardware", "h100-sxm", "hardware preset whose links time the all-to-all"),
};
constexpr auto kMoeArgs = join_args(kModelArgs, kMoeOwn);
constexpr std::array kMoeResult = std::to_array<Field>({
    {"params", "parameters", "{total, active, embedding, active_without_embedding, active_fraction}"},
    {"local_experts", "experts", "experts per GPU"},
    {"tokens_per_expert", "tokens", "mean load per expert per micro-batch"},
    {"expert_capacity", "tokens", "capacity per expert (capacity_factor x mean load)"},
    {"dropped_fraction_balanced", "", "share dropped when the router balances perfectly"},
    {"random_routing", "", "with capacity_factor: {mean_load, load_stddev, capacity, expected_dropped_fraction, ...}"},
    {"all_to_all_bytes_per_token_forward", "bytes", "dispatch and combine per token and MoE layer, forward"},
    {"all_to_all_bytes_per_token_step", "bytes", "the same with the backward's two"},
    {"all_to_all_bytes_per_layer_step", "bytes", "per GPU, MoE layer and step"},
    {"model", "", "the model's name"},
    {"experts", "experts", "routed experts per MoE layer"},
    {"top_k", "experts", "experts each token reaches"},
    {"shared_experts", "experts", "experts every token reaches"},
    {"moe_layers", "layers", "MoE layers"},
    {"hidden_size", "", "hidden size"},
    {"expert_ffn_hidden_size", "", "one expert's FFN hidden size"},
    {"seq", "tokens", "sequence length"},
    {"micro_batch", "sequences", "sequences per micro-batch"},
    {"ep", "GPUs", "expert-parallel degree"},
    {"capacity_factor", "", "expert capacity over mean load (0: none)"},
    {"tokens_per_gpu", "tokens", "tokens per GPU per micro-batch"},
    {"all_to_all", "", "{message_bytes, seconds, bottleneck, expert_forward_flops, ...}: the dispatch on the hardware"},
});

constexpr Method kMethods[] = {
    {"moe_routing", moe_routing,
     "mixture of experts: active vs total parameters, capacity and dropped tokens, the expert-parallel all-to-all "
     "per token and layer",
     kMoeArgs, kMoeResult, true},
};

}  // namespace

std::span<const Method> moe_methods() { return kMethods; }

}  // namespace tally::api
