#include "tally/compute/flops.h"

#include <algorithm>

#include "tally/base/error.h"
#include "tally/base/names.h"
#include "tally/model/params.h"

namespace tally {

namespace {
constexpr Named<AttentionFlops> kAttentionNames[] = {{AttentionFlops::Full, "full"},
                                                     {AttentionFlops::Causal, "causal"}};
constexpr Named<Recompute> kRecomputeNames[] = {
    {Recompute::None, "none"}, {Recompute::Selective, "selective"}, {Recompute::Full, "full"}};
}  // namespace

const char* to_string(AttentionFlops mode) { return name_of(kAttentionNames, mode, "causal"); }

const char* to_string(Recompute mode) { return name_of(kRecomputeNames, mode, "?"); }

AttentionFlops attention_flops_from_string(const std::string& text) {
    if (const auto mode = value_named(kAttentionNames, text)) return *mode;
    throw InputError("attention_flops", "attention_flops must be full or causal, got \"" + text + "\"");
}

Recompute recompute_from_string(const std::string& text) {
    if (const auto mode = value_named(kRecomputeNames, text)) return *mode;
    throw InputError("recompute", "recompute must be none, selective or full, got \"" + text + "\"");
}

namespace {
constexpr RecomputeOp kOps[] = {kRecomputeAttentionScores, kRecomputeQkv, kRecomputeNorms, kRecomputeMlpUp,
                                kRecomputeMlpActivation};
}  // namespace

const char* recompute_op_name(RecomputeOp op) {
    switch (op) {
        case kRecomputeAttentionScores: return "attention_scores";
        case kRecomputeQkv: return "qkv";
        case kRecomputeNorms: return "norms";
        case kRecomputeMlpUp: return "mlp_up";
        case kRecomputeMlpActivation: return "mlp_activation";
    }
    return "?";
}

unsigned recompute_ops_from_string(const std::string& text) {
    unsigned ops = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        const std::string name = text.substr(start, end - start);
        bool known = false;
        for (RecomputeOp op : kOps)
            if (name == recompute_op_name(op)) {
                ops |= op;
                known = true;
            }
        if (!known && !(name.empty() && text.empty()))
            throw InputError("recompute_ops",
                             "recompute_ops must be a comma-separated list of attention_scores, qkv, "
                             "norms, mlp_up, mlp_activation, got \"" +
                                 name + "\"");
        start = end + 1;
    }
    return ops;
}

std::string recompute_ops_to_string(unsigned ops) {
    std::string out;
    for (RecomputeOp op : kOps)
        if ((ops & op) != 0) out += (out.empty() ? "" : ",") + std::string(recompute_op_name(op));
    return out;
}

FlopsShares flops_shares(const ModelConfig& c, const FlopsResult& r) {
    double attention = 0, lm_head = 0;
    for (const FlopsTerm& t : r.terms) {
        const std::string_view id = t.id;
        if (id == "attn_scores" || id == "attn_values" || id == "indexer") attention += t.forward_per_sequence;
        if (id == "lm_head") lm_head = t.forward_per_sequence;
    }
    const ParamCount p = count_params(c);
    FlopsShares out;
    out.attention = attention / r.forward_per_sequence;
    out.lm_head = lm_head / r.forward_per_sequence;
    out.embedding_params =
        static_cast<double>(c.tied_embeddings ? 0 : p.embedding + p.position_embedding) / static_cast<double>(p.total);
    return out;
}

std::vector<std::string> flops_notes(const ModelConfig& c, const FlopsInput& in, const FlopsResult& r) {
    const FlopsShares share = flops_shares(c, r);
    std::vector<std::string> notes;
    notes.push_back(std::string(c.has_indexer() ? "attention scores, attention·V and the indexer's scores are "
                                                : "attention scores and attention·V are ") +
                    format_percent(share.attention) + "% of the forward FLOPs at seq " + std::to_string(in.seq) +
                    " (6ND ignores them; they grow with seq)");
    notes.push_back("the LM head is " + format_percent(share.lm_head) +
                    "% of the forward FLOPs (6ND counts it through N)");
    if (share.embedding_params > 0)
        notes.push_back("embedding tables are " + format_percent(share.embedding_params) +
                        "% of N but do no matmul FLOPs (a lookup), so 6ND overcounts them");
    return notes;
}

std::int64_t default_seq(const ModelConfig& c) {
    return std::min<std::int64_t>(c.max_positions > 0 ? c.max_positions : 2048, 2048);
}

