// Forward and training FLOPs, counted matmul by matmul (2mnk each), beside the 6ND estimate.
#pragma once

#include <cstdint>
#include <vector>

#include "tally/model.h"

namespace tally {

// Attention scores QKᵀ and attention·V over the full s×s matrix (what a naive implementation
// executes, and what the published MFU formulas count: default) or the causal lower triangle
// including the diagonal, s(s+1)/2 entries (what a block-skipping fused kernel executes).
enum class AttentionFlops { Full, Causal };
enum class Recompute { None, Selective, Full };

const char* to_string(AttentionFlops mode);
const char* to_string(Recompute mode);
AttentionFlops attention_flops_from_string(const std::string& text);  // InputError field "attention_flops"
Recompute recompute_from_string(const std::string& text);             // InputError field "recompute"

struct FlopsTerm {
    const char* id;       // qkv, attn_scores, attn_values, attn_out, mlp, router, lm_head
    const char* name;
    const char* formula;  // per sequence of s tokens, all layers
    double forward_per_sequence = 0;
    const char* formula_per_token = "";  // the same count per token (the formula divided by s), all layers
};

struct FlopsInput {
    std::int64_t seq = 2048;
    AttentionFlops attention = AttentionFlops::Full;
    Recompute recompute = Recompute::None;
    bool flash_attention = false;  // its backward recomputes QKᵀ (Dao 2023, FlashAttention-2, Alg. 2)
};

struct FlopsResult {
    std::vector<FlopsTerm> terms;
    double forward_per_sequence = 0;  // exact matmul FLOPs of one forward pass over s tokens
    double forward_per_token = 0;     // forward_per_sequence / s
    double model_per_token = 0;       // 3 × forward (backward = 2× forward): the MFU numerator
    double recompute_per_token = 0;   // extra forward work from recomputation (hardware FLOPs)
    double training_per_token = 0;    // model + recompute
    double six_n = 0;                 // 6 × total parameters
    double six_n_active = 0;          // 6 × active parameters (MoE)
};

FlopsResult count_flops(const ModelConfig& config, const FlopsInput& input);

}  // namespace tally
