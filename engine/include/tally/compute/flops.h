// Forward and training FLOPs, counted matmul by matmul (2mnk each), beside the 6ND estimate.
#pragma once

#include <cstdint>
#include <vector>

#include "tally/model/model.h"

namespace tally {

// 6N: training FLOPs per token of a model with N parameters, about 2N forward and 4N backward
// (Kaplan et al. 2020, "Scaling Laws for Neural Language Models", sec. 2.1). The one home of the rule:
// the FLOP count (flops.cpp), training time and the API all call it.
inline double six_n(double params) { return 6 * params; }

// Attention scores QKᵀ and attention·V over the full s×s matrix (what a naive implementation
// executes, and what the published MFU formulas count: default) or the causal lower triangle
// including the diagonal, s(s+1)/2 entries (what a block-skipping fused kernel executes).
enum class AttentionFlops { Full, Causal };
enum class Recompute { None, Selective, Full };

// Per-operation recomputation (a bit set): which tensors of a layer are dropped in the forward pass and
// rebuilt in the backward pass. Selective recomputation (Korthikanti et al. 2022, sec. 5) is
// kAttentionScores; the others extend it operation by operation (as JAX's checkpoint policies and
// Megatron-LM's --recompute-modules do).
enum RecomputeOp : unsigned {
    kRecomputeAttentionScores = 1u << 0,  // softmax output, its dropout mask and output: redo Q·Kᵀ and attention·V
    kRecomputeQkv = 1u << 1,              // Q, K, V: redo the Q, K, V projections
    kRecomputeNorms = 1u << 2,            // norm outputs (Q/K/V input, MLP input): redo the norms, no matmul FLOPs
    kRecomputeMlpUp = 1u << 3,            // up (and gate) projection outputs: redo those matmuls
    kRecomputeMlpActivation = 1u << 4,  // activation output (down projection input): redo GELU/SiLU·up, no matmul FLOPs
};
inline constexpr unsigned kRecomputeOpsAll = (1u << 5) - 1;
// "attention_scores", "qkv", "norms", "mlp_up", "mlp_activation"; comma-separated lists parse to a set.
const char* recompute_op_name(RecomputeOp op);
unsigned recompute_ops_from_string(const std::string& text);  // InputError field "recompute_ops"
std::string recompute_ops_to_string(unsigned ops);            // "" for none

const char* to_string(AttentionFlops mode);
const char* to_string(Recompute mode);
AttentionFlops attention_flops_from_string(const std::string& text);  // InputError field "attention_flops"
Recompute recompute_from_string(const std::string& text);             // InputError field "recompute"

struct FlopsTerm {
    const char* id;  // qkv, attn_scores, attn_values, indexer, attn_out, mlp, router, lm_head
    const char* name;
    const char* formula;  // per sequence of s tokens, all layers
    double forward_per_sequence = 0;
    const char* formula_per_token = "";  // the same count per token (the formula divided by s), all layers
};

// Layers of the largest pipeline stage: ceil(L / pp), when L does not divide evenly among the stages.
inline std::int64_t pipeline_stage_layers(std::int64_t layers, std::int64_t pp) { return (layers + pp - 1) / pp; }

struct FlopsInput {
    std::int64_t seq = 2048;
    AttentionFlops attention = AttentionFlops::Full;
    Recompute recompute = Recompute::None;
    bool flash_attention = false;  // its backward recomputes QKᵀ (Dao 2023, FlashAttention-2, Alg. 2)
    unsigned recompute_ops = 0;    // RecomputeOp set, on top of `recompute` (none or selective)
    // Layers per pipeline stage with full recomputation (Megatron-LM --recompute-num-layers, block
    // method) out of layers_per_stage; the others follow recompute/recompute_ops.
    std::int64_t recompute_layers = 0;
    std::int64_t layers_per_stage = 0;  // 0: all layers (pp = 1)
    // MoE capacity factor (moe.h): experts compute cf·k slots per token instead of k (padding above 1,
    // dropped assignments below). 0: no capacity limit.
    double capacity_factor = 0;
    // Encoder-decoder: target length, the decoder stack's positions (0: seq). The encoder runs over seq input
    // tokens; per-token figures are per input token. Must be 0 for other models.
    std::int64_t decoder_seq = 0;
};

struct FlopsResult {
    std::vector<FlopsTerm> terms;
    double forward_per_sequence = 0;  // exact matmul FLOPs of one forward pass over s tokens
    double forward_per_token = 0;     // forward_per_sequence / s
    double model_per_token = 0;       // 3 × forward (backward = 2× forward): the MFU numerator
    double recompute_per_token = 0;   // extra forward work from recomputation (hardware FLOPs)
    // MoE with a capacity factor: expert work on padded slots (> 0) or skipped for dropped tokens (< 0),
    // forward and backward: 3 · 2 h f · matrices · (cf − 1) k · L. Hardware FLOPs, not model FLOPs.
    double capacity_per_token = 0;
    double training_per_token = 0;  // model + recompute + capacity
    double six_n = 0;               // 6 × total parameters
    double six_n_active = 0;        // 6 × active parameters (MoE)
    // Multi-token prediction modules (DeepSeek-V3 sec. 2.2), forward, per token: apart from the figures above
    // as their parameters are apart from the total (eh_proj, one MoE-layer block, the shared output head).
    double mtp_forward_per_token = 0;
};

FlopsResult count_flops(const ModelConfig& config, const FlopsInput& input);

// Where the forward FLOPs go, against what 6ND assumes: the attention scores and attention·V (which 6ND
// ignores and which grow with s), the LM head (which 6ND counts through N), and the embedding tables'
// share of N (a lookup: no matmul FLOPs, so 6ND overcounts them; 0 when tied to the LM head).
struct FlopsShares {
    double attention = 0;         // of the forward FLOPs
    double lm_head = 0;           // of the forward FLOPs
    double embedding_params = 0;  // of the total parameters
};
FlopsShares flops_shares(const ModelConfig& config, const FlopsResult& result);
// The shares as sentences for the CLI and the widgets.
std::vector<std::string> flops_notes(const ModelConfig& config, const FlopsInput& input, const FlopsResult& result);

// The sequence length the FLOP count uses when none is given: the model's learned position table if it
// has one, capped at 2048 (the GPT-3 context, Brown et al. 2020, Table 2.1).
std::int64_t default_seq(const ModelConfig& config);

}  // namespace tally