FlopsResult count_flops(const ModelConfig& c, const FlopsInput& in) {
    validate(c);
    if (in.seq < 1 || in.seq > kMaxSeq)
        throw InputError(
            "seq", "seq must be a whole number in [1, " + std::to_string(kMaxSeq) + "], got " + std::to_string(in.seq));
    if (in.decoder_seq != 0 && !c.is_encoder_decoder())
        throw InputError("decoder_seq",
                         "decoder_seq (a target length) applies to an encoder-decoder (architecture "
                         "encoder_decoder) only");
    if (in.decoder_seq < 0 || in.decoder_seq > kMaxSeq)
        throw InputError("decoder_seq", "decoder_seq must be a whole number in [1, " + std::to_string(kMaxSeq) +
                                            "] (0: seq), got " + std::to_string(in.decoder_seq));
    const ParamCount p = count_params(c);
    // All products below are of whole numbers; doubles keep them exact up to 2^53 and round the
    // same way natively and in wasm beyond that (no FMA contraction, no transcendental functions).
    const double s = static_cast<double>(in.seq);
    const double h = static_cast<double>(c.hidden_size);
    const double L = static_cast<double>(c.num_layers);
    // Layers with softmax attention: all of them but a hybrid's linear-attention and Mamba-2 layers.
    const double La = static_cast<double>(c.num_attention_layers());
    const bool hybrid = c.is_hybrid() || c.single_module_blocks();  // attention in some layers only
    const double qd = static_cast<double>(c.q_dim());
    const double kvd = static_cast<double>(c.kv_dim());
    const double f = static_cast<double>(c.ffn_hidden_size);
    const double V = static_cast<double>(c.vocab_size);
    // Encoder-decoder: the encoder's L − L_dec layers run over s input tokens, the decoder's L_dec over s_dec
    // target tokens (= s unless decoder_seq says otherwise); position-wise work scales with their sum.
    const double Ld = static_cast<double>(c.num_decoder_layers);
    const double sd = in.decoder_seq > 0 ? static_cast<double>(in.decoder_seq) : s;
    const bool split = c.is_encoder_decoder() && sd != s;
    const double token_layers = s * (L - Ld) + sd * Ld;  // = s·L unless split
    // Score entries per head per sequence: s² (full) or s(s+1)/2 (causal, diagonal included), at the
    // length of the layers that may be causal (a decoder's).
    const double entries = in.attention == AttentionFlops::Full ? sd * sd : sd * (sd + 1) / 2;
    // DeepSeek Sparse Attention: the indexer's heads and width, and the keys each query keeps (k).
    const double nI = static_cast<double>(c.index_n_heads), dI = static_cast<double>(c.index_head_dim);
    const double topk = static_cast<double>(c.index_topk);
    const double experts_visited = c.is_moe() ? static_cast<double>(c.experts_per_token + c.num_shared_experts) : 1.0;

    FlopsResult r;
    const double od = static_cast<double>(c.o_dim());  // attention output width a·d_v
    const double vd = static_cast<double>(c.v_dim());
    // Multiply-adds of one token's Q, K, V projections in one layer. MLA (DeepSeek-V2 sec. 2.1, as trained):
    // Q down and up, the KV latent and RoPE key down, then every head's no-RoPE key and value up.
    double projection = h * (qd + kvd + vd);
    const char* qkv_formula = "2 s h (a d + 2 n_kv d) L";
    const char* qkv_per_token = "2 h (a d + 2 n_kv d) L";
    if (c.is_mla()) {
        const double rq = static_cast<double>(c.q_lora_rank), rkv = static_cast<double>(c.kv_lora_rank);
        const double dr = static_cast<double>(c.qk_rope_head_dim), a = static_cast<double>(c.num_heads);
        const double dn = static_cast<double>(c.head_dim) - dr, dv = static_cast<double>(c.v_dim_per_head());
        projection = (rq > 0 ? h * rq + rq * qd : h * qd) + h * (rkv + dr) + rkv * a * (dn + dv);
        qkv_formula = rq > 0 ? "2 s [h r_q + r_q a d_qk + h (r_kv + d_rope) + r_kv a (d_nope + d_v)] L"
                             : "2 s [h a d_qk + h (r_kv + d_rope) + r_kv a (d_nope + d_v)] L";
        qkv_per_token = rq > 0 ? "2 [h r_q + r_q a d_qk + h (r_kv + d_rope) + r_kv a (d_nope + d_v)] L"
                               : "2 [h a d_qk + h (r_kv + d_rope) + r_kv a (d_nope + d_v)] L";
        // The lightning indexer's projections: its queries from the Q latent, its key and head weights from h.
        if (c.has_indexer()) {
            projection += rq * nI * dI + h * dI + h * nI;
            qkv_formula =
                "2 s [h r_q + r_q a d_qk + h (r_kv + d_rope) + r_kv a (d_nope + d_v) + r_q n_I d_I + h d_I + h n_I] L";
            qkv_per_token =
                "2 [h r_q + r_q a d_qk + h (r_kv + d_rope) + r_kv a (d_nope + d_v) + r_q n_I d_I + h d_I + h n_I] L";
        }
    } else if (vd != kvd) {
        qkv_formula = "2 s h (a d + n_kv d + n_kv d_v) L";
        qkv_per_token = "2 h (a d + n_kv d + n_kv d_v) L";
    }
    // Qwen3-Next's gated attention: q_proj also yields the a·d output gate.
    if (c.attn_output_gate) projection += h * qd;
    if (hybrid && c.is_mla()) {
        // Kimi Linear: MLA in the attention layers only.
        qkv_formula = c.q_lora_rank > 0 ? "2 s [h r_q + r_q a d_qk + h (r_kv + d_rope) + r_kv a (d_nope + d_v)] L_attn"
                                        : "2 s [h a d_qk + h (r_kv + d_rope) + r_kv a (d_nope + d_v)] L_attn";
        qkv_per_token = c.q_lora_rank > 0 ? "2 [h r_q + r_q a d_qk + h (r_kv + d_rope) + r_kv a (d_nope + d_v)] L_attn"
                                          : "2 [h a d_qk + h (r_kv + d_rope) + r_kv a (d_nope + d_v)] L_attn";
    } else if (hybrid) {
        qkv_formula = c.attn_output_gate ? "2 s h (2 a d + 2 n_kv d) L_attn" : "2 s h (a d + 2 n_kv d) L_attn";
        qkv_per_token = c.attn_output_gate ? "2 h (2 a d + 2 n_kv d) L_attn" : "2 h (a d + 2 n_kv d) L_attn";
    }
    r.terms.push_back({"qkv", "Q, K, V projections",
                       split ? "2 (s L_enc + s_dec L_dec) h (a d + 2 n_kv d)" : qkv_formula,
                       split ? 2 * token_layers * projection : 2 * s * projection * La,
                       split ? "2 (s L_enc + s_dec L_dec) h (a d + 2 n_kv d) / s" : qkv_per_token});
    // Only a decoder's self-attention is causal; an encoder's attends to every position (Devlin et al.
    // 2019, sec. 3; Raffel et al. 2020, sec. 2.1), so its layers always count the full s×s.
    const double causal_layers = c.architecture == Architecture::Encoder ? 0 : c.is_encoder_decoder() ? Ld : La;
    // Sliding-window layers: each query meets at most W keys (itself and the W − 1 before it, the band of
    // transformers' sliding-window mask): s·min(s, W) entries (full), Σᵢ min(i, W) (causal).
    const double Lw = static_cast<double>(c.num_sliding_layers), W = static_cast<double>(c.sliding_window);
    // Entries when each query meets at most `keys` keys: a window of W, or DeepSeek Sparse Attention's top-k
    // (a query at position i keeps min(i, k) of its i visible keys; DeepSeek-V3.2-Exp inference/model.py topk).
    auto capped_entries = [&](double keys) {
        return in.attention == AttentionFlops::Full ? s * std::min(s, keys)
               : s <= keys                          ? s * (s + 1) / 2
                                                    : keys * (keys + 1) / 2 + (s - keys) * keys;
    };
    const double window_entries = capped_entries(W);
    // The layers that are not causal (an encoder's) see all s² entries; a decoder has none.
    const double full_layers = c.architecture == Architecture::Decoder ? 0 : L - causal_layers;
    // With the indexer every layer's attention core runs over the top-k keys only (no windows then: validate).
    const double score_entries = c.has_indexer()
                                     ? capped_entries(topk) * La
                                     : entries * (causal_layers - Lw) + window_entries * Lw + s * s * full_layers;
    const bool decoder_only = c.architecture == Architecture::Decoder;
    // Q·Kᵀ and attention·V multiply the same a·d-wide operands over the same score entries: one count, two terms.
    const char* attention_core_formula = split ? "2 (s² L_enc + s_dec² L_dec) a d (decoder layers: as chosen)"
                                         : !decoder_only
                                             ? "2 s² a d L (encoder layers: full; decoder layers: as chosen)"
                                         : in.attention == AttentionFlops::Full ? "2 s² a d L"
                                                                                : "2 [s(s+1)/2] a d L";
    const char* attention_core_per_token = split           ? "2 (s² L_enc + s_dec² L_dec) a d / s"
                                           : !decoder_only ? "2 s a d L"
                                           : in.attention == AttentionFlops::Full ? "2 s a d L"
                                                                                  : "2 [(s+1)/2] a d L";
    const char* values_formula = attention_core_formula;
    const char* values_per_token = attention_core_per_token;
    const bool full_scores = in.attention == AttentionFlops::Full;
    if (c.sliding_window > 0) {
        attention_core_formula =
            full_scores ? "2 [s² (L − L_w) + s min(s, W) L_w] a d" : "2 [s(s+1)/2 (L − L_w) + Σᵢ min(i, W) L_w] a d";
        attention_core_per_token =
            full_scores ? "2 [s (L − L_w) + min(s, W) L_w] a d" : "2 [(s+1)/2 (L − L_w) + Σᵢ min(i, W)/s L_w] a d";
        values_formula = od != qd ? (full_scores ? "2 [s² (L − L_w) + s min(s, W) L_w] a d_v"
                                                 : "2 [s(s+1)/2 (L − L_w) + Σᵢ min(i, W) L_w] a d_v")
                                  : attention_core_formula;
        values_per_token = od != qd ? (full_scores ? "2 [s (L − L_w) + min(s, W) L_w] a d_v"
                                                   : "2 [(s+1)/2 (L − L_w) + Σᵢ min(i, W)/s L_w] a d_v")
                                    : attention_core_per_token;
    } else if (od != qd) {
        values_formula = full_scores ? "2 s² a d_v L" : "2 [s(s+1)/2] a d_v L";
        values_per_token = full_scores ? "2 s a d_v L" : "2 [(s+1)/2] a d_v L";
    }
    if (c.has_indexer()) {
        attention_core_formula = full_scores ? "2 s min(s, k) a d_qk L" : "2 [Σᵢ min(i, k)] a d_qk L";
        attention_core_per_token = full_scores ? "2 min(s, k) a d_qk L" : "2 [Σᵢ min(i, k) / s] a d_qk L";
        values_formula = full_scores ? "2 s min(s, k) a d_v L" : "2 [Σᵢ min(i, k)] a d_v L";
        values_per_token = full_scores ? "2 min(s, k) a d_v L" : "2 [Σᵢ min(i, k) / s] a d_v L";
    }
    if (hybrid) {
        attention_core_formula = full_scores ? "2 s² a d L_attn" : "2 [s(s+1)/2] a d L_attn";
        attention_core_per_token = full_scores ? "2 s a d L_attn" : "2 [(s+1)/2] a d L_attn";
        values_formula = attention_core_formula;
        values_per_token = attention_core_per_token;
    }
    // Q·Kᵀ runs over the Q/K head width d, attention·V over the value head width d_v (= d unless MLA).
    r.terms.push_back({"attn_scores", "attention scores Q·Kᵀ", attention_core_formula, 2 * score_entries * qd,
                       attention_core_per_token});
    r.terms.push_back({"attn_values", "attention · V", values_formula, 2 * score_entries * od, values_per_token});
    // The lightning indexer scores every visible key for every query, dense: per entry n_I dot products of d_I
    // and the weighted sum over its heads, n_I·(d_I + 1) multiply-adds (DeepSeek-V3.2-Exp inference/model.py,
    // Indexer.forward: index_score from q·k and weights_proj's weights).
    const double indexer_entries = entries * La;
    if (c.has_indexer())
        r.terms.push_back({"indexer", "lightning indexer scores (every visible key)",
                           full_scores ? "2 s² n_I (d_I + 1) L" : "2 [s(s+1)/2] n_I (d_I + 1) L",
                           2 * indexer_entries * nI * (dI + 1),
                           full_scores ? "2 s n_I (d_I + 1) L" : "2 [(s+1)/2] n_I (d_I + 1) L"});
    r.terms.push_back({"attn_out", "attention output projection",
                       split      ? "2 (s L_enc + s_dec L_dec) a d h"
                       : od != qd ? "2 s a d_v h L"
                                  : "2 s a d h L",
                       split ? 2 * token_layers * od * h : 2 * s * od * h * La,
                       split      ? "2 (s L_enc + s_dec L_dec) a d h / s"
                       : od != qd ? "2 a d_v h L"
                                  : "2 a d h L"});
    if (hybrid) {
        r.terms.back().formula = "2 s a d h L_attn";
        r.terms.back().formula_per_token = "2 a d h L_attn";
    }
    // Gated DeltaNet layers (Qwen3-Next; transformers modeling_qwen3_next.py): in_proj_qkvz and in_proj_ba, the
    // depthwise conv over Q, K, V (k_conv multiply-adds a channel), out_proj, and the recurrence of the gated
    // delta rule per value head, S_t = S_{t−1} α_t (I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ, o_t = S_t q_t (Yang, Kautz &
    // Hatamizadeh 2024, arXiv:2412.06464, eq. 10): S k, the rank-1 update and S q, 2 d_k d_v each. This is the
    // recurrent form's work, linear in s; chunked training kernels do a constant factor more.
    // Kimi Delta Attention (vllm kda.py @01a7e5d9, KimiDeltaAttention): q/k/v_proj, the low-rank forget and output
    // gates (h -> d -> H·d each), b_proj, the convs over Q, K, V, o_proj, and the same three d_k x d_v products per head
    // as the gated delta rule (its decay is per channel, Diag(α_t) S, a multiply the scalar-decay term leaves out too).
    if (c.num_linear_layers > 0 && c.linear_kind == LinearKind::Kda) {
        const double Ll = static_cast<double>(c.num_linear_layers);
        const double kd = static_cast<double>(c.linear_key_dim()), vdim = static_cast<double>(c.linear_value_dim());
        const double hv = static_cast<double>(c.linear_value_heads), d = static_cast<double>(c.linear_value_head_dim);
        const double conv = static_cast<double>(c.linear_conv_dim()), kc = static_cast<double>(c.linear_conv_kernel);
        const double state = hv * static_cast<double>(c.linear_key_head_dim) * d;
        const double per_token =
            2 * h * (2 * kd + vdim + 2 * d + hv) + 2 * d * (kd + vdim) + 2 * conv * kc + 6 * state + 2 * vdim * h;
        r.terms.push_back({"linear_attention", "Kimi Delta Attention (projections, gates, conv, recurrence)",
                           "2 s [h (3 H d + 2 d + H) + 2 d H d + 3 H d k_conv + 3 H d_k d_v + H d h] L_lin",
                           s * per_token * Ll,
                           "2 [h (3 H d + 2 d + H) + 2 d H d + 3 H d k_conv + 3 H d_k d_v + H d h] L_lin"});
    } else if (c.num_linear_layers > 0) {
        const double Ll = static_cast<double>(c.num_linear_layers);
        const double kd = static_cast<double>(c.linear_key_dim()), vdim = static_cast<double>(c.linear_value_dim());
        const double hv = static_cast<double>(c.linear_value_heads);
        const double conv = static_cast<double>(c.linear_conv_dim()), kc = static_cast<double>(c.linear_conv_kernel);
        const double state =
            hv * static_cast<double>(c.linear_key_head_dim) * static_cast<double>(c.linear_value_head_dim);
        const double per_token = 2 * h * (2 * kd + 2 * vdim + 2 * hv) + 2 * conv * kc + 6 * state + 2 * vdim * h;
        r.terms.push_back({"linear_attention", "gated DeltaNet linear attention (projections, conv, recurrence)",
                           "2 s [h (2 H_k d_k + 2 H_v d_v + 2 H_v) + (2 H_k d_k + H_v d_v) k_conv + 3 H_v d_k d_v + "
                           "H_v d_v h] L_lin",
                           s * per_token * Ll,
                           "2 [h (2 H_k d_k + 2 H_v d_v + 2 H_v) + (2 H_k d_k + H_v d_v) k_conv + 3 H_v d_k d_v + "
                           "H_v d_v h] L_lin"});
    }
    // Mamba-2 layers (Granite 4.0-H; transformers modeling_granitemoehybrid.py): in_proj to z, x, B, C and dt, the
    // depthwise conv over x, B, C, out_proj, and the SSM recurrence per head, h_t = a_t h_{t−1} + x_t B_tᵀ,
    // y_t = h_t C_t (Dao & Gu 2024, arXiv:2405.21060, sec. 3, the SSD recurrence): 2 P N each for the update and
    // the readout. The recurrent form's work, linear in s; the chunked SSD algorithm does a constant factor more.
    // Mamba-1 layers (Jamba; transformers modeling_jamba.py @008f5c8c, JambaMambaMixer): in_proj to x and z, the conv
    // over x, x_proj to Δ's rank-R input, B and C, dt_proj, out_proj, and the selective scan per channel, h_t = exp(Δ_t
    // A) h_{t−1} + Δ_t B_t x_t, y_t = C_t h_t (Gu & Dao 2023, arXiv:2312.00752, Algorithm 2): 2 N each, as Mamba-2's.
    if (c.num_mamba_layers > 0 && c.is_mamba1()) {
        const double Lm = static_cast<double>(c.num_mamba_layers);
        const double di = static_cast<double>(c.mamba_d_inner()), n = static_cast<double>(c.mamba_d_state);
        const double rank = static_cast<double>(c.mamba_dt_rank), kc = static_cast<double>(c.mamba_conv_kernel);
        const double per_token =
            2 * h * 2 * di + 2 * di * kc + 2 * di * (rank + 2 * n) + 2 * rank * di + 4 * di * n + 2 * di * h;
        r.terms.push_back({"mamba", "Mamba-1 mixer (projections, conv, selective scan)",
                           "2 s [h 2 d_inner + d_inner k_conv + d_inner (R + 2 N) + R d_inner + 2 d_inner N + "
                           "d_inner h] L_mamba",
                           s * per_token * Lm,
                           "2 [h 2 d_inner + d_inner k_conv + d_inner (R + 2 N) + R d_inner + 2 d_inner N + d_inner h] "
                           "L_mamba"});
    } else if (c.num_mamba_layers > 0) {
        const double Lm = static_cast<double>(c.num_mamba_layers);
        const double di = static_cast<double>(c.mamba_d_inner()), nh = static_cast<double>(c.mamba_heads);
        const double conv = static_cast<double>(c.mamba_conv_dim()), kc = static_cast<double>(c.mamba_conv_kernel);
        const double state = di * static_cast<double>(c.mamba_d_state);  // H·P·N
        const double per_token = 2 * h * (di + conv + nh) + 2 * conv * kc + 4 * state + 2 * di * h;
        r.terms.push_back({"mamba", "Mamba-2 mixer (projections, conv, SSM recurrence)",
                           "2 s [h (2 d_inner + 2 G N + H) + (d_inner + 2 G N) k_conv + 2 H P N + d_inner h] L_mamba",
                           s * per_token * Lm,
                           "2 [h (2 d_inner + 2 G N + H) + (d_inner + 2 G N) k_conv + 2 H P N + d_inner h] L_mamba"});
    }
    const double matrices = static_cast<double>(c.mlp_matrices());
    // DeepSeek-style: the first L_dense layers run a dense MLP of width f_dense, the other L − L_dense the experts.
    const double Ld0 = static_cast<double>(c.num_dense_layers), Lmoe = L - Ld0;
    // Single-module blocks (Nemotron-H): the MLP runs in the num_mlp_blocks() blocks that hold one (L otherwise).
    const double Lmlp = static_cast<double>(c.num_mlp_blocks());
    const bool single = c.single_module_blocks();
    r.terms.push_back(
        {"mlp", c.is_moe() ? "MLP (experts visited per token)" : "MLP",
         split ? (c.mlp == MlpKind::Gelu ? "2 (s L_enc + s_dec L_dec) h f · 2" : "2 (s L_enc + s_dec L_dec) h f · 3")
         : c.num_dense_layers > 0 ? "2 s h · 3 · [f (k + shared) (L − L_dense) + f_dense L_dense]"
         : single                 ? (c.mlp == MlpKind::Gelu ? "2 s h f · 2 L_mlp" : "2 s h f · 3 L_mlp")
         : c.mlp == MlpKind::Gelu ? (c.is_moe() ? "2 s h f · 2 · (k + shared) L" : "2 s h f · 2 L")
                                  : (c.is_moe() ? "2 s h f · 3 · (k + shared) L" : "2 s h f · 3 L"),
         split ? 2 * token_layers * h * f * matrices * experts_visited
         : c.num_dense_layers > 0
             ? 2 * s * h * matrices * (f * experts_visited * Lmoe + static_cast<double>(c.dense_ffn_hidden_size) * Ld0)
             : 2 * s * h * f * matrices * experts_visited * Lmlp,
         split                    ? (c.mlp == MlpKind::Gelu ? "2 (s L_enc + s_dec L_dec) h f · 2 / s"
                                                            : "2 (s L_enc + s_dec L_dec) h f · 3 / s")
         : c.num_dense_layers > 0 ? "2 h · 3 · [f (k + shared) (L − L_dense) + f_dense L_dense]"
         : single                 ? (c.mlp == MlpKind::Gelu ? "2 h f · 2 L_mlp" : "2 h f · 3 L_mlp")
         : c.mlp == MlpKind::Gelu ? (c.is_moe() ? "2 h f · 2 · (k + shared) L" : "2 h f · 2 L")
                                  : (c.is_moe() ? "2 h f · 3 · (k + shared) L" : "2 h f · 3 L")});
    if (c.is_moe())
        r.terms.push_back({"router", "MoE router",
                           split                    ? "2 (s L_enc + s_dec L_dec) h E"
                           : c.num_dense_layers > 0 ? "2 s h E (L − L_dense)"
                                                    : "2 s h E L",
                           split ? 2 * token_layers * h * static_cast<double>(c.num_experts)
                                 : 2 * s * h * static_cast<double>(c.num_experts) * Lmoe,
                           split                    ? "2 (s L_enc + s_dec L_dec) h E / s"
                           : c.num_dense_layers > 0 ? "2 h E (L − L_dense)"
                                                    : "2 h E L"});
    // Encoder-decoder: each decoder layer attends over the encoder output: Q from the decoder's s_dec
    // positions, K and V from the encoder's s, s_dec×s scores, output projection (tally counts an example as
    // s input and s_dec target tokens; s_dec = s by default).
    double cross_core = 0;
    if (c.is_encoder_decoder()) {
        cross_core = split ? 2 * 2 * sd * s * qd * Ld : 2 * 2 * s * s * qd * Ld;
        r.terms.push_back({"cross_attention", "cross-attention (Q, K, V, Q·Kᵀ, ·V, output), decoder layers",
                           split ? "[2 s_dec h a d + 2 s h 2 n_kv d + 4 s_dec s a d + 2 s_dec a d h] L_dec"
                                 : "[2 s h (a d + 2 n_kv d) + 4 s² a d + 2 s a d h] L_dec",
                           split ? (2 * sd * h * qd + 2 * s * h * 2 * kvd + 4 * sd * s * qd + 2 * sd * qd * h) * Ld
                                 : (2 * s * h * (qd + 2 * kvd) + cross_core / Ld + 2 * s * qd * h) * Ld,
                           split ? "[2 s_dec h a d + 2 s h 2 n_kv d + 4 s_dec s a d + 2 s_dec a d h] L_dec / s"
                                 : "[2 h (a d + 2 n_kv d) + 4 s a d + 2 a d h] L_dec"});
    }
    // The logits over every position the model predicts (BertForMaskedLM and T5ForConditionalGeneration in
    // transformers compute them for all positions: the encoder's s, the decoder's s_dec).
    const double predicted = c.is_encoder_decoder() ? sd : s;
    r.terms.push_back({"lm_head", "LM head (logits)", split ? "2 s_dec h V" : "2 s h V", 2 * predicted * h * V,
                       split ? "2 s_dec h V / s" : "2 h V"});
    // BertForMaskedLM's transform (dense h×h before the tied decoder) runs on every position too.
    if (c.mlm_head)
        r.terms.push_back({"mlm_transform", "masked-LM transform (dense h×h)", "2 s h²", 2 * s * h * h, "2 h²"});
    if (c.pooler) r.terms.push_back({"pooler", "pooler (first token only)", "2 h²", 2 * h * h, "2 h² / s"});
    if (c.nsp_head) r.terms.push_back({"nsp", "next-sentence head (first token only)", "2 · 2 h", 4 * h, "4 h / s"});

    double forward = 0;
    double scores = 0;
    double lm_head = 0;
    for (const FlopsTerm& t : r.terms) {
        forward += t.forward_per_sequence;
        if (std::string_view(t.id) == "attn_scores") scores = t.forward_per_sequence;
        const std::string_view id = t.id;
        if (id == "lm_head" || id == "pooler" || id == "mlm_transform" || id == "nsp")
            lm_head += t.forward_per_sequence;
    }
    const double values = scores;  // same count as the scores
    r.forward_per_sequence = forward;
    r.forward_per_token = forward / s;
    r.model_per_token = 3 * r.forward_per_token;
    // Recomputation (Korthikanti et al. 2022, sec. 5): full redoes every layer's forward (not the LM
    // head); selective redoes QKᵀ and attention·V; FlashAttention's backward redoes QKᵀ itself.
    // Partial recomputation: per-operation choices add the forward matmuls that rebuild what they
    // dropped; `recompute_layers` of every stage's layers are recomputed in full instead.
    const unsigned ops = in.recompute_ops | (in.recompute == Recompute::Selective ? kRecomputeAttentionScores : 0u);
    if (in.recompute == Recompute::Full && (in.recompute_ops != 0 || in.recompute_layers != 0))
        throw InputError("recompute",
                         "recompute_ops and recompute_layers refine recompute none or selective, not full");
    const double layer_work = forward - lm_head;  // forward FLOPs of all layers
    double qkv = 0, mlp = 0;
    for (const FlopsTerm& t : r.terms) {
        const std::string_view id = t.id;
        if (id == "qkv") qkv = t.forward_per_sequence;
        if (id == "mlp") mlp = t.forward_per_sequence;
    }
    double partial = 0;  // recomputed work per layer choice, all layers
    // Cross-attention's core (its Q·Kᵀ and ·V) is recomputed with the self-attention's.
    if ((ops & kRecomputeAttentionScores) != 0)
        partial += in.flash_attention ? scores + cross_core / 2 : scores + values + cross_core;
    else if (in.flash_attention)
        partial += scores + cross_core / 2;
    if ((ops & kRecomputeQkv) != 0) partial += qkv;
    if ((ops & kRecomputeMlpUp) != 0) partial += mlp * (matrices - 1) / matrices;  // up (and gate), not down
    const double full = in.flash_attention ? layer_work + scores + cross_core / 2 : layer_work;
    double recompute = 0;
    if (in.recompute == Recompute::Full) {
        recompute = full;
    } else if (in.recompute_layers > 0) {
        const std::int64_t per_stage = in.layers_per_stage > 0 ? in.layers_per_stage : c.num_layers;
        if (in.recompute_layers > per_stage)
            throw InputError("recompute_layers", "recompute_layers must be a whole number in [0, " +
                                                     std::to_string(per_stage) + "] (layers per stage), got " +
                                                     std::to_string(in.recompute_layers));
        const double share = static_cast<double>(in.recompute_layers) / static_cast<double>(per_stage);
        recompute = share * full + (1 - share) * partial;
    } else {
        recompute = partial;
    }
    r.recompute_per_token = recompute / s;
    if (in.capacity_factor != 0) {
        if (!c.is_moe())
            throw InputError("capacity_factor", "capacity_factor needs a mixture-of-experts model (num_experts > 0)");
        if (!(in.capacity_factor > 0 && in.capacity_factor <= 64))
            throw InputError("capacity_factor", "capacity_factor must be 0 (no limit) or in (0, 64]");
        r.capacity_per_token = 3 * 2 * h * f * matrices * (in.capacity_factor - 1) *
                               static_cast<double>(c.experts_per_token) * (split ? token_layers / s : Lmoe);
    }
    r.training_per_token = r.model_per_token + r.recompute_per_token + r.capacity_per_token;
    if (c.mtp_modules > 0) {
        // Each MTP module: eh_proj (2h → h), one MoE layer's forward (attention over the model's average
        // layer), and the shared output head again.
        const double core_per_layer =
            2 * score_entries * (qd + od) / s / L + (c.has_indexer() ? 2 * entries * nI * (dI + 1) / s : 0);
        const double moe_layer_per_token = 2 * projection + core_per_layer + 2 * od * h +
                                           2 * h * f * matrices * experts_visited +
                                           2 * h * static_cast<double>(c.num_experts);
        r.mtp_forward_per_token =
            static_cast<double>(c.mtp_modules) * (2 * 2 * h * h + moe_layer_per_token + 2 * h * V);
    }
    r.six_n = six_n(static_cast<double>(p.total));
    r.six_n_active = six_n(static_cast<double>(p.active));
    return r;
}

}  // namespace tally
