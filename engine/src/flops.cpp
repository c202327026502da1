#include "tally/flops.h"

#include "tally/error.h"
#include "tally/params.h"

namespace tally {

const char* to_string(AttentionFlops mode) { return mode == AttentionFlops::Full ? "full" : "causal"; }

const char* to_string(Recompute mode) {
    switch (mode) {
        case Recompute::None: return "none";
        case Recompute::Selective: return "selective";
        case Recompute::Full: return "full";
    }
    return "?";
}

AttentionFlops attention_flops_from_string(const std::string& text) {
    if (text == "full") return AttentionFlops::Full;
    if (text == "causal") return AttentionFlops::Causal;
    throw InputError("attention_flops", "attention_flops must be full or causal, got \"" + text + "\"");
}

Recompute recompute_from_string(const std::string& text) {
    if (text == "none") return Recompute::None;
    if (text == "selective") return Recompute::Selective;
    if (text == "full") return Recompute::Full;
    throw InputError("recompute", "recompute must be none, selective or full, got \"" + text + "\"");
}

// Longest sequence accepted (2^30 tokens): far beyond any context window, and s² stays exact in a double.
inline constexpr std::int64_t kMaxSeq = std::int64_t{1} << 30;

FlopsResult count_flops(const ModelConfig& c, const FlopsInput& in) {
    validate(c);
    if (in.seq < 1 || in.seq > kMaxSeq)
        throw InputError("seq", "seq must be a whole number in [1, " + std::to_string(kMaxSeq) + "], got " +
                                    std::to_string(in.seq));
    const ParamCount p = count_params(c);
    // All products below are of whole numbers; doubles keep them exact up to 2^53 and round the
    // same way natively and in wasm beyond that (no FMA contraction, no transcendental functions).
    const double s = static_cast<double>(in.seq);
    const double h = static_cast<double>(c.hidden_size);
    const double L = static_cast<double>(c.num_layers);
    const double qd = static_cast<double>(c.q_dim());
    const double kvd = static_cast<double>(c.kv_dim());
    const double f = static_cast<double>(c.ffn_hidden_size);
    const double V = static_cast<double>(c.vocab_size);
    // Score entries per head per sequence: s² (full) or s(s+1)/2 (causal, diagonal included).
    const double entries = in.attention == AttentionFlops::Full ? s * s : s * (s + 1) / 2;
    const double experts_visited =
        c.is_moe() ? static_cast<double>(c.experts_per_token + c.num_shared_experts) : 1.0;

    FlopsResult r;
    r.terms.push_back({"qkv", "Q, K, V projections", "2 s h (a d + 2 n_kv d) L", 2 * s * h * (qd + 2 * kvd) * L,
                       "2 h (a d + 2 n_kv d) L"});
    r.terms.push_back({"attn_scores", "attention scores Q·Kᵀ",
                       in.attention == AttentionFlops::Full ? "2 s² a d L" : "2 [s(s+1)/2] a d L",
                       2 * entries * qd * L,
                       in.attention == AttentionFlops::Full ? "2 s a d L" : "2 [(s+1)/2] a d L"});
    r.terms.push_back({"attn_values", "attention · V",
                       in.attention == AttentionFlops::Full ? "2 s² a d L" : "2 [s(s+1)/2] a d L",
                       2 * entries * qd * L,
                       in.attention == AttentionFlops::Full ? "2 s a d L" : "2 [(s+1)/2] a d L"});
    r.terms.push_back({"attn_out", "attention output projection", "2 s a d h L", 2 * s * qd * h * L, "2 a d h L"});
    const double matrices = static_cast<double>(c.mlp_matrices());
    r.terms.push_back({"mlp", c.is_moe() ? "MLP (experts visited per token)" : "MLP",
                       c.mlp == MlpKind::Gelu ? (c.is_moe() ? "2 s h f · 2 · (k + shared) L" : "2 s h f · 2 L")
                                              : (c.is_moe() ? "2 s h f · 3 · (k + shared) L" : "2 s h f · 3 L"),
                       2 * s * h * f * matrices * experts_visited * L,
                       c.mlp == MlpKind::Gelu ? (c.is_moe() ? "2 h f · 2 · (k + shared) L" : "2 h f · 2 L")
                                              : (c.is_moe() ? "2 h f · 3 · (k + shared) L" : "2 h f · 3 L")});
    if (c.is_moe())
        r.terms.push_back({"router", "MoE router", "2 s h E L", 2 * s * h * static_cast<double>(c.num_experts) * L, "2 h E L"});
    r.terms.push_back({"lm_head", "LM head (logits)", "2 s h V", 2 * s * h * V, "2 h V"});

    double forward = 0;
    double scores = 0;
    double lm_head = 0;
    for (const FlopsTerm& t : r.terms) {
        forward += t.forward_per_sequence;
        if (std::string_view(t.id) == "attn_scores") scores = t.forward_per_sequence;
        if (std::string_view(t.id) == "lm_head") lm_head = t.forward_per_sequence;
    }
    const double values = scores;  // same count as the scores
    r.forward_per_sequence = forward;
    r.forward_per_token = forward / s;
    r.model_per_token = 3 * r.forward_per_token;
    // Recomputation (Korthikanti et al. 2022, sec. 5): full redoes every layer's forward (not the LM
    // head); selective redoes QKᵀ and attention·V; FlashAttention's backward redoes QKᵀ itself.
    double recompute = 0;
    if (in.recompute == Recompute::Full) recompute = forward - lm_head;
    else if (in.recompute == Recompute::Selective) recompute = in.flash_attention ? scores : scores + values;
    else if (in.flash_attention) recompute = scores;
    if (in.recompute == Recompute::Full && in.flash_attention) recompute += scores;
    r.recompute_per_token = recompute / s;
    r.training_per_token = r.model_per_token + r.recompute_per_token;
    r.six_n = 6 * static_cast<double>(p.total);
    r.six_n_active = 6 * static_cast<double>(p.active);
    return r;
}

}  // namespace tally
