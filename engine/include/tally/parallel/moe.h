// Mixture-of-experts layer accounting: expert parallelism (experts sharded over an EP group), the
// capacity factor (token buffers, dropped tokens, padded compute) and the router.
#pragma once

#include <cstdint>

#include "tally/model/model.h"

namespace tally {

struct MoeSetup {
    std::int64_t seq = 2048;       // s
    std::int64_t micro_batch = 1;  // b
    std::int64_t tp = 1;           // tensor parallel degree (experts' matrices split like dense MLPs)
    std::int64_t ep = 1;           // expert parallel degree: each GPU holds num_experts / ep experts
    // Capacity factor (Fedus et al. 2022, Switch Transformer, sec. 2.1: capacity = tokens/experts × cf;
    // with top-k routing the k·tokens assignments are spread, Lepikhin et al. 2021, GShard, sec. 2.2).
    // 0: no capacity limit (dropless, e.g. Megablocks, Gale et al. 2023): each expert takes what it is sent.
    double capacity_factor = 0;
    std::int64_t activation_bytes = 2;
};

struct MoeLayer {
    std::int64_t local_experts = 0;        // num_experts / ep on each GPU
    double tokens_per_gpu = 0;             // s·b tokens entering the layer on one GPU (one micro-batch)
    double assignments_per_gpu = 0;        // k·s·b (token, expert) pairs routed from one GPU
    double tokens_per_expert = 0;          // balanced routing: k·s·b·ep / E tokens per expert per micro-batch
    double expert_capacity = 0;            // ceil(cf · k·s·b·ep / E) slots per expert (0 when dropless)
    double expert_slots_per_gpu = 0;       // rows the GPU's experts compute: capacity × local experts, or k·s·b
    double dropped_fraction_balanced = 0;  // max(0, 1 − cf): the least a capacity below 1 must drop
    // Per layer, one micro-batch, per GPU: the all-to-all dispatch and combine send each assignment's
    // h-wide hidden state to the GPU holding its expert; (ep−1)/ep of them leave the GPU. Forward 2 (dispatch
    // and combine), backward 2 more (their gradients) (Rajbhandari et al. 2022, DeepSpeed-MoE, sec. 5).
    double all_to_all_bytes_forward = 0;
    double all_to_all_bytes_per_step_layer = 0;  // forward + backward
    // Router: a linear h → E per layer (replicated), its FLOPs per token and the tensors it saves.
    std::uint64_t router_params_per_layer = 0;  // E·h
    double router_flops_per_token_forward = 0;  // 2·h·E
    std::uint64_t router_activation_bytes = 0;  // fp32 softmax probabilities s·b·E + int64 top-k indices s·b·k
    double expert_compute_factor = 0;           // routed expert rows per token: slots / tokens (k, or cf·k)
};

// InputError naming the field: ep must divide num_experts; capacity_factor 0 or in (0, 64].
MoeLayer moe_layer(const ModelConfig& config, const MoeSetup& setup);

// Token drops under random routing: each of `tokens` tokens picks top_k of `experts` experts uniformly, so an
// expert's load is Binomial(tokens, top_k / experts) even when the router is balanced on average, and a
// capacity of ceil(cf x tokens x top_k / experts) slots drops what lands above it (Fedus et al. 2022, Switch
// Transformer, sec. 2.2: drops with capacity factor 1.0 against 1.25).
struct RandomRouting {
    double mean_load = 0;                  // tokens x top_k / experts
    double load_stddev = 0;                // sqrt(n p (1 - p))
    double capacity = 0;                   // slots per expert
    double expected_dropped_fraction = 0;  // E[sum over experts of max(0, load - capacity)] / (tokens x top_k)
    double overflow_probability = 0;       // P(one expert's load > capacity)
};
// InputError naming tokens (1..2^31), experts (1..65536), top_k (1..experts) or capacity_factor (0, 64].
RandomRouting random_routing(double tokens, std::int64_t experts, std::int64_t top_k, double capacity_factor);

}  // namespace tally
