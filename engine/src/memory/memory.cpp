#include "tally/memory/memory.h"
#include "tally/parallel/moe.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <utility>

#include "tally/base/error.h"
#include "tally/base/names.h"
#include "tally/model/params.h"
#include "tally/parallel/step_stages.h"

namespace tally {

namespace {

using u64 = std::uint64_t;

u64 mul(u64 a, u64 b) { return checked_mul("memory", a, b); }
u64 add(u64 a, u64 b) { return checked_add("memory", a, b); }

// Named recipes. Byte counts per parameter: weights + gradients + master + optimizer states.
constexpr RecipePreset kRecipes[] = {
    {"bf16_mixed_adamw",
     "bf16 mixed precision AdamW (fp32 master)",
     "bf16 weights 2 + bf16 grads 2 + fp32 master 4 + fp32 Adam m, v 8 = 16 B/param (Micikevicius et al. 2018; "
     "ZeRO paper's 2+2+12)",
     {DType::BF16, DType::BF16, DType::FP32, Optimizer::AdamW, DType::FP32}},
    {"fp32_adamw",
     "fp32 AdamW",
     "fp32 weights 4 + fp32 grads 4 + fp32 Adam m, v 8 = 16 B/param; no separate master copy (the weights are fp32)",
     {DType::FP32, DType::FP32, DType::None, Optimizer::AdamW, DType::FP32}},
    {"bf16_mixed_adamw_fp32_grads",
     "bf16 AdamW, fp32 gradients and master",
     "bf16 weights 2 + fp32 grads 4 + fp32 master 4 + fp32 m, v 8 = 18 B/param (Megatron-LM distributed optimizer, "
     "bf16 params with fp32 gradient accumulation)",
     {DType::BF16, DType::FP32, DType::FP32, Optimizer::AdamW, DType::FP32}},
    {"bf16_adamw_no_master",
     "bf16 AdamW without master weights",
     "bf16 weights 2 + bf16 grads 2 + fp32 m, v 8 = 12 B/param; the optimizer updates the bf16 weights directly",
     {DType::BF16, DType::BF16, DType::None, Optimizer::AdamW, DType::FP32}},
    {"bf16_pure_adamw",
     "pure bf16 AdamW",
     "bf16 weights 2 + bf16 grads 2 + bf16 m, v 4 = 8 B/param; everything in bf16 (needs care, e.g. stochastic "
     "rounding)",
     {DType::BF16, DType::BF16, DType::None, Optimizer::AdamW, DType::BF16}},
    {"bf16_mixed_adamw_8bit",
     "bf16 mixed precision, 8-bit AdamW",
     "bf16 weights 2 + bf16 grads 2 + fp32 master 4 + int8 m, v 2 (+ fp32 absmax per 2048 values) ~ 10 B/param "
     "(Dettmers et al. 2022)",
     {DType::BF16, DType::BF16, DType::FP32, Optimizer::AdamW8bit, DType::INT8}},
    {"bf16_mixed_sgd_momentum",
     "bf16 mixed precision SGD with momentum",
     "bf16 weights 2 + bf16 grads 2 + fp32 master 4 + fp32 momentum 4 = 12 B/param",
     {DType::BF16, DType::BF16, DType::FP32, Optimizer::SgdMomentum, DType::FP32}},
    {"fp32_sgd_momentum",
     "fp32 SGD with momentum",
     "fp32 weights 4 + fp32 grads 4 + fp32 momentum 4 = 12 B/param",
     {DType::FP32, DType::FP32, DType::None, Optimizer::SgdMomentum, DType::FP32}},
    {"fp32_sgd",
     "fp32 plain SGD",
     "fp32 weights 4 + fp32 grads 4 = 8 B/param; no optimizer state",
     {DType::FP32, DType::FP32, DType::None, Optimizer::Sgd, DType::None}},
    {"bf16_mixed_lion",
     "bf16 mixed precision Lion",
     "bf16 weights 2 + bf16 grads 2 + fp32 master 4 + fp32 momentum 4 = 12 B/param (Chen et al. 2023: Lion keeps "
     "only the momentum)",
     {DType::BF16, DType::BF16, DType::FP32, Optimizer::Lion, DType::FP32}},
    {"bf16_mixed_adafactor",
     "bf16 mixed precision Adafactor",
     "bf16 weights 2 + bf16 grads 2 + fp32 master 4 + factored fp32 second moment (rows + cols per matrix) ~ 8 "
     "B/param (Shazeer & Stern 2018, no momentum)",
     {DType::BF16, DType::BF16, DType::FP32, Optimizer::Adafactor, DType::FP32}},
};

std::string recipe_ids() {
    std::string ids;
    for (const RecipePreset& r : kRecipes) {
        if (!ids.empty()) ids += ", ";
        ids += r.id;
    }
    return ids;
}

constexpr Named<Optimizer> kOptimizerNames[] = {{Optimizer::AdamW, "adamw"},
                                                {Optimizer::AdamW8bit, "adamw_8bit"},
                                                {Optimizer::SgdMomentum, "sgd_momentum"},
                                                {Optimizer::Sgd, "sgd"},
                                                {Optimizer::Lion, "lion"},
                                                {Optimizer::Adafactor, "adafactor"}};
}  // namespace

const char* to_string(Optimizer o) { return name_of(kOptimizerNames, o, "?"); }

Optimizer optimizer_from_string(const std::string& text) {
    if (const auto o = value_named(kOptimizerNames, text)) return *o;
    throw InputError(
        "optimizer",
        "optimizer must be one of adamw, adamw_8bit, sgd_momentum, sgd, lion, adafactor, got \"" + text + "\"");
}

int optimizer_states(Optimizer o) {
    switch (o) {
        case Optimizer::AdamW:
        case Optimizer::AdamW8bit: return 2;
        case Optimizer::SgdMomentum:
        case Optimizer::Lion: return 1;
        case Optimizer::Sgd:
        case Optimizer::Adafactor: return 0;
    }
    return 0;
}

const char* optimizer_description(Optimizer o) {
    switch (o) {
        case Optimizer::AdamW:
            return "two states per parameter: first moment m and second moment v (Loshchilov & Hutter 2019)";
        case Optimizer::AdamW8bit:
            return "m and v quantized to 8 bits in blocks of 2048 with an fp32 absmax each (Dettmers et al. 2022)";
        case Optimizer::SgdMomentum: return "one state per parameter: the momentum buffer";
        case Optimizer::Sgd: return "no state: the update is the scaled gradient";
        case Optimizer::Lion:
            return "one state per parameter: the momentum (Chen et al. 2023, \"Symbolic Discovery of Optimization Algorithms\")";
        case Optimizer::Adafactor:
            return "second moment factored into row and column statistics per matrix; no momentum (Shazeer & Stern 2018)";
    }
    return "";
}

std::span<const RecipePreset> recipes() { return kRecipes; }

const RecipePreset& find_recipe(const std::string& id) {
    for (const RecipePreset& r : kRecipes)
        if (id == r.id) return r;
    throw InputError("recipe", "unknown recipe \"" + id + "\"; known: " + recipe_ids());
}

ChosenRecipe choose_recipe(const RecipePreset& preset, const RecipeOverrides& o) {
    ChosenRecipe c;
    c.preset = &preset;
    Recipe& r = c.recipe;
    r = preset.recipe;
    if (o.weights) r.weights = *o.weights;
    if (o.gradients) r.gradients = *o.gradients;
    if (o.master_weights) r.master_weights = *o.master_weights;
    if (o.optimizer) r.optimizer = *o.optimizer;
    if (o.optimizer_state) r.optimizer_state = *o.optimizer_state;
    if (o.grad_accum) r.grad_accum = *o.grad_accum;
    c.custom = o.weights || o.gradients || o.master_weights || o.optimizer || o.optimizer_state ||
               (o.grad_accum && *o.grad_accum != DType::None);
    // bitsandbytes' 8-bit Adam stores its states in int8 whatever was asked; plain SGD keeps no state.
    if (r.optimizer == Optimizer::AdamW8bit) r.optimizer_state = DType::INT8;
    if (r.optimizer == Optimizer::Sgd) r.optimizer_state = DType::None;
    validate(r);
    return c;
}

std::string ChosenRecipe::id() const { return custom ? "custom" : preset->id; }
std::string ChosenRecipe::name() const {
    return custom ? std::string("custom (from ") + preset->name + ")" : preset->name;
}
std::string ChosenRecipe::description() const { return custom ? "per-class settings below" : preset->description; }

void validate(const Recipe& p) {
    if (p.weights == DType::None) throw InputError("weights", "weights must be a storage type, not none");
    if (p.gradients == DType::None) throw InputError("gradients", "gradients must be a storage type, not none");
    if (p.master_weights != DType::None && dtype_bytes_256(p.master_weights) <= dtype_bytes_256(p.weights))
        throw InputError("master_weights",
                         std::string("master_weights must be wider than the weights (") + to_string(p.weights) +
                             ") or none: a master copy as narrow as the weights is a duplicate, got " +
                             to_string(p.master_weights));
    if (p.grad_accum != DType::None && dtype_bytes_256(p.grad_accum) <= dtype_bytes_256(p.gradients))
        throw InputError("grad_accum", std::string("grad_accum must be wider than the gradients (") +
                                           to_string(p.gradients) +
                                           ") or none: an accumulation buffer as narrow as "
                                           "the gradients is a duplicate, got " +
                                           to_string(p.grad_accum));
    const int states = optimizer_states(p.optimizer);
    if ((states > 0 || p.optimizer == Optimizer::Adafactor) && p.optimizer != Optimizer::AdamW8bit &&
        p.optimizer_state == DType::None)
        throw InputError("optimizer_state",
                         std::string("optimizer_state must be a storage type for ") + to_string(p.optimizer));
}

BytesPerParam256 bytes_per_param_256(const Recipe& p) {
    BytesPerParam256 b;
    b.weights = dtype_bytes_256(p.weights);
    b.gradients = dtype_bytes_256(p.gradients);
    b.master_weights = dtype_bytes_256(p.master_weights);
    b.grad_accum = dtype_bytes_256(p.grad_accum);
    switch (p.optimizer) {
        case Optimizer::AdamW: b.optimizer_states = 2 * dtype_bytes_256(p.optimizer_state); break;
        case Optimizer::AdamW8bit: b.optimizer_states = 2 * 256 + 2 * 4 * 256 / kAdam8bitBlock; break;
        case Optimizer::SgdMomentum:
        case Optimizer::Lion: b.optimizer_states = dtype_bytes_256(p.optimizer_state); break;
        case Optimizer::Sgd:
        case Optimizer::Adafactor: b.optimizer_states = 0; break;
    }
    return b;
}

std::string bytes_per_param_formula(const char* count, u64 bytes256) {
    // bytes per parameter as a short decimal ("2", "4", "2.0039")
    return std::string(count) + " · " + format_number(static_cast<double>(bytes256) / 256) + " B";
}

std::string memory_class_description(MemoryClass memory_class, const TrainingSetup& st, const MemoryBudget& m) {
    const Recipe& r = st.recipe;
    // Offloaded classes hold nothing on the GPU: say where they went instead (host_bytes counts them).
    const bool host_states =
        st.offload_optimizer &&
        (memory_class == MemoryClass::MasterWeights || memory_class == MemoryClass::OptimizerStates ||
         memory_class == MemoryClass::GradAccum || (memory_class == MemoryClass::Gradients && st.zero >= 2));
    if (host_states || (st.offload_params && memory_class == MemoryClass::Weights))
        return "Offloaded to host memory (ZeRO-Offload, Ren et al. 2021): counted in the host budget, none on the GPU.";
    switch (memory_class) {
        case MemoryClass::Weights:
            return std::string("The ") + to_string(r.weights) +
                   " weights the forward and backward passes read; split by TP and PP, and by data parallelism "
                   "only at ZeRO stage 3 (ZeRO stage " +
                   std::to_string(st.zero) + ").";
        case MemoryClass::Gradients:
            return std::string("One ") + to_string(r.gradients) +
                   " gradient per parameter; sharded across data-parallel ranks from ZeRO stage 2.";
        case MemoryClass::MasterWeights:
            if (r.master_weights == DType::None) return "None: the optimizer updates the working weights directly.";
            return std::string("A ") + to_string(r.master_weights) +
                   " copy the optimizer updates, so small updates are not lost to rounding in the narrower weights; "
                   "part of the optimizer state ZeRO stage 1 shards.";
        case MemoryClass::OptimizerStates:
            return std::string(to_string(r.optimizer)) + ": " + optimizer_description(r.optimizer) + ".";
        case MemoryClass::Activations:
            return "Tensors the forward pass keeps for the backward pass (Korthikanti et al. 2022), for " +
                   std::to_string(m.activations.layers) + " layers × " + std::to_string(m.activations.in_flight) +
                   " micro-batch(es) in flight, plus the terms outside the layers.";
        case MemoryClass::GradAccum:
            return std::string("A ") + to_string(r.grad_accum) +
                   " buffer the gradients of each micro-batch are added into, beside the " + to_string(r.gradients) +
                   (st.grad_accum_full ? " gradients; one for every parameter of the rank, whatever the ZeRO stage."
                                       : " gradients; sharded like the optimizer states from ZeRO stage 1.");
        case MemoryClass::Zero3Buffer: {
            const char* unit = st.zero3_gather == TrainingSetup::Zero3Gather::Module ? "largest module" : "one layer";
            return std::string("ZeRO stage 3 all-gathers the parameters of the ") + unit + " being computed (and " +
                   std::to_string(st.zero3_prefetch) +
                   " prefetched ahead) and holds its full gradient until the reduce-scatter.";
        }
    }
    return "";
}

std::string zero3_buffer_formula(const TrainingSetup& st) {
    return "N_unit · (1 + prefetch + 1) · " + format_number(dtype_element_bytes(st.recipe.weights)) + " B";
}

std::string optimizer_states_formula(const Recipe& p) {
    const BytesPerParam256 bpp = bytes_per_param_256(p);
    switch (p.optimizer) {
        case Optimizer::AdamW: return bytes_per_param_formula("2 · N_o", bpp.optimizer_states / 2);
        case Optimizer::AdamW8bit: return "2 · N_o · 1 B + 2 · 4 B · ceil(N_o / 2048)";
        case Optimizer::SgdMomentum:
        case Optimizer::Lion: return bytes_per_param_formula("N_o", bpp.optimizer_states);
        case Optimizer::Sgd: return "0";
        case Optimizer::Adafactor:
            return std::string("Σ_matrices (rows + cols) · ") + format_number(dtype_element_bytes(p.optimizer_state)) +
                   " B";
    }
    return "";
}

std::vector<OptimizerPart> optimizer_parts(Optimizer o, u64 bytes) {
    switch (o) {
        case Optimizer::AdamW:
        case Optimizer::AdamW8bit: return {{"m", "first moment m", bytes / 2}, {"v", "second moment v", bytes / 2}};
        case Optimizer::SgdMomentum:
        case Optimizer::Lion: return {{"momentum", "momentum", bytes}};
        case Optimizer::Adafactor: return {{"v_factored", "factored second moment (row + column statistics)", bytes}};
        case Optimizer::Sgd: return {};
    }
    return {};
}

namespace {

struct TermBuilder {
    std::vector<ActivationTerm>* out;
    void operator()(const char* id, const char* name, const char* description, std::string formula, bool per_layer,
                    u64 bytes) const {
        if (bytes == 0) return;
        out->push_back({id, name, description, std::move(formula), per_layer, bytes});
    }
};

}  // namespace

InterleaveFactor interleave_activation_factor(std::int64_t layers, std::int64_t pp, std::int64_t virtual_stages,
                                              std::int64_t microbatches) {
    if (virtual_stages <= 1 || pp <= 1 || layers < 1) return {};
    const u64 p = static_cast<u64>(pp), v = static_cast<u64>(virtual_stages), L = static_cast<u64>(layers);
    const u64 stage = ceil_div(L, p), first_chunk = ceil_div(L, mul(p, v));
    const u64 m = static_cast<u64>(std::max<std::int64_t>(microbatches, 0));
    // Chunk forwards run before the first backward: p·v + p − 1, or all m·v of them when fewer.
    const bool all_forwards_first = m > 0 && m <= (mul(p, v) + p - 1) / v;
    const u64 plain = mul(stage, m > 0 ? std::min(p, m) : p);
    const u64 held = all_forwards_first ? mul(stage, m) : add(mul(p, stage), mul(p - 1, first_chunk));
    const u64 g = std::gcd(held, plain);
    return {held / g, plain / g};
}

namespace {

// The first stage's layer activations under the interleaved schedule, rounded up: the one place the factor applies.
u64 interleaved_layer_bytes(const ModelConfig& c, const TrainingSetup& st, std::int64_t v, std::int64_t microbatches,
                            u64 plain_layer_bytes) {
    const InterleaveFactor f = interleave_activation_factor(c.num_layers, st.pp, v, microbatches);
    return ceil_div(mul(plain_layer_bytes, f.numerator), f.denominator);
}

}  // namespace

Activations activation_memory(const ModelConfig& c, const TrainingSetup& st, std::int64_t layers,
                              std::int64_t in_flight, bool first_stage, bool last_stage, std::int64_t microbatches) {
    Activations a;
    a.layers = layers;
    a.in_flight = in_flight;
    TermBuilder term{&a.terms};
    const u64 e = static_cast<u64>(st.activation_bytes);
    // Context parallelism: every sequence-side tensor holds this GPU's seq/cp positions (cp divides seq, checked).
    const u64 cp = static_cast<u64>(std::max<std::int64_t>(st.cp, 1));
    const u64 s = static_cast<u64>(st.seq) / cp, b = static_cast<u64>(st.micro_batch),
              h = static_cast<u64>(c.hidden_size);
    const u64 t = static_cast<u64>(st.tp);
    const u64 etp = static_cast<u64>(st.etp_or_tp());
    const bool sp = st.sequence_parallel && st.tp > 1;
    const u64 sb = mul(s, b);
    const u64 sbh = mul(sb, h);
    // Encoder-decoder: the decoder's (target) length, s unless decoder_seq says otherwise.
    const u64 s_dec = c.is_encoder_decoder() && st.decoder_seq > 0 ? static_cast<u64>(st.decoder_seq) : s;
    const u64 d = static_cast<u64>(c.head_dim);
    const u64 dv = static_cast<u64>(c.v_dim_per_head());                     // value head width (d unless MLA)
    const u64 heads_gpu = ceil_div(static_cast<u64>(c.num_heads), t);        // tp divides heads (checked)
    const u64 kv_heads_gpu = ceil_div(static_cast<u64>(c.num_kv_heads), t);  // replicated when tp > n_kv
    const u64 f_gpu = ceil_div(static_cast<u64>(c.ffn_hidden_size), t);
    const u64 f_expert_gpu = ceil_div(static_cast<u64>(c.ffn_hidden_size), etp);  // routed experts split by etp
    const u64 visited = c.is_moe() ? static_cast<u64>(c.experts_per_token + c.num_shared_experts) : 1;
    const u64 v_gpu = ceil_div(static_cast<u64>(c.vocab_size), t);
    // Sequence-side tensors (norms, dropout masks, block inputs) are split only by sequence parallelism.
    auto seq_side = [&](u64 bytes) { return sp ? ceil_div(bytes, t) : bytes; };
    const std::string seq_div = sp ? "/t" : "";
    const std::string tp_div = st.tp > 1 ? "/t" : "";
    // Which dropout masks exist: the setup's explicit choice, else the model's own dropouts.
    const bool attn_drop = st.dropout.value_or(c.attention_dropout > 0);
    const bool resid_drop = st.dropout.value_or(c.residual_dropout > 0);
    const bool embd_drop = st.dropout.value_or(c.embedding_dropout > 0);
    a.attention_dropout = attn_drop;
    a.residual_dropout = resid_drop;
    a.embedding_dropout = embd_drop;
    // Tensors dropped by per-operation recomputation (selective = the attention scores).
    const unsigned ops =
        st.recompute == Recompute::Full
            ? 0u
            : st.recompute_ops | (st.recompute == Recompute::Selective ? kRecomputeAttentionScores : 0u);
    const bool s2_terms = !st.flash_attention && (ops & kRecomputeAttentionScores) == 0;
    const bool keep_norm_out = (ops & kRecomputeNorms) == 0, keep_qkv = (ops & kRecomputeQkv) == 0;
    const bool keep_mlp_up = (ops & kRecomputeMlpUp) == 0, keep_mlp_act = (ops & kRecomputeMlpActivation) == 0;

    // One layer's terms at sq positions; cross_kv > 0: a decoder layer of an encoder-decoder, whose
    // cross-attention reads cross_kv encoder positions.
    auto layer_terms = [&](u64 sq, u64 cross_kv) {
        std::vector<ActivationTerm> out;
        TermBuilder term{&out};
        const u64 sb_l = mul(sq, b), sbh_l = mul(sb_l, h);
        if (st.recompute == Recompute::Full) {
            term("recompute_checkpoint", "layer input (checkpoint)",
                 "Full recomputation keeps only each layer's input and recomputes the rest in the backward pass "
                 "(Korthikanti et al. 2022, sec. 5: 2sbh per layer).",
                 "e·s·b·h" + seq_div, true, seq_side(mul(e, sbh_l)));
        } else {
            // One attention block: queries over sq positions, keys and values over skv (skv = sq for
            // self-attention; a decoder layer's cross-attention reads the encoder's positions).
            auto attention_block = [&](TermBuilder block_term, u64 q_len, u64 kv_len) {
                const u64 sb_q = mul(q_len, b), sbh_q = mul(sb_q, h), sb_kv = mul(kv_len, b);
                block_term("attn_norm_input", "attention norm input",
                           "Residual stream entering the attention block's norm; the norm's backward needs it.",
                           "e·s·b·h" + seq_div, true, seq_side(mul(e, sbh_q)));
                if (keep_norm_out)
                    block_term("qkv_input", "Q, K, V projection input",
                               "Norm output: the input of the Q, K, V matmuls.", "e·s·b·h" + seq_div, true,
                               seq_side(mul(e, sbh_q)));
                if (keep_qkv) {
                    block_term("q", "queries Q", "Q, needed by the backward of Qᵀ·K.", "e·s·b·a·d" + tp_div, true,
                               mul(mul(e, sb_q), mul(heads_gpu, d)));
                    block_term("k", "keys K", "K, needed by the backward of Q·Kᵀ (n_kv heads under GQA).",
                               "e·s·b·n_kv·d" + tp_div, true, mul(mul(e, sb_kv), mul(kv_heads_gpu, d)));
                    block_term("v", "values V", "V, needed by the backward of attention·V (n_kv heads under GQA).",
                               std::string(dv != d ? "e·s·b·n_kv·d_v" : "e·s·b·n_kv·d") + tp_div, true,
                               mul(mul(e, sb_kv), mul(kv_heads_gpu, dv)));
                }
                if (c.is_mla())
                    block_term("mla_latents", "MLA latents (Q and KV down-projections)",
                               "Multi-head latent attention keeps the down-projections' outputs (the inputs of their "
                               "norms) and the normed latents (the inputs of the up-projections), replicated "
                               "across tensor parallelism.",
                               "e·s·b·(2 r_q + 2 r_kv + d_rope)", true,
                               mul(mul(e, sb_q),
                                   static_cast<u64>(2 * c.q_lora_rank + 2 * c.kv_lora_rank + c.qk_rope_head_dim)));
                if (s2_terms) {
                    const u64 as2b = mul(mul(heads_gpu, mul(q_len, kv_len)), b);
                    block_term("softmax_output", "softmax output (s×s per head)",
                               "Attention probabilities, needed by softmax's backward.", "e·a·s²·b" + tp_div, true,
                               mul(e, as2b));
                    if (attn_drop) {
                        block_term("softmax_dropout_mask", "attention dropout mask (s×s)",
                                   "1-byte mask of the dropout on the attention probabilities.", "a·s²·b" + tp_div,
                                   true, as2b);
                        block_term("softmax_dropout_output", "dropped-out attention probabilities (s×s)",
                                   "Input of attention·V, needed by its backward.", "e·a·s²·b" + tp_div, true,
                                   mul(e, as2b));
                    }
                }
                if (st.flash_attention) {
                    block_term(
                        "flash_softmax_stats", "softmax statistics (FlashAttention)",
                        "FlashAttention stores one fp32 log-sum-exp per row per head instead of the s×s matrix and recomputes "
                        "scores in the backward (Dao et al. 2022).",
                        "4·a·s·b" + tp_div, true, mul(4, mul(heads_gpu, sb_q)));
                }
                block_term("attn_out_input", "attention output projection input",
                           "Attention output, the input of the output projection.",
                           std::string(dv != d ? "e·s·b·a·d_v" : "e·s·b·a·d") + tp_div, true,
                           mul(mul(e, sb_q), mul(heads_gpu, dv)));
                if (resid_drop)
                    block_term("attn_dropout_mask", "attention block dropout mask",
                               "1-byte mask of the dropout after the output projection.", "s·b·h" + seq_div, true,
                               seq_side(sbh_q));
            };
            attention_block(term, sq, sq);
            if (cross_kv > 0) {
                // A decoder layer's cross-attention block saves the same tensors as a self-attention block,
                // with K, V and the scores over the encoder's positions; per decoder layer (merged below).
                std::vector<ActivationTerm> cross;
                attention_block(TermBuilder{&cross}, sq, cross_kv);
                u64 block = 0;
                for (const ActivationTerm& x : cross) block = add(block, x.bytes);
                term(
                    "cross_attention_block", "cross-attention block (decoder layers)",
                    "The tensors a cross-attention block saves, like the self-attention block's, times L_dec/L per layer.",
                    "attention block · L_dec/L", true, block);
            }
            term("mlp_norm_input", "MLP norm input", "Residual stream entering the MLP block's norm.",
                 "e·s·b·h" + seq_div, true, seq_side(mul(e, sbh_l)));
            if (keep_norm_out)
                term("mlp_input", "MLP input", "Norm output: the input of the first MLP matmul(s).",
                     "e·s·b·h" + seq_div, true, seq_side(mul(e, sbh_l)));
            // Rows through the experts: k·s·b (dropless) or the capacity slots cf·k·s·b, plus the shared experts.
            u64 routed_rows = 0;
            if (c.is_moe()) {
                const MoeLayer moe = moe_layer(c, {static_cast<std::int64_t>(sq), st.micro_batch, st.tp, st.ep,
                                                   st.capacity_factor, st.activation_bytes});
                // Folded over etp < tp, the tp group's GPUs take different experts: etp/tp of the rows each.
                routed_rows = ceil_div(mul(static_cast<u64>(moe.expert_slots_per_gpu), etp), t);
                term(
                    "router_probs", "router probabilities and top-k indices",
                    "The router's fp32 softmax over the E experts (its backward needs it) and the int64 indices of the "
                    "k chosen experts per token.",
                    "4·s·b·E + 8·s·b·k", true, moe.router_activation_bytes);
                term("expert_input", "expert input (dispatched tokens)",
                     "The tokens after the all-to-all dispatch, one row per (token, expert) slot: the experts' first "
                     "matmul saves them (the norm output is kept for the router).",
                     st.capacity_factor > 0 ? "e·cf·k·s·b·h" : "e·k·s·b·h", true, mul(mul(e, routed_rows), h));
            }
            const u64 sbf = c.is_moe() ? add(mul(f_expert_gpu, routed_rows),
                                             mul(f_gpu, mul(sb_l, static_cast<u64>(c.num_shared_experts))))
                                       : mul(mul(sb_l, f_gpu), visited);
            const std::string fk = c.is_moe()
                                       ? (st.capacity_factor > 0 ? "e·f·(cf·k·s·b + shared·s·b)" : "e·s·b·f·(k+shared)")
                                       : "e·s·b·f";
            if (!keep_mlp_up) {
            } else if (c.mlp == MlpKind::Gelu) {
                term("mlp_act_input", "GELU input", "Output of the up projection, needed by GELU's backward.",
                     fk + tp_div, true, mul(e, sbf));
            } else {
                term("mlp_gate", "gate projection output", "Gate branch, needed by the SiLU/GELU backward.",
                     fk + tp_div, true, mul(e, sbf));
                term("mlp_up", "up projection output", "Up branch, needed by the product's backward.", fk + tp_div,
                     true, mul(e, sbf));
            }
            if (keep_mlp_act)
                term("mlp_down_input", "down projection input", "Activation output, the input of the down projection.",
                     fk + tp_div, true, mul(e, sbf));
            if (resid_drop)
                term("mlp_dropout_mask", "MLP dropout mask", "1-byte mask of the dropout after the MLP.",
                     "s·b·h" + seq_div, true, seq_side(sbh_l));
        }
        return out;
    };
    if (!c.is_encoder_decoder()) {
        a.terms = layer_terms(s, 0);
        if (c.single_module_blocks()) {
            // Single-module blocks (Nemotron-H): a mixer block saves the mixer block's tensors, an MLP block the MLP
            // block's; each term is their mean over the L layers (rounded up), as pipeline stages hold both kinds.
            const u64 l_all = static_cast<u64>(c.num_layers), l_mix = static_cast<u64>(c.num_mixer_layers()),
                      l_mlp = static_cast<u64>(c.num_mlp_blocks());
            for (ActivationTerm& x : a.terms) {
                const std::string_view id = x.id;
                if (id == "recompute_checkpoint") continue;  // every block keeps its input
                const bool mlp_term = id.rfind("mlp_", 0) == 0;
                x.bytes = ceil_div(mul(mlp_term ? l_mlp : l_mix, x.bytes), l_all);
            }
        }
    } else {
        // Encoder layers at s, decoder layers at s_dec with cross-attention over s: each term is the mean
        // over the L layers, L_enc·x_enc + L_dec·x_dec over L (rounded up), as pipeline stages hold both.
        const std::vector<ActivationTerm> enc = layer_terms(s, 0), dec = layer_terms(s_dec, s);
        const u64 l_dec = static_cast<u64>(c.num_decoder_layers), l_all = static_cast<u64>(c.num_layers);
        for (ActivationTerm x : dec) {
            u64 enc_bytes = 0;
            for (const ActivationTerm& y : enc)
                if (std::string_view(y.id) == x.id) enc_bytes = y.bytes;
            x.bytes = ceil_div(add(mul(l_all - l_dec, enc_bytes), mul(l_dec, x.bytes)), l_all);
            a.terms.push_back(std::move(x));
        }
    }
    for (const ActivationTerm& x : a.terms) a.per_layer_bytes = add(a.per_layer_bytes, x.bytes);

    // Terms outside the layers (Korthikanti et al. 2022, sec. 4.3).
    const std::size_t first_outside = a.terms.size();
    if (st.recompute == Recompute::Full) {
        // The backward rebuilds one layer's activations at a time: one layer's full set is live.
        TrainingSetup plain = st;
        plain.recompute = Recompute::None;
        const Activations one = activation_memory(c, plain, 1, 1, false, false);
        term("recomputed_layer", "one recomputed layer",
             "While one layer's backward runs, its recomputed activations are all live (one layer, one micro-batch).",
             "one layer without recomputation", false, one.per_layer_bytes);
    }
    const u64 flight = static_cast<u64>(in_flight);
    // Partial recomputation by layers: k of this stage's layers keep only their input (Megatron-LM
    // --recompute-method block --recompute-num-layers k); the backward rebuilds one of them at a time.
    const std::int64_t full_layers = st.recompute == Recompute::Full ? 0 : std::min(st.recompute_layers, layers);
    if (full_layers > 0) {
        term("recompute_checkpoint_layers", "inputs of the fully recomputed layers",
             "The recompute_layers layers keep only their input (2sbh each in 16 bits, Korthikanti et al. 2022, sec. "
             "5), per micro-batch in flight.",
             "e·s·b·h" + seq_div + "·k" + (in_flight > 1 ? "·p" : ""), false,
             mul(mul(seq_side(mul(e, sbh)), static_cast<u64>(full_layers)), flight));
        TrainingSetup plain = st;
        plain.recompute = Recompute::None;
        plain.recompute_ops = 0;
        plain.recompute_layers = 0;
        const Activations one = activation_memory(c, plain, 1, 1, false, false);
        term("recomputed_layer", "one recomputed layer",
             "While one fully recomputed layer's backward runs, its activations are all live (one layer, one "
             "micro-batch).",
             "one layer without recomputation", false, one.per_layer_bytes);
    }
    if (cp > 1) {
        // Ring attention's backward passes each K, V block on with its gradient dK, dV and receives the next pair
        // while computing on the current one: two buffers of (K, V, dK, dV), one layer at a time (Liu et al. 2023,
        // sec. 3; Transformer Engine context_parallel.py, AttnFuncWithCPAndKVP2P); the forward needs half of it.
        const u64 kv_block = mul(mul(e, sb), mul(kv_heads_gpu, add(d, dv)));
        term("ring_kv_buffers", "ring attention K, V buffers (context parallel)",
             "The K, V block being computed on and the one being received, each with its dK, dV in the backward "
             "(ring attention over cp GPUs, one layer at a time).",
             "4·e·(s/cp)·b·n_kv·(d + d_v)" + tp_div, false, mul(4, kv_block));
    }
    if (st.keep_stage_outputs && !last_stage && st.pp > 1)
        term("stage_output", "stage output tensors (kept)",
             "The output each micro-batch in flight sends to the next stage, kept until its backward (Megatron-LM "
             "frees it once sent, keeping only autograd metadata: Korthikanti et al. 2022, App. B).",
             "e·s·b·h" + seq_div + (in_flight > 1 ? "·p" : ""), false, mul(seq_side(mul(e, sbh)), flight));
    if (first_stage && embd_drop)
        term("embedding_dropout_mask", "embedding dropout mask",
             "1-byte mask of the dropout on the embeddings, per micro-batch in flight.",
             "s·b·h" + seq_div + (in_flight > 1 ? "·p" : ""), false, mul(seq_side(sbh), flight));
    if (last_stage) {
        // The positions the model predicts: the decoder's s_dec for an encoder-decoder.
        const u64 sb_out = mul(s_dec, b), sbh_out = mul(sb_out, h);
        const std::string s_out = s_dec != s ? "s_dec" : "s";
        if (c.final_norm)  // post-LN BERT has none: its last layer ends in its own norm
            term("final_norm_input", "final norm input", "Residual stream entering the final norm.",
                 "e·" + s_out + "·b·h" + seq_div, false, seq_side(mul(e, sbh_out)));
        if (c.mlm_head) {
            // BertForMaskedLM's transform, dense h×h + GELU + LayerNorm on every position before the tied decoder
            // (transformers modeling_bert.py, BertPredictionHeadTransform); replicated, not split by TP.
            term("mlm_transform_input", "MLM transform input", "Last layer's output, the input of the dense h×h.",
                 "e·s·b·h", false, mul(e, sbh_out));
            term("mlm_act_input", "MLM transform GELU input", "Dense output, needed by GELU's backward.", "e·s·b·h",
                 false, mul(e, sbh_out));
            term("mlm_norm_input", "MLM transform LayerNorm input", "GELU output, needed by the LayerNorm's backward.",
                 "e·s·b·h", false, mul(e, sbh_out));
        }
        term("lm_head_input", "LM head input",
             c.mlm_head ? "MLM transform output, the input of the decoder (LM head)."
                        : "Final norm output, the input of the LM head.",
             "e·" + s_out + "·b·h" + seq_div, false, seq_side(mul(e, sbh_out)));
        term("logits_fp32", "logits in fp32",
             "Logits cast to fp32 for the softmax cross-entropy (vocabulary-parallel under TP).",
             "4·" + s_out + "·b·V" + tp_div, false, mul(4, mul(sb_out, v_gpu)));
        if (c.pooler) {
            // BertPooler: dense h×h + tanh on the first token (modeling_bert.py); tanh's backward reads its output.
            term("pooler_input", "pooler input (first token)", "First token's hidden state, the dense's input.",
                 "e·b·h", false, mul(e, mul(b, h)));
            term("pooler_output", "pooler tanh output", "Needed by tanh's backward (and the NSP head's input).",
                 "e·b·h", false, mul(e, mul(b, h)));
        }
        if (c.nsp_head)
            term("nsp_logits_fp32", "next-sentence logits in fp32", "Two classes per sequence for the cross-entropy.",
                 "4·b·2", false, mul(8, b));
    }
    for (std::size_t i = first_outside; i < a.terms.size(); ++i)
        a.outside_bytes = add(a.outside_bytes, a.terms[i].bytes);
    a.full_recompute_layers = full_layers;
    u64 layer_bytes = mul(mul(a.per_layer_bytes, static_cast<u64>(layers - full_layers)), flight);
    if (first_stage && st.pp > 1 && st.virtual_stages > 1) {
        // Interleaved schedule: × 1 + (p−1)/(p·v) for even chunks, rounded up (Korthikanti et al. 2022, sec. 4.2.3).
        const InterleaveFactor f = interleave_activation_factor(c.num_layers, st.pp, st.virtual_stages, microbatches);
        const u64 plain = layer_bytes;
        layer_bytes = interleaved_layer_bytes(c, st, st.virtual_stages, microbatches, plain);
        a.interleave_extra_bytes = layer_bytes - plain;
        const u64 pv = mul(static_cast<u64>(st.pp), static_cast<u64>(st.virtual_stages));
        const u64 paper_num = pv + static_cast<u64>(st.pp) - 1, g = std::gcd(paper_num, pv);
        const std::string paper = "1 + (p−1)/(p·v) = " + std::to_string(paper_num / g) + "/" + std::to_string(pv / g);
        const std::string ours = std::to_string(f.numerator) + "/" + std::to_string(f.denominator);
        a.interleave_factor =
            paper.ends_with(" " + ours) ? paper : ours + " (even chunks, many micro-batches: " + paper + ")";
    }
    a.total_bytes = add(layer_bytes, a.outside_bytes);

    // The paper's closed form for this setup, when the setup is the paper's (16-bit, dropout,
    // GELU 4h MLP, no GQA, no FlashAttention).
    const bool paper = st.activation_bytes == 2 && attn_drop && resid_drop && !st.flash_attention &&
                       c.mlp == MlpKind::Gelu && c.ffn_hidden_size == 4 * c.hidden_size &&
                       c.num_kv_heads == c.num_heads && c.q_dim() == c.hidden_size && !c.is_moe() &&
                       st.recompute_ops == 0 && full_layers == 0;
    if (!paper)
        a.korthikanti_formula = "";
    else if (st.recompute == Recompute::Full)
        a.korthikanti_formula = sp ? "2sbh/t" : "2sbh";
    else if (st.recompute == Recompute::Selective)
        a.korthikanti_formula = st.tp == 1 ? "34sbh" : (sp ? "34sbh/t" : "sbh(10 + 24/t)");
    else
        a.korthikanti_formula =
            st.tp == 1 ? "sbh(34 + 5as/h)" : (sp ? "sbh(34 + 5as/h)/t" : "sbh(10 + 24/t + 5as/(ht))");
    return a;
}

namespace {

struct StageBudget {
    u64 params_on_gpu = 0, p_weights = 0, p_grads = 0, p_opt = 0, zero3_unit = 0, expert_params = 0;
    ClassBytes bytes;
    HostBytes host;
    Activations act;
};

// ZeRO's shard groups: dense states over `dense_group` GPUs, routed experts' over `expert_group` (HSDP: the
// shard group and its share of the expert replicas; else dp·cp and tp·cp·dp/(ep·etp)).
struct ShardGroups {
    std::int64_t dense = 1, expert = 1;
};

StageBudget stage_budget(const ModelConfig& c, const TrainingSetup& st, const ShardGroups& groups,
                         const ShardSpec& spec, std::int64_t in_flight, bool first, bool last,
                         std::int64_t microbatches = 0) {
    StageBudget r;
    const Recipe& p = st.recipe;
    const ShardSplit split = shard_params_split(c, spec);
    const u64 n = split.total;
    const u64 udp = static_cast<u64>(groups.dense);
    r.params_on_gpu = n;
    // Routed experts are replicated only over their expert-data-parallel group, so ZeRO shards their states there.
    const u64 n_expert = split.expert, n_dense = n - n_expert;
    const u64 expert_dp = static_cast<u64>(groups.expert);
    r.expert_params = n_expert;
    auto zero_shard = [&](bool sharded) {
        return sharded ? add(ceil_div(n_dense, udp), ceil_div(n_expert, expert_dp)) : n;
    };
    // ZeRO (Rajbhandari et al. 2020, sec. 5): stage 1 partitions the optimizer states (which include
    // the fp32 master weights), stage 2 also the gradients, stage 3 also the parameters.
    r.p_opt = zero_shard(st.zero >= 1);
    r.p_grads = zero_shard(st.zero >= 2);
    r.p_weights = zero_shard(st.zero >= 3);
    r.bytes.weights = dtype_storage_bytes("memory", r.p_weights, p.weights);
    r.bytes.gradients = dtype_storage_bytes("memory", r.p_grads, p.gradients);
    r.bytes.master_weights = dtype_storage_bytes("memory", r.p_opt, p.master_weights);
    switch (p.optimizer) {
        case Optimizer::AdamW:
            r.bytes.optimizer_states = dtype_storage_bytes("memory", mul(2, r.p_opt), p.optimizer_state);
            break;
        case Optimizer::AdamW8bit:
            r.bytes.optimizer_states = add(mul(2, r.p_opt), mul(2 * 4, ceil_div(r.p_opt, kAdam8bitBlock)));
            break;
        case Optimizer::SgdMomentum:
        case Optimizer::Lion:
            r.bytes.optimizer_states = dtype_storage_bytes("memory", r.p_opt, p.optimizer_state);
            break;
        case Optimizer::Sgd: r.bytes.optimizer_states = 0; break;
        case Optimizer::Adafactor: {
            const u64 factored = shard_factored_state(c, spec);
            r.bytes.optimizer_states =
                dtype_storage_bytes("memory", st.zero >= 1 ? ceil_div(factored, udp) : factored, p.optimizer_state);
            break;
        }
    }
    r.bytes.grad_accum = dtype_storage_bytes("memory", st.grad_accum_full ? r.p_weights : r.p_opt, p.grad_accum);
    if (st.zero3_gather != TrainingSetup::Zero3Gather::None) {
        // Gathered: the unit being computed plus the prefetched ones, and the unit's unsharded gradient.
        ShardSpec one_layer = spec;
        one_layer.layers = 1;
        one_layer.has_embedding = one_layer.has_head = one_layer.head_copy_of_tied_embedding = false;
        r.zero3_unit = st.zero3_gather == TrainingSetup::Zero3Gather::Module ? largest_module_params(c, spec.tp)
                                                                             : shard_params(c, one_layer);
        const u64 live_units = add(1, static_cast<u64>(st.zero3_prefetch));
        r.bytes.zero3_buffer = dtype_storage_bytes("memory", mul(r.zero3_unit, add(live_units, 1)), p.weights);
    }
    if (st.offload_optimizer) {
        // ZeRO-Offload (Ren et al. 2021, sec. 4.1): the fp32 states and the update live on the CPU, fed an fp32
        // gradient partition (DeepSpeed's estimator: 16 B/param on the host, 2 B/param left on the GPU at ZeRO 2).
        r.host.master_weights = std::exchange(r.bytes.master_weights, 0);
        r.host.optimizer_states = std::exchange(r.bytes.optimizer_states, 0);
        r.host.grad_accum = std::exchange(r.bytes.grad_accum, 0);
        const DType host_grad = p.master_weights != DType::None ? p.master_weights : p.gradients;
        if (p.grad_accum == DType::None) r.host.gradients = dtype_storage_bytes("memory", r.p_opt, host_grad);
        // From ZeRO 2 each reduced gradient bucket leaves for the host; ZeRO 1 all-reduces the full gradients first.
        if (st.zero >= 2) r.bytes.gradients = 0;
    }
    if (st.offload_params) r.host.weights = std::exchange(r.bytes.weights, 0);  // gathered per unit (zero3_buffer)
    r.host.total = add(add(add(r.host.weights, r.host.gradients), add(r.host.master_weights, r.host.optimizer_states)),
                       r.host.grad_accum);
    r.act = activation_memory(c, st, spec.layers, in_flight, first, last, microbatches);
    r.bytes.activations = r.act.total_bytes;
    u64 total = add(r.bytes.weights, r.bytes.gradients);
    total = add(total, r.bytes.grad_accum);
    total = add(total, r.bytes.zero3_buffer);
    total = add(total, r.bytes.master_weights);
    total = add(total, r.bytes.optimizer_states);
    r.bytes.total = add(total, r.bytes.activations);
    return r;
}

// The divisors of n in increasing order, comma-separated (pairs d, n/d up to sqrt(n): fast for any GPU count).
std::string divisor_list(std::int64_t n) {
    std::vector<std::int64_t> low, high;
    for (std::int64_t d = 1; d * d <= n; ++d)
        if (n % d == 0) {
            low.push_back(d);
            if (d != n / d) high.push_back(n / d);
        }
    low.insert(low.end(), high.rbegin(), high.rend());
    std::string out;
    for (std::int64_t d : low) out += (out.empty() ? "" : ", ") + std::to_string(d);
    return out;
}

// cp: a whole share of every sequence per GPU (2·cp chunks under causal load balancing), FlashAttention-style
// blockwise attention (the ring never holds an s×s score matrix), and a single stack (no encoder-decoder).
void validate_context_parallel(const ModelConfig& c, const TrainingSetup& st) {
    require_range("cp", st.cp, 1, st.seq);
    if (st.cp == 1) return;
    if (c.is_encoder_decoder())
        throw InputError("cp", "cp > 1 applies to decoder-only and encoder-only models, not encoder_decoder");
    if (!st.flash_attention)
        throw InputError("cp",
                         "cp > 1 needs flash_attention: ring attention computes blockwise with an online softmax and "
                         "never stores the s×s scores (Megatron-Core runs CP on fused attention)");
    const bool balanced = st.cp_load_balance && c.architecture == Architecture::Decoder;
    const std::int64_t chunks = balanced ? 2 * st.cp : st.cp;
    if (st.seq % chunks != 0) {
        std::string allowed;  // the cp values that cut seq evenly, up to 200 characters
        for (std::int64_t k = 1; k <= st.seq && allowed.size() < 200; ++k)
            if (st.seq % (balanced ? 2 * k : k) == 0) allowed += (allowed.empty() ? "" : ", ") + std::to_string(k);
        throw InputError("cp", std::string("cp must ") +
                                   (balanced ? "satisfy 2·cp | seq (causal load balancing cuts each sequence into "
                                               "2·cp chunks)"
                                             : "divide seq") +
                                   "; seq " + std::to_string(st.seq) + " allows cp in {" + allowed + "}, got " +
                                   std::to_string(st.cp));
    }
}

// Expert data parallelism: ep·etp GPUs hold one copy of the experts, folded over the tp·cp·dp GPUs of a stage
// (Megatron-Core: ep·etp·edp = tp·cp·dp); edp = dp/ep with the defaults (etp = tp, cp = 1).
std::int64_t expert_data_parallel(const ModelConfig& c, const TrainingSetup& st, std::int64_t dp) {
    const std::int64_t ranks = st.tp * st.cp * dp;
    if (st.etp != 0) {
        require_range("etp", st.etp, 1, ranks);
        if (!c.is_moe() && st.etp != st.tp)
            throw InputError("etp", "etp (expert tensor parallelism) applies to mixture-of-experts models only");
    }
    const std::int64_t etp = st.etp_or_tp(), group = st.ep * etp;
    if (ranks % group != 0) {
        if (st.etp == 0 && st.cp == 1)
            throw InputError("ep", "ep must divide the data-parallel size dp = " + std::to_string(dp) +
                                       " (experts are sharded within each data-parallel group), got " +
                                       std::to_string(st.ep) +
                                       "; or fold the experts over tp with etp (ep·etp must divide tp·cp·dp)");
        const char* field = st.etp != 0 ? "etp" : "ep";
        throw InputError(field, "ep·etp (" + std::to_string(st.ep) + "·" + std::to_string(etp) +
                                    ") must divide tp·cp·dp = " + std::to_string(ranks) +
                                    " (experts fold over the tensor, context and data-parallel GPUs of a stage); " +
                                    field + " allowed: {" + divisor_list(ranks / (st.etp != 0 ? st.ep : etp)) + "}");
    }
    return ranks / group;
}

// HSDP: shard_group GPUs shard, dp·cp/shard_group groups replicate; each replica also holds every expert once, so
// the replica count must divide the expert group too.
ShardGroups shard_groups(const TrainingSetup& st, std::int64_t dp, std::int64_t expert_dp) {
    const std::int64_t replica_ranks = dp * st.cp;
    if (st.shard_group == 0) return {replica_ranks, expert_dp};
    require_range("shard_group", st.shard_group, 1, replica_ranks);
    if (replica_ranks % st.shard_group != 0)
        throw InputError("shard_group", "shard_group must divide dp" + std::string(st.cp > 1 ? "·cp" : "") + " = " +
                                            std::to_string(replica_ranks) + ": allowed {" +
                                            divisor_list(replica_ranks) + "}, got " + std::to_string(st.shard_group));
    if (st.zero == 0 && st.shard_group != replica_ranks)
        throw InputError("shard_group", "shard_group (HSDP) shards ZeRO states: it needs zero >= 1");
    const std::int64_t replicas = replica_ranks / st.shard_group;
    if (expert_dp % replicas != 0)
        throw InputError("shard_group", "shard_group: the " + std::to_string(replicas) +
                                            " HSDP replicas must divide the expert data-parallel group edp = " +
                                            std::to_string(expert_dp) + " so each replica holds every expert");
    return {st.shard_group, expert_dp / replicas};
}

// DeepSpeed offloads the ZeRO partition (offload_optimizer, stage >= 1) and the parameters only at stage 3. The
// errors name the argument the user gives, offload (optimizer | params | optimizer_params).
void validate_offload(const TrainingSetup& st) {
    const std::string given = st.offload_params ? (st.offload_optimizer ? "optimizer_params" : "params") : "optimizer";
    if (st.offload_optimizer && st.zero < 1)
        throw InputError("offload", "offload " + given +
                                        " moves the ZeRO optimizer partition to the host: it needs zero 1, 2 or 3, "
                                        "got zero 0");
    if (st.offload_params && st.zero != 3)
        throw InputError("offload", "offload " + given +
                                        " keeps the parameter partition on the host: it needs zero 3, "
                                        "got zero " +
                                        std::to_string(st.zero));
}

}  // namespace

MemoryBudget memory_budget(const ModelConfig& c, const TrainingSetup& st) {
    validate(c);
    validate(st.recipe);
    require_range("seq", st.seq, 1, kMaxSeq);
    if (st.decoder_seq != 0 && !c.is_encoder_decoder())
        throw InputError("decoder_seq",
                         "decoder_seq (a target length) applies to an encoder-decoder (architecture "
                         "encoder_decoder) only");
    require_range("decoder_seq", st.decoder_seq, 0, kMaxSeq);
    require_range("micro_batch", st.micro_batch, 1, 1'000'000'000);
    require_range("gpus", st.gpus, 1, 100'000'000);
    require_range("zero", st.zero, 0, 3);
    require_range("tp", st.tp, 1, c.num_heads);
    if (c.num_heads % st.tp != 0)
        throw InputError(
            "tp", "tp must divide num_heads (" + std::to_string(c.num_heads) + "), got " + std::to_string(st.tp));
    require_range("pp", st.pp, 1, c.num_layers);
    require_range("recompute_layers", st.recompute_layers, 0, c.num_layers);
    require_range("virtual_stages", st.virtual_stages, 1, c.num_layers);
    if (st.virtual_stages > 1 && st.pp < 2)
        throw InputError("virtual_stages", "virtual_stages > 1 needs pipeline parallelism (pp >= 2)");
    if (st.recompute_ops > kRecomputeOpsAll)
        throw InputError("recompute_ops", "recompute_ops has an unknown operation bit");
    if (st.recompute == Recompute::Full && (st.recompute_ops != 0 || st.recompute_layers != 0))
        throw InputError("recompute",
                         "recompute_ops and recompute_layers refine recompute none or selective, not full");
    if (st.activation_bytes != 1 && st.activation_bytes != 2 && st.activation_bytes != 4)
        throw InputError("activation_bytes",
                         "activation_bytes must be 1, 2 or 4, got " + std::to_string(st.activation_bytes));
    require_range("zero3_prefetch", st.zero3_prefetch, 0, 1'000'000);
    if (st.zero3_gather != TrainingSetup::Zero3Gather::None && st.zero != 3)
        throw InputError("zero3_gather",
                         "zero3_gather counts the ZeRO stage 3 parameter buffer: it needs zero 3, got zero " +
                             std::to_string(st.zero));
    if (st.zero3_gather == TrainingSetup::Zero3Gather::None && st.zero3_prefetch != 0)
        throw InputError("zero3_prefetch", "zero3_prefetch needs zero3_gather module or layer");
    require_range("ep", st.ep, 1, std::max<std::int64_t>(c.num_experts, 1));
    if (st.ep > 1 || st.capacity_factor != 0)
        (void)moe_layer(c, {st.seq, st.micro_batch, st.tp, st.ep, st.capacity_factor, 2});
    validate_context_parallel(c, st);
    const std::int64_t model_parallel = st.tp * st.pp * st.cp;
    if (st.gpus % model_parallel != 0)
        throw InputError("gpus", "gpus (" + std::to_string(st.gpus) + ") must be a multiple of " +
                                     (st.cp > 1 ? "tp·pp·cp = " : "tp·pp = ") + std::to_string(model_parallel));
    MemoryBudget m;
    m.dp = st.gpus / model_parallel;
    m.expert_dp = expert_data_parallel(c, st, m.dp);
    const ShardGroups groups = shard_groups(st, m.dp, m.expert_dp);
    m.shard_group = groups.dense;
    m.expert_shard_group = groups.expert;
    validate_offload(st);
    std::int64_t microbatches = 0;  // unknown: assume enough to fill the pipeline
    if (st.global_batch != 0) {
        require_range("global_batch", st.global_batch, 1, std::int64_t{1} << 50);
        const std::int64_t per_step = st.micro_batch * m.dp;
        if (st.global_batch % per_step != 0)
            throw InputError("global_batch",
                             "global_batch (" + std::to_string(st.global_batch) +
                                 ") must be a multiple of micro_batch·dp = " + std::to_string(per_step));
        m.grad_accum_steps = st.global_batch / per_step;
        microbatches = m.grad_accum_steps;
    }
    m.layers_per_stage = pipeline_stage_layers(c.num_layers, st.pp);
    m.params_total = count_params(c).total;
    StageBudget chosen;
    m.microbatches = microbatches;
    if (st.pp == 1) {
        chosen = stage_budget(c, st, groups, {st.tp, c.num_layers, true, true, false, st.ep, st.etp}, 1, true, true);
        m.stage = "only";
        m.first_stage_plain_bytes = m.last_stage_bytes = chosen.bytes.total;
    } else {
        // 1F1B schedule: the first stage holds min(p, m) micro-batches in flight, the last one
        // (Narayanan et al. 2021, sec. 2.2; Korthikanti et al. 2022, sec. 4.2.3).
        const std::int64_t flight = microbatches == 0 ? st.pp : std::min<std::int64_t>(st.pp, microbatches);
        std::int64_t first_layers = m.layers_per_stage, last_layers = m.layers_per_stage;
        if (st.cost_balanced_stages && st.virtual_stages == 1) {
            const StageSplit split = cost_balanced_stages(c, st.pp);
            first_layers = split.layers.front();
            last_layers = split.layers.back();
            m.layers_per_stage = first_layers;
        }
        StageBudget first = stage_budget(c, st, groups, {st.tp, first_layers, true, false, false, st.ep, st.etp},
                                         flight, true, false, microbatches);
        StageBudget last = stage_budget(
            c, st, groups, {st.tp, last_layers, false, true, c.tied_embeddings, st.ep, st.etp}, 1, false, true);
        m.first_stage_plain_bytes = first.bytes.total - first.act.interleave_extra_bytes;
        m.first_stage_plain_layer_bytes =
            first.act.total_bytes - first.act.outside_bytes - first.act.interleave_extra_bytes;
        m.last_stage_bytes = last.bytes.total;
        if (last.bytes.total > first.bytes.total) {
            chosen = std::move(last);
            m.stage = "last";
            m.layers_per_stage = last_layers;
        } else {
            chosen = std::move(first);
            m.stage = "first";
        }
    }
    m.params_on_gpu = chosen.params_on_gpu;
    m.params_weights = chosen.p_weights;
    m.params_gradients = chosen.p_grads;
    m.params_optimizer = chosen.p_opt;
    m.zero3_gathered_params = chosen.zero3_unit;
    m.expert_params_on_gpu = chosen.expert_params;
    m.bytes = chosen.bytes;
    m.host = chosen.host;
    m.activations = std::move(chosen.act);
    return m;
}

InterleavedBytes interleaved_budget_bytes(const ModelConfig& c, const TrainingSetup& st, const MemoryBudget& m,
                                          std::int64_t v) {
    if (st.pp == 1 || v <= 1) return {std::max(m.first_stage_plain_bytes, m.last_stage_bytes), 0};
    const u64 layers = interleaved_layer_bytes(c, st, v, m.microbatches, m.first_stage_plain_layer_bytes);
    const u64 first = m.first_stage_plain_bytes - m.first_stage_plain_layer_bytes + layers;
    // memory_budget keeps the first stage unless the last one is larger.
    if (m.last_stage_bytes > first) return {m.last_stage_bytes, 0};
    return {first, layers - m.first_stage_plain_layer_bytes};
}

}  // namespace tally
