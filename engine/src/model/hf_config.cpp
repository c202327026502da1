#include "tally/model/hf_config.h"

#include <array>
#include <string>
#include <vector>

#include "tally/base/error.h"
#include "tally/base/input.h"
#include "hf_config_classic.h"
#include "hf_config_read.h"

namespace tally {

namespace {

using json = nlohmann::json;

using namespace hf_read;

// num_key_value_heads (default: every head has its own), which must divide the attention heads (GQA groups).
std::int64_t hf_kv_heads(const json& j, std::int64_t heads) {
    const std::int64_t kv = hf_int_or(j, "num_key_value_heads", heads, 1, heads);
    if (heads % kv != 0)
        throw InputError("num_key_value_heads", "num_key_value_heads must divide num_attention_heads (" +
                                                    std::to_string(heads) + "), got " + std::to_string(kv));
    return kv;
}

// Keys of config.json that never change a count (token ids, initialisation, numerics of norms and RoPE,
// routing and loss details, serving options, quantisation of the stored weights).
constexpr const char* kNeutralKeys[] = {"_name_or_path",
                                        "architectures",
                                        "auto_map",
                                        "model_type",
                                        "transformers_version",
                                        "torch_dtype",
                                        "dtype",
                                        "bos_token_id",
                                        "eos_token_id",
                                        "pad_token_id",
                                        "initializer_range",
                                        "rms_norm_eps",
                                        "rope_theta",
                                        "rope_scaling",
                                        "rope_parameters",  // transformers 5: rope_theta and rope_scaling in one dict
                                        "partial_rotary_factor",
                                        "rope_local_base_freq",
                                        "use_cache",
                                        "max_position_embeddings",
                                        "attention_dropout",
                                        "tie_word_embeddings",
                                        "hidden_act",
                                        "hidden_activation",
                                        "quantization_config",
                                        "output_router_logits",
                                        "router_aux_loss_coef",
                                        "aux_loss_alpha",
                                        "seq_aux",
                                        "norm_topk_prob",
                                        "n_group",
                                        "topk_group",
                                        "routed_scaling_factor",
                                        "scoring_func",
                                        "ep_size",
                                        "pretraining_tp",
                                        "rope_interleave",
                                        "swiglu_limit",
                                        "initial_context_length",
                                        "query_pre_attn_scalar",
                                        "attn_logit_softcapping",
                                        "final_logit_softcapping",
                                        "cache_implementation",
                                        "use_bidirectional_attention",
                                        "head_dim",
                                        "max_window_layers",
                                        "attention_bias",
                                        "mlp_bias",
                                        "vocab_size",
                                        "hidden_size",
                                        "intermediate_size",
                                        "num_hidden_layers",
                                        "num_attention_heads",
                                        "num_key_value_heads",
                                        "sliding_window",
                                        "layer_types",
                                        "use_sliding_window",
                                        "sliding_window_pattern",
                                        "experts_per_token",
                                        "num_experts_per_tok"};

// Refuses a key that is neither neutral nor one the loader for `type` reads: it might change the count.
void refuse_unknown_keys(const json& j, const std::string& type, std::initializer_list<const char*> read) {
    refuse_keys_outside(j, type, kNeutralKeys, read);
}

// layer_types (transformers >= 4.53): "full_attention" or "sliding_attention" per layer; the count of windowed
// layers, or -1 when the config has no layer_types.
std::int64_t hf_sliding_layers(const json& j, std::int64_t layers) {
    auto it = j.find("layer_types");
    if (it == j.end() || it->is_null()) return -1;
    if (!it->is_array() || static_cast<std::int64_t>(it->size()) != layers)
        throw InputError("layer_types", "config.json field \"layer_types\" must list one type per layer (" +
                                            std::to_string(layers) + ")");
    std::int64_t sliding = 0;
    for (const json& type : *it) {
        if (type == "sliding_attention")
            ++sliding;
        else if (type != "full_attention")
            throw InputError(
                "layer_types",
                "config.json field \"layer_types\" entries must be full_attention or sliding_attention, got " +
                    printable(type.dump(), 40));
    }
    return sliding;
}

// sliding_window from config.json (null: none); windowed layers from layer_types, else `fallback_layers`.
void hf_window(ModelConfig& c, const json& j, std::int64_t fallback_layers) {
    c.sliding_window = hf_int_or(j, "sliding_window", 0, 0, kMaxSeq);
    const std::int64_t listed = hf_sliding_layers(j, c.num_layers);
    c.num_sliding_layers = c.sliding_window == 0 ? 0 : listed >= 0 ? listed : fallback_layers;
    if (c.num_sliding_layers == 0) c.sliding_window = 0;
}

// Llama-family (LlamaConfig, MistralConfig, Qwen2Config, MixtralConfig in transformers): RMSNorm,
// rotary positions, gated MLP whose activation is hidden_act.
// Qwen's MoE configs may make some layers dense (decoder_sparse_step, mlp_only_layers): tally models only all-MoE
// (and DeepSeek's first-k dense), so either is refused unless it keeps every layer MoE.
void require_every_layer_moe(const json& j) {
    if (hf_int_or(j, "decoder_sparse_step", 1, 1, kMaxLayers) != 1)
        throw InputError("decoder_sparse_step",
                         "config.json field \"decoder_sparse_step\" must be 1 (every layer MoE); tally does not model "
                         "interleaved dense layers");
    auto only = j.find("mlp_only_layers");
    if (only != j.end() && !only->is_null() && !(only->is_array() && only->empty()))
        throw InputError("mlp_only_layers",
                         "config.json field \"mlp_only_layers\" must be empty; tally does not model dense layers "
                         "among MoE layers");
}

ModelConfig load_llama_like(const json& j, const std::string& type) {
    ModelConfig c;
    c.hidden_size = hf_int(j, "hidden_size", type, 1, kMaxHidden);
    c.num_layers = hf_int(j, "num_hidden_layers", type, 1, kMaxLayers);
    c.num_heads = hf_int(j, "num_attention_heads", type, 1, kMaxHidden);
    c.ffn_hidden_size = hf_int(j, "intermediate_size", type, 1, kMaxFfn);
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    c.max_positions = hf_int_or(j, "max_position_embeddings", 0, 0, kMaxPositions);
    if (j.contains("head_dim") && !j["head_dim"].is_null()) {
        c.head_dim = hf_int(j, "head_dim", type, 1, kMaxHidden);
    } else {
        if (c.hidden_size % c.num_heads != 0)
            throw InputError("num_attention_heads", "num_attention_heads must divide hidden_size (" +
                                                        std::to_string(c.hidden_size) + "), got " +
                                                        std::to_string(c.num_heads));
        c.head_dim = c.hidden_size / c.num_heads;
    }
    c.num_kv_heads = hf_kv_heads(j, c.num_heads);
    const std::string act = hf_string_or(j, "hidden_act", "silu");
    if (act == "silu" || act == "swish")
        c.mlp = MlpKind::SwiGlu;
    else if (act.rfind("gelu", 0) == 0)
        c.mlp = MlpKind::GeGlu;
    else
        throw InputError("hidden_act", "config.json field \"hidden_act\" must be silu or gelu*, got \"" + act + "\"");
    c.norm = NormKind::RmsNorm;
    c.position = PositionKind::Rotary;
    // SmolLM3Config ties the LM head by default; the others untie it.
    c.tied_embeddings = hf_bool_or(j, "tie_word_embeddings", type == "smollm3");
    if (type == "qwen2") {
        // Qwen2Attention: q/k/v_proj with bias, o_proj without (transformers modeling_qwen2.py).
        c.qkv_bias = true;
        c.attn_out_bias = false;
    } else {
        // LlamaAttention: attention_bias covers q, k, v and o; LlamaMLP: mlp_bias (default false).
        c.qkv_bias = c.attn_out_bias = hf_bool_or(j, "attention_bias", false);
    }
    c.mlp_bias = hf_bool_or(j, "mlp_bias", false);
    if (type == "phi3") {
        // Phi3Attention's fused qkv_proj and o_proj and Phi3MLP's gate_up_proj have no bias whatever the config says.
        c.qkv_bias = c.attn_out_bias = c.mlp_bias = false;
        if (hf_bool_or(j, "lm_head_bias", false))
            throw InputError("lm_head_bias",
                             "config.json field \"lm_head_bias\" must be false for model_type phi3 "
                             "(Phi3ForCausalLM's lm_head has no bias)");
        // Phi3Config: sliding_window on every layer (Phi-3-mini-4k: 2047).
        hf_window(c, j, c.num_layers);
        c.residual_dropout = hf_probability_or(j, "resid_pdrop", 0.0);
    }
    if (type == "olmo2" || type == "olmo3") {
        // Olmo2Attention: q_norm over all heads' Q (a·d), k_norm over all K (kv·d); the layer's two norms sit after
        // attention and after the MLP (same count as pre-norms). Olmo3: sliding layers listed in layer_types.
        c.qk_norm = c.qk_norm_full = true;
        if (type == "olmo3") hf_window(c, j, c.num_layers - c.num_layers / 4);  // Olmo3Config: every 4th layer global
    }
    // LlamaConfig, MistralConfig, Qwen2Config, MixtralConfig: attention_dropout defaults to 0.0 and is the
    // only dropout in these decoder layers (no residual or embedding dropout modules in transformers).
    c.attention_dropout = hf_probability_or(j, "attention_dropout", 0.0);
    if (type == "mixtral") {
        c.num_experts = hf_int(j, "num_local_experts", type, 1, kMaxExperts);
        c.experts_per_token = hf_int(j, "num_experts_per_tok", type, 1, c.num_experts);
    }
    // MistralConfig / MixtralConfig: sliding_window on every layer (4096 in Mistral-7B-v0.1; null from v0.2).
    if (type == "mistral" || type == "mixtral") hf_window(c, j, c.num_layers);
    // Qwen2Config / Qwen3Config: the window applies only with use_sliding_window, to the layers from
    // max_window_layers on (transformers configuration_qwen2.py layer_types).
    // SmolLM3Config: with use_sliding_window, the NoPE layers (every no_rope_layer_interval-th) are windowed.
    if (type == "smollm3" && hf_bool_or(j, "use_sliding_window", false))
        hf_window(c, j, c.num_layers / hf_int_or(j, "no_rope_layer_interval", 4, 1, kMaxLayers));
    if ((type == "qwen2" || type == "qwen3" || type == "qwen3_moe") && hf_bool_or(j, "use_sliding_window", false)) {
        const std::int64_t first = hf_int_or(j, "max_window_layers", c.num_layers, 0, c.num_layers);
        hf_window(c, j, c.num_layers - first);
    }
    if (type == "qwen3" || type == "qwen3_moe") {
        // Qwen3Attention: q_norm and k_norm over each head; attention_bias covers q, k, v and o.
        c.qk_norm = true;
        c.qkv_bias = c.attn_out_bias = hf_bool_or(j, "attention_bias", false);
        if (!j.contains("head_dim")) c.head_dim = 128;  // Qwen3Config's default, not hidden / heads
    }
    if (type == "qwen3_moe") {
        // Qwen3MoeSparseMoeBlock: num_experts of width moe_intermediate_size, top-k, no shared expert, no bias.
        // transformers 5 saves num_experts as num_local_experts (Qwen3MoeConfig.attribute_map).
        c.num_experts =
            hf_int(j, j.contains("num_local_experts") ? "num_local_experts" : "num_experts", type, 1, kMaxExperts);
        c.experts_per_token = hf_int(j, "num_experts_per_tok", type, 1, c.num_experts);
        c.ffn_hidden_size = hf_int(j, "moe_intermediate_size", type, 1, kMaxFfn);
        require_every_layer_moe(j);
    }
    if (type == "qwen3")
        refuse_unknown_keys(j, type, {});
    else if (type == "qwen3_moe")
        refuse_unknown_keys(
            j, type,
            {"num_experts", "num_local_experts", "moe_intermediate_size", "decoder_sparse_step", "mlp_only_layers"});
    // Phi-4-mini's full_attn_mod and interpolate_factor belong to its remote code; transformers' Phi3 ignores them.
    else if (type == "phi3")
        refuse_unknown_keys(j, type,
                            {"embd_pdrop", "resid_pdrop", "original_max_position_embeddings", "lm_head_bias",
                             "full_attn_mod", "interpolate_factor"});
    else if (type == "olmo2" || type == "olmo3")
        refuse_unknown_keys(j, type, {});
    // SmolLM3: layers without RoPE (no_rope_layers) have the same parameters.
    else if (type == "smollm3")
        refuse_unknown_keys(j, type, {"no_rope_layers", "no_rope_layer_interval"});
    return c;
}

// DeepseekV3Config (deepseek_v3, and Kimi K2's kimi_k2 which uses the same architecture, DeepseekV3ForCausalLM):
// multi-head latent attention, first_k_dense_replace dense layers, then MoE layers of n_routed_experts
// fine-grained experts (top num_experts_per_tok) plus n_shared_experts, and num_nextn_predict_layers MTP
// modules (transformers configuration_deepseek_v3.py, modeling_deepseek_v3.py; DeepSeek-V3 technical report).
// deepseek_v32 (DeepSeek-V3.2-Exp, DeepSeek-V3.2) is the same plus DeepSeek Sparse Attention's indexer.
ModelConfig load_deepseek_v3(const json& j, const std::string& type) {
    refuse_unknown_keys(j, type,
                        {"moe_intermediate_size", "n_shared_experts", "n_routed_experts", "first_k_dense_replace",
                         "moe_layer_freq", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
                         "v_head_dim", "num_nextn_predict_layers", "topk_method", "qk_head_dim", "index_n_heads",
                         "index_head_dim", "index_topk", "indexer_rope_interleave"});
    // Only deepseek_v32 has the lightning indexer; its keys in another type's config are refused.
    if (type != "deepseek_v32")
        for (const char* key : {"index_n_heads", "index_head_dim", "index_topk"})
            if (j.contains(key))
                throw InputError(key, std::string("config.json field \"") + key +
                                          "\" belongs to model_type deepseek_v32 (DeepSeek Sparse Attention), not " +
                                          type);
    ModelConfig c;
    c.hidden_size = hf_int(j, "hidden_size", type, 1, kMaxHidden);
    c.num_layers = hf_int(j, "num_hidden_layers", type, 1, kMaxLayers);
    c.num_heads = hf_int(j, "num_attention_heads", type, 1, kMaxHidden);
    c.num_kv_heads = hf_int_or(j, "num_key_value_heads", c.num_heads, 1, kMaxHidden);
    if (c.num_kv_heads != c.num_heads)
        throw InputError("num_key_value_heads",
                         "config.json field \"num_key_value_heads\" must equal "
                         "num_attention_heads (" +
                             std::to_string(c.num_heads) + ") under latent attention");
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    c.max_positions = hf_int_or(j, "max_position_embeddings", 0, 0, kMaxPositions);
    c.kv_lora_rank = hf_int(j, "kv_lora_rank", type, 1, kMaxHidden);
    c.q_lora_rank = hf_int_or(j, "q_lora_rank", 0, 0, kMaxHidden);  // null: Q projected directly (V2-Lite)
    c.qk_rope_head_dim = hf_int(j, "qk_rope_head_dim", type, 1, kMaxHidden);
    const std::int64_t nope = hf_int(j, "qk_nope_head_dim", type, 1, kMaxHidden);
    c.head_dim = nope + c.qk_rope_head_dim;
    // transformers 5 saves the derived Q/K head width (and head_dim = qk_rope_head_dim, which tally derives).
    if (hf_int_or(j, "qk_head_dim", c.head_dim, 1, kMaxHidden) != c.head_dim)
        throw InputError("qk_head_dim",
                         "config.json field \"qk_head_dim\" must be qk_nope_head_dim + qk_rope_head_dim (" +
                             std::to_string(c.head_dim) + ")");
    c.v_head_dim = hf_int(j, "v_head_dim", type, 1, kMaxHidden);
    c.num_experts = hf_int(j, "n_routed_experts", type, 1, kMaxExperts);
    c.experts_per_token = hf_int(j, "num_experts_per_tok", type, 1, c.num_experts);
    c.num_shared_experts = hf_int_or(j, "n_shared_experts", 0, 0, kMaxExperts);
    c.ffn_hidden_size = hf_int(j, "moe_intermediate_size", type, 1, kMaxFfn);
    c.num_dense_layers = hf_int_or(j, "first_k_dense_replace", 0, 0, c.num_layers - 1);
    if (c.num_dense_layers > 0) c.dense_ffn_hidden_size = hf_int(j, "intermediate_size", type, 1, kMaxFfn);
    if (hf_int_or(j, "moe_layer_freq", 1, 1, kMaxLayers) != 1)
        throw InputError("moe_layer_freq",
                         "config.json field \"moe_layer_freq\" must be 1 (every layer after "
                         "first_k_dense_replace is MoE); tally does not model interleaving");
    // noaux_tc routing keeps a per-expert bias for choosing experts (e_score_correction_bias, stored in the
    // checkpoint: 256 values per MoE layer of DeepSeek-V3).
    c.router_bias = hf_string_or(j, "topk_method", "noaux_tc") == "noaux_tc";
    c.mtp_modules = hf_int_or(j, "num_nextn_predict_layers", 0, 0, 64);
    if (hf_bool_or(j, "attention_bias", false))
        throw InputError("attention_bias", "config.json field \"attention_bias\" must be false for model_type " + type +
                                               " (tally does not model biases in latent attention)");
    const std::string act = hf_string_or(j, "hidden_act", "silu");
    if (act != "silu" && act != "swish")
        throw InputError("hidden_act", "config.json field \"hidden_act\" must be silu, got \"" + act + "\"");
    c.mlp = MlpKind::SwiGlu;
    c.norm = NormKind::RmsNorm;
    c.position = PositionKind::Rotary;
    c.tied_embeddings = hf_bool_or(j, "tie_word_embeddings", false);
    c.attention_dropout = hf_probability_or(j, "attention_dropout", 0.0);
    if (type == "deepseek_v32") {
        // DeepSeek-V3.2's lightning indexer; absent keys take ModelArgs' defaults (64 heads of 128, top 2048) in
        // github:deepseek-ai/DeepSeek-V3.2-Exp inference/model.py @6d8cb70dfdd6f37c83c5208105a3e2c8da117485.
        c.index_n_heads = hf_int_or(j, "index_n_heads", 64, 1, kMaxHidden);
        c.index_head_dim = hf_int_or(j, "index_head_dim", 128, 1, kMaxHidden);
        c.index_topk = hf_int_or(j, "index_topk", 2048, 1, kMaxSeq);
        if (c.q_lora_rank == 0)
            throw InputError("q_lora_rank", "config.json field \"q_lora_rank\" must be set for model_type " + type +
                                                " (the indexer's queries come from the Q latent)");
        if (c.index_head_dim < c.qk_rope_head_dim)
            throw InputError("index_head_dim",
                             "config.json field \"index_head_dim\" must be at least "
                             "qk_rope_head_dim (" +
                                 std::to_string(c.qk_rope_head_dim) +
                                 "): the indexer's heads hold a RoPE part of that width");
    }
    return c;
}

// GptOssConfig (transformers configuration_gpt_oss.py, modeling_gpt_oss.py): GQA with biases on q, k, v, o,
// a learned sink per head, alternating sliding (128) and full layers, and MoE layers of num_local_experts
// experts with biases (gate_up_proj_bias, down_proj_bias) and a router with a bias; untied embeddings.
ModelConfig load_gpt_oss(const json& j) {
    const std::string type = "gpt_oss";
    refuse_unknown_keys(j, type, {"num_local_experts"});
    ModelConfig c;
    c.hidden_size = hf_int(j, "hidden_size", type, 1, kMaxHidden);
    c.num_layers = hf_int(j, "num_hidden_layers", type, 1, kMaxLayers);
    c.num_heads = hf_int(j, "num_attention_heads", type, 1, kMaxHidden);
    c.num_kv_heads = hf_int(j, "num_key_value_heads", type, 1, c.num_heads);
    c.head_dim = hf_int_or(j, "head_dim", 64, 1, kMaxHidden);
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    c.max_positions = hf_int_or(j, "max_position_embeddings", 0, 0, kMaxPositions);
    c.ffn_hidden_size = hf_int(j, "intermediate_size", type, 1, kMaxFfn);
    c.num_experts = hf_int(j, "num_local_experts", type, 1, kMaxExperts);
    const char* topk = j.contains("num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";
    c.experts_per_token = hf_int(j, topk, type, 1, c.num_experts);
    c.mlp = MlpKind::SwiGlu;
    c.norm = NormKind::RmsNorm;
    c.position = PositionKind::Rotary;
    c.qkv_bias = c.attn_out_bias = hf_bool_or(j, "attention_bias", true);
    c.mlp_bias = true;
    c.router_bias = true;
    c.attention_sinks = true;
    c.tied_embeddings = hf_bool_or(j, "tie_word_embeddings", false);
    c.attention_dropout = hf_probability_or(j, "attention_dropout", 0.0);
    // GptOssConfig's default layer_types: sliding on even layers (0, 2, ...), full on odd ones.
    hf_window(c, j, (c.num_layers + 1) / 2);
    return c;
}

// Gemma2Config / Gemma3TextConfig: GeGLU MLP (gelu_pytorch_tanh), RMSNorm before and after both attention and
// MLP, tied embeddings, explicit head_dim; Gemma 3 adds q_norm and k_norm. Windowed layers: Gemma 2 the even
// ones (layer_idx % 2 == 0), Gemma 3 all but every sliding_window_pattern-th (transformers modeling_gemma2.py,
// modeling_gemma3.py), unless layer_types lists them.
ModelConfig load_gemma(const json& j, const std::string& type) {
    refuse_unknown_keys(j, type, {});
    ModelConfig c;
    c.hidden_size = hf_int(j, "hidden_size", type, 1, kMaxHidden);
    c.num_layers = hf_int(j, "num_hidden_layers", type, 1, kMaxLayers);
    c.num_heads = hf_int(j, "num_attention_heads", type, 1, kMaxHidden);
    c.num_kv_heads = hf_kv_heads(j, c.num_heads);
    c.head_dim = hf_int_or(j, "head_dim", 256, 1, kMaxHidden);
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    c.max_positions = hf_int_or(j, "max_position_embeddings", 0, 0, kMaxPositions);
    c.ffn_hidden_size = hf_int(j, "intermediate_size", type, 1, kMaxFfn);
    const char* act_key = j.contains("hidden_activation") ? "hidden_activation" : "hidden_act";
    const std::string act = hf_string_or(j, act_key, "gelu_pytorch_tanh");
    if (act.rfind("gelu", 0) != 0)
        throw InputError(act_key,
                         std::string("config.json field \"") + act_key + "\" must be gelu*, got \"" + act + "\"");
    c.mlp = MlpKind::GeGlu;
    c.norm = NormKind::RmsNorm;
    c.position = PositionKind::Rotary;
    c.sandwich_norm = true;
    c.qk_norm = type == "gemma3_text";
    c.qkv_bias = c.attn_out_bias = hf_bool_or(j, "attention_bias", false);
    c.tied_embeddings = hf_bool_or(j, "tie_word_embeddings", true);
    c.attention_dropout = hf_probability_or(j, "attention_dropout", 0.0);
    std::int64_t windowed = (c.num_layers + 1) / 2;
    if (type == "gemma3_text") {
        const std::int64_t pattern = hf_int_or(j, "sliding_window_pattern", 6, 1, kMaxLayers);
        windowed = c.num_layers - c.num_layers / pattern;
    }
    hf_window(c, j, windowed);
    return c;
}

// GPT2Config: LayerNorm with bias, learned positions, GELU MLP, biases everywhere, LM head tied.
ModelConfig load_gpt2(const json& j) {
    const std::string type = "gpt2";
    ModelConfig c;
    c.hidden_size = hf_int(j, "n_embd", type, 1, kMaxHidden);
    c.num_layers = hf_int(j, "n_layer", type, 1, kMaxLayers);
    c.num_heads = hf_int(j, "n_head", type, 1, kMaxHidden);
    if (c.hidden_size % c.num_heads != 0)
        throw InputError("n_head", "n_head must divide n_embd (" + std::to_string(c.hidden_size) + "), got " +
                                       std::to_string(c.num_heads));
    c.num_kv_heads = c.num_heads;
    c.head_dim = c.hidden_size / c.num_heads;
    // n_inner: null means 4 * n_embd (GPT2MLP in transformers).
    c.ffn_hidden_size = hf_int_or(j, "n_inner", 0, 1, kMaxFfn);
    if (c.ffn_hidden_size == 0) {
        if (c.hidden_size > kMaxFfn / 4) throw InputError("n_embd", "n_embd is too large for the default n_inner");
        c.ffn_hidden_size = 4 * c.hidden_size;
    }
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    c.max_positions = hf_int(j, "n_positions", type, 1, kMaxPositions);
    c.mlp = MlpKind::Gelu;
    c.norm = NormKind::LayerNorm;
    c.position = PositionKind::Learned;
    c.qkv_bias = c.attn_out_bias = c.mlp_bias = true;
    c.tied_embeddings = hf_bool_or(j, "tie_word_embeddings", true);
    // GPT2Config defaults: attn_pdrop = resid_pdrop = embd_pdrop = 0.1 (transformers configuration_gpt2.py).
    c.attention_dropout = hf_probability_or(j, "attn_pdrop", 0.1);
    c.residual_dropout = hf_probability_or(j, "resid_pdrop", 0.1);
    c.embedding_dropout = hf_probability_or(j, "embd_pdrop", 0.1);
    return c;
}

// BertConfig / RobertaConfig: post-LN encoder with biases everywhere, learned absolute positions,
// token-type embeddings and a LayerNorm on the summed embeddings, no final norm, a pooler
// (BertModel / RobertaModel, transformers modeling_bert.py and modeling_roberta.py); the MLM decoder
// is tied to the word embeddings.
ModelConfig load_bert_like(const json& j, const std::string& type) {
    ModelConfig c;
    c.architecture = Architecture::Encoder;
    c.hidden_size = hf_int(j, "hidden_size", type, 1, kMaxHidden);
    c.num_layers = hf_int(j, "num_hidden_layers", type, 1, kMaxLayers);
    c.num_heads = hf_int(j, "num_attention_heads", type, 1, kMaxHidden);
    if (c.hidden_size % c.num_heads != 0)
        throw InputError("num_attention_heads", "num_attention_heads must divide hidden_size (" +
                                                    std::to_string(c.hidden_size) + "), got " +
                                                    std::to_string(c.num_heads));
    c.num_kv_heads = c.num_heads;
    c.head_dim = c.hidden_size / c.num_heads;
    c.ffn_hidden_size = hf_int(j, "intermediate_size", type, 1, kMaxFfn);
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    // BertConfig defaults: max_position_embeddings 512, type_vocab_size 2 (configuration_bert.py).
    c.max_positions = hf_int_or(j, "max_position_embeddings", 512, 1, kMaxPositions);
    c.type_vocab_size = hf_int_or(j, "type_vocab_size", 2, 0, kMaxVocab);
    const std::string position = hf_string_or(j, "position_embedding_type", "absolute");
    if (position != "absolute")
        throw InputError("position_embedding_type",
                         "config.json field \"position_embedding_type\" must be absolute, got \"" + position + "\"");
    const std::string act = hf_string_or(j, "hidden_act", "gelu");
    if (act.rfind("gelu", 0) != 0 && act != "relu")
        throw InputError("hidden_act", "config.json field \"hidden_act\" must be gelu* or relu, got \"" + act + "\"");
    c.mlp = MlpKind::Gelu;  // two matrices (intermediate, output)
    c.norm = NormKind::LayerNorm;
    c.position = PositionKind::Learned;
    c.qkv_bias = c.attn_out_bias = c.mlp_bias = true;
    c.tied_embeddings = true;
    c.embedding_norm = true;
    c.final_norm = false;
    c.pooler = true;
    // BertConfig: hidden_dropout_prob (embeddings, attention output, layer output), attention_probs_dropout_prob.
    c.attention_dropout = hf_probability_or(j, "attention_probs_dropout_prob", 0.1);
    c.residual_dropout = c.embedding_dropout = hf_probability_or(j, "hidden_dropout_prob", 0.1);
    return c;
}

// T5Config: encoder-decoder, RMS-style T5LayerNorm (weight only), no biases, relative-position bias
// tables in the first layer of each stack, shared input embedding; feed_forward_proj "relu" (T5 v1.0:
// wi, wo) or "gated-gelu" (T5 v1.1: wi_0, wi_1, wo); lm_head tied unless tie_word_embeddings is false
// (transformers configuration_t5.py, modeling_t5.py).
ModelConfig load_t5(const json& j) {
    const std::string type = "t5";
    ModelConfig c;
    c.architecture = Architecture::EncoderDecoder;
    c.hidden_size = hf_int(j, "d_model", type, 1, kMaxHidden);
    c.head_dim = hf_int(j, "d_kv", type, 1, kMaxHidden);
    c.num_heads = hf_int(j, "num_heads", type, 1, kMaxHidden);
    c.num_kv_heads = c.num_heads;
    c.ffn_hidden_size = hf_int(j, "d_ff", type, 1, kMaxFfn);
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    const std::int64_t encoder_layers = hf_int(j, "num_layers", type, 1, kMaxLayers);
    // num_decoder_layers: null means num_layers (T5Config).
    c.num_decoder_layers = hf_int_or(j, "num_decoder_layers", encoder_layers, 1, kMaxLayers);
    c.num_layers = encoder_layers + c.num_decoder_layers;
    c.relative_attention_buckets = hf_int_or(j, "relative_attention_num_buckets", 32, 1, kMaxPositions);
    const std::string ff = hf_string_or(j, "feed_forward_proj", "relu");
    if (ff == "relu" || ff == "gelu")
        c.mlp = MlpKind::Gelu;  // two matrices
    else if (ff == "gated-gelu")
        c.mlp = MlpKind::GeGlu;
    else if (ff == "gated-silu")
        c.mlp = MlpKind::SwiGlu;
    else
        throw InputError("feed_forward_proj",
                         "config.json field \"feed_forward_proj\" must be relu, gelu, gated-gelu or "
                         "gated-silu, got \"" +
                             ff + "\"");
    c.norm = NormKind::RmsNorm;
    c.position = PositionKind::Relative;
    c.tied_embeddings = hf_bool_or(j, "tie_word_embeddings", true);
    // T5Config: dropout_rate 0.1 on attention probabilities, every sub-layer output and the embeddings.
    c.attention_dropout = c.residual_dropout = c.embedding_dropout = hf_probability_or(j, "dropout_rate", 0.1);
    return c;
}

// Llama4TextConfig (transformers configuration_llama4.py, modeling_llama4.py): GQA without biases, every layer a
// MoE of num_local_experts experts (top num_experts_per_tok) plus one shared expert, all of intermediate_size, a
// router without bias; use_qk_norm is an L2 norm without weights; chunked attention and NoPE layers add none.
ModelConfig load_llama4_text(const json& j) {
    const std::string type = "llama4_text";
    refuse_unknown_keys(j, type,
                        {"num_local_experts", "intermediate_size_mlp", "interleave_moe_layer_step", "moe_layers",
                         "no_rope_layers", "use_qk_norm", "attention_chunk_size", "attn_temperature_tuning",
                         "floor_scale", "attn_scale", "router_jitter_noise", "for_llm_compressor"});
    ModelConfig c = load_llama_like(j, type);
    c.num_experts = hf_int(j, "num_local_experts", type, 1, kMaxExperts);
    c.experts_per_token = hf_int(j, "num_experts_per_tok", type, 1, c.num_experts);
    c.num_shared_experts = 1;
    // Maverick interleaves dense layers (intermediate_size_mlp) with MoE ones: tally models all-MoE only.
    if (hf_int_or(j, "interleave_moe_layer_step", 1, 1, kMaxLayers) != 1)
        throw InputError("interleave_moe_layer_step",
                         "config.json field \"interleave_moe_layer_step\" must be 1 (every layer MoE); tally does not "
                         "model dense layers among MoE layers");
    auto moe = j.find("moe_layers");
    if (moe != j.end() && !moe->is_null() &&
        !(moe->is_array() && static_cast<std::int64_t>(moe->size()) == c.num_layers))
        throw InputError("moe_layers",
                         "config.json field \"moe_layers\" must list every layer; tally does not model "
                         "dense layers among MoE layers");
    return c;
}

// Glm4MoeConfig (GLM-4.5, 4.6; transformers modeling_glm4_moe.py): GQA with biases on q, k, v (attention_bias) but
// not o, optional q_norm / k_norm over head_dim (use_qk_norm), first_k_dense_replace dense layers, then MoE layers
// of n_routed_experts plus n_shared_experts and a router with e_score_correction_bias, and
// num_nextn_predict_layers MTP modules (stored in the checkpoint, counted apart like DeepSeek-V3's).
ModelConfig load_glm4_moe(const json& j) {
    const std::string type = "glm4_moe";
    refuse_unknown_keys(j, type,
                        {"moe_intermediate_size", "n_shared_experts", "n_routed_experts", "first_k_dense_replace",
                         "num_nextn_predict_layers", "use_qk_norm"});
    ModelConfig c = load_llama_like(j, type);
    c.qkv_bias = hf_bool_or(j, "attention_bias", false);
    c.attn_out_bias = false;
    c.qk_norm = hf_bool_or(j, "use_qk_norm", false);
    c.num_experts = hf_int(j, "n_routed_experts", type, 1, kMaxExperts);
    c.experts_per_token = hf_int(j, "num_experts_per_tok", type, 1, c.num_experts);
    c.num_shared_experts = hf_int_or(j, "n_shared_experts", 1, 0, kMaxExperts);
    c.dense_ffn_hidden_size = c.ffn_hidden_size;
    c.ffn_hidden_size = hf_int(j, "moe_intermediate_size", type, 1, kMaxFfn);
    c.num_dense_layers = hf_int_or(j, "first_k_dense_replace", 1, 0, c.num_layers - 1);
    if (c.num_dense_layers == 0) c.dense_ffn_hidden_size = 0;
    c.router_bias = true;
    c.mtp_modules = hf_int_or(j, "num_nextn_predict_layers", 0, 0, 64);
    return c;
}

// Ernie4_5_MoeConfig (ERNIE 4.5 MoE; transformers modular_ernie4_5_moe.py): GQA, biases everywhere or nowhere
// (use_bias), the layers from moe_layer_start_index on MoE of moe_num_experts (top moe_k) with one shared MLP of
// moe_num_shared_experts · moe_intermediate_size (counted as that many shared experts: the same weights), a router
// without bias plus moe_statics' e_score_correction_bias; the earlier layers a dense MLP of intermediate_size.
// transformers does not load the MTP weights (num_nextn_predict_layers), so they are not counted.
ModelConfig load_ernie4_5_moe(const json& j) {
    const std::string type = "ernie4_5_moe";
    refuse_unknown_keys(
        j, type,
        {"moe_num_experts", "moe_num_shared_experts", "moe_layer_start_index", "moe_layer_end_index",
         "moe_layer_interval", "moe_intermediate_size", "moe_k", "moe_norm_min", "moe_capacity", "moe_gate",
         "moe_use_aux_free", "use_bias", "num_nextn_predict_layers", "multi_token_pred_lambda"});
    ModelConfig c = load_llama_like(j, type);
    // use_bias would also put a bias on the LM head, which tally does not model.
    if (hf_bool_or(j, "use_bias", false))
        throw InputError("use_bias", "config.json field \"use_bias\" must be false for model_type " + type +
                                         " (tally does not model the LM head's bias)");
    c.qkv_bias = c.attn_out_bias = c.mlp_bias = false;
    c.num_experts = hf_int(j, "moe_num_experts", type, 1, kMaxExperts);
    c.experts_per_token = hf_int(j, "moe_k", type, 1, c.num_experts);
    c.num_shared_experts = hf_int_or(j, "moe_num_shared_experts", 0, 0, kMaxExperts);
    c.dense_ffn_hidden_size = c.ffn_hidden_size;
    c.ffn_hidden_size = hf_int(j, "moe_intermediate_size", type, 1, kMaxFfn);
    c.num_dense_layers = hf_int_or(j, "moe_layer_start_index", 0, 0, c.num_layers - 1);
    if (c.num_dense_layers == 0) c.dense_ffn_hidden_size = 0;
    c.router_bias = true;
    // Dense layers after or among the MoE layers: tally models only the first-k dense ones.
    if (hf_int_or(j, "moe_layer_interval", 1, 1, kMaxLayers) != 1)
        throw InputError("moe_layer_interval",
                         "config.json field \"moe_layer_interval\" must be 1 (every layer from moe_layer_start_index "
                         "MoE); tally does not model interleaved dense layers");
    const std::int64_t end = hf_int_or(j, "moe_layer_end_index", -1, -1, kMaxLayers);  // -1: the last layer
    if (end != -1 && end != c.num_layers - 1)
        throw InputError("moe_layer_end_index", "config.json field \"moe_layer_end_index\" must be the last layer (" +
                                                    std::to_string(c.num_layers - 1) +
                                                    "); tally does not model dense layers after MoE ones");
    return c;
}

// MiniMaxM2Config (transformers modular_minimax_m2.py): GQA without biases, q_norm / k_norm over the whole Q and K
// projections (FlexOlmoAttention), every layer a MoE of num_local_experts (top num_experts_per_tok, no shared
// expert) with a router and its e_score_correction_bias (a buffer, stored in the checkpoint). The remote code's MTP
// keys (use_mtp, num_mtp_modules) are not loaded by transformers, so they are not counted.
ModelConfig load_minimax_m2(const json& j) {
    const std::string type = "minimax_m2";
    refuse_unknown_keys(j, type,
                        {"num_local_experts", "use_qk_norm", "qk_norm_type", "rotary_dim", "router_jitter_noise",
                         "shared_intermediate_size", "attn_type_list", "use_routing_bias", "use_mtp", "num_mtp_modules",
                         "mtp_transformer_layers", "layernorm_full_attention_beta", "layernorm_linear_attention_beta",
                         "layernorm_mlp_beta", "swa_rope_theta"});
    ModelConfig c = load_llama_like(j, type);
    c.qkv_bias = c.attn_out_bias = c.mlp_bias = false;
    c.qk_norm = c.qk_norm_full = hf_bool_or(j, "use_qk_norm", true);
    if (hf_string_or(j, "qk_norm_type", "per_layer") != "per_layer")
        throw InputError("qk_norm_type", "config.json field \"qk_norm_type\" must be per_layer for model_type " + type);
    c.num_experts = hf_int(j, "num_local_experts", type, 1, kMaxExperts);
    c.experts_per_token = hf_int(j, "num_experts_per_tok", type, 1, c.num_experts);
    c.router_bias = true;
    if (hf_int_or(j, "shared_intermediate_size", 0, 0, kMaxFfn) != 0)
        throw InputError("shared_intermediate_size",
                         "config.json field \"shared_intermediate_size\" must be 0 for model_type " + type +
                             " (transformers' MiniMaxM2 has no shared expert)");
    // attn_type_list: 1 is softmax attention on every layer; 0 (MiniMax-01's lightning attention) is not modelled.
    auto types = j.find("attn_type_list");
    if (types != j.end() && !types->is_null())
        for (const json& t : *types)
            if (t != 1)
                throw InputError("attn_type_list",
                                 "config.json field \"attn_type_list\" must be all 1 (softmax attention) for "
                                 "model_type " +
                                     type);
    return c;
}

// A hybrid's layer_types list: one entry per layer, each one of `kinds`; the count of each kind in `kinds`' order.
// A list of the wrong length or an entry outside `kinds` is refused naming layer_types.
std::vector<std::int64_t> hf_layer_kinds(const json& types, std::int64_t layers, const std::string& type,
                                         std::initializer_list<const char*> kinds) {
    std::string allowed;
    for (const char* k : kinds) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
    if (!types.is_array() || static_cast<std::int64_t>(types.size()) != layers)
        throw InputError("layer_types", "config.json field \"layer_types\" must list one type per layer (" +
                                            std::to_string(layers) + " for num_hidden_layers), got " +
                                            (types.is_array() ? std::to_string(types.size()) + " entries"
                                                              : std::string(types.type_name())));
    std::vector<std::int64_t> counts(kinds.size(), 0);
    for (const json& t : types) {
        bool known = false;
        std::size_t i = 0;
        for (const char* k : kinds) {
            if (t.is_string() && t.get<std::string>() == k) ++counts[i], known = true;
            ++i;
        }
        if (!known)
            throw InputError("layer_types", "config.json field \"layer_types\" entries must be one of " + allowed +
                                                " for model_type " + type + ", got " + printable(t.dump(), 40));
    }
    return counts;
}

// Qwen3NextConfig (transformers configuration_qwen3_next.py, modeling_qwen3_next.py): layers of gated DeltaNet
// linear attention with every full_attention_interval-th layer (default 4) gated softmax attention (q_proj
// also yields an output gate; q_norm / k_norm per head), or as layer_types lists them; every layer a MoE of
// num_experts (top num_experts_per_tok) plus one gated shared expert of shared_expert_intermediate_size. The
// MTP layer of the checkpoint (mtp_num_hidden_layers) is not loaded by transformers (Qwen3NextForCausalLM drops
// "mtp.*" keys), so it is not counted.
ModelConfig load_qwen3_next(const json& j) {
    const std::string type = "qwen3_next";
    refuse_unknown_keys(j, type,
                        {"num_experts", "moe_intermediate_size", "shared_expert_intermediate_size",
                         "decoder_sparse_step", "mlp_only_layers", "full_attention_interval", "linear_num_key_heads",
                         "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
                         "linear_conv_kernel_dim", "mtp_num_hidden_layers", "mtp_use_dedicated_embeddings"});
    ModelConfig c = load_llama_like(j, type);
    c.qk_norm = true;
    c.attn_output_gate = true;
    c.qkv_bias = c.attn_out_bias = hf_bool_or(j, "attention_bias", false);
    c.num_experts = hf_int(j, "num_experts", type, 1, kMaxExperts);
    c.experts_per_token = hf_int(j, "num_experts_per_tok", type, 1, c.num_experts);
    c.ffn_hidden_size = hf_int(j, "moe_intermediate_size", type, 1, kMaxFfn);
    // The shared expert is one MLP of its own width: tally's shared experts have the routed width, so the width
    // must be a multiple of it (Qwen3-Next-80B-A3B: 512 and 512).
    const std::int64_t shared = hf_int_or(j, "shared_expert_intermediate_size", 0, 0, kMaxFfn);
    if (shared % c.ffn_hidden_size != 0)
        throw InputError("shared_expert_intermediate_size",
                         "config.json field \"shared_expert_intermediate_size\" (" + std::to_string(shared) +
                             ") must be a multiple of moe_intermediate_size (" + std::to_string(c.ffn_hidden_size) +
                             ") for tally to count the shared expert");
    c.num_shared_experts = shared / c.ffn_hidden_size;
    c.shared_expert_gate = shared > 0;
    require_every_layer_moe(j);
    auto types = j.find("layer_types");
    if (types != j.end() && !types->is_null()) {
        c.num_linear_layers = hf_layer_kinds(*types, c.num_layers, type, {"linear_attention", "full_attention"})[0];
    } else {
        // Qwen3NextConfig's default layer_types: full attention where (i + 1) % interval == 0.
        const std::int64_t interval = hf_int_or(j, "full_attention_interval", 4, 1, kMaxLayers);
        c.num_linear_layers = c.num_layers - c.num_layers / interval;
    }
    c.linear_key_heads = hf_int(j, "linear_num_key_heads", type, 1, kMaxHidden);
    c.linear_value_heads = hf_int(j, "linear_num_value_heads", type, 1, kMaxHidden);
    c.linear_key_head_dim = hf_int(j, "linear_key_head_dim", type, 1, kMaxHidden);
    c.linear_value_head_dim = hf_int(j, "linear_value_head_dim", type, 1, kMaxHidden);
    c.linear_conv_kernel = hf_int_or(j, "linear_conv_kernel_dim", 4, 1, 1024);
    if (c.linear_value_heads % c.linear_key_heads != 0)
        throw InputError("linear_num_value_heads", "config.json field \"linear_num_value_heads\" (" +
                                                       std::to_string(c.linear_value_heads) +
                                                       ") must be a multiple of linear_num_key_heads (" +
                                                       std::to_string(c.linear_key_heads) + ")");
    return c;
}

// The Mamba-2 mixer's heads and state over d_inner channels, as Bamba, GraniteMoeHybrid and Falcon-H1 name them:
// mamba_n_heads heads (default 128) of mamba_d_head ("auto" or absent: d_inner / heads), B and C in mamba_n_groups
// groups (default 1), state mamba_d_state (default 256), conv mamba_d_conv (default 4) with its bias (default true).
// `width` says where d_inner came from, for the errors.
void hf_mamba2_heads(ModelConfig& c, const json& j, std::int64_t d_inner, const std::string& width) {
    const std::string of_width = "the Mamba-2 width d_inner = " + width + " (" + std::to_string(d_inner) + ")";
    c.mamba_heads = hf_int_or(j, "mamba_n_heads", 128, 1, kMaxHidden);
    if (d_inner % c.mamba_heads != 0)
        throw InputError("mamba_n_heads", "config.json field \"mamba_n_heads\" (" + std::to_string(c.mamba_heads) +
                                              ") must divide " + of_width);
    auto head = j.find("mamba_d_head");
    c.mamba_head_dim = head == j.end() || head->is_null() || (head->is_string() && *head == "auto")
                           ? d_inner / c.mamba_heads
                           : json_integer(*head, "mamba_d_head", 1, kMaxHidden);
    if (c.mamba_heads * c.mamba_head_dim != d_inner)
        throw InputError("mamba_d_head", "config.json field \"mamba_d_head\" (" + std::to_string(c.mamba_head_dim) +
                                             ") times mamba_n_heads (" + std::to_string(c.mamba_heads) +
                                             ") must equal " + of_width + ": the state of a head is d_head x d_state");
    c.mamba_d_state = hf_int_or(j, "mamba_d_state", 256, 1, kMaxHidden);
    c.mamba_groups = hf_int_or(j, "mamba_n_groups", 1, 1, kMaxHidden);
    if (c.mamba_heads % c.mamba_groups != 0)
        throw InputError("mamba_n_groups", "config.json field \"mamba_n_groups\" (" + std::to_string(c.mamba_groups) +
                                               ") must divide mamba_n_heads (" + std::to_string(c.mamba_heads) + ")");
    c.mamba_conv_kernel = hf_int_or(j, "mamba_d_conv", 4, 1, 1024);
    c.mamba_conv_bias = hf_bool_or(j, "mamba_conv_bias", true);
}

// GraniteMoeHybridConfig (transformers configuration_granitemoehybrid.py, modeling_granitemoehybrid.py; Granite
// 4.0-H): layer_types lists "mamba" (a Mamba-2 mixer) or "attention" (GQA, biases with attention_bias) per layer;
// every layer keeps its feed-forward: num_local_experts experts of intermediate_size (top num_experts_per_tok)
// plus a shared MLP of shared_intermediate_size, or that shared MLP alone when num_local_experts is 0. Embedding,
// attention, residual and logits multipliers and the position type (rope or nope) change no count.
ModelConfig load_granitemoehybrid(const json& j) {
    const std::string type = "granitemoehybrid";
    refuse_unknown_keys(j, type,
                        {"num_local_experts",
                         "shared_intermediate_size",
                         "mamba_n_heads",
                         "mamba_d_head",
                         "mamba_d_state",
                         "mamba_n_groups",
                         "mamba_d_conv",
                         "mamba_expand",
                         "mamba_conv_bias",
                         "mamba_proj_bias",
                         "mamba_chunk_size",
                         "embedding_multiplier",
                         "attention_multiplier",
                         "residual_multiplier",
                         "logits_scaling",
                         "normalization_function",
                         "position_embedding_type",
                         "time_step_limit",
                         "time_step_min",
                         "time_step_max",
                         "time_step_floor",
                         "init_method"});
    ModelConfig c = load_llama_like(j, type);
    if (hf_string_or(j, "normalization_function", "rmsnorm") != "rmsnorm")
        throw InputError("normalization_function",
                         "config.json field \"normalization_function\" must be rmsnorm for model_type " + type);
    c.mlp_bias = false;  // GraniteMoeHybridMLP and its experts have no biases
    const std::int64_t experts = hf_int_or(j, "num_local_experts", 0, 0, kMaxExperts);
    const std::int64_t shared = hf_int_or(j, "shared_intermediate_size", 0, 0, kMaxFfn);
    if (experts == 0) {
        if (shared == 0)
            throw InputError("shared_intermediate_size",
                             "config.json field \"shared_intermediate_size\" must be > 0 "
                             "when num_local_experts is 0 (the layer's only MLP)");
        c.ffn_hidden_size = shared;
    } else {
        c.num_experts = experts;
        c.experts_per_token = hf_int(j, "num_experts_per_tok", type, 1, experts);
        if (shared % c.ffn_hidden_size != 0)
            throw InputError("shared_intermediate_size",
                             "config.json field \"shared_intermediate_size\" (" + std::to_string(shared) +
                                 ") must be a multiple of intermediate_size (" + std::to_string(c.ffn_hidden_size) +
                                 ") for tally to count the shared MLP");
        c.num_shared_experts = shared / c.ffn_hidden_size;
    }
    auto types = j.find("layer_types");
    if (types == j.end() || types->is_null())
        throw InputError("layer_types", "config.json field \"layer_types\" is missing (required for model_type " +
                                            type + ": which layers are mamba and which attention)");
    c.num_mamba_layers = hf_layer_kinds(*types, c.num_layers, type, {"mamba", "attention"})[0];
    if (c.num_mamba_layers > 0) {
        // Bamba / GraniteMoeHybrid mixer: d_inner = mamba_expand · hidden_size.
        const std::int64_t expand = hf_int_or(j, "mamba_expand", 2, 1, 1024);
        const std::int64_t d_inner = expand * c.hidden_size;  // <= 1024 · kMaxHidden: no overflow
        require_range("mamba_expand", d_inner, 1, kMaxHidden);
        hf_mamba2_heads(c, j, d_inner, "mamba_expand · hidden_size");
        c.mamba_proj_bias = hf_bool_or(j, "mamba_proj_bias", false);
    }
    return c;
}

// The layer kinds of a Nemotron-H config: layers_block_type (transformers >= 5, one name per layer) when given, else
// hybrid_override_pattern, one letter per layer: 'M' Mamba-2, '*' attention, '-' MLP (configuration_nemotron_h.py,
// _pattern_to_list). Counts in that order; the wrong length, an unknown kind and MoE layers are refused naming the
// field.
std::array<std::int64_t, 3> nemotron_h_layer_kinds(const json& j, const std::string& type) {
    std::string kinds;  // one letter per layer
    const char* field = "hybrid_override_pattern";
    auto list = j.find("layers_block_type");
    if (list != j.end() && !list->is_null()) {
        field = "layers_block_type";
        if (!list->is_array() || list->empty())
            throw InputError(field, "config.json field \"layers_block_type\" must list one block type per layer");
        for (const json& e : *list) {
            const std::string name = e.is_string() ? e.get<std::string>() : e.dump();
            // The legacy names beside transformers 5's (remap_legacy_layer_types).
            if (name == "mamba" || name == "linear_attention")
                kinds += 'M';
            else if (name == "attention" || name == "full_attention")
                kinds += '*';
            else if (name == "mlp")
                kinds += '-';
            else if (name == "moe")
                kinds += 'E';
            else
                throw InputError(field,
                                 "config.json field \"layers_block_type\" entries must be mamba, attention or "
                                 "mlp for model_type " +
                                     type + ", got " + printable(name, 40));
        }
    } else {
        auto pattern = j.find("hybrid_override_pattern");
        if (pattern == j.end() || pattern->is_null())
            throw InputError(
                field, "config.json field \"hybrid_override_pattern\" is missing (required for model_type " + type +
                           ": which layers are Mamba-2 (M), attention (*) and MLP (-))");
        if (!pattern->is_string() || pattern->get<std::string>().empty())
            throw InputError(field,
                             "config.json field \"hybrid_override_pattern\" must be a non-empty string of M, * "
                             "and -, one letter per layer");
        kinds = pattern->get<std::string>();
    }
    if (static_cast<std::int64_t>(kinds.size()) > kMaxLayers)
        throw InputError(field, std::string("config.json field \"") + field + "\" lists more than " +
                                    std::to_string(kMaxLayers) + " layers");
    const std::int64_t layers =
        hf_int_or(j, "num_hidden_layers", static_cast<std::int64_t>(kinds.size()), 1, kMaxLayers);
    if (static_cast<std::int64_t>(kinds.size()) != layers)
        throw InputError(field, std::string("config.json field \"") + field + "\" must give one block per layer (" +
                                    std::to_string(layers) + " for num_hidden_layers), got " +
                                    std::to_string(kinds.size()));
    std::array<std::int64_t, 3> counts{0, 0, 0};
    for (std::size_t i = 0; i < kinds.size(); ++i) {
        const char k = kinds[i];
        if (k == 'E')
            throw InputError(field, std::string("config.json field \"") + field +
                                        "\" has a MoE block (E / moe) at layer " + std::to_string(i) +
                                        "; tally does not model Nemotron-H's MoE blocks yet");
        if (k != 'M' && k != '*' && k != '-')
            throw InputError(field, std::string("config.json field \"") + field +
                                        "\" letters must be M (Mamba-2), * (attention) or - (MLP), got " +
                                        printable(std::string(1, k), 8) + " at layer " + std::to_string(i));
        ++counts[k == 'M' ? 0 : k == '*' ? 1 : 2];
    }
    return counts;
}

// NemotronHConfig (transformers configuration_nemotron_h.py @ 13923c63, modeling_nemotron_h.py @ 008d9e95;
// Nemotron-H 8B / 47B / 56B, Nemotron Nano 9B / 12B v2): every block is an RMSNorm and one module, a Mamba-2
// mixer, GQA attention (q/k/v/o without bias) or a non-gated MLP (up_proj, down_proj, mlp_hidden_act: relu2),
// counted as tally's 2-matrix MLP (the activation changes no count). The Mamba-2 mixer is Granite's shape with
// in_proj / out_proj biased by use_bias and d_inner = mamba_num_heads · mamba_head_dim (expand changes no count).
// Untied LM head.
ModelConfig load_nemotron_h(const json& j) {
    const std::string type = "nemotron_h";
    refuse_unknown_keys(
        j, type,
        {"hybrid_override_pattern", "layers_block_type", "attention_head_dim", "mlp_hidden_act", "mamba_num_heads",
         "mamba_head_dim", "ssm_state_size", "n_groups", "mamba_n_groups", "conv_kernel", "mamba_d_conv", "expand",
         "mamba_expand", "use_conv_bias", "mamba_conv_bias", "use_bias", "mamba_proj_bias", "mamba_hidden_act",
         "chunk_size", "mamba_chunk_size", "time_step_min", "time_step_max", "time_step_limit", "time_step_floor",
         "time_step_rank", "mamba_dt_min", "mamba_dt_max", "mamba_dt_limit", "mamba_dt_init_floor", "use_mamba_kernels",
         "mamba_ssm_cache_dtype", "num_logits_to_keep", "layer_norm_epsilon", "residual_in_fp32",
         "rescale_prenorm_residual", "hidden_dropout",
         // MoE and MTP keys (Nemotron 3): read only when a block is MoE, which is refused.
         "n_routed_experts", "n_shared_experts", "moe_intermediate_size", "moe_shared_expert_intermediate_size",
         "moe_latent_size", "moe_shared_expert_overlap", "num_nextn_predict_layers", "mtp_layers_block_type",
         "mtp_hybrid_override_pattern"});
    const auto kinds = nemotron_h_layer_kinds(j, type);
    ModelConfig c;
    c.hidden_size = hf_int(j, "hidden_size", type, 1, kMaxHidden);
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    c.ffn_hidden_size = hf_int(j, "intermediate_size", type, 1, kMaxFfn);
    c.num_layers = kinds[0] + kinds[1] + kinds[2];
    c.num_mamba_layers = kinds[0];
    c.num_mlp_layers = kinds[2];
    c.mixer_blocks_without_mlp = true;
    c.mlp = MlpKind::Gelu;  // up and down projections, no gate
    c.norm = NormKind::RmsNorm;
    c.position = PositionKind::Rotary;
    c.max_positions = hf_int_or(j, "max_position_embeddings", 0, 0, kMaxPositions);
    c.mlp_bias = hf_bool_or(j, "mlp_bias", false);
    c.attention_dropout = hf_probability_or(j, "attention_dropout", 0.0);
    // NemotronHAttention builds q/k/v/o with bias=False and NemotronHForCausalLM ties nothing (_tied_weights_keys
    // empty): a config saying otherwise is refused rather than counted one way or the other.
    if (hf_bool_or(j, "attention_bias", false))
        throw InputError("attention_bias", "config.json field \"attention_bias\" must be false for model_type " + type +
                                               " (NemotronHAttention's projections have no bias)");
    if (hf_bool_or(j, "tie_word_embeddings", false))
        throw InputError("tie_word_embeddings",
                         "config.json field \"tie_word_embeddings\" must be false for "
                         "model_type " +
                             type + " (NemotronHForCausalLM ties no weights)");
    auto window = j.find("sliding_window");
    if (window != j.end() && !window->is_null())
        throw InputError("sliding_window", "config.json field \"sliding_window\" must be null for model_type " + type +
                                               "; tally does not model windowed Nemotron-H attention");
    c.num_heads = hf_int(j, "num_attention_heads", type, 1, kMaxHidden);
    c.num_kv_heads = hf_kv_heads(j, c.num_heads);
    // head_dim (NemotronHConfig default 128); the NVIDIA remote-code configs also spell it attention_head_dim.
    c.head_dim = hf_int_or(j, "head_dim", hf_int_or(j, "attention_head_dim", 128, 1, kMaxHidden), 1, kMaxHidden);
    if (c.num_mamba_layers > 0) {
        c.mamba_heads = hf_int_or(j, "mamba_num_heads", 128, 1, kMaxHidden);
        c.mamba_head_dim = hf_int_or(j, "mamba_head_dim", 64, 1, kMaxHidden);
        require_range("mamba_head_dim", c.mamba_heads * c.mamba_head_dim, 1, kMaxHidden);  // d_inner
        c.mamba_d_state = hf_int_or(j, "ssm_state_size", 128, 1, kMaxHidden);
        const char* groups = j.contains("n_groups") ? "n_groups" : "mamba_n_groups";
        c.mamba_groups = hf_int_or(j, groups, 8, 1, kMaxHidden);
        if (c.mamba_heads % c.mamba_groups != 0)
            throw InputError(groups, std::string("config.json field \"") + groups + "\" (" +
                                         std::to_string(c.mamba_groups) + ") must divide mamba_num_heads (" +
                                         std::to_string(c.mamba_heads) + ")");
        c.mamba_conv_kernel = hf_int_or(j, j.contains("conv_kernel") ? "conv_kernel" : "mamba_d_conv", 4, 1, 1024);
        c.mamba_conv_bias = hf_bool_or(j, j.contains("use_conv_bias") ? "use_conv_bias" : "mamba_conv_bias", true);
        // NemotronHMamba2Mixer biases in_proj and out_proj by use_bias; mamba_proj_bias is not read there.
        c.mamba_proj_bias = hf_bool_or(j, "use_bias", false);
        if (hf_bool_or(j, "mamba_proj_bias", false) && !c.mamba_proj_bias)
            throw InputError("mamba_proj_bias",
                             "config.json field \"mamba_proj_bias\" is true but use_bias is false; "
                             "NemotronHMamba2Mixer biases its projections by use_bias, so the "
                             "config is refused rather than miscounted");
    }
    return c;
}

// FalconH1Config (transformers configuration_falcon_h1.py, modeling_falcon_h1.py @ 001f85b3; Falcon-H1 0.5B to 34B,
// arXiv:2507.22448): every layer is an RMSNorm, then GQA attention (q/k/v/o, biased by attention_bias) and a Mamba-2
// mixer (FalconH1Mixer) side by side on its output, their sum added to the residual, then an RMSNorm and a gated MLP
// (gate/up/down, biased by mlp_bias). The mixer is Granite's shape with d_inner = mamba_d_ssm (null: mamba_expand ·
// hidden_size), in_proj biased by mamba_proj_bias, out_proj by projectors_bias, and its gated RMSNorm only with
// mamba_rms_norm. The muP multipliers (embedding, lm_head, key, attention and SSM in/out, mlp_multipliers,
// ssm_multipliers) scale activations and change no count; the mixer's mup_vector is a non-persistent buffer (not in
// the checkpoint). Absent keys take FalconH1Config's defaults.
ModelConfig load_falcon_h1(const json& j) {
    const std::string type = "falcon_h1";
    refuse_unknown_keys(j, type,
                        {"mamba_d_ssm",
                         "mamba_n_heads",
                         "mamba_d_head",
                         "mamba_n_groups",
                         "mamba_d_state",
                         "mamba_d_conv",
                         "mamba_expand",
                         "mamba_chunk_size",
                         "mamba_conv_bias",
                         "mamba_proj_bias",
                         "mamba_norm_before_gate",
                         "mamba_rms_norm",
                         "mamba_use_mlp",
                         "projectors_bias",
                         "time_step_min",
                         "time_step_max",
                         "time_step_limit",
                         "time_step_floor",
                         "num_logits_to_keep",
                         "lm_head_multiplier",
                         "embedding_multiplier",
                         "mlp_multipliers",
                         "key_multiplier",
                         "attention_out_multiplier",
                         "attention_in_multiplier",
                         "ssm_multipliers",
                         "ssm_in_multiplier",
                         "ssm_out_multiplier",
                         "attn_layer_indices",
                         "layers_block_type"});
    ModelConfig c;
    c.hidden_size = hf_int(j, "hidden_size", type, 1, kMaxHidden);
    c.num_layers = hf_int(j, "num_hidden_layers", type, 1, kMaxLayers);
    c.num_heads = hf_int(j, "num_attention_heads", type, 1, kMaxHidden);
    c.ffn_hidden_size = hf_int(j, "intermediate_size", type, 1, kMaxFfn);
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    c.max_positions = hf_int_or(j, "max_position_embeddings", 0, 0, kMaxPositions);
    // FalconH1Config: num_key_value_heads 8 when absent (every head its own when null).
    const bool kv_null = j.contains("num_key_value_heads") && j["num_key_value_heads"].is_null();
    c.num_kv_heads = kv_null ? c.num_heads : hf_int_or(j, "num_key_value_heads", 8, 1, kMaxHidden);
    if (c.num_kv_heads > c.num_heads || c.num_heads % c.num_kv_heads != 0)
        throw InputError("num_key_value_heads", "num_key_value_heads must divide num_attention_heads (" +
                                                    std::to_string(c.num_heads) + "), got " +
                                                    std::to_string(c.num_kv_heads));
    // FalconH1Attention: head_dim when given, else hidden_size / num_attention_heads.
    if (j.contains("head_dim") && !j["head_dim"].is_null()) {
        c.head_dim = hf_int(j, "head_dim", type, 1, kMaxHidden);
    } else {
        if (c.hidden_size % c.num_heads != 0)
            throw InputError("num_attention_heads",
                             "num_attention_heads must divide hidden_size (" + std::to_string(c.hidden_size) +
                                 ") when head_dim is absent, got " + std::to_string(c.num_heads));
        c.head_dim = c.hidden_size / c.num_heads;
    }
    const std::string act = hf_string_or(j, "hidden_act", "silu");
    if (act != "silu" && act != "swish")
        throw InputError("hidden_act", "config.json field \"hidden_act\" must be silu for model_type " + type +
                                           ", got \"" + printable(act, 40) + "\"");
    c.mlp = MlpKind::SwiGlu;  // FalconH1MLP: gate_proj, up_proj, down_proj
    c.norm = NormKind::RmsNorm;
    c.position = PositionKind::Rotary;
    c.qkv_bias = c.attn_out_bias = hf_bool_or(j, "attention_bias", false);
    c.mlp_bias = hf_bool_or(j, "mlp_bias", false);
    c.tied_embeddings = hf_bool_or(j, "tie_word_embeddings", false);
    c.attention_dropout = hf_probability_or(j, "attention_dropout", 0.0);
    // Every layer is a hybrid one: FalconH1Config.layers_block_type is "hybrid" per layer. A listed one (or an
    // attn_layer_indices, which transformers does not read) must say so.
    auto blocks = j.find("layers_block_type");
    if (blocks != j.end() && !blocks->is_null()) {
        if (!blocks->is_array() || static_cast<std::int64_t>(blocks->size()) != c.num_layers)
            throw InputError("layers_block_type",
                             "config.json field \"layers_block_type\" must list one block type "
                             "per layer (" +
                                 std::to_string(c.num_layers) + " for num_hidden_layers)");
        for (const json& b : *blocks)
            if (b != "hybrid")
                throw InputError("layers_block_type",
                                 "config.json field \"layers_block_type\" entries must be hybrid for model_type " +
                                     type + " (attention and Mamba-2 in every layer), got " + printable(b.dump(), 40));
    }
    auto indices = j.find("attn_layer_indices");
    if (indices != j.end() && !indices->is_null())
        throw InputError("attn_layer_indices",
                         "config.json field \"attn_layer_indices\" must be null for model_type " + type +
                             ": FalconH1Model puts attention in every layer and tally counts it so");
    if (!hf_bool_or(j, "mamba_use_mlp", true))
        throw InputError("mamba_use_mlp", "config.json field \"mamba_use_mlp\" must be true for model_type " + type +
                                              " (FalconH1DecoderLayer always has its MLP)");
    c.parallel_hybrid = true;
    c.num_mamba_layers = c.num_layers;
    // FalconH1Mixer: d_inner = mamba_d_ssm (FalconH1Config default 1024; null: mamba_expand · hidden_size).
    std::int64_t d_inner = 1024;
    auto ssm = j.find("mamba_d_ssm");
    if (ssm != j.end()) {
        if (ssm->is_null()) {
            d_inner = hf_int_or(j, "mamba_expand", 2, 1, 1024) * c.hidden_size;  // <= 1024 · kMaxHidden
            require_range("mamba_expand", d_inner, 1, kMaxHidden);
        } else {
            d_inner = json_integer(*ssm, "mamba_d_ssm", 1, kMaxHidden);
        }
    }
    hf_mamba2_heads(c, j, d_inner, ssm != j.end() && ssm->is_null() ? "mamba_expand · hidden_size" : "mamba_d_ssm");
    c.mamba_norm = hf_bool_or(j, "mamba_rms_norm", false);
    // in_proj's bias is mamba_proj_bias, out_proj's projectors_bias: tally's one flag biases both, so they must agree.
    c.mamba_proj_bias = hf_bool_or(j, "mamba_proj_bias", false);
    if (hf_bool_or(j, "projectors_bias", false) != c.mamba_proj_bias)
        throw InputError("projectors_bias",
                         "config.json field \"projectors_bias\" (the Mamba-2 out_proj bias) must "
                         "equal mamba_proj_bias (the in_proj bias) for tally to count them");
    return c;
}

// Layers i of num_hidden_layers with i % period == offset (JambaConfig's layers_block_type and layers_num_experts);
// a period below 1 or an offset outside [0, period) is refused naming the field, as JambaConfig refuses the latter.
std::int64_t hf_periodic_layers(const json& j, const char* period_key, std::int64_t period_default,
                                const char* offset_key, std::int64_t offset_default, std::int64_t layers) {
    const std::int64_t period = hf_int_or(j, period_key, period_default, 1, kMaxLayers);
    const std::int64_t offset = hf_int_or(j, offset_key, offset_default, 0, period - 1);
    return offset < layers ? (layers - 1 - offset) / period + 1 : 0;
}

// JambaConfig (transformers configuration_jamba.py, modeling_jamba.py @ 008f5c8c; Jamba, Jamba 1.5 / 1.6 / 1.7): layer
// i is GQA attention (q/k/v/o without bias, no position encoding) when i % attn_layer_period == attn_layer_offset,
// else a Mamba-1 mixer (JambaMambaMixer: d_inner = mamba_expand · hidden_size, Δ of rank mamba_dt_rank, "auto":
// ceil(hidden_size / 16), with its dt/B/C RMSNorms); its feed-forward is a MoE of num_experts gated MLPs of
// intermediate_size (top num_experts_per_tok, a router without bias) when i % expert_layer_period ==
// expert_layer_offset, else one such MLP. Every layer has an input and a pre-feed-forward RMSNorm; untied LM head by
// default. The interleaving changes no count, FLOP or byte, so tally keeps the counts: the dense layers are its
// num_dense_layers, of width intermediate_size. Absent keys take JambaConfig's defaults.
ModelConfig load_jamba(const json& j) {
    const std::string type = "jamba";
    refuse_unknown_keys(
        j, type,
        {"attn_layer_period", "attn_layer_offset", "expert_layer_period", "expert_layer_offset", "num_experts",
         "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_dt_rank", "mamba_conv_bias", "mamba_proj_bias",
         "use_mamba_kernels", "num_logits_to_keep", "calc_logits_for_entire_prompt"});
    ModelConfig c;
    c.hidden_size = hf_int(j, "hidden_size", type, 1, kMaxHidden);
    c.num_layers = hf_int(j, "num_hidden_layers", type, 1, kMaxLayers);
    c.num_heads = hf_int(j, "num_attention_heads", type, 1, kMaxHidden);
    c.num_kv_heads = hf_kv_heads(j, c.num_heads);
    // JambaAttention: head_dim = hidden_size // num_heads.
    if (c.hidden_size % c.num_heads != 0)
        throw InputError("num_attention_heads", "num_attention_heads must divide hidden_size (" +
                                                    std::to_string(c.hidden_size) + "), got " +
                                                    std::to_string(c.num_heads));
    c.head_dim = c.hidden_size / c.num_heads;
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    c.max_positions = hf_int_or(j, "max_position_embeddings", 0, 0, kMaxPositions);
    const std::int64_t f = hf_int(j, "intermediate_size", type, 1, kMaxFfn);
    c.mlp = MlpKind::SwiGlu;  // JambaMLP: gate_proj, up_proj, down_proj
    c.norm = NormKind::RmsNorm;
    c.position = PositionKind::Rotary;  // Jamba has no position encoding: as with RoPE, no parameters
    c.tied_embeddings = hf_bool_or(j, "tie_word_embeddings", false);
    c.attention_dropout = hf_probability_or(j, "attention_dropout", 0.0);
    auto window = j.find("sliding_window");
    if (window != j.end() && !window->is_null())
        throw InputError("sliding_window", "config.json field \"sliding_window\" must be null for model_type " + type +
                                               "; tally does not model windowed Jamba attention");
    const std::int64_t attention = hf_periodic_layers(j, "attn_layer_period", 8, "attn_layer_offset", 4, c.num_layers);
    const std::int64_t experts = hf_int_or(j, "num_experts", 16, 1, kMaxExperts);
    // A layer with num_experts 1 is a plain JambaMLP (JambaConfig.layers_num_experts).
    const std::int64_t moe =
        experts > 1 ? hf_periodic_layers(j, "expert_layer_period", 2, "expert_layer_offset", 1, c.num_layers) : 0;
    c.ffn_hidden_size = f;
    if (moe > 0) {
        c.num_experts = experts;
        c.experts_per_token = hf_int_or(j, "num_experts_per_tok", 2, 1, experts);
        c.num_dense_layers = c.num_layers - moe;
        if (c.num_dense_layers > 0) c.dense_ffn_hidden_size = f;
    }
    c.num_mamba_layers = c.num_layers - attention;
    if (c.num_mamba_layers > 0) {
        c.mamba_version = 1;
        c.mamba_inner = hf_int_or(j, "mamba_expand", 2, 1, 1024) * c.hidden_size;  // <= 1024 · kMaxHidden
        require_range("mamba_expand", c.mamba_inner, 1, kMaxHidden);
        auto rank = j.find("mamba_dt_rank");
        c.mamba_dt_rank = rank == j.end() || rank->is_null() || (rank->is_string() && *rank == "auto")
                              ? (c.hidden_size + 15) / 16
                              : json_integer(*rank, "mamba_dt_rank", 1, kMaxHidden);
        c.mamba_d_state = hf_int_or(j, "mamba_d_state", 16, 1, kMaxHidden);
        c.mamba_conv_kernel = hf_int_or(j, "mamba_d_conv", 4, 1, 1024);
        c.mamba_conv_bias = hf_bool_or(j, "mamba_conv_bias", true);
        c.mamba_proj_bias = hf_bool_or(j, "mamba_proj_bias", false);
        c.mamba_dt_norms = true;
    }
    return c;
}

// Kimi Linear's 1-based layer list linear_attn_config.<key>: whole numbers in [1, layers], each once; sets `taken`.
std::int64_t kimi_layer_list(const json& lac, const char* key, std::int64_t layers, std::vector<bool>& taken) {
    const std::string field = std::string("linear_attn_config.") + key;
    auto it = lac.find(key);
    if (it == lac.end() || it->is_null()) return 0;
    if (!it->is_array())
        throw InputError(field, "config.json field \"" + field + "\" must be a list of 1-based layer numbers");
    for (const json& v : *it) {
        const std::int64_t layer = json_integer(v, field, 1, layers);
        if (taken[static_cast<std::size_t>(layer - 1)])
            throw InputError(field, "config.json field \"" + field + "\" lists layer " + std::to_string(layer) +
                                        " that is already listed (each layer is KDA or full attention, once)");
        taken[static_cast<std::size_t>(layer - 1)] = true;
    }
    return static_cast<std::int64_t>(it->size());
}

// KimiLinearConfig (Kimi-Linear-48B-A3B's configuration_kimi.py / modeling_kimi.py; vLLM's port at
// vllm-project/vllm@01d99586 vllm/model_executor/models/kimi_linear.py, the KDA layer in
// vllm/model_executor/layers/kda.py @01a7e5d9): layer i (1-based) is Kimi Delta Attention when listed in
// linear_attn_config.kda_layers and MLA (DeepSeek-V2's latent attention, with no RoPE when mla_use_nope) when in
// full_attn_layers; each list must name every layer once between them. The feed-forward is a dense gated MLP of
// intermediate_size in the first first_k_dense_replace layers, then a MoE of num_experts experts of
// moe_intermediate_size (top num_experts_per_token, a router with e_score_correction_bias) plus num_shared_experts
// shared ones. Two RMSNorms per layer, untied LM head by default.
ModelConfig load_kimi_linear(const json& j) {
    const std::string type = "kimi_linear";
    refuse_unknown_keys(
        j, type,
        {"first_k_dense_replace", "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
         "mla_use_nope", "linear_attn_config", "model_max_length", "moe_intermediate_size", "moe_layer_freq",
         "moe_renormalize", "moe_router_activation_func", "num_expert_group", "num_experts", "num_experts_per_token",
         "num_shared_experts", "num_nextn_predict_layers", "use_grouped_topk"});
    ModelConfig c;
    c.hidden_size = hf_int(j, "hidden_size", type, 1, kMaxHidden);
    c.num_layers = hf_int(j, "num_hidden_layers", type, 1, kMaxLayers);
    c.num_heads = hf_int(j, "num_attention_heads", type, 1, kMaxHidden);
    c.num_kv_heads = hf_int_or(j, "num_key_value_heads", c.num_heads, 1, kMaxHidden);
    if (c.num_kv_heads != c.num_heads)
        throw InputError("num_key_value_heads",
                         "config.json field \"num_key_value_heads\" must equal num_attention_heads (" +
                             std::to_string(c.num_heads) + ") under latent attention");
    c.vocab_size = hf_int(j, "vocab_size", type, 1, kMaxVocab);
    c.max_positions = hf_int_or(j, "max_position_embeddings", 0, 0, kMaxPositions);
    c.kv_lora_rank = hf_int(j, "kv_lora_rank", type, 1, kMaxHidden);
    c.q_lora_rank = hf_int_or(j, "q_lora_rank", 0, 0, kMaxHidden);  // null: Q projected directly (the 48B)
    c.qk_rope_head_dim = hf_int(j, "qk_rope_head_dim", type, 1, kMaxHidden);
    c.head_dim = hf_int(j, "qk_nope_head_dim", type, 1, kMaxHidden) + c.qk_rope_head_dim;
    c.v_head_dim = hf_int(j, "v_head_dim", type, 1, kMaxHidden);
    const std::string act = hf_string_or(j, "hidden_act", "silu");
    if (act != "silu" && act != "swish")
        throw InputError("hidden_act", "config.json field \"hidden_act\" must be silu for model_type " + type +
                                           ", got \"" + printable(act, 40) + "\"");
    c.mlp = MlpKind::SwiGlu;  // KimiMLP: gate_up_proj, down_proj
    c.norm = NormKind::RmsNorm;
    c.position = PositionKind::Rotary;
    c.tied_embeddings = hf_bool_or(j, "tie_word_embeddings", false);
    if (hf_int_or(j, "num_nextn_predict_layers", 0, 0, 64) != 0)
        throw InputError("num_nextn_predict_layers",
                         "config.json field \"num_nextn_predict_layers\" must be 0 for model_type " + type +
                             " (Kimi Linear's modeling code builds no MTP layers)");
    const std::int64_t f = hf_int(j, "intermediate_size", type, 1, kMaxFfn);
    auto experts = j.find("num_experts");
    if (experts == j.end() || experts->is_null()) {
        c.ffn_hidden_size = f;  // KimiLinearConfig.is_moe false: every layer a KimiMLP
    } else {
        c.num_experts = json_integer(*experts, "num_experts", 1, kMaxExperts);
        c.experts_per_token = hf_int(j, "num_experts_per_token", type, 1, c.num_experts);
        c.num_shared_experts = hf_int_or(j, "num_shared_experts", 0, 0, kMaxExperts);
        c.ffn_hidden_size = hf_int(j, "moe_intermediate_size", type, 1, kMaxFfn);
        c.num_dense_layers = hf_int_or(j, "first_k_dense_replace", 0, 0, c.num_layers - 1);
        if (c.num_dense_layers > 0) c.dense_ffn_hidden_size = f;
        if (hf_int_or(j, "moe_layer_freq", 1, 1, kMaxLayers) != 1)
            throw InputError("moe_layer_freq",
                             "config.json field \"moe_layer_freq\" must be 1 (every layer after "
                             "first_k_dense_replace is MoE); tally does not model interleaving");
        c.router_bias = true;  // KimiMoE: gate.e_score_correction_bias, one per expert
    }
    auto lac = j.find("linear_attn_config");
    if (lac == j.end() || lac->is_null()) return c;  // every layer MLA
    if (!lac->is_object())
        throw InputError("linear_attn_config", "config.json field \"linear_attn_config\" must be an object");
    for (const auto& [key, value] : lac->items())
        if (key != "kda_layers" && key != "full_attn_layers" && key != "num_heads" && key != "head_dim" &&
            key != "short_conv_kernel_size")
            throw InputError("linear_attn_config." + printable(key, 64),
                             "config.json field \"linear_attn_config." + printable(key, 64) +
                                 "\" is not understood by tally for model_type " + type +
                                 "; it may change the count, so the config is refused rather than miscounted");
    std::vector<bool> taken(static_cast<std::size_t>(c.num_layers), false);
    c.num_linear_layers = kimi_layer_list(*lac, "kda_layers", c.num_layers, taken);
    const std::int64_t full = kimi_layer_list(*lac, "full_attn_layers", c.num_layers, taken);
    if (c.num_linear_layers + full != c.num_layers)
        throw InputError("linear_attn_config.kda_layers",
                         "config.json fields \"linear_attn_config.kda_layers\" and \"full_attn_layers\" must list "
                         "every layer between them (" +
                             std::to_string(c.num_layers) + " for num_hidden_layers), got " +
                             std::to_string(c.num_linear_layers + full));
    if (c.num_linear_layers > 0) {
        // Errors name the nested key (linear_attn_config.num_heads); KDA layers need their widths.
        auto nested = [&](const char* key, std::int64_t high) {
            const std::string field = std::string("linear_attn_config.") + key;
            auto it = lac->find(key);
            if (it == lac->end() || it->is_null())
                throw InputError(field, "config.json field \"" + field + "\" is missing (required for KDA layers)");
            return json_integer(*it, field, 1, high);
        };
        c.linear_kind = LinearKind::Kda;
        c.linear_key_heads = c.linear_value_heads = nested("num_heads", kMaxHidden);
        c.linear_key_head_dim = c.linear_value_head_dim = nested("head_dim", kMaxHidden);
        c.linear_conv_kernel = nested("short_conv_kernel_size", 1024);
    }
    return c;
}

// A text model by its model_type (a whole config.json, or a multimodal wrapper's text_config).
ModelConfig load_text_model(const json& j, const std::string& type) {
    if (type == "llama" || type == "mistral" || type == "qwen2" || type == "mixtral" || type == "qwen3" ||
        type == "qwen3_moe" || type == "phi3" || type == "olmo2" || type == "olmo3" || type == "smollm3")
        return load_llama_like(j, type);
    // Qwen3VLTextConfig / Qwen3VLMoeTextConfig: Qwen3's decoder (multimodal RoPE sections change no count).
    if (type == "qwen3_vl_text") return load_llama_like(j, "qwen3");
    if (type == "qwen3_vl_moe_text") return load_llama_like(j, "qwen3_moe");
    if (type == "llama4_text") return load_llama4_text(j);
    if (type == "glm4_moe") return load_glm4_moe(j);
    if (type == "ernie4_5_moe") return load_ernie4_5_moe(j);
    if (type == "minimax_m2") return load_minimax_m2(j);
    if (type == "qwen3_next") return load_qwen3_next(j);
    if (type == "granitemoehybrid") return load_granitemoehybrid(j);
    if (type == "nemotron_h") return load_nemotron_h(j);
    if (type == "falcon_h1") return load_falcon_h1(j);
    if (type == "jamba") return load_jamba(j);
    if (type == "kimi_linear") return load_kimi_linear(j);
    if (type == "deepseek_v3" || type == "kimi_k2" || type == "deepseek_v32") return load_deepseek_v3(j, type);
    if (type == "gpt_oss") return load_gpt_oss(j);
    if (type == "gemma2" || type == "gemma3_text") return load_gemma(j, type);
    if (type == "gpt2") return load_gpt2(j);
    if (type == "bert" || type == "roberta") return load_bert_like(j, type);
    if (type == "t5") return load_t5(j);
    // Older and mid-2024 types (hf_config_classic.cpp): their own keys checked there, counted by a loader above.
    if (type == "gemma") return load_llama_like(hf_classic::gemma_as_llama(j), type);
    if (type == "granite") return load_llama_like(hf_classic::granite_as_llama(j), type);
    if (type == "internlm2") return load_llama_like(hf_classic::internlm2_as_llama(j), type);
    if (type == "qwen2_moe")
        return hf_classic::with_qwen2_moe(j, load_llama_like(hf_classic::qwen2_moe_as_qwen2(j), "qwen2"));
    if (type == "deepseek_v2") return load_deepseek_v3(hf_classic::deepseek_v2_as_v3(j), type);
    if (type == "olmoe") return hf_classic::with_olmoe(j, load_llama_like(hf_classic::olmoe_as_llama(j), type));
    if (type == "gpt_neox") return hf_classic::load_gpt_neox(j);
    if (type == "starcoder2") return hf_classic::load_starcoder2(j);
    throw InputError("model_type",
                     "config.json model_type \"" + type + "\" is not supported; supported: " + hf_model_types());
}

// transformers' defaults for keys a multimodal wrapper's text_config leaves out (Gemma 3 12B/27B give no
// vocab_size, head_dim or sliding_window_pattern): Gemma3TextConfig.__init__'s.
json text_config_defaults(const std::string& type) {
    if (type == "gemma3_text")
        return {{"vocab_size", 262208},
                {"hidden_size", 2304},
                {"intermediate_size", 9216},
                {"num_hidden_layers", 26},
                {"num_attention_heads", 8},
                {"num_key_value_heads", 4},
                {"head_dim", 256},
                {"sliding_window", 4096},
                {"sliding_window_pattern", 6},
                {"tie_word_embeddings", true}};
    return json::object();
}

// Vision keys that change no count (ids, numerics, dropout, activations, the patches' RoPE, head widths that
// are hidden / heads in these towers).
constexpr const char* kVisionNeutralKeys[] = {
    "layer_norm_eps",     "attention_dropout", "hidden_act",           "initializer_range",
    "initializer_factor", "head_dim",          "rope_theta",           "num_attention_heads",
    "norm_eps",           "projector_dropout", "vision_feature_layer", "vision_feature_select_strategy",
    "pixel_shuffle_ratio"};

// Reads a vision_config for a tower's count; the first key it does not know (or a required key it lacks) is kept,
// and the tower is then not counted.
struct VisionReader {
    const json& v;
    std::string unknown;  // the first key the count does not read (the tower is then not counted)
    // fallback < 0: required (a missing key leaves the tower uncounted).
    std::int64_t get(const char* key, std::int64_t fallback) {
        auto it = v.find(key);
        if (it == v.end() || it->is_null()) {
            if (fallback < 0 && unknown.empty()) unknown = std::string(key) + " (missing)";
            return fallback < 0 ? 0 : fallback;
        }
        return json_integer(*it, std::string("vision_config.") + key, 1, kMaxHidden);
    }
    void only(std::initializer_list<const char*> read) {
        for (const auto& [key, value] : v.items()) {
            bool known = false;
            for (const char* k : kNeutralKeys) known = known || key == k;
            for (const char* k : kVisionNeutralKeys) known = known || key == k;
            for (const char* k : read) known = known || key == k;
            if (!known && unknown.empty()) unknown = key;
        }
    }
};

// SiglipVisionModel without its pooling head (transformers modeling_siglip.py): a patch Conv2d with bias, a
// learned position per patch, layers of LayerNorm, q/k/v/out with biases, LayerNorm, fc1/fc2 with biases, and a
// post LayerNorm. Gemma3MultiModalProjector adds a vision-width RMSNorm and a vision x text projection.
std::int64_t gemma3_vision_params(const json& v, std::int64_t text_hidden, std::string& unknown) {
    VisionReader r{v, {}};
    r.only({"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_channels",
            "image_size", "patch_size", "vision_use_head"});
    // SiglipVisionConfig adds a pooling head unless vision_use_head is false (Gemma 3's configs say false).
    if ((!v.contains("vision_use_head") || v["vision_use_head"] != false) && r.unknown.empty())
        r.unknown = "vision_use_head";
    if (!r.unknown.empty()) {
        unknown = r.unknown;
        return 0;
    }
    // SiglipVisionConfig defaults.
    const std::int64_t h = r.get("hidden_size", 768), f = r.get("intermediate_size", 3072),
                       L = r.get("num_hidden_layers", 12), ch = r.get("num_channels", 3),
                       image = r.get("image_size", 224), patch = r.get("patch_size", 16);
    const std::int64_t side = image / patch;
    const std::int64_t embeddings = ch * patch * patch * h + h + side * side * h;
    const std::int64_t layer = 2 * h + 4 * (h * h + h) + 2 * h + (h * f + f) + (f * h + h);
    return embeddings + L * layer + 2 * h + (h * text_hidden + h);
}

// PixtralVisionModel (transformers modeling_pixtral.py): a patch Conv2d without bias, ln_pre RMSNorm, layers of
// RMSNorm, q/k/v/o without bias, RMSNorm, gated MLP without bias. Mistral3MultiModalProjector: an RMSNorm, the
// patch merger (h·m² -> h), then linear_1 (h -> text) and linear_2 (text -> text), biased if
// multimodal_projector_bias.
std::int64_t mistral3_vision_params(const json& wrapper, const json& v, std::int64_t text_hidden,
                                    std::string& unknown) {
    VisionReader r{v, {}};
    r.only({"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_channels",
            "image_size", "patch_size"});
    if (!r.unknown.empty()) {
        unknown = r.unknown;
        return 0;
    }
    // PixtralVisionConfig defaults.
    const std::int64_t h = r.get("hidden_size", 1024), f = r.get("intermediate_size", 4096),
                       L = r.get("num_hidden_layers", 24), ch = r.get("num_channels", 3),
                       patch = r.get("patch_size", 16);
    const std::int64_t merge = hf_int_or(wrapper, "spatial_merge_size", 2, 1, 64);
    const bool bias = hf_bool_or(wrapper, "multimodal_projector_bias", false);
    const std::int64_t tower = ch * patch * patch * h + h + L * (h + 4 * h * h + h + 3 * h * f);
    const std::int64_t projector =
        h + h * merge * merge * h + h * text_hidden + text_hidden * text_hidden + (bias ? 2 * text_hidden : 0);
    return tower + projector;
}

// Llama4VisionModel (transformers modeling_llama4.py): an unfolded patch projection without bias, a class
// embedding, a learned position per patch and the class token, LayerNorms before and after, layers of
// LayerNorm, q/k/v/o with biases, LayerNorm, fc1/fc2 with biases; the pixel-shuffle adapter's fc1
// (intermediate -> projector_input_dim) and fc2 (projector_output_dim square) without bias; then
// Llama4MultiModalProjector's vision_output_dim -> text projection without bias.
std::int64_t llama4_vision_params(const json& v, std::int64_t text_hidden, std::string& unknown) {
    VisionReader r{v, {}};
    r.only({"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_channels",
            "image_size", "patch_size", "projector_input_dim", "projector_output_dim", "vision_output_dim",
            "multi_modal_projector_bias"});
    if (v.contains("multi_modal_projector_bias") && v["multi_modal_projector_bias"] != false && r.unknown.empty())
        r.unknown = "multi_modal_projector_bias";
    // Every shape key required (Llama 4's configs give them all).
    const std::int64_t h = r.get("hidden_size", -1), f = r.get("intermediate_size", -1),
                       L = r.get("num_hidden_layers", -1), ch = r.get("num_channels", 3),
                       image = r.get("image_size", -1), patch = r.get("patch_size", -1),
                       in = r.get("projector_input_dim", -1), out = r.get("projector_output_dim", -1),
                       vout = r.get("vision_output_dim", -1);
    if (!r.unknown.empty()) {
        unknown = r.unknown;
        return 0;
    }
    const std::int64_t side = image / patch;
    const std::int64_t embeddings = ch * patch * patch * h + h + (side * side + 1) * h + 4 * h;
    const std::int64_t layer = 2 * h + 4 * (h * h + h) + 2 * h + (h * f + f) + (f * h + h);
    return embeddings + L * layer + f * in + out * out + vout * text_hidden;
}

// Qwen3VLVisionModel (transformers modeling_qwen3_vl.py): a Conv3d patch embedding with bias (temporal x patch²),
// a learned table of num_position_embeddings, depth blocks of LayerNorm, fused qkv and proj with biases, LayerNorm,
// linear_fc1/fc2 with biases; the patch merger (LayerNorm over h, then m²h -> m²h -> out_hidden_size with biases)
// and one DeepStack merger per deepstack_visual_indexes entry (the same, its LayerNorm over m²h).
std::int64_t qwen3_vl_vision_params(const json& v, std::string& unknown) {
    VisionReader r{v, {}};
    r.only({"depth", "hidden_size", "intermediate_size", "in_channels", "num_heads", "num_position_embeddings",
            "out_hidden_size", "patch_size", "spatial_merge_size", "temporal_patch_size", "deepstack_visual_indexes"});
    const std::int64_t h = r.get("hidden_size", -1), f = r.get("intermediate_size", -1), depth = r.get("depth", -1),
                       ch = r.get("in_channels", 3), positions = r.get("num_position_embeddings", -1),
                       out = r.get("out_hidden_size", -1), patch = r.get("patch_size", -1),
                       merge = r.get("spatial_merge_size", -1), temporal = r.get("temporal_patch_size", -1);
    auto deep = v.find("deepstack_visual_indexes");
    if ((deep == v.end() || !deep->is_array()) && r.unknown.empty()) r.unknown = "deepstack_visual_indexes (missing)";
    if (!r.unknown.empty()) {
        unknown = r.unknown;
        return 0;
    }
    const std::int64_t embeddings = ch * temporal * patch * patch * h + h + positions * h;
    const std::int64_t block = 4 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * f + f) + (f * h + h);
    const std::int64_t hm = h * merge * merge;
    const std::int64_t mlp = (hm * hm + hm) + (hm * out + out);
    const std::int64_t deepstack = static_cast<std::int64_t>(deep->size()) * (2 * hm + mlp);
    return embeddings + depth * block + (2 * h + mlp) + deepstack;
}

// Multimodal wrappers: the language model from text_config (transformers' defaults for the keys it leaves out),
// the vision tower and projector counted apart where tally knows their shapes, else named as not counted.
ModelConfig load_multimodal(const json& j, const std::string& type) {
    auto text = j.find("text_config");
    if (text == j.end() || !text->is_object())
        throw InputError("text_config", "config.json model_type \"" + type +
                                            "\" is multimodal; tally counts its language model from text_config, "
                                            "which is missing");
    json t = *text;
    const char* text_type = type == "gemma3"         ? "gemma3_text"
                            : type == "qwen3_vl"     ? "qwen3_vl_text"
                            : type == "qwen3_vl_moe" ? "qwen3_vl_moe_text"
                            : type == "llama4"       ? "llama4_text"
                                                     : "mistral";
    if (!t.contains("model_type")) t["model_type"] = text_type;
    if (!t["model_type"].is_string())
        throw InputError("text_config.model_type", "config.json field \"text_config.model_type\" must be a string");
    const std::string inner = t["model_type"].get<std::string>();
    const json defaults = text_config_defaults(inner);  // a named object: items() would outlive a temporary
    for (const auto& [key, value] : defaults.items())
        if (!t.contains(key)) t[key] = value;
    // Qwen3-VL keeps tie_word_embeddings beside text_config.
    if (!t.contains("tie_word_embeddings") && j.contains("tie_word_embeddings"))
        t["tie_word_embeddings"] = j["tie_word_embeddings"];
    ModelConfig c;
    try {
        c = load_text_model(t, inner);
    } catch (const InputError& e) {
        throw InputError(std::string("text_config.") + e.field(), std::string("text_config: ") + e.what());
    }
    // Why the tower is not counted, when it is not: the vision_config key tally does not know, or its absence.
    std::string unknown;
    auto vision = j.find("vision_config");
    if (vision == j.end() || !vision->is_object())
        unknown = "(missing)";
    else if (type == "gemma3")
        c.vision_params = gemma3_vision_params(*vision, c.hidden_size, unknown);
    else if (type == "mistral3")
        c.vision_params = mistral3_vision_params(j, *vision, c.hidden_size, unknown);
    else if (type == "llama4")
        c.vision_params = llama4_vision_params(*vision, c.hidden_size, unknown);
    else
        c.vision_params = qwen3_vl_vision_params(*vision, unknown);
    const std::string name =
        j.contains("_name_or_path") && j["_name_or_path"].is_string() && !j["_name_or_path"].get<std::string>().empty()
            ? j["_name_or_path"].get<std::string>()
            : "config.json (" + type + ")";
    c.name = c.vision_params > 0
                 ? name + ": language model (vision tower and projector counted apart)"
                 : name + ": language model only (vision tower not counted: vision_config" +
                       (unknown == "(missing)" ? " missing" : "." + printable(unknown, 64) + " not understood") + ")";
    return c;
}

}  // namespace

const char* hf_model_types() { return TALLY_HF_MODEL_TYPES; }

ModelConfig load_hf_config(const json& j) {
    if (!j.is_object()) throw InputError("hf_config", "config.json must be a JSON object");
    auto it = j.find("model_type");
    if (it == j.end() || !it->is_string())
        throw InputError("model_type",
                         std::string("config.json field \"model_type\" is missing; supported: ") + hf_model_types());
    const std::string type = it->get<std::string>();
    if (type == "gemma3" || type == "qwen3_vl" || type == "qwen3_vl_moe" || type == "llama4" || type == "mistral3") {
        ModelConfig c = load_multimodal(j, type);
        validate(c);
        return c;
    }
    ModelConfig c = load_text_model(j, type);
    auto name = j.find("_name_or_path");
    c.name = (name != j.end() && name->is_string() && !name->get<std::string>().empty()) ? name->get<std::string>()
                                                                                         : "config.json (" + type + ")";
    validate(c);
    return c;
}

ModelConfig load_hf_config_text(std::string_view text) {
    return load_hf_config(parse_json_input(python_json_infinities(text), "hf_config", "config.json"));
}

}  // namespace tally
