#include "tally/model/params.h"

#include <algorithm>

#include "tally/base/error.h"

namespace tally {

namespace {

using u64 = std::uint64_t;

u64 mul(u64 a, u64 b) { return checked_mul("params", a, b); }
u64 add(u64 a, u64 b) { return checked_add("params", a, b); }

}  // namespace

const char* component_id(Component c) {
    switch (c) {
        case Component::Embedding: return "embedding";
        case Component::PositionEmbedding: return "position_embedding";
        case Component::Attention: return "attention";
        case Component::Mlp: return "mlp";
        case Component::Norms: return "norms";
        case Component::FinalNorm: return "final_norm";
        case Component::LmHead: return "lm_head";
        case Component::EmbeddingExtras: return "embedding_extras";
        case Component::CrossAttention: return "cross_attention";
        case Component::Pooler: return "pooler";
        case Component::MlmHead: return "mlm_head";
        case Component::NspHead: return "nsp_head";
        case Component::Mtp: return "mtp";
        case Component::LinearAttention: return "linear_attention";
        case Component::Mamba: return "mamba";
    }
    return "?";
}

const char* component_name(Component c) {
    switch (c) {
        case Component::Embedding: return "token embedding";
        case Component::PositionEmbedding: return "learned position embedding";
        case Component::Attention: return "attention (Q, K, V, output), all layers";
        case Component::Mlp: return "MLP, all layers";
        case Component::Norms: return "norms inside the layers";
        case Component::FinalNorm: return "final norm";
        case Component::LmHead: return "LM head (untied output matrix)";
        case Component::EmbeddingExtras: return "token-type embedding, embedding norm, relative-position bias";
        case Component::CrossAttention: return "cross-attention (norm, Q, K, V, output), decoder layers";
        case Component::Pooler: return "pooler (dense on the first token)";
        case Component::MlmHead: return "masked-LM head (transform, norm, output bias; output matrix tied)";
        case Component::NspHead: return "next-sentence head";
        case Component::Mtp: return "multi-token prediction modules (not in the total)";
        case Component::LinearAttention: return "linear attention (gated DeltaNet or KDA), its layers";
        case Component::Mamba: return "Mamba mixers (Mamba-2 or Mamba-1), their layers";
    }
    return "?";
}

u64 Tensor::count() const { return mul(static_cast<u64>(rows), static_cast<u64>(cols)); }

namespace {

// The token mixers of a hybrid's linear-attention and Mamba-2 layers, one tensor per parameter of the
// transformers module (weights as (out_features, in_features), a depthwise conv as (channels, kernel)).
void add_hybrid_mixers(const ModelConfig& c, std::vector<Tensor>& t) {
    const std::int64_t h = c.hidden_size;
    auto push = [&](const char* name, Component component, LayerSet set, std::int64_t rows, std::int64_t cols,
                    TpSplit split) {
        Tensor w{name, component, rows, cols, true, false, split};
        w.layer_set = set;
        t.push_back(w);
    };
    if (c.num_linear_layers > 0 && c.linear_kind == LinearKind::Kda) {
        // KimiDeltaAttention (vllm-project/vllm@01a7e5d9 vllm/model_executor/layers/kda.py; Kimi-Linear's
        // modeling_kimi.py): q/k/v_proj (h -> H·d each), a depthwise conv without bias on each (H·d x kernel),
        // A_log per head, the forget gate f_a (h -> d) then f_b (d -> H·d) with dt_bias per channel, b_proj
        // (h -> H: β), the output gate g_a (h -> d) then g_b (d -> H·d), a gated RMSNorm of d weights shared by the
        // heads, o_proj (H·d -> h). The low-rank bottlenecks are head_dim wide and replicated under tensor parallelism.
        const auto L = Component::LinearAttention;
        const auto set = LayerSet::Linear;
        const std::int64_t kd = c.linear_key_dim(), vd = c.linear_value_dim(), d = c.linear_value_head_dim;
        const std::int64_t heads = c.linear_value_heads, k = c.linear_conv_kernel;
        push("layers.*.linear_attn.q_proj.weight", L, set, kd, h, TpSplit::Rows);
        push("layers.*.linear_attn.k_proj.weight", L, set, kd, h, TpSplit::Rows);
        push("layers.*.linear_attn.v_proj.weight", L, set, vd, h, TpSplit::Rows);
        push("layers.*.linear_attn.q_conv1d.weight", L, set, kd, k, TpSplit::Rows);
        push("layers.*.linear_attn.k_conv1d.weight", L, set, kd, k, TpSplit::Rows);
        push("layers.*.linear_attn.v_conv1d.weight", L, set, vd, k, TpSplit::Rows);
        push("layers.*.linear_attn.A_log", L, set, 1, heads, TpSplit::Cols);
        push("layers.*.linear_attn.f_a_proj.weight", L, set, d, h, TpSplit::Replicated);
        push("layers.*.linear_attn.f_b_proj.weight", L, set, kd, d, TpSplit::Rows);
        push("layers.*.linear_attn.dt_bias", L, set, 1, kd, TpSplit::Cols);
        push("layers.*.linear_attn.b_proj.weight", L, set, heads, h, TpSplit::Rows);
        push("layers.*.linear_attn.g_a_proj.weight", L, set, d, h, TpSplit::Replicated);
        push("layers.*.linear_attn.g_b_proj.weight", L, set, vd, d, TpSplit::Rows);
        push("layers.*.linear_attn.o_norm.weight", L, set, 1, d, TpSplit::Replicated);
        push("layers.*.linear_attn.o_proj.weight", L, set, h, vd, TpSplit::Cols);
    } else if (c.num_linear_layers > 0) {
        // Qwen3NextGatedDeltaNet (transformers modeling_qwen3_next.py): in_proj_qkvz (h -> 2·key_dim + 2·value_dim:
        // Q, K, V and the output gate z), in_proj_ba (h -> 2·value heads: β and the decay's α), a depthwise
        // Conv1d over Q, K, V without bias (conv_dim x kernel), dt_bias and A_log per value head, a gated
        // RMSNorm of d_v weights shared by the heads, out_proj (value_dim -> h).
        const auto L = Component::LinearAttention;
        const auto set = LayerSet::Linear;
        const std::int64_t kd = c.linear_key_dim(), vd = c.linear_value_dim(), vh = c.linear_value_heads;
        push("layers.*.linear_attn.in_proj_qkvz.weight", L, set, 2 * kd + 2 * vd, h, TpSplit::Rows);
        push("layers.*.linear_attn.in_proj_ba.weight", L, set, 2 * vh, h, TpSplit::Rows);
        push("layers.*.linear_attn.conv1d.weight", L, set, c.linear_conv_dim(), c.linear_conv_kernel, TpSplit::Rows);
        push("layers.*.linear_attn.dt_bias", L, set, 1, vh, TpSplit::Cols);
        push("layers.*.linear_attn.A_log", L, set, 1, vh, TpSplit::Cols);
        push("layers.*.linear_attn.norm.weight", L, set, 1, c.linear_value_head_dim, TpSplit::Replicated);
        push("layers.*.linear_attn.out_proj.weight", L, set, h, vd, TpSplit::Cols);
    }
    if (c.num_mamba_layers > 0 && c.is_mamba1()) {
        // JambaMambaMixer (huggingface/transformers@008f5c8c src/transformers/models/jamba/modeling_jamba.py):
        // in_proj (h -> 2·d_inner: x and the gate z), a depthwise Conv1d over x (d_inner x d_conv, bias if
        // mamba_conv_bias), x_proj (d_inner -> dt_rank + 2N, no bias: Δ's low-rank input, B, C), dt_proj (dt_rank ->
        // d_inner with a bias), A_log (d_inner x N), D (d_inner), out_proj (d_inner -> h); in_proj and out_proj carry
        // biases when mamba_proj_bias; Jamba's dt_layernorm (dt_rank), b_layernorm and c_layernorm (N each).
        const auto M = Component::Mamba;
        const auto set = LayerSet::Mamba;
        const std::int64_t di = c.mamba_d_inner(), n = c.mamba_d_state, r = c.mamba_dt_rank;
        push("layers.*.mamba.in_proj.weight", M, set, 2 * di, h, TpSplit::Rows);
        if (c.mamba_proj_bias) push("layers.*.mamba.in_proj.bias", M, set, 1, 2 * di, TpSplit::Cols);
        push("layers.*.mamba.conv1d.weight", M, set, di, c.mamba_conv_kernel, TpSplit::Rows);
        if (c.mamba_conv_bias) push("layers.*.mamba.conv1d.bias", M, set, 1, di, TpSplit::Cols);
        push("layers.*.mamba.x_proj.weight", M, set, r + 2 * n, di, TpSplit::Cols);
        push("layers.*.mamba.dt_proj.weight", M, set, di, r, TpSplit::Rows);
        push("layers.*.mamba.dt_proj.bias", M, set, 1, di, TpSplit::Cols);
        push("layers.*.mamba.A_log", M, set, di, n, TpSplit::Rows);
        push("layers.*.mamba.D", M, set, 1, di, TpSplit::Cols);
        push("layers.*.mamba.out_proj.weight", M, set, h, di, TpSplit::Cols);
        if (c.mamba_proj_bias) push("layers.*.mamba.out_proj.bias", M, set, 1, h, TpSplit::Replicated);
        if (c.mamba_dt_norms) {
            push("layers.*.mamba.dt_layernorm.weight", M, set, 1, r, TpSplit::Replicated);
            push("layers.*.mamba.b_layernorm.weight", M, set, 1, n, TpSplit::Replicated);
            push("layers.*.mamba.c_layernorm.weight", M, set, 1, n, TpSplit::Replicated);
        }
    } else if (c.num_mamba_layers > 0) {
        // GraniteMoeHybridMambaLayer (transformers modeling_granitemoehybrid.py, as Bamba's mixer): in_proj
        // (h -> d_inner + conv_dim + nheads: the gate z, then x·B·C, then dt), a depthwise Conv1d over x, B, C
        // (conv_dim x d_conv, bias if mamba_conv_bias), dt_bias, A_log and D per head, a gated RMSNorm over d_inner,
        // out_proj (d_inner -> h); in_proj and out_proj carry biases when mamba_proj_bias. Falcon-H1's mixer
        // (modeling_falcon_h1.py, FalconH1Mixer) is the same, its gated norm only with mamba_rms_norm.
        const auto M = Component::Mamba;
        const auto set = LayerSet::Mamba;
        const std::int64_t di = c.mamba_d_inner(), conv = c.mamba_conv_dim(), nh = c.mamba_heads;
        push("layers.*.mamba.in_proj.weight", M, set, di + conv + nh, h, TpSplit::Rows);
        if (c.mamba_proj_bias) push("layers.*.mamba.in_proj.bias", M, set, 1, di + conv + nh, TpSplit::Cols);
        push("layers.*.mamba.conv1d.weight", M, set, conv, c.mamba_conv_kernel, TpSplit::Rows);
        if (c.mamba_conv_bias) push("layers.*.mamba.conv1d.bias", M, set, 1, conv, TpSplit::Cols);
        push("layers.*.mamba.dt_bias", M, set, 1, nh, TpSplit::Cols);
        push("layers.*.mamba.A_log", M, set, 1, nh, TpSplit::Cols);
        push("layers.*.mamba.D", M, set, 1, nh, TpSplit::Cols);
        if (c.mamba_norm) push("layers.*.mamba.norm.weight", M, set, 1, di, TpSplit::Cols);
        push("layers.*.mamba.out_proj.weight", M, set, h, di, TpSplit::Cols);
        if (c.mamba_proj_bias) push("layers.*.mamba.out_proj.bias", M, set, 1, h, TpSplit::Replicated);
    }
}

}  // namespace

std::vector<Tensor> model_tensors(const ModelConfig& c) {
    validate(c);
    const std::int64_t h = c.hidden_size;
    std::vector<Tensor> t;
    // Weights are listed as (out_features, in_features) like torch.nn.Linear.
    t.push_back({"embed_tokens.weight", Component::Embedding, c.vocab_size, h, false, false, TpSplit::Rows});
    if (c.position == PositionKind::Learned)
        t.push_back({"embed_positions.weight", Component::PositionEmbedding, c.max_positions, h, false, false,
                     TpSplit::Replicated});
    const bool ln = c.norm == NormKind::LayerNorm;
    // BERT's embeddings: token_type_embeddings (type_vocab_size x h) and a LayerNorm on the sum
    // (transformers modeling_bert.py, BertEmbeddings).
    if (c.type_vocab_size > 0)
        t.push_back({"embed_token_types.weight", Component::EmbeddingExtras, c.type_vocab_size, h, false, false,
                     TpSplit::Replicated});
    if (c.embedding_norm) {
        t.push_back({"embed_norm.weight", Component::EmbeddingExtras, 1, h, false, false, TpSplit::Replicated});
        if (ln) t.push_back({"embed_norm.bias", Component::EmbeddingExtras, 1, h, false, false, TpSplit::Replicated});
    }
    // T5: nn.Embedding(relative_attention_num_buckets, n_heads) in the first layer of each stack only
    // (transformers modeling_t5.py, T5Attention with has_relative_attention_bias).
    if (c.relative_attention_buckets > 0) {
        t.push_back({"encoder.relative_attention_bias.weight", Component::EmbeddingExtras, c.relative_attention_buckets,
                     c.num_heads, false, false, TpSplit::Replicated});
        if (c.is_encoder_decoder())
            t.push_back({"decoder.relative_attention_bias.weight", Component::EmbeddingExtras,
                         c.relative_attention_buckets, c.num_heads, false, false, TpSplit::Replicated});
    }
    // Single-module blocks: the token mixer's norm sits in the mixer blocks, the MLP's norm in the MLP blocks.
    const bool single = c.single_module_blocks();
    const LayerSet mixer_set = single ? LayerSet::Mixer : LayerSet::All;
    const LayerSet mlp_set = single ? LayerSet::MlpBlocks : LayerSet::All;
    auto norm = [&](const char* name, LayerSet set) {
        Tensor w{name, Component::Norms, 1, h, true, false, TpSplit::Replicated};
        w.layer_set = set;
        t.push_back(w);
    };
    norm("layers.*.attn_norm.weight", mixer_set);
    if (ln) norm("layers.*.attn_norm.bias", mixer_set);
    // Column-parallel Q, K, V split their output rows; row-parallel O splits its input columns.
    if (c.is_mla()) {
        // DeepseekV3Attention (transformers modeling_deepseek_v3.py): Q through an optional rank-r_q bottleneck
        // with its own RMSNorm; one down-projection to the KV latent (r_kv) plus the shared RoPE key (d_rope),
        // a norm on the latent, then an up-projection to every head's no-RoPE key part and value. The
        // down-projections are replicated under tensor parallelism (every GPU needs the whole latent).
        const std::int64_t a = c.num_heads, dr = c.qk_rope_head_dim, dn = c.head_dim - dr, dv = c.v_dim_per_head();
        if (c.q_lora_rank > 0) {
            t.push_back(
                {"layers.*.attn.q_a.weight", Component::Attention, c.q_lora_rank, h, true, false, TpSplit::Replicated});
            t.push_back({"layers.*.attn.q_a_norm.weight", Component::Attention, 1, c.q_lora_rank, true, false,
                         TpSplit::Replicated});
            t.push_back({"layers.*.attn.q_b.weight", Component::Attention, c.q_dim(), c.q_lora_rank, true, false,
                         TpSplit::Rows, c.head_dim});
        } else {
            t.push_back(
                {"layers.*.attn.q.weight", Component::Attention, c.q_dim(), h, true, false, TpSplit::Rows, c.head_dim});
        }
        t.push_back({"layers.*.attn.kv_a.weight", Component::Attention, c.kv_lora_rank + dr, h, true, false,
                     TpSplit::Replicated});
        t.push_back({"layers.*.attn.kv_a_norm.weight", Component::Attention, 1, c.kv_lora_rank, true, false,
                     TpSplit::Replicated});
        t.push_back({"layers.*.attn.kv_b.weight", Component::Attention, a * (dn + dv), c.kv_lora_rank, true, false,
                     TpSplit::Rows, dn + dv});
        if (c.has_indexer()) {
            // DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2-Exp inference/model.py, Indexer): wq_b from
            // the Q latent to index_n_heads heads, wk from h to one key shared by the heads, k_norm a LayerNorm
            // (weight and bias) on it, weights_proj from h to one weight per head; no biases. Replicated under
            // tensor parallelism, as the reference keeps it whole on every rank.
            const std::int64_t nI = c.index_n_heads, dI = c.index_head_dim;
            t.push_back({"layers.*.attn.indexer.wq_b.weight", Component::Attention, nI * dI, c.q_lora_rank, true, false,
                         TpSplit::Replicated});
            t.push_back(
                {"layers.*.attn.indexer.wk.weight", Component::Attention, dI, h, true, false, TpSplit::Replicated});
            t.push_back(
                {"layers.*.attn.indexer.k_norm.weight", Component::Attention, 1, dI, true, false, TpSplit::Replicated});
            t.push_back(
                {"layers.*.attn.indexer.k_norm.bias", Component::Attention, 1, dI, true, false, TpSplit::Replicated});
            t.push_back({"layers.*.attn.indexer.weights_proj.weight", Component::Attention, nI, h, true, false,
                         TpSplit::Replicated});
        }
    } else {
        // Qwen3-Next's gated attention: q_proj's rows hold each head's query and its output gate
        // (transformers modeling_qwen3_next.py, Qwen3NextAttention: num_heads · head_dim · 2).
        t.push_back({"layers.*.attn.q.weight", Component::Attention, (c.attn_output_gate ? 2 : 1) * c.q_dim(), h, true,
                     false, TpSplit::Rows, c.head_dim});
        t.push_back(
            {"layers.*.attn.k.weight", Component::Attention, c.kv_dim(), h, true, false, TpSplit::Rows, c.head_dim});
        t.push_back({"layers.*.attn.v.weight", Component::Attention, c.v_dim(), h, true, false, TpSplit::Rows,
                     c.v_dim_per_head()});
        if (c.qkv_bias) {
            t.push_back(
                {"layers.*.attn.q.bias", Component::Attention, c.q_dim(), 1, true, false, TpSplit::Rows, c.head_dim});
            t.push_back(
                {"layers.*.attn.k.bias", Component::Attention, c.kv_dim(), 1, true, false, TpSplit::Rows, c.head_dim});
            t.push_back({"layers.*.attn.v.bias", Component::Attention, c.v_dim(), 1, true, false, TpSplit::Rows,
                         c.v_dim_per_head()});
        }
    }
    // Qwen3 / Gemma 3 q_norm, k_norm: one RMSNorm of head_dim weights each, shared by all heads; OLMo 2/3
    // (qk_norm_full): one RMSNorm over the whole Q (a·d) and the whole K (kv·d) projection.
    if (c.qk_norm) {
        t.push_back({"layers.*.attn.q_norm.weight", Component::Attention, 1, c.qk_norm_full ? c.q_dim() : c.head_dim,
                     true, false, TpSplit::Replicated});
        t.push_back({"layers.*.attn.k_norm.weight", Component::Attention, 1, c.qk_norm_full ? c.kv_dim() : c.head_dim,
                     true, false, TpSplit::Replicated});
    }
    // gpt-oss: a learned logit per head that joins every softmax (a "sink" that can absorb attention).
    if (c.attention_sinks)
        t.push_back({"layers.*.attn.sinks", Component::Attention, c.num_heads, 1, true, false, TpSplit::Rows});
    t.push_back({"layers.*.attn.o.weight", Component::Attention, h, c.o_dim(), true, false, TpSplit::Cols});
    if (c.attn_out_bias)
        t.push_back({"layers.*.attn.o.bias", Component::Attention, 1, h, true, false, TpSplit::Replicated});
    // Gemma 2/3: post_attention_layernorm normalises the attention output before the residual add.
    if (c.sandwich_norm)
        t.push_back({"layers.*.post_attn_norm.weight", Component::Norms, 1, h, true, false, TpSplit::Replicated});
    if (c.is_encoder_decoder()) {
        // Decoder layers only: attention over the encoder output, shaped like self-attention
        // (Vaswani et al. 2017, sec. 3.2.3; T5LayerCrossAttention in transformers modeling_t5.py).
        const Component x = Component::CrossAttention;
        Tensor norm{"decoder_layers.*.cross_attn_norm.weight", x, 1, h, true, false, TpSplit::Replicated};
        norm.cross = true;
        t.push_back(norm);
        if (ln) {
            norm.name = "decoder_layers.*.cross_attn_norm.bias";
            t.push_back(norm);
        }
        auto cross = [&](const char* name, std::int64_t rows, std::int64_t cols, TpSplit split, std::int64_t unit) {
            Tensor w{name, x, rows, cols, true, false, split, unit};
            w.cross = true;
            t.push_back(w);
        };
        cross("decoder_layers.*.cross_attn.q.weight", c.q_dim(), h, TpSplit::Rows, c.head_dim);
        cross("decoder_layers.*.cross_attn.k.weight", c.kv_dim(), h, TpSplit::Rows, c.head_dim);
        cross("decoder_layers.*.cross_attn.v.weight", c.kv_dim(), h, TpSplit::Rows, c.head_dim);
        if (c.qkv_bias) {
            cross("decoder_layers.*.cross_attn.q.bias", c.q_dim(), 1, TpSplit::Rows, c.head_dim);
            cross("decoder_layers.*.cross_attn.k.bias", c.kv_dim(), 1, TpSplit::Rows, c.head_dim);
            cross("decoder_layers.*.cross_attn.v.bias", c.kv_dim(), 1, TpSplit::Rows, c.head_dim);
        }
        cross("decoder_layers.*.cross_attn.o.weight", h, c.q_dim(), TpSplit::Cols, 1);
        if (c.attn_out_bias) cross("decoder_layers.*.cross_attn.o.bias", 1, h, TpSplit::Replicated, 1);
    }
    // A hybrid's softmax attention sits in num_attention_layers() layers only; its mixers follow.
    if (c.is_hybrid() || c.single_module_blocks())
        for (Tensor& w : t)
            if (w.per_layer && w.component == Component::Attention) w.layer_set = LayerSet::Attention;
    add_hybrid_mixers(c, t);
    // A model whose blocks hold no MLP at all (mixers only, no MLP-only blocks) lists no MLP tensors.
    if (c.num_mlp_blocks() > 0) {
        norm("layers.*.mlp_norm.weight", mlp_set);
        if (ln) norm("layers.*.mlp_norm.bias", mlp_set);
    }
    auto add_mlp = [&](const std::string& prefix, bool expert, std::int64_t copies, std::int64_t f, LayerSet set) {
        auto push = [&](const std::string& name, std::int64_t rows, std::int64_t cols, TpSplit split) {
            Tensor w{name, Component::Mlp, rows, cols, true, expert, split};
            w.layer_set = set;
            t.push_back(w);
        };
        for (std::int64_t i = 0; i < copies; ++i) {
            if (c.mlp != MlpKind::Gelu) {
                push(prefix + ".gate.weight", f, h, TpSplit::Rows);
                if (c.mlp_bias) push(prefix + ".gate.bias", f, 1, TpSplit::Rows);
            }
            push(prefix + ".up.weight", f, h, TpSplit::Rows);
            if (c.mlp_bias) push(prefix + ".up.bias", f, 1, TpSplit::Rows);
            push(prefix + ".down.weight", h, f, TpSplit::Cols);
            if (c.mlp_bias) push(prefix + ".down.bias", 1, h, TpSplit::Replicated);
        }
    };
    if (c.is_moe()) {
        // DeepSeek-V3: the first num_dense_layers layers keep a dense MLP (first_k_dense_replace).
        if (c.num_dense_layers > 0) add_mlp("dense_layers.*.mlp", false, 1, c.dense_ffn_hidden_size, LayerSet::Dense);
        Tensor router{"layers.*.mlp.router.weight", Component::Mlp, c.num_experts, h, true, false, TpSplit::Replicated};
        router.layer_set = LayerSet::Moe;
        t.push_back(router);
        if (c.router_bias) {
            router.name = "layers.*.mlp.router.bias";
            router.rows = 1;
            router.cols = c.num_experts;
            t.push_back(router);
        }
        add_mlp("layers.*.mlp.experts.*", true, 1, c.ffn_hidden_size, LayerSet::Moe);
        if (c.num_shared_experts > 0)
            add_mlp("layers.*.mlp.shared_experts", false, c.num_shared_experts, c.ffn_hidden_size, LayerSet::Moe);
        // Qwen3-Next: shared_expert_gate = Linear(h, 1, bias=False) (modeling_qwen3_next.py, Qwen3NextSparseMoeBlock).
        if (c.shared_expert_gate) {
            Tensor gate{
                "layers.*.mlp.shared_expert_gate.weight", Component::Mlp, 1, h, true, false, TpSplit::Replicated};
            gate.layer_set = LayerSet::Moe;
            t.push_back(gate);
        }
    } else if (c.num_mlp_blocks() > 0) {
        add_mlp("layers.*.mlp", false, 1, c.ffn_hidden_size, mlp_set);
    }
    if (c.sandwich_norm)
        t.push_back({"layers.*.post_mlp_norm.weight", Component::Norms, 1, h, true, false, TpSplit::Replicated});
    // T5: each stack ends in its own final_layer_norm.
    if (c.final_norm && c.is_encoder_decoder()) {
        t.push_back({"encoder.final_norm.weight", Component::FinalNorm, 1, h, false, false, TpSplit::Replicated});
        if (ln) t.push_back({"encoder.final_norm.bias", Component::FinalNorm, 1, h, false, false, TpSplit::Replicated});
    }
    if (c.final_norm) {
        t.push_back({"final_norm.weight", Component::FinalNorm, 1, h, false, false, TpSplit::Replicated});
        if (ln) t.push_back({"final_norm.bias", Component::FinalNorm, 1, h, false, false, TpSplit::Replicated});
    }
    // BertPooler: Linear(h, h) with bias on the first token, then tanh (transformers modeling_bert.py).
    if (c.pooler) {
        t.push_back({"pooler.weight", Component::Pooler, h, h, false, false, TpSplit::Replicated});
        t.push_back({"pooler.bias", Component::Pooler, 1, h, false, false, TpSplit::Replicated});
    }
    // BertForMaskedLM's cls.predictions: transform (dense + activation + LayerNorm), then the decoder, whose
    // weight is the word embedding matrix and whose bias is its own (transformers modeling_bert.py).
    if (c.mlm_head) {
        t.push_back({"mlm.transform.weight", Component::MlmHead, h, h, false, false, TpSplit::Replicated});
        t.push_back({"mlm.transform.bias", Component::MlmHead, 1, h, false, false, TpSplit::Replicated});
        t.push_back({"mlm.norm.weight", Component::MlmHead, 1, h, false, false, TpSplit::Replicated});
        if (ln) t.push_back({"mlm.norm.bias", Component::MlmHead, 1, h, false, false, TpSplit::Replicated});
        t.push_back({"mlm.decoder.bias", Component::MlmHead, 1, c.vocab_size, false, false, TpSplit::Cols});
    }
    // BertForPreTraining's cls.seq_relationship: Linear(h, 2) on the pooled output.
    if (c.nsp_head) {
        t.push_back({"nsp.weight", Component::NspHead, 2, h, false, false, TpSplit::Replicated});
        t.push_back({"nsp.bias", Component::NspHead, 1, 2, false, false, TpSplit::Replicated});
    }
    if (!c.tied_embeddings)
        t.push_back({"lm_head.weight", Component::LmHead, c.vocab_size, h, false, false, TpSplit::Rows});
    // DeepSeek-V3 sec. 2.2 / modeling_deepseek.py layer 61: per module, RMSNorms on the hidden state (hnorm)
    // and on the next token's embedding (enorm), their concatenation projected 2h → h (eh_proj), a
    // transformer block, and the shared head's norm; embedding and output head are the main model's.
    for (std::int64_t i = 0; i < c.mtp_modules; ++i) {
        const std::string prefix = "mtp." + std::to_string(i);
        t.push_back({prefix + ".enorm.weight", Component::Mtp, 1, h, false, false, TpSplit::Replicated});
        t.push_back({prefix + ".hnorm.weight", Component::Mtp, 1, h, false, false, TpSplit::Replicated});
        t.push_back({prefix + ".eh_proj.weight", Component::Mtp, h, 2 * h, false, false, TpSplit::Cols});
        t.push_back({prefix + ".final_norm.weight", Component::Mtp, 1, h, false, false, TpSplit::Replicated});
    }
    return t;
}

namespace {

// The planner counts one model's parameters about three times per layout (count_params, then shard_params_split
// per stage): the last model's tensor list is kept per thread and reused while the whole config compares equal.
// Only loops that ask for no other model's tensors may hold the reference.
const std::vector<Tensor>& tensors_of(const ModelConfig& c) {
    thread_local ModelConfig model;
    thread_local std::vector<Tensor> tensors;
    thread_local bool kept = false;
    if (kept && model == c) return tensors;
    kept = false;
    tensors = model_tensors(c);  // an invalid config throws here and keeps nothing
    model = c;
    kept = true;
    return tensors;
}

}  // namespace

std::int64_t tensor_layers(const ModelConfig& c, const Tensor& t) {
    if (!t.per_layer) return 0;
    if (t.cross) return c.num_decoder_layers;
    switch (t.layer_set) {
        case LayerSet::Dense: return c.num_dense_layers;
        case LayerSet::Moe: return c.num_layers - c.num_dense_layers;
        case LayerSet::Attention: return c.num_attention_layers();
        case LayerSet::Linear: return c.num_linear_layers;
        case LayerSet::Mamba: return c.num_mamba_layers;
        case LayerSet::Mixer: return c.num_mixer_layers();
        case LayerSet::MlpBlocks: return c.num_mlp_blocks();
        case LayerSet::All: break;
    }
    return c.num_layers;
}

ParamCount count_params(const ModelConfig& c) {
    ParamCount p;
    const u64 layers = static_cast<u64>(c.num_layers);
    const u64 dense_layers = static_cast<u64>(c.num_dense_layers);
    u64 expert = 0;   // one routed expert
    u64 mtp_own = 0;  // the MTP modules' norms and projections (their blocks are added below)
    // Every layer's MLP and norms, each tensor times the layers that hold it (tensor_layers).
    u64 mlp_all = 0, norms_all = 0;
    u64 mixer_norm = 0, mlp_norm = 0;  // single-module blocks: the norm of a mixer block, of an MLP block
    for (const Tensor& t : tensors_of(c)) {
        const u64 n = t.count();
        if (t.per_layer && t.cross) {
            p.per_decoder_layer_cross_attention = add(p.per_decoder_layer_cross_attention, n);
            continue;
        }
        if (t.per_layer) {
            const u64 instances = t.expert ? static_cast<u64>(c.num_experts) : 1;
            const u64 per_layer = mul(n, instances);
            const u64 all_layers = mul(per_layer, static_cast<u64>(tensor_layers(c, t)));
            if (t.component == Component::Mlp) mlp_all = add(mlp_all, all_layers);
            if (t.component == Component::Norms) {
                norms_all = add(norms_all, all_layers);
                if (t.layer_set == LayerSet::Mixer) mixer_norm = add(mixer_norm, per_layer);
                if (t.layer_set == LayerSet::MlpBlocks) mlp_norm = add(mlp_norm, per_layer);
            }
            switch (t.component) {
                case Component::Attention: p.per_layer_attention = add(p.per_layer_attention, per_layer); break;
                case Component::LinearAttention: p.per_linear_layer = add(p.per_linear_layer, per_layer); break;
                case Component::Mamba: p.per_mamba_layer = add(p.per_mamba_layer, per_layer); break;
                case Component::Mlp:
                    if (t.layer_set == LayerSet::Dense) {
                        p.per_dense_layer_mlp = add(p.per_dense_layer_mlp, per_layer);
                        break;
                    }
                    p.per_layer_mlp = add(p.per_layer_mlp, per_layer);
                    if (t.expert) expert = add(expert, n);
                    break;
                default: p.per_layer_norms = add(p.per_layer_norms, per_layer); break;
            }
            continue;
        }
        switch (t.component) {
            case Component::Embedding: p.embedding = add(p.embedding, n); break;
            case Component::PositionEmbedding: p.position_embedding = add(p.position_embedding, n); break;
            case Component::FinalNorm: p.final_norm = add(p.final_norm, n); break;
            case Component::LmHead: p.lm_head = add(p.lm_head, n); break;
            case Component::EmbeddingExtras: p.embedding_extras = add(p.embedding_extras, n); break;
            case Component::Pooler: p.pooler = add(p.pooler, n); break;
            case Component::MlmHead: p.mlm_head = add(p.mlm_head, n); break;
            case Component::NspHead: p.nsp_head = add(p.nsp_head, n); break;
            case Component::Mtp: mtp_own = add(mtp_own, n); break;
            default: break;
        }
    }
    // A hybrid's one layer is taken as its largest kind's (what a gradient bucket of one layer must hold); a parallel
    // hybrid's layer holds both its attention and its Mamba-2 mixer.
    const u64 mixer = c.parallel_hybrid
                          ? add(p.per_layer_attention, p.per_mamba_layer)
                          : std::max({static_cast<u64>(c.num_attention_layers() > 0 ? p.per_layer_attention : 0),
                                      p.per_linear_layer, p.per_mamba_layer});
    // Single-module blocks: the larger of a mixer block (mixer and its norm) and an MLP block (MLP and its norm).
    p.per_layer = c.single_module_blocks() ? std::max(add(mixer, mixer_norm), add(p.per_layer_mlp, mlp_norm))
                                           : add(add(mixer, p.per_layer_mlp), p.per_layer_norms);
    // Active MLP per token: everything but the routed experts it skips.
    p.per_layer_mlp_active = p.per_layer_mlp - mul(expert, static_cast<u64>(c.num_experts - c.experts_per_token));
    const u64 main_layers = layers - dense_layers;  // MoE layers of a MoE model, every layer of a dense one
    p.attention = mul(p.per_layer_attention, static_cast<u64>(c.num_attention_layers()));
    p.linear_attention = mul(p.per_linear_layer, static_cast<u64>(c.num_linear_layers));
    p.mamba = mul(p.per_mamba_layer, static_cast<u64>(c.num_mamba_layers));
    p.mlp = mlp_all;
    p.norms = norms_all;
    p.cross_attention = mul(p.per_decoder_layer_cross_attention, static_cast<u64>(c.num_decoder_layers));
    u64 outside = add(add(add(p.embedding, p.position_embedding), p.final_norm), p.lm_head);
    outside = add(add(add(outside, p.embedding_extras), p.pooler), p.cross_attention);
    outside = add(add(outside, p.mlm_head), p.nsp_head);
    // Mixers (attention in its layers, a hybrid's linear-attention and Mamba-2 mixers in theirs) and the norms of
    // every layer: the same for every token.
    const u64 mixers_norms = add(add(add(p.attention, p.linear_attention), p.mamba), p.norms);
    p.total = add(add(outside, mixers_norms), p.mlp);
    // Active MLP: all of it but the routed experts each token skips, in the MoE layers.
    const u64 active_mlp = p.mlp - mul(mul(expert, static_cast<u64>(c.num_experts - c.experts_per_token)), main_layers);
    p.active = add(add(outside, mixers_norms), active_mlp);
    p.mtp = add(mtp_own, mul(p.per_layer, static_cast<u64>(c.mtp_modules)));
    p.vision = static_cast<u64>(c.vision_params);
    return p;
}

namespace {

// Elements of one tensor instance on one of tp GPUs.
u64 shard_count(const Tensor& t, u64 tp) {
    const u64 rows = static_cast<u64>(t.rows), cols = static_cast<u64>(t.cols);
    switch (t.split) {
        case TpSplit::Rows: {
            const u64 unit = static_cast<u64>(t.split_unit);
            return mul(mul(ceil_div(rows / unit, tp), unit), cols);
        }
        case TpSplit::Cols: return mul(rows, ceil_div(cols, tp));
        case TpSplit::Replicated: return mul(rows, cols);
    }
    return 0;
}

// Layers of a pipeline stage of `layers` layers holding a tensor: a MoE model's stage is taken to hold as many
// MoE layers as it can (the heaviest stage, what memory must fit; exact for pp = 1).
std::int64_t stage_layers(const ModelConfig& c, const Tensor& t, std::int64_t layers) {
    if (t.cross) return std::min(layers, c.num_decoder_layers);
    const std::int64_t moe = std::min(layers, c.num_layers - c.num_dense_layers);
    switch (t.layer_set) {
        case LayerSet::Dense: return layers - moe;
        case LayerSet::Moe: return moe;
        // A hybrid's stage holds each mixer kind in proportion, rounded up (exact for pp = 1).
        case LayerSet::Attention:
        case LayerSet::Linear:
        case LayerSet::Mamba:
        case LayerSet::Mixer:
        case LayerSet::MlpBlocks: {
            const std::int64_t kind = tensor_layers(c, t);
            return std::min(kind, (kind * layers + c.num_layers - 1) / c.num_layers);
        }
        case LayerSet::All: break;
    }
    return layers;
}

// Sums per_tensor over a stage's tensors; the routed experts' share goes to `expert` when given.
template <typename PerTensor>
u64 over_shard(const ModelConfig& c, const ShardSpec& spec, PerTensor per_tensor, u64* expert = nullptr) {
    if (spec.tp < 1) throw InputError("tp", "tp must be >= 1");
    const u64 tp = static_cast<u64>(spec.tp);
    // Routed experts split over the expert tensor-parallel degree (MoE parallel folding), tp unless given.
    const u64 etp = spec.etp > 0 ? static_cast<u64>(spec.etp) : tp;
    const u64 local_experts = static_cast<u64>(c.num_experts / std::max<std::int64_t>(spec.ep, 1));
    // The MTP modules sit with the output head (DeepSeek-V3 sec. 3.2.1): one MoE-shaped block each.
    const std::int64_t mtp_blocks = spec.has_head ? c.mtp_modules : 0;
    u64 total = 0;
    for (const Tensor& t : tensors_of(c)) {
        u64 n = per_tensor(t, t.expert ? etp : tp);
        if (t.per_layer) {
            if (t.expert) n = mul(n, local_experts);
            std::int64_t layers = stage_layers(c, t, spec.layers);
            if (!t.cross && t.layer_set != LayerSet::Dense) layers += mtp_blocks;
            const u64 part = mul(n, static_cast<u64>(layers));
            total = add(total, part);
            if (expert != nullptr && t.expert) *expert = add(*expert, part);
            continue;
        }
        switch (t.component) {
            case Component::Embedding:
                if (spec.has_embedding) total = add(total, n);
                if (spec.head_copy_of_tied_embedding) total = add(total, n);
                break;
            case Component::PositionEmbedding:
            case Component::EmbeddingExtras:
                if (spec.has_embedding) total = add(total, n);
                break;
            case Component::Pooler:
            case Component::MlmHead:
            case Component::NspHead:
            case Component::FinalNorm:
            case Component::LmHead:
            case Component::Mtp:
                if (spec.has_head) total = add(total, n);
                break;
            default: break;
        }
    }
    return total;
}

}  // namespace

u64 shard_params(const ModelConfig& c, const ShardSpec& spec) {
    return over_shard(c, spec, [](const Tensor& t, u64 tp) { return shard_count(t, tp); });
}

ShardSplit shard_params_split(const ModelConfig& c, const ShardSpec& spec) {
    ShardSplit out;
    // One pass over the tensors: the expert share is summed beside the total (the planner calls this per layout).
    out.total = over_shard(
        c, spec, [](const Tensor& t, u64 tp) { return shard_count(t, tp); }, &out.expert);
    return out;
}

u64 largest_module_params(const ModelConfig& c, std::int64_t tp) {
    if (tp < 1) throw InputError("tp", "tp must be >= 1");
    u64 largest = 0, current = 0;
    std::string module;
    // Tensors of one module are adjacent in model_tensors (weight, then its bias).
    for (const Tensor& t : tensors_of(c)) {
        const std::string name = t.name.substr(0, t.name.rfind('.'));
        if (name != module) {
            current = 0;
            module = name;
        }
        current = add(current, shard_count(t, static_cast<u64>(tp)));
        largest = std::max(largest, current);
    }
    return largest;
}

u64 shard_factored_state(const ModelConfig& c, const ShardSpec& spec) {
    return over_shard(c, spec, [](const Tensor& t, u64 tp) {
        u64 rows = static_cast<u64>(t.rows), cols = static_cast<u64>(t.cols);
        if (t.split == TpSplit::Rows)
            rows = ceil_div(rows / static_cast<u64>(t.split_unit), tp) * static_cast<u64>(t.split_unit);
        if (t.split == TpSplit::Cols) cols = ceil_div(cols, tp);
        if (rows == 1 || cols == 1) return mul(rows, cols);  // vectors keep a full second moment
        return add(rows, cols);                              // row and column statistics
    });
}

const char* component_formula(Component c, const ModelConfig& m) {
    switch (c) {
        case Component::Embedding: return "V·h";
        case Component::PositionEmbedding: return "max_positions·h";
        case Component::Attention:
            if (m.has_indexer())
                return "L·(h·r_q + r_q + r_q·a·d_qk + h·(r_kv+d_rope) + r_kv + r_kv·a·(d_nope+d_v) + a·d_v·h + "
                       "r_q·n_I·d_I + h·d_I + 2·d_I + h·n_I)";
            if (m.is_mla())
                return m.q_lora_rank > 0
                           ? "L·(h·r_q + r_q + r_q·a·d_qk + h·(r_kv+d_rope) + r_kv + r_kv·a·(d_nope+d_v) + a·d_v·h)"
                           : "L·(h·a·d_qk + h·(r_kv+d_rope) + r_kv + r_kv·a·(d_nope+d_v) + a·d_v·h)";
            if (m.qk_norm || m.attention_sinks || m.v_head_dim > 0)
                return "L·(h·(a+n_kv)·d + h·n_kv·d_v + a·d_v·h + biases + QK-norms + sinks)";
            return m.qkv_bias || m.attn_out_bias ? "L·(h·(a+2n_kv)·d + a·d·h + biases)" : "L·(h·(a+2n_kv)·d + a·d·h)";
        case Component::Mlp:
            if (m.single_module_blocks())
                return m.mlp == MlpKind::Gelu ? (m.mlp_bias ? "L_mlp·(2·h·f + f + h)" : "L_mlp·2·h·f")
                                              : (m.mlp_bias ? "L_mlp·(3·h·f + 2f + h)" : "L_mlp·3·h·f");
            if (m.num_dense_layers > 0)
                return "L_dense·3·h·f_dense + (L−L_dense)·((E + shared)·3·h·f + E·h + router bias)";
            if (m.is_moe() && (m.mlp_bias || m.router_bias))
                return m.mlp == MlpKind::Gelu ? "L·(E·(2·h·f + f + h) + E·h + E)" : "L·(E·(3·h·f + 2f + h) + E·h + E)";
            if (m.is_moe()) return m.mlp == MlpKind::Gelu ? "L·(E·2·h·f + E·h)" : "L·(E·3·h·f + E·h)";
            return m.mlp == MlpKind::Gelu ? (m.mlp_bias ? "L·(2·h·f + f + h)" : "L·2·h·f")
                                          : (m.mlp_bias ? "L·(3·h·f + 2f + h)" : "L·3·h·f");
        case Component::Norms:
            if (m.single_module_blocks())
                return m.norm == NormKind::LayerNorm ? "(L_mixer + L_mlp)·2h (weight + bias)" : "(L_mixer + L_mlp)·h";
            if (m.sandwich_norm) return "L·4·h";
            return m.norm == NormKind::LayerNorm ? "L·2·2h (weight + bias)" : "L·2·h";
        case Component::FinalNorm: return m.norm == NormKind::LayerNorm ? "2h" : "h";
        case Component::LmHead: return m.tied_embeddings ? "0 (tied to the embedding)" : "V·h";
        case Component::EmbeddingExtras: return "type_vocab·h + embedding norm + stacks·buckets·a";
        case Component::CrossAttention: return "L_dec·(h·(a+2n_kv)·d + a·d·h + norm)";
        case Component::Pooler: return "h·h + h";
        case Component::MlmHead: return m.norm == NormKind::LayerNorm ? "h·h + h + 2h + V" : "h·h + h + h + V";
        case Component::NspHead: return "2h + 2";
        case Component::Mtp: return "n_mtp·(MoE layer + 2h·h + 3h)";
        case Component::LinearAttention:
            if (m.linear_kind == LinearKind::Kda)
                return "L_lin·(3·h·H·d + 3·H·d·k_conv + H + 2·(h·d + d·H·d) + H·d + h·H + d + H·d·h)";
            return "L_lin·(h·(2·H_k·d_k + 2·H_v·d_v) + h·2·H_v + (2·H_k·d_k + H_v·d_v)·k_conv + 2·H_v + d_v + H_v·d_v·h)";
        case Component::Mamba:
            if (m.is_mamba1())
                return m.mamba_dt_norms ? "L_mamba·(h·2·d_inner + d_inner·k_conv + d_inner·(R + 2N) + R·d_inner + "
                                          "d_inner + d_inner·N + d_inner + d_inner·h + R + 2N + biases)"
                                        : "L_mamba·(h·2·d_inner + d_inner·k_conv + d_inner·(R + 2N) + R·d_inner + "
                                          "d_inner + d_inner·N + d_inner + d_inner·h + biases)";
            return m.mamba_norm
                       ? "L_mamba·(h·(2·d_inner + 2·G·N + H) + (d_inner + 2·G·N)·k_conv + 3·H + d_inner + d_inner·h + biases)"
                       : "L_mamba·(h·(2·d_inner + 2·G·N + H) + (d_inner + 2·G·N)·k_conv + 3·H + d_inner·h + biases)";
    }
    return "";
}

}  // namespace tally
